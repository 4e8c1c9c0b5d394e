#!/usr/bin/env bash
# The chart on a real node: builds what the node runs when missing (scripts/kube/install.sh, install-node.sh; cached
# under ~/.cache/vision-kube), starts the second set of the stack's servers (VISION_STACK_SET=node) listening for
# pods as well (VISION_STACK_POD_ADDRESS, the host end of the node's network), starts the cluster
# (scripts/kube/node-cluster.sh) and runs test/cluster against it: the chart installed from the service image,
# reached through Traefik's Gateway API route, faults under load.
# Arguments replace the default test path (test/cluster). One run at a time: the guard of that set of servers
# (scripts/stack/guard.sh) and the node cluster's own lock.
set -euo pipefail
cd "$(dirname "$0")/.."
# The Node of .node-version (scripts/ci/ensure-node.sh), as every phase of npm test has it.
PATH="$(bash scripts/ci/ensure-node.sh):$PATH:/usr/local/go/bin:$HOME/go/bin"
export PATH
HELM="$(bash scripts/ensure-helm.sh)"
export VISION_HELM="$HELM"
bash scripts/kube/install.sh >/dev/null
bash scripts/kube/install-node.sh >/dev/null
podman image exists "${VISION_IMAGE:-localhost/vision:dev}" || bash scripts/image/build.sh >/dev/null
# shellcheck source=kube/node-env.sh
source scripts/kube/node-env.sh
# The second set of the stack's servers (scripts/stack/common.sh), so that this run goes on beside the distributed
# suite's. They bind the node's host address: it must exist when they start, once this run holds their guard.
export VISION_STACK_SET=node
export VISION_STACK_POD_ADDRESS="$NODE_HOST_IP" VISION_STACK_BEFORE_START="bash scripts/kube/node-net.sh up"
# shellcheck source=stack/session.sh
source scripts/stack/session.sh
if [ "$#" -eq 0 ]; then set -- test/cluster; fi
bash scripts/kube/node-cluster.sh env E2E_STACK=cluster npx jest --runInBand "$@"
