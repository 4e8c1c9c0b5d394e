#!/usr/bin/env bash
# Runs a bench against the servers of scripts/stack (Postgres, Kafka, Redis, the S3 server), which the bench's own
# distributed deployment uses: installs and starts them when needed, builds, runs the bench, stops the servers this run
# started (scripts/stack/session.sh: one run at a time; VISION_STACK_WAIT_S to wait for another's), e.g.
#   bash scripts/bench-distributed.sh cost --distributed
set -euo pipefail
cd "$(dirname "$0")/.."
bench="$1"
shift

# shellcheck source=stack/session.sh
source scripts/stack/session.sh
npm run build --silent
node "bench/$bench.bench.js" "$@"
