# The addresses of the test cluster's node (sourced by scripts/kube/node-*.sh and scripts/test-cluster.sh). One node
# cluster at a time on a machine: the stack's servers listen for its pods on NODE_HOST_IP.
NODE_NS=vision-node
NODE_HOST_IP=10.213.0.1 # the host end of the node's veth pair
NODE_IP=10.213.0.2      # the node's address: API server, kubelet, Traefik's entry points, CoreDNS
NODE_POD_CIDR=10.244.0.0/24
NODE_BRIDGE_IP=10.244.0.1 # the pods' gateway: what the node's own processes (Traefik) reach them from
NODE_SERVICE_CIDR=10.96.0.0/16
NODE_DNS_IP=10.96.0.10
