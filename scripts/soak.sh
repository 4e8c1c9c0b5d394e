#!/usr/bin/env bash
# The soak (bench/soak.js) on the distributed deployment: installs and starts the servers of
# scripts/stack when needed (like scripts/test-distributed.sh), builds, runs the soak, stops the servers
# this run started. Takes the shared servers for its whole length: run it under the stack lock, e.g.
#   bash scripts/soak.sh               # 10 minutes of traffic (+ ~3 min)
#   bash scripts/soak.sh --minutes 2   # the short variant
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=stack/session.sh
source scripts/stack/session.sh
npm run build --silent
node bench/soak.js "$@"
