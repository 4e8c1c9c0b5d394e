#!/usr/bin/env bash
# The soak of issue 20 (bench/soak.js) on the distributed deployment: installs and starts the servers of
# scripts/stack when needed (like scripts/test-distributed.sh), builds, runs the soak, stops the servers
# this run started. Takes the shared servers for its whole length: run it under the stack lock, e.g.
#   flock /tmp/vision-stack.lock bash scripts/soak.sh               # 10 minutes of traffic (+ ~3 min)
#   flock /tmp/vision-stack.lock bash scripts/soak.sh --minutes 2   # the short variant
set -euo pipefail
cd "$(dirname "$0")/.."

started="$(mktemp)"
cleanup() {
  local rc=$?
  if [ "${VISION_STACK_KEEP:-0}" != 1 ] && [ -s "$started" ]; then
    # shellcheck disable=SC2046
    scripts/stack/stop.sh $(tac "$started" | tr '\n' ' ') || rc=1
  fi
  rm -f "$started"
  exit "$rc"
}
trap cleanup EXIT

scripts/stack/install.sh
scripts/stack/start.sh --started-file "$started"
npm run build --silent
node bench/soak.js "$@"
