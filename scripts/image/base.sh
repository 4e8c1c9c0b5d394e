#!/usr/bin/env bash
# Prepares podman (as root) and a local stand-in for node:<major>-slim where no image registry is reachable:
# debootstrap --variant=minbase bookworm + the Node of .node-version (with its npm, as scripts/ci/ensure-node.sh
# caches it in ~/.cache/vision-node) in /usr/local + user node (uid 1000).
#   VISION_BASE_IMAGE  tag of the imported image (default: localhost/vision-node<version>-base:bookworm)
#   VISION_IMAGE_DIR   cache root for the rootfs tarball (default: $HOME/.cache/vision-image)
# Cold: a few minutes (apt + debootstrap); cached: seconds. Prints the image tag.
set -euo pipefail

node_version="$(tr -d ' \t\r\nv' <"$(dirname "$0")/../../.node-version")"
TAG="${VISION_BASE_IMAGE:-localhost/vision-node${node_version}-base:bookworm}"
CACHE="${VISION_IMAGE_DIR:-${HOME:-/tmp}/.cache/vision-image}"
mkdir -p "$CACHE"
exec 9>"$CACHE/.base.lock"
flock 9

if ! command -v podman >/dev/null || ! command -v runc >/dev/null || ! command -v debootstrap >/dev/null; then
  echo "image-base: installing podman, buildah, runc, debootstrap from Debian" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    podman buildah runc debootstrap fuse-overlayfs uidmap slirp4netns >&2
fi
# crun fails on this kernel's hybrid cgroups and the sandbox may not raise limits.
if [ ! -f /etc/containers/containers.conf ] || ! grep -q 'runtime = "runc"' /etc/containers/containers.conf; then
  mkdir -p /etc/containers
  cat >/etc/containers/containers.conf <<'CONF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
CONF
fi

if podman image exists "$TAG"; then
  echo "$TAG"
  exit 0
fi

tarball="$CACHE/node${node_version}-bookworm.tar"
if [ ! -f "$tarball" ]; then
  root="$CACHE/rootfs"
  rm -rf "$root"
  echo "image-base: debootstrap bookworm (minbase)" >&2
  # libatomic1: the official Node binaries link libatomic.so.1 (node:*-slim images carry it too).
  debootstrap --variant=minbase --include=libatomic1 bookworm "$root" http://deb.debian.org/debian >&2
  node_bin="$(bash "$(dirname "$0")/../ci/ensure-node.sh")/node"
  npm_dir="$(dirname "$(dirname "$node_bin")")/lib/node_modules/npm"
  [ "$("$node_bin" --version)" = "v$node_version" ] || { echo "image-base: need Node $node_version" >&2; exit 1; }
  install -m 0755 "$node_bin" "$root/usr/local/bin/node"
  mkdir -p "$root/usr/local/lib/node_modules"
  cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  if chroot "$root" ldd /usr/local/bin/node | grep 'not found' >&2; then echo "image-base: node lacks a library" >&2; exit 1; fi
  [ "$(chroot "$root" /usr/local/bin/node --version)" = "v$node_version" ] || { echo "image-base: node does not run" >&2; exit 1; }
  chroot "$root" groupadd --gid 1000 node
  chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/lib/apt/lists/"*
  tar -C "$root" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
  rm -rf "$root"
fi
podman import --change 'CMD ["node"]' --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  "$tarball" "$TAG" >&2
echo "$TAG"
