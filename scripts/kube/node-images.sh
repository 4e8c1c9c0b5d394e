#!/usr/bin/env bash
# Prints the paths of docker-archive tarballs of the given podman images, ready for `ctr images import`, each
# saved once per image ID under $VISION_KUBE_DIR/images. localhost/pause:vision is built first when missing: the
# sandbox image, one static binary (scripts/kube/install-node.sh compiles it from the Kubernetes module's pause.c).
#   scripts/kube/node-images.sh WORKDIR IMAGE...
set -euo pipefail
CACHE="${VISION_KUBE_DIR:-${HOME:-/tmp}/.cache/vision-kube}"
work="$1"; shift
mkdir -p "$work" "$CACHE/images"
if ! podman image exists localhost/pause:vision; then
  mkdir -p "$work/pause"
  cp "$CACHE/bin/pause" "$work/pause/pause"
  printf 'FROM scratch\nCOPY pause /pause\nUSER 65535:65535\nENTRYPOINT ["/pause"]\n' >"$work/pause/Containerfile"
  podman build -q -t localhost/pause:vision "$work/pause" >/dev/null
fi
for image in "$@"; do
  id="$(podman image inspect --format '{{.Id}}' "$image")"
  tar="$CACHE/images/${id:0:16}.tar"
  if [ ! -s "$tar" ]; then
    podman save -q --format docker-archive -o "$tar.tmp" "$image" && mv "$tar.tmp" "$tar"
  fi
  echo "$tar"
done
