#!/usr/bin/env bash
# The node's add-ons, for scripts/kube/node-cluster.sh: the kube-dns Service (CoreDNS runs as a process of the node
# and serves it on the node's address), the Gateway API CRDs, the "traefik" GatewayClass and Traefik's account,
# and the configuration files of CoreDNS and Traefik in WORK.
#   scripts/kube/node-addons.sh WORK NODE_KUBECONFIG DNS_IP NODE_IP     (KUBECONFIG: the cluster, from the host)
set -euo pipefail
CACHE="${VISION_KUBE_DIR:-${HOME:-/tmp}/.cache/vision-kube}"
work="$1" node_kubeconfig="$2" dns_ip="$3" node_ip="$4"

kubectl apply -f - >/dev/null <<EOF2
apiVersion: v1
kind: Service
metadata: { name: kube-dns, namespace: kube-system, labels: { k8s-app: kube-dns } }
spec:
  clusterIP: $dns_ip
  ports: [{ name: dns, port: 53, protocol: UDP }, { name: dns-tcp, port: 53, protocol: TCP }]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kube-dns-node
  namespace: kube-system
  labels: { kubernetes.io/service-name: kube-dns, endpointslice.kubernetes.io/managed-by: vision-node-cluster }
addressType: IPv4
ports: [{ name: dns, port: 53, protocol: UDP }, { name: dns-tcp, port: 53, protocol: TCP }]
endpoints: [{ addresses: ["$node_ip"], conditions: { ready: true } }]
EOF2
cat >"$work/Corefile" <<EOF2
.:53 {
    bind $node_ip
    errors
    ready 127.0.0.1:8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $node_kubeconfig
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 5
}
EOF2

kubectl apply --server-side -f "$CACHE/crds/gateway-api/" >/dev/null
kubectl wait --for=condition=Established crd --all --timeout=60s >/dev/null
kubectl apply -f - >/dev/null <<EOF2
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: traefik }
spec: { controllerName: traefik.io/gateway-controller }
---
apiVersion: v1
kind: ServiceAccount
metadata: { name: traefik, namespace: kube-system }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: traefik-gateway }
rules:
  - apiGroups: ['']
    resources: [namespaces, services, secrets, configmaps, nodes]
    verbs: [get, list, watch]
  - apiGroups: [discovery.k8s.io]
    resources: [endpointslices]
    verbs: [get, list, watch]
  - apiGroups: [gateway.networking.k8s.io]
    resources: [gatewayclasses, gateways, httproutes, grpcroutes, tcproutes, tlsroutes, referencegrants, backendtlspolicies]
    verbs: [get, list, watch]
  - apiGroups: [gateway.networking.k8s.io]
    resources: [gatewayclasses/status, gateways/status, httproutes/status, grpcroutes/status, tcproutes/status, tlsroutes/status, backendtlspolicies/status]
    verbs: [update, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: traefik-gateway }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: traefik-gateway }
subjects: [{ kind: ServiceAccount, name: traefik, namespace: kube-system }]
EOF2
token="$(kubectl -n kube-system create token traefik --duration 48h)"
ca="$(dirname "$node_kubeconfig")/kwok/clusters/vision-node/pki/ca.crt"
# Entry points: "web" on 8000 (the port a Gateway's HTTP listener names), "traefik" on 8081 (ping). No read
# timeout on "web": a large upload may take longer than Traefik's default 60 s, and the service bounds its own.
cat >"$work/traefik.yaml" <<EOF2
entryPoints:
  web:
    address: "$node_ip:8000"
    transport: { respondingTimeouts: { readTimeout: 0s } }
  traefik:
    address: "$node_ip:8081"
ping: { entryPoint: traefik }
providers:
  kubernetesGateway:
    endpoint: https://127.0.0.1:6443
    token: "$token"
    certAuthFilePath: $ca
log: { level: INFO, noColor: true }
accessLog: {}
EOF2
