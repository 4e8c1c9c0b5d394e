#!/usr/bin/env bash
# `npm test`: the whole suite on this machine, set-up included, in phases; stops at the first phase that fails.
#   set-up (scripts/test-setup.sh), build, lint, dependency and SDK checks, every jest test in standalone mode,
#   the distributed suite on real servers (scripts/test-distributed.sh; VISION_DEPLOYMENT_RUNTIME=container runs
#   the services as containers of the image), its Kafka files again on the current Kafka (scripts/test-kafka-current.sh),
#   and the public API fuzzed (scripts/fuzz/schemathesis.sh), beside the last two.
# At the end, or on a failure, it prints each phase's time, the 20 slowest test files with the time their tests
# took against the time around them (starting and stopping stacks), and one closing line with the totals of every
# runner: `ci: N passed, N failed, N skipped`.
#   VISION_CI_PHASES  a file of "name<TAB>seconds<TAB>status[<TAB>beside]" lines to add to (.ci/run times npm ci into it)
set -euo pipefail
cd "$(dirname "$0")/.."
# Every phase runs on the Node of .node-version (scripts/ci/ensure-node.sh: cached in ~/.cache/vision-node, fetched
# once from the npm registry when missing), whatever node started npm.
PATH="$(bash scripts/ci/ensure-node.sh):$PATH:/usr/local/go/bin:$HOME/go/bin"
export PATH ONNXRUNTIME_NODE_INSTALL=skip

work="$(mktemp -d)"
export VISION_CI_PHASES="${VISION_CI_PHASES:-$work/phases}"
export VISION_TEST_TALLY="${VISION_TEST_TALLY:-$work/tally}"
export VISION_TEST_TIMES="${VISION_TEST_TIMES:-$work/times}"
export FUZZ_REPORT_DIR="${FUZZ_REPORT_DIR:-$work/fuzz}"
mkdir -p "$FUZZ_REPORT_DIR"
touch "$VISION_CI_PHASES" "$VISION_TEST_TALLY" "$VISION_TEST_TIMES"

fuzz_pid=""
report() {
  local rc=$?
  # A phase that failed ends the run: the fuzzer beside it stops too, and its output so far is shown.
  if [ -n "$fuzz_pid" ]; then
    { kill -- "-$fuzz_pid" && wait "$fuzz_pid"; } 2>/dev/null || true
    cat "$fuzz_log" 2>/dev/null || true
  fi
  node scripts/ci/report.js "$VISION_CI_PHASES" "$VISION_TEST_TIMES" || true
  node scripts/ci/tally.js "$VISION_TEST_TALLY" "$FUZZ_REPORT_DIR" || rc=1
  exit "$rc"
}
trap report EXIT

phase() { # <name> <command...>   (PHASE_BESIDE=1: runs beside another phase, so its time is not added to the total)
  local name="$1" t0=$SECONDS rc=0
  shift
  echo "== $name ($(date -u +%H:%M:%S))"
  "$@" || rc=$?
  printf '%s\t%s\t%s\t%s\n' "$name" "$((SECONDS - t0))" "$rc" "${PHASE_BESIDE:-0}" >>"$VISION_CI_PHASES"
  [ "$rc" -eq 0 ] || { echo "== $name failed (exit $rc)" >&2; return "$rc"; }
}

phase "set-up: tools, servers, image" bash scripts/test-setup.sh
phase "build" npm run build --silent
phase "lint" npm run lint --silent
phase "dependency and SDK checks" bash -c 'npm run deps:check --silent && npm run sdk:check --silent'
phase "alert rules (promtool)" bash -c 'promtool check rules charts/vision/files/prometheus-rules.yaml &&
  promtool test rules charts/vision/files/prometheus-rules.test.yaml &&
  promtool check config --syntax-only deploy/compose/prometheus.yml'
phase "jest, standalone" npx jest
# The fuzzer drives a standalone instance of its own and no stack server, so it runs beside the distributed suite
# (whose time is mostly spent waiting on servers and processes); its output is printed when both have ended.
fuzz_log="$work/fuzz.log"
set -m # its own process group, so that a failure elsewhere stops all of it
PHASE_BESIDE=1 phase "fuzz (schemathesis), beside the distributed suite" bash scripts/fuzz/schemathesis.sh \
  >"$fuzz_log" 2>&1 &
fuzz_pid=$!
set +m
phase "distributed suite" bash scripts/test-distributed.sh
phase "distributed Kafka files on Kafka 4.1" bash scripts/test-kafka-current.sh
fuzz_rc=0
wait "$fuzz_pid" || fuzz_rc=$?
fuzz_pid=""
cat "$fuzz_log"
[ "$fuzz_rc" -eq 0 ] || { echo "== fuzz (schemathesis) failed (exit $fuzz_rc)" >&2; exit "$fuzz_rc"; }
