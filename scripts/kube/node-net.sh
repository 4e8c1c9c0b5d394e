#!/usr/bin/env bash
# The node's network namespace, joined to the host by a veth pair (the host end "vision-host").
#   scripts/kube/node-net.sh up     creates it (idempotent); the node's default route is the host
#   scripts/kube/node-net.sh down   removes it
# The names and addresses: scripts/kube/node-env.sh.
# Inside: loopback up, forwarding on, bridged traffic through iptables (kube-proxy and kube-router need both).
# On the host: only the /30 between the two ends; nothing is forwarded beyond it.
set -euo pipefail
# shellcheck source=node-env.sh
source "$(dirname "$0")/node-env.sh"
ns="$NODE_NS" host_ip="$NODE_HOST_IP" node_ip="$NODE_IP"
case "${1:-}" in
  up)
    ip netns list | grep -qw "$ns" || ip netns add "$ns"
    if ! ip link show vision-host >/dev/null 2>&1; then
      ip link add vision-host type veth peer name eth0 netns "$ns"
      ip addr add "$host_ip/30" dev vision-host
      ip link set vision-host up
    fi
    n() { nsenter --net="/run/netns/$ns" -- "$@"; }
    n ip link set lo up
    n ip addr replace "$node_ip/30" dev eth0
    n ip link set eth0 up
    n ip route replace default via "$host_ip"
    n sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.route_localnet=1
    # br_netfilter's switches are per namespace on this kernel; without them a pod's packets to a Service address
    # on the same bridge skip kube-proxy's rules.
    n sh -c 'for f in /proc/sys/net/bridge/bridge-nf-call-iptables /proc/sys/net/bridge/bridge-nf-call-ip6tables; do [ -w "$f" ] && echo 1 >"$f"; done; true'
    ;;
  down)
    ip netns del "$ns" 2>/dev/null || true
    ip link del vision-host 2>/dev/null || true
    ;;
  *) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
