#!/usr/bin/env bash
# Installs a pinned helm into a cache outside the repository (only when missing) and prints its path.
#   VISION_TOOLS_DIR  cache root (default: $HOME/.cache/vision-tools); helm lands in $VISION_TOOLS_DIR/bin
#   HELM_VERSION      override the pinned version (default below)
# Needs Go (>= 1.24) on PATH the first time; later runs only check the cached binary's version.
# Progress goes to stderr; stdout carries exactly one line: the helm binary's absolute path.
set -euo pipefail

HELM_VERSION="${HELM_VERSION:-v3.19.5}"
TOOLS_DIR="${VISION_TOOLS_DIR:-${HOME:-/tmp}/.cache/vision-tools}"
BIN_DIR="$TOOLS_DIR/bin"
HELM="$BIN_DIR/helm"

installed_version() {
  "$HELM" version --template '{{.Version}}' 2>/dev/null || true
}

if [ -x "$HELM" ] && [ "$(installed_version)" = "$HELM_VERSION" ]; then
  echo "$HELM"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "ensure-helm: go is not on PATH; install Go >= 1.24 or put helm $HELM_VERSION at $HELM" >&2
  exit 1
fi

mkdir -p "$BIN_DIR"
# One installer at a time (parallel jest workers, CI retries).
exec 9>"$TOOLS_DIR/.helm.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
if [ -x "$HELM" ] && [ "$(installed_version)" = "$HELM_VERSION" ]; then
  echo "$HELM"
  exit 0
fi

echo "ensure-helm: installing helm $HELM_VERSION into $BIN_DIR (go install, may take a few minutes)" >&2
# Build outside any module so the repository's files play no part; -trimpath for a reproducible binary.
# The Version ldflag makes `helm version` report the pinned tag instead of "v3.x-unreleased" defaults.
(
  cd "$TOOLS_DIR"
  GOBIN="$BIN_DIR" GO111MODULE=on GOFLAGS="${GOFLAGS:-} -buildvcs=false" \
    go install -trimpath \
    -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" \
    "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >&2
)

got="$(installed_version)"
if [ "$got" != "$HELM_VERSION" ]; then
  echo "ensure-helm: installed helm reports version '$got', expected $HELM_VERSION" >&2
  exit 1
fi
echo "$HELM"
