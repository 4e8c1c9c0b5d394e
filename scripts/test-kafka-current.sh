#!/usr/bin/env bash
# Runs the part of the distributed suite that goes through the Kafka bus against a current Apache Kafka broker
# (4.1.0 by default: KRaft only, log4j2, no protocol versions older than KIP-896 keeps), through
# scripts/test-distributed.sh with KAFKA_VERSION set, so the stack scripts install and start that broker
# (scripts/stack/install.sh resolves its jars beside the default 3.9 ones; its KRaft data directory is its own).
#   KAFKA_CURRENT_VERSION  the broker version to run against (default 4.1.0)
# Arguments replace the default test files. A broker of another version on the stack's ports is stopped for the
# run and started again afterwards, under the guard of the stack's servers (scripts/stack/guard.sh), taken before
# anything is stopped: beside another run this one exits 75 (or waits, VISION_STACK_WAIT_S) and leaves its broker
# alone; scripts/test-distributed.sh, run inside, shares the guard. Exits non-zero when a test fails or the broker
# is not the version asked for.
set -euo pipefail
cd "$(dirname "$0")/.."

export KAFKA_VERSION="${KAFKA_CURRENT_VERSION:-4.1.0}"
if [ "$#" -eq 0 ]; then
  set -- \
    test/distributed/kafka-bus.test.ts \
    test/distributed/kafka-restart.test.ts \
    test/distributed/replicas.test.ts \
    test/distributed/webhooks.test.ts \
    test/distributed/inference-timeout.test.ts
fi

# shellcheck source=stack/guard.sh
source scripts/stack/guard.sh

run_dir="$(scripts/stack/status.sh --state-dir)/run"
kafka_pid() { [ -f "$run_dir/kafka.pid" ] && kill -0 "$(cat "$run_dir/kafka.pid")" 2>/dev/null && cat "$run_dir/kafka.pid"; }

# A broker of another version is put back as it was when this script ends (scripts started before the version file
# existed ran the default version).
previous=""
restore() {
  local rc=$?
  if [ -n "$previous" ]; then
    scripts/stack/stop.sh kafka || rc=1
    KAFKA_VERSION="$previous" scripts/stack/start.sh kafka || rc=1
  fi
  session_release
  exit "$rc"
}
trap restore EXIT
if kafka_pid >/dev/null; then
  running="$(cat "$run_dir/kafka.version" 2>/dev/null || echo 3.9.1)"
  if [ "$running" != "$KAFKA_VERSION" ]; then
    previous="$running"
    echo "[test-kafka-current] stopping Kafka $previous for the run against $KAFKA_VERSION" >&2
    scripts/stack/stop.sh kafka
  fi
fi

# The broker must be the version asked for while jest runs: start it here (test-distributed.sh then finds it
# running and leaves it) and check the jars its process runs.
started_here=0
if ! kafka_pid >/dev/null; then
  bash scripts/stack/install.sh kafka
  scripts/stack/start.sh kafka
  started_here=1
fi
pid="$(kafka_pid)" || { echo "[test-kafka-current] Kafka did not start" >&2; exit 1; }
if ! tr '\0' '\n' <"/proc/$pid/cmdline" | grep -q "/kafka-$KAFKA_VERSION/lib/"; then
  echo "[test-kafka-current] the running broker (pid $pid) is not Kafka $KAFKA_VERSION" >&2
  exit 1
fi
echo "[test-kafka-current] Kafka $KAFKA_VERSION (pid $pid); files: $*" >&2

t0=$SECONDS
rc=0
bash scripts/test-distributed.sh "$@" || rc=$?
echo "[test-kafka-current] jest against Kafka $KAFKA_VERSION: exit $rc after $((SECONDS - t0))s" >&2
if [ "$started_here" = 1 ] && [ "${VISION_STACK_KEEP:-0}" != 1 ]; then scripts/stack/stop.sh kafka || rc=1; fi
exit "$rc"
