#!/usr/bin/env bash
# A throwaway single-node Kubernetes cluster whose pods really run: the control plane of scripts/kube/cluster.sh
# (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, through kwokctl's binary runtime), and a node
# of containerd 2 and Debian's runc, the kubelet, kube-proxy (iptables), Debian's bridge CNI plugin, kube-router
# enforcing NetworkPolicies, CoreDNS as the cluster's DNS and Traefik serving Gateway API routes. kwok stays in the
# control plane for the nodes it fakes (annotation kwok.x-k8s.io/node=fake) and leaves the real node alone.
#
# Everything runs in a network namespace of its own (the node's address $NODE_IP), joined to the host by a veth
# pair; the host end is $HOST_IP, where the stack's servers listen for pods (VISION_STACK_POD_ADDRESS in
# scripts/stack/common.sh). Pods get addresses of $POD_CIDR on the node's bridge, Services of $SERVICE_CIDR.
# Nothing is pulled: the pause image and the images named in VISION_KUBE_IMAGES (podman's, default
# localhost/vision:dev) are imported into containerd.
#
#   scripts/kube/node-cluster.sh COMMAND [ARGS...]  runs COMMAND with KUBECONFIG naming the cluster (reached from the
#                                                  host), the cached kubectl on PATH and VISION_KUBE_* set below;
#                                                  exits with its status
#   scripts/kube/node-cluster.sh                   prints the settings once the node is Ready, then holds the
#                                                  cluster until its standard input closes or SIGINT/SIGTERM
# Exported to COMMAND: KUBECONFIG, VISION_KUBE_NODE_IP, VISION_KUBE_HOST_IP, VISION_KUBE_BRIDGE_IP (where the node's
# own processes reach pods from), VISION_KUBE_GATEWAY_URL (Traefik's "web" entry point, port 8000: the port of a
# Gateway's HTTP listener), VISION_KUBE_WORK (the work directory: logs of every component under log/).
# Env: VISION_KUBE_DIR (the install cache), VISION_KUBE_IMAGES, VISION_KUBE_KEEP=1 (keep the work directory).
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
CACHE="${VISION_KUBE_DIR:-${HOME:-/tmp}/.cache/vision-kube}"
BIN="$CACHE/bin"
for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy kwok kwokctl \
  containerd containerd-shim-runc-v2 ctr coredns traefik kube-router pause; do
  [ -x "$BIN/$b" ] || { echo "node-cluster.sh: $BIN/$b is missing (scripts/kube/install.sh, install-node.sh)" >&2; exit 2; }
done
for b in runc nsenter iptables ipset podman; do
  command -v "$b" >/dev/null || { echo "node-cluster.sh: $b is missing (scripts/kube/install-node.sh)" >&2; exit 2; }
done
[ -x /usr/lib/cni/bridge ] || { echo "node-cluster.sh: /usr/lib/cni/bridge is missing (scripts/kube/install-node.sh)" >&2; exit 2; }
export PATH="$BIN:$PATH"
KUBE_VERSION="${KUBE_VERSION:-v1.35.4}"

# shellcheck source=node-env.sh
source "$HERE/node-env.sh"
HOST_IP="$NODE_HOST_IP" POD_CIDR="$NODE_POD_CIDR" SERVICE_CIDR="$NODE_SERVICE_CIDR" DNS_IP="$NODE_DNS_IP" NS="$NODE_NS"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/vision-node.XXXXXX")"
LOG="$WORK/log"
mkdir -p "$LOG"
exec 8>"$CACHE/.node-cluster.lock"
flock -n 8 || { echo "node-cluster.sh: another node cluster runs on this machine" >&2; exit 75; }
# The node's images, containers and volumes live under $WORK: the service image imported into containerd and the
# pods' layers take about 2.7 GB over the faults' tests, and the kubelet evicts every pod below its floor (512 MiB,
# evictionHard below). Refuse to start short of that, rather than fail later with pods evicted and images collected.
NODE_MIN_FREE_MB="${VISION_KUBE_MIN_FREE_MB:-4096}"
free_mb="$(df -Pm "$WORK" | awk 'NR == 2 { print $4 }')"
[ "$free_mb" -ge "$NODE_MIN_FREE_MB" ] || {
  echo "node-cluster.sh: $free_mb MiB free on the filesystem of $WORK; the node needs $NODE_MIN_FREE_MB" >&2
  rm -rf "$WORK"
  exit 1
}
in_ns() { nsenter --net="/run/netns/$NS" -- "$@"; }
# A component of the node: started in the namespace, in a session of its own, its output in log/NAME.log.
start() { local name="$1"; shift; in_ns setsid "$@" >"$LOG/$name.log" 2>&1 </dev/null & echo $! >"$WORK/$name.pid"; }
wait_until() { # SECONDS WHAT COMMAND...
  local until=$((SECONDS + $1)) what="$2"; shift 2
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $until ] || { echo "node-cluster.sh: $what not ready after ${1:-?}s (logs: $LOG)" >&2; return 1; }
    sleep 1
  done
}

