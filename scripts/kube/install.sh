#!/usr/bin/env bash
# Builds the binaries a local kwok cluster needs and caches them outside the repository (only when missing, or when
# a cached one reports another release than the one pinned here: binary-version.sh):
#   kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kubelet and kube-proxy (v1.35.4, the oldest
#   supported minor: the last to run on cgroup v1 hosts, which need the kubelet's failCgroupV1: false), etcd (3.5),
#   kwok and kwokctl
#   (v0.7.0), and the ServiceMonitor and PrometheusRule CRDs of prometheus-operator (from its Go module's
#   example/prometheus-operator-crd/) in $VISION_KUBE_DIR/crds, and the Gateway API CRDs in $VISION_KUBE_DIR/crds/gateway-api.
#   VISION_KUBE_DIR  cache root (default: $HOME/.cache/vision-kube); binaries land in $VISION_KUBE_DIR/bin
# Needs Go on PATH. Cold: about 15 minutes on two cores; cached: a few seconds. Prints the bin directory.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/binary-version.sh"

KUBE_VERSION="${KUBE_VERSION:-v1.35.4}"
STAGING_VERSION="v0.${KUBE_VERSION#v1.}"
ETCD_VERSION="${ETCD_VERSION:-v3.5.21}"
KWOK_VERSION="${KWOK_VERSION:-v0.7.0}"
PROMETHEUS_OPERATOR_VERSION="${PROMETHEUS_OPERATOR_VERSION:-v0.81.0}"
CACHE="${VISION_KUBE_DIR:-${HOME:-/tmp}/.cache/vision-kube}"
BIN="$CACHE/bin"
mkdir -p "$BIN"
exec 9>"$CACHE/.install.lock"
flock 9

build() { nice -n 10 env GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $2" -o "$BIN/$1" "$3"; }

# Kubernetes: a throwaway module that requires k8s.io/kubernetes and pins every staging module to the
# matching v0 tag (the kubernetes go.mod replaces them with ./staging, which a dependent module cannot use).
KUBE_COMMANDS="kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy"
# The version each reports: `kubectl version --client`, the others `--version`.
version_args() { if [ "$1" = kubectl ]; then echo "version --client"; else echo --version; fi; }
missing=""
# shellcheck disable=SC2046 # the arguments are words
for c in $KUBE_COMMANDS; do current "$c" "$KUBE_VERSION" $(version_args "$c") || missing="$missing $c"; done
if [ -n "$missing" ]; then
  mod="$CACHE/src/kubernetes-$KUBE_VERSION"
  mkdir -p "$mod"
  {
    echo "module vision.local/kube"
    echo "go 1.25"
    echo "require k8s.io/kubernetes $KUBE_VERSION"
    for m in api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider \
      cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api \
      cri-client csi-translation-lib dynamic-resource-allocation endpointslice externaljwt kms \
      kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics \
      mount-utils pod-security-admission sample-apiserver sample-cli-plugin sample-controller; do
      echo "replace k8s.io/$m => k8s.io/$m $STAGING_VERSION"
    done
  } >"$mod/go.mod"
  ld="-X k8s.io/component-base/version.gitVersion=$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${KUBE_VERSION#v1.}"
  ld="${ld%.*}"
  for c in $missing; do
    echo "kube-install: building $c $KUBE_VERSION" >&2
    (cd "$mod" && build "$c.tmp" "$ld" "k8s.io/kubernetes/cmd/$c" && mv "$BIN/$c.tmp" "$BIN/$c")
    # shellcheck disable=SC2046
    built "$c" "$KUBE_VERSION" $(version_args "$c")
  done
fi

if ! current etcd "$ETCD_VERSION" --version; then
  mod="$CACHE/src/etcd-$ETCD_VERSION"
  mkdir -p "$mod"
  printf 'module vision.local/etcd\ngo 1.23\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" >"$mod/go.mod"
  printf 'package main\n\nimport (\n\t"os"\n\n\t"go.etcd.io/etcd/server/v3/etcdmain"\n)\n\nfunc main() { etcdmain.Main(os.Args) }\n' >"$mod/main.go"
  echo "kube-install: building etcd $ETCD_VERSION" >&2
  (cd "$mod" && build etcd.tmp "" . && mv "$BIN/etcd.tmp" "$BIN/etcd")
  built etcd "$ETCD_VERSION" --version
fi

for c in kwok kwokctl; do
  current "$c" "$KWOK_VERSION" --version && continue
  echo "kube-install: installing $c $KWOK_VERSION" >&2
  (cd "$CACHE" && nice -n 10 env GOBIN="$BIN" GO111MODULE=on GOFLAGS="-buildvcs=false" CGO_ENABLED=0 \
    go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/$c@$KWOK_VERSION")
  built "$c" "$KWOK_VERSION" --version
done
# The two prometheus-operator CRDs the chart's ServiceMonitor and PrometheusRule need, from the module zip
# (the Go module proxy serves it like any module; nothing of it is built), fetched again when a cached one carries
# another release in its operator.prometheus.io/version annotation.
CRDS="$CACHE/crds"
crd_current() { grep -qx "    operator.prometheus.io/version: ${PROMETHEUS_OPERATOR_VERSION#v}" "$CRDS/monitoring.coreos.com_$1.yaml" 2>/dev/null; }
if ! crd_current servicemonitors || ! crd_current prometheusrules; then
  echo "kube-install: fetching prometheus-operator $PROMETHEUS_OPERATOR_VERSION CRDs" >&2
  dir="$(cd "$CACHE" && go mod download -json "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  mkdir -p "$CRDS"
  for f in servicemonitors prometheusrules; do
    install -m 0644 "$dir/example/prometheus-operator-crd/monitoring.coreos.com_$f.yaml" "$CRDS/"
  done
fi
# The Gateway API CRDs (standard channel) in $VISION_KUBE_DIR/crds/gateway-api: the release that the Traefik of
# scripts/kube/install-node.sh is built against (its go.mod's sigs.k8s.io/gateway-api), from the module zip.
GATEWAY_API_VERSION="${GATEWAY_API_VERSION:-v1.4.0}"
if [ "$(cat "$CACHE/crds/gateway-api/.complete" 2>/dev/null)" != "$GATEWAY_API_VERSION" ]; then
  echo "kube-install: fetching the Gateway API $GATEWAY_API_VERSION CRDs" >&2
  dir="$(cd "$CACHE" && go mod download -json "sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  rm -rf "$CACHE/crds/gateway-api" && mkdir -p "$CACHE/crds/gateway-api"
  install -m 0644 "$dir"/config/crd/standard/*.yaml "$CACHE/crds/gateway-api/"
  echo "$GATEWAY_API_VERSION" >"$CACHE/crds/gateway-api/.complete"
fi
echo "$BIN"
