#!/usr/bin/env bash
# `npm test`: the whole suite on this machine, set-up included, in phases; stops at the first phase that fails.
#   set-up (scripts/test-setup.sh), build, lint, dependency and SDK checks, every jest test in standalone mode,
#   the distributed suite on real servers (scripts/test-distributed.sh; VISION_DEPLOYMENT_RUNTIME=container runs
#   the services as containers of the image), its Kafka files again on the current Kafka (scripts/test-kafka-current.sh),
#   and the public API fuzzed (scripts/fuzz/schemathesis.sh).
# At the end, or on a failure, it prints each phase's time, the 20 slowest test files with the time their tests
# took against the time around them (starting and stopping stacks), and one closing line with the totals of every
# runner: `ci: N passed, N failed, N skipped`.
#   VISION_CI_PHASES  a file of "name<TAB>seconds<TAB>status" lines to add to (.ci/run times npm ci into it)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin:$HOME/go/bin"

work="$(mktemp -d)"
export VISION_CI_PHASES="${VISION_CI_PHASES:-$work/phases}"
export VISION_TEST_TALLY="${VISION_TEST_TALLY:-$work/tally}"
export VISION_TEST_TIMES="${VISION_TEST_TIMES:-$work/times}"
export FUZZ_REPORT_DIR="${FUZZ_REPORT_DIR:-$work/fuzz}"
mkdir -p "$FUZZ_REPORT_DIR"
touch "$VISION_CI_PHASES" "$VISION_TEST_TALLY" "$VISION_TEST_TIMES"

report() {
  local rc=$?
  node scripts/ci/report.js "$VISION_CI_PHASES" "$VISION_TEST_TIMES" || true
  node scripts/ci/tally.js "$VISION_TEST_TALLY" "$FUZZ_REPORT_DIR" || rc=1
  exit "$rc"
}
trap report EXIT

phase() { # <name> <command...>
  local name="$1" t0=$SECONDS rc=0
  shift
  echo "== $name ($(date -u +%H:%M:%S))"
  "$@" || rc=$?
  printf '%s\t%s\t%s\n' "$name" "$((SECONDS - t0))" "$rc" >>"$VISION_CI_PHASES"
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
phase "distributed suite" bash scripts/test-distributed.sh
phase "distributed Kafka files on Kafka 4.1" bash scripts/test-kafka-current.sh
phase "fuzz (schemathesis)" bash scripts/fuzz/schemathesis.sh