cleanup() {
  trap - EXIT INT TERM
  set +e
  in_ns kwokctl --name vision-node delete cluster >/dev/null 2>&1
  for p in "$WORK"/*.pid; do [ -f "$p" ] && kill -TERM -- "-$(cat "$p")" 2>/dev/null; done
  sleep 2
  for p in "$WORK"/*.pid; do [ -f "$p" ] && kill -KILL -- "-$(cat "$p")" 2>/dev/null; done
  # The containers outlive containerd: end every process of the kubelet's cgroups (each pod's sandbox has a network
  # namespace of its own, so the node's namespace does not hold them all), then every process left in the node's.
  for f in $(find /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/*/k8s.io -name cgroup.procs 2>/dev/null); do
    for pid in $(cat "$f"); do kill -KILL "$pid" 2>/dev/null; done
  done
  for pid in $(ip netns pids "$NS" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
  sleep 1
  find /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/*/k8s.io -depth -type d -exec rmdir {} \; 2>/dev/null
  # The kubelet's and containerd's mounts (volumes, rootfs overlays, shm) live in the host's mount table.
  grep -o " $WORK[^ ]*" /proc/self/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
  bash "$HERE/node-net.sh" down
  [ "${VISION_KUBE_KEEP:-0}" = 1 ] && echo "node-cluster.sh: kept $WORK" >&2 || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

bash "$HERE/node-net.sh" up

# --- control plane: kwokctl's binary runtime, inside the namespace, the API server advertising the node's address.
export KWOK_WORKDIR="$WORK/kwok" KWOK_KUBE_VERSION="$KUBE_VERSION"
INNER_KUBECONFIG="$WORK/kubeconfig.node"
PKI="$KWOK_WORKDIR/clusters/vision-node/pki" # made by kwokctl
patch() { printf -- '- name: %s\n  extraArgs:\n' "$1"; shift; while [ $# -gt 1 ]; do printf -- '  - { key: %s, value: "%s" }\n' "$1" "$2"; shift 2; done; }
{
  echo "apiVersion: config.kwok.x-k8s.io/v1alpha1"
  echo "kind: KwokctlConfiguration"
  echo "componentsPatches:"
  # The kubelet takes the API server's calls (exec, logs) by the admin certificate of kwokctl's CA.
  patch kube-apiserver advertise-address "$NODE_IP" service-cluster-ip-range "$SERVICE_CIDR" \
    kubelet-preferred-address-types InternalIP,Hostname \
    kubelet-client-certificate "$PKI/admin.crt" kubelet-client-key "$PKI/admin.key"
  patch kube-controller-manager service-cluster-ip-range "$SERVICE_CIDR"
  echo "---"
  echo "apiVersion: config.kwok.x-k8s.io/v1alpha1"
  echo "kind: KwokConfiguration"
  echo "options:"
  echo "  manageAllNodes: false"
  echo "  manageNodesWithAnnotationSelector: kwok.x-k8s.io/node=fake"
} >"$WORK/kwokctl.yaml"
in_ns kwokctl --name vision-node -c "$HERE/kwok-stages.yaml" -c "$WORK/kwokctl.yaml" create cluster --runtime binary \
  --kube-apiserver-binary "$BIN/kube-apiserver" --kube-controller-manager-binary "$BIN/kube-controller-manager" \
  --kube-scheduler-binary "$BIN/kube-scheduler" --etcd-binary "$BIN/etcd" --kwok-controller-binary "$BIN/kwok" \
  --kubeconfig "$INNER_KUBECONFIG" --kube-apiserver-port 6443 --wait 3m >"$LOG/kwokctl.log" 2>&1 \
  || { cat "$LOG/kwokctl.log" >&2; exit 1; }
# From the host: the node's address, the certificate checked against the name it was made for.
export KUBECONFIG="$WORK/kubeconfig"
sed -e "s#server: https://127.0.0.1:6443#server: https://$NODE_IP:6443#" \
  -e "s#^\(\s*\)server: \(.*\)#&\n\1tls-server-name: 127.0.0.1#" "$INNER_KUBECONFIG" >"$KUBECONFIG"

# --- containerd: its own root, state and socket under the work directory.
CTRD="$WORK/containerd"
mkdir -p "$CTRD" "$WORK/cni"
cat >"$CTRD/config.toml" <<EOF
version = 3
root = "$CTRD/root"
state = "$CTRD/state"
[grpc]
  address = "$CTRD/containerd.sock"
[plugins.'io.containerd.cri.v1.runtime']
  # This machine's root lacks CAP_SYS_RESOURCE: runc may not lower a process's oom_score_adj.
  restrict_oom_score_adj = true
  # The pods' network namespaces under the state directory: unmounted and removed with the work directory.
  netns_mounts_under_state_dir = true
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["/usr/lib/cni"]
    conf_dir = "$WORK/cni"
[plugins.'io.containerd.cri.v1.images'.pinned_images]
  sandbox = "localhost/pause:vision"
EOF
cat >"$WORK/cni/10-vision.conflist" <<EOF
{ "cniVersion": "1.0.0", "name": "vision-pods", "plugins": [
  { "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
    "ipam": { "type": "host-local", "ranges": [[{ "subnet": "$POD_CIDR" }]], "routes": [{ "dst": "0.0.0.0/0" }] } },
  { "type": "portmap", "capabilities": { "portMappings": true } } ] }
EOF
start containerd containerd --config "$CTRD/config.toml"
export CONTAINERD_ADDRESS="$CTRD/containerd.sock"
wait_until 60 containerd ctr version

# --- images: the pause image (one static binary) and the project's, from podman into containerd's k8s.io namespace.
bash "$HERE/node-images.sh" "$WORK/images" localhost/pause:vision ${VISION_KUBE_IMAGES:-localhost/vision:dev} |
  while read -r tar; do ctr -n k8s.io images import --no-unpack=false "$tar" >>"$LOG/images.log" 2>&1; done
ctr -n k8s.io images ls -q >>"$LOG/images.log"

# --- the kubelet: cgroup v1 allowed explicitly, cgroupfs, client certificates from the control plane's CA.
cat >"$WORK/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$CTRD/containerd.sock
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
authentication: { anonymous: { enabled: false }, webhook: { enabled: false }, x509: { clientCAFile: $PKI/ca.crt } }
authorization: { mode: AlwaysAllow }
clusterDNS: [$DNS_IP]
clusterDomain: cluster.local
resolvConf: $WORK/resolv.conf
failSwapOn: false
podCIDR: $POD_CIDR
maxPods: 60
serializeImagePulls: false
imageGCHighThresholdPercent: 100
# Floors in bytes, not shares: the node shares a large disk with everything else on the machine, whose 1 % (the
# smallest share) can be more than what is free, and below it the kubelet evicts every pod and collects its images.
evictionHard: { memory.available: 200Mi, nodefs.available: 512Mi, imagefs.available: 512Mi }
protectKernelDefaults: false
staticPodPath: ""
EOF
printf 'nameserver %s\n' "$NODE_IP" >"$WORK/resolv.conf"
start kubelet kubelet --config "$WORK/kubelet.yaml" --kubeconfig "$INNER_KUBECONFIG" --root-dir "$WORK/kubelet" \
  --node-ip "$NODE_IP" --hostname-override vision-node -v 1
wait_until 120 "the node" kubectl get node vision-node
kubectl patch node vision-node --type merge -p "{\"spec\":{\"podCIDR\":\"$POD_CIDR\",\"podCIDRs\":[\"$POD_CIDR\"]}}" >/dev/null

# --- kube-proxy (iptables), kube-router (NetworkPolicy only), CoreDNS and Traefik: processes of the node.
cat >"$WORK/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: { kubeconfig: $INNER_KUBECONFIG }
hostnameOverride: vision-node
clusterCIDR: $POD_CIDR
conntrack: { maxPerCore: 0 }
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
EOF
start kube-proxy kube-proxy --config "$WORK/kube-proxy.yaml"
start kube-router kube-router --kubeconfig "$INNER_KUBECONFIG" --hostname-override vision-node \
  --run-firewall=true --run-router=false --run-service-proxy=false --metrics-port 0 --health-port 0
bash "$HERE/node-addons.sh" "$WORK" "$INNER_KUBECONFIG" "$DNS_IP" "$NODE_IP"
start coredns coredns -conf "$WORK/Corefile"
start traefik traefik --configfile "$WORK/traefik.yaml"
kubectl wait --for=condition=Ready node/vision-node --timeout=120s >/dev/null
wait_until 60 "cluster DNS" in_ns sh -c "dig +short @$DNS_IP kubernetes.default.svc.cluster.local | grep -q ."
wait_until 60 "Traefik" curl -fsS "http://$NODE_IP:8081/ping"

export VISION_KUBE_NODE_IP="$NODE_IP" VISION_KUBE_HOST_IP="$HOST_IP" VISION_KUBE_WORK="$WORK"
export VISION_KUBE_BRIDGE_IP="$NODE_BRIDGE_IP"
export VISION_KUBE_GATEWAY_URL="http://$NODE_IP:8000"
if [ $# -gt 0 ]; then
  status=0
  "$@" || status=$?
  # What the node itself decided, for a failed run: its conditions (pressure on memory or disk) and its evictions.
  [ "$status" -eq 0 ] || {
    kubectl get node vision-node -o jsonpath='{range .status.conditions[*]}{.type}={.status} {end}{"\n"}' >&2 || true
    kubectl get events -A --field-selector reason=Evicted 2>/dev/null | head -20 >&2 || true
  }
  exit "$status"
fi
env | grep -E '^(KUBECONFIG|VISION_KUBE_[A-Z_]+)=' | sort
cat >/dev/null || true
