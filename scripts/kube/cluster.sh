#!/usr/bin/env bash
# A throwaway Kubernetes cluster: the real etcd, kube-apiserver, kube-controller-manager and kube-scheduler
# (the binaries of scripts/kube/install.sh), with kwok faking the nodes and the pods (no kubelet, no
# container runs: a scheduled pod is marked running and ready, a run-once pod (a Job's, a `helm test` pod)
# then succeeds: scripts/kube/kwok-stages.yaml). kwokctl's binary
# runtime, so nothing is pulled. Every component listens on 127.0.0.1 only. The cluster has a unique name
# and its own work directory, and is deleted when this script exits.
#
#   scripts/kube/cluster.sh COMMAND [ARGS...]   runs COMMAND with KUBECONFIG naming the cluster and the
#                                               cached kubectl on PATH; exits with its status
#   scripts/kube/cluster.sh                     prints `KUBECONFIG=<path>` once the cluster and its nodes
#                                               are ready, then holds the cluster until its standard input
#                                               closes or it gets SIGINT/SIGTERM
# Env: VISION_KUBE_DIR (the install cache, default $HOME/.cache/vision-kube), VISION_KUBE_NODES (fake nodes,
# default 3: each 16 CPUs, 64Gi memory, 110 pods).
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
CACHE="${VISION_KUBE_DIR:-${HOME:-/tmp}/.cache/vision-kube}"
BIN="$CACHE/bin"
NODES="${VISION_KUBE_NODES:-3}"
for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok kwokctl; do
  [ -x "$BIN/$b" ] || { echo "cluster.sh: $BIN/$b is missing (run scripts/kube/install.sh)" >&2; exit 2; }
done
export PATH="$BIN:$PATH"

NAME="vision-$$-$RANDOM"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/vision-kube.XXXXXX")"
export KWOK_WORKDIR="$WORK" KUBECONFIG="$WORK/kubeconfig"
# kwokctl derives component flags from the Kubernetes version; the cached binaries are this one.
export KWOK_KUBE_VERSION="${KUBE_VERSION:-v1.35.4}"

cleanup() {
  trap - EXIT INT TERM
  kwokctl --name "$NAME" delete cluster >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Seven free loopback ports (the kernel's choice, released just before use).
read -r P_API P_ETCD P_PEER P_KCM P_SCHED P_KWOK P_SPARE < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(7)]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))')
: "$P_SPARE"

# kwokctl's binary runtime binds 0.0.0.0; a later flag of the same name wins, so these patches keep every
# component on loopback (a configuration file: kwokctl v0.7.0's --extra-args mixes up several components).
lo=127.0.0.1
patch() { printf -- '- name: %s\n  extraArgs:\n' "$1"; shift; while [ $# -gt 1 ]; do printf -- '  - { key: %s, value: "%s" }\n' "$1" "$2"; shift 2; done; }
{
  echo "apiVersion: config.kwok.x-k8s.io/v1alpha1"
  echo "kind: KwokctlConfiguration"
  echo "componentsPatches:"
  patch kube-apiserver bind-address $lo advertise-address $lo
  patch kube-controller-manager bind-address $lo
  patch kube-scheduler bind-address $lo
  patch kwok-controller server-address "$lo:$P_KWOK"
  patch etcd listen-client-urls "http://$lo:$P_ETCD" advertise-client-urls "http://$lo:$P_ETCD" \
    listen-peer-urls "http://$lo:$P_PEER" initial-advertise-peer-urls "http://$lo:$P_PEER" \
    initial-cluster "node0=http://$lo:$P_PEER"
} >"$WORK/loopback.yaml"

kwokctl --name "$NAME" -c "$HERE/kwok-stages.yaml" -c "$WORK/loopback.yaml" create cluster --runtime binary \
  --kube-apiserver-binary "$BIN/kube-apiserver" \
  --kube-controller-manager-binary "$BIN/kube-controller-manager" \
  --kube-scheduler-binary "$BIN/kube-scheduler" \
  --etcd-binary "$BIN/etcd" \
  --kwok-controller-binary "$BIN/kwok" \
  --kubeconfig "$KUBECONFIG" \
  --kube-apiserver-port "$P_API" --etcd-port "$P_ETCD" \
  --kube-controller-manager-port "$P_KCM" --kube-scheduler-port "$P_SCHED" --controller-port "$P_KWOK" \
  --wait 3m >&2

# Fake nodes: kwok-controller manages every Node and reports it Ready.
for i in $(seq 1 "$NODES"); do
  cat <<EOF
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  annotations: { kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: '0' }
  labels: { kubernetes.io/hostname: kwok-node-$i, kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok }
status:
  allocatable: { cpu: '16', memory: 64Gi, pods: '110' }
  capacity: { cpu: '16', memory: 64Gi, pods: '110' }
---
EOF
done | kubectl apply -f - >&2
kubectl wait --for=condition=Ready node --all --timeout=120s >&2

if [ $# -gt 0 ]; then
  status=0
  "$@" || status=$?
  exit "$status"
fi
echo "KUBECONFIG=$KUBECONFIG"
cat >/dev/null || true
