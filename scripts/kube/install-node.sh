#!/usr/bin/env bash
# Builds what a real node of the test cluster runs beside the kubelet and kube-proxy of scripts/kube/install.sh,
# each from its Go module, and caches it outside the repository (only when missing, or when a cached one reports
# another release than the one pinned here: binary-version.sh):
#   containerd, containerd-shim-runc-v2 and ctr (v2.2: cgroup v1 hosts stay supported until 2029)
#   coredns (cluster DNS)
#   traefik (v3: the Gateway API implementation that serves the chart's HTTPRoute)
#   kube-router (v2: the pod network's NetworkPolicy enforcement, beside Debian's bridge CNI plugin)
#   pause (the sandbox image's one binary, from the Kubernetes module's build/pause/linux/pause.c)
# runc, the CNI plugins, iptables, ipset, conntrack and dig come from Debian (installed here when missing).
#   VISION_KUBE_DIR  cache root (default: $HOME/.cache/vision-kube); binaries land in $VISION_KUBE_DIR/bin
# Needs Go and a C compiler on PATH. Cold: about 20 minutes on two cores; cached: a few seconds. Prints the bin
# directory.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/binary-version.sh"

CONTAINERD_VERSION="${CONTAINERD_VERSION:-v2.2.9}"
COREDNS_VERSION="${COREDNS_VERSION:-v1.14.7}"
TRAEFIK_VERSION="${TRAEFIK_VERSION:-v3.6.12}"
KUBE_ROUTER_VERSION="${KUBE_ROUTER_VERSION:-v2.1.0}"
KUBE_VERSION="${KUBE_VERSION:-v1.35.4}"
CACHE="${VISION_KUBE_DIR:-${HOME:-/tmp}/.cache/vision-kube}"
BIN="$CACHE/bin"
mkdir -p "$BIN" "$CACHE/src"
exec 9>"$CACHE/.install-node.lock"
flock 9

SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
missing=()
for p in runc containernetworking-plugins iptables ipset conntrack bind9-dnsutils; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "kube-install-node: apt-get install ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# A module's own tree (its go.mod's replace directives apply), copied out of the read-only module cache.
module_dir() {
  local mod="$1" version="$2" dest="$CACHE/src/$(echo "$1" | tr / _)@$2"
  if [ ! -f "$dest/go.mod" ]; then
    local dir
    dir="$(cd "$CACHE" && GOFLAGS=-mod=mod go mod download -json "$mod@$version" |
      sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
    rm -rf "$dest.tmp" && cp -r "$dir" "$dest.tmp" && chmod -R u+w "$dest.tmp" && mv "$dest.tmp" "$dest"
  fi
  echo "$dest"
}
# build NAME DIR PACKAGE [TAGS] [LDFLAGS]: called for a binary that is not current (binary-version.sh)
build() {
  echo "kube-install-node: building $1" >&2
  (cd "$2" && nice -n 10 env GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0 \
    go build -trimpath -tags "${4:-}" -ldflags "-s -w ${5:-}" -o "$BIN/$1.tmp" "$3") && mv "$BIN/$1.tmp" "$BIN/$1"
}

dir="$(module_dir github.com/containerd/containerd/v2 "$CONTAINERD_VERSION")"
ld="-X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION"
tags="no_btrfs no_devmapper no_zfs no_aufs"
v="$CONTAINERD_VERSION"
if ! current containerd "$v" --version; then
  build containerd "$dir" ./cmd/containerd "$tags" "$ld"
  built containerd "$v" --version
fi
if ! current containerd-shim-runc-v2 "$v" -v; then
  build containerd-shim-runc-v2 "$dir" ./cmd/containerd-shim-runc-v2 "$tags" "$ld"
  built containerd-shim-runc-v2 "$v" -v
fi
if ! current ctr "$v" --version; then
  build ctr "$dir" ./cmd/ctr "$tags" "$ld"
  built ctr "$v" --version
fi

dir="$(module_dir github.com/coredns/coredns "$COREDNS_VERSION")"
if ! current coredns "$COREDNS_VERSION" -version; then
  build coredns "$dir" . "" "-X github.com/coredns/coredns/coremain.GitCommit=$COREDNS_VERSION"
  built coredns "$COREDNS_VERSION" -version
fi

if ! current traefik "$TRAEFIK_VERSION" version; then
  dir="$(module_dir github.com/traefik/traefik/v3 "$TRAEFIK_VERSION")"
  # The dashboard's assets are built by a Node toolchain and are not in the module: the binary embeds an empty
  # page instead (the dashboard is off in the test cluster).
  mkdir -p "$dir/webui/static" && [ -n "$(ls -A "$dir/webui/static")" ] || echo '<!doctype html>' >"$dir/webui/static/index.html"
  build traefik "$dir" ./cmd/traefik "" "-X github.com/traefik/traefik/v3/pkg/version.Version=$TRAEFIK_VERSION"
  built traefik "$TRAEFIK_VERSION" version
fi

dir="$(module_dir github.com/cloudnativelabs/kube-router/v2 "$KUBE_ROUTER_VERSION")"
if ! current kube-router "$KUBE_ROUTER_VERSION" --version; then
  build kube-router "$dir" ./cmd/kube-router "" "-X github.com/cloudnativelabs/kube-router/v2/pkg/version.Version=$KUBE_ROUTER_VERSION"
  built kube-router "$KUBE_ROUTER_VERSION" --version
fi

if ! current pause "$KUBE_VERSION" -v; then
  # Read in place from the module cache (the module is large; nothing of it is written).
  dir="$(cd "$CACHE" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  cc -Os -static -Wall -Werror -DVERSION="$KUBE_VERSION" -o "$BIN/pause.tmp" "$dir/build/pause/linux/pause.c"
  strip "$BIN/pause.tmp" && mv "$BIN/pause.tmp" "$BIN/pause"
  built pause "$KUBE_VERSION" -v
fi
echo "$BIN"
