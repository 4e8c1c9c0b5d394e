#!/usr/bin/env bash
# Runs the end-to-end suite and the fault tests against the distributed deployment (six service processes on real
# Postgres, Kafka, Redis and an S3 server (SeaweedFS), with toxiproxy), without Docker:
#   1. installs the servers when missing (first run on a fresh machine: minutes, mostly compiling SeaweedFS and Jaeger),
#   2. starts those not running, 3. builds, 4. runs jest on test/e2e and test/distributed,
#   5. stops the servers this run started (VISION_STACK_KEEP=1 leaves them running). Exits non-zero on failure.
# Cases of test/e2e and test/transport that the standalone suite alone proves (standaloneOnly, test/helpers/composition.ts;
# docs/TESTING.md "Which composition proves what") are skipped here, each with its reason.
# Arguments replace the default test paths (test/e2e test/transport test/distributed), e.g. scripts/test-distributed.sh test/distributed/redis-down.test.ts
set -euo pipefail
cd "$(dirname "$0")/.."

t0=$SECONDS
# shellcheck source=stack/session.sh
source scripts/stack/session.sh
echo "[test-distributed] servers ready after $((SECONDS - t0))s" >&2
npm run build --silent
if [ "$#" -eq 0 ]; then set -- test/e2e test/transport test/distributed; fi
# --- live stream tests: trust the test CA of the https stream server (jest and the services it starts).
# (--trust: the test CA plus the bundle NODE_EXTRA_CA_CERTS already names, if any; Node takes one file.)
NODE_EXTRA_CA_CERTS="$(bash scripts/stack/live/tls.sh --trust)"
export NODE_EXTRA_CA_CERTS
# --- end live stream tests
E2E_STACK=distributed npx jest --runInBand "$@"
