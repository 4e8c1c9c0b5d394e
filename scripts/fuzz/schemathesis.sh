#!/usr/bin/env bash
# Fuzzes the public API against docs/openapi.yaml (as served at /openapi.json) with schemathesis, a fuzzer
# we did not write: every phase (examples, coverage, fuzzing, stateful), every check (--checks all), a
# bounded number of examples per operation and a bounded time. Target: a standalone instance on loopback
# (scripts/fuzz/target.js). Exits non-zero on any failure. Needs `npm run build` first.
# Every operation is fuzzed, the results stream included: the target ends a stream after 5 s
# (RESULTS_STREAM_MAX_MS in scripts/fuzz/target.js), well inside the request timeout.
#   FUZZ_MAX_EXAMPLES (default 25), FUZZ_MAX_TIME seconds for the whole run (default 300), FUZZ_SEED.
# schemathesis is installed from PyPI into a virtualenv under ~/.cache on first use.
set -euo pipefail
cd "$(dirname "$0")/../.."

ST_VERSION=4.32.5
VENV="${XDG_CACHE_HOME:-$HOME/.cache}/vision-schemathesis-$ST_VERSION"
if [ ! -x "$VENV/bin/schemathesis" ]; then
  if ! command -v python3 >/dev/null 2>&1 || ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3 python3-venv
  fi
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "schemathesis==$ST_VERSION"
fi
"$VENV/bin/schemathesis" --version

SHARED_DIR="${VISION_SHARED_DIR:-$(cd .. && pwd)/shared}"
[ -d "$SHARED_DIR/media" ] || { echo "test data not found in $SHARED_DIR (set VISION_SHARED_DIR)" >&2; exit 1; }
work="$(mktemp -d)"
target_pid=""
cleanup() {
  if [ -n "$target_pid" ]; then kill "$target_pid" 2>/dev/null || true; wait "$target_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

export FUZZ_API_KEY="fuzz-key-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export FUZZ_OTHER_KEY="fuzz-other-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
VISION_SHARED_DIR="$SHARED_DIR" node scripts/fuzz/target.js "$work/ready.json" >"$work/target.log" 2>&1 &
target_pid=$!
for _ in $(seq 1 240); do
  [ -s "$work/ready.json" ] && break
  kill -0 "$target_pid" 2>/dev/null || { cat "$work/target.log" >&2; echo "target did not start" >&2; exit 1; }
  sleep 1
done
[ -s "$work/ready.json" ] || { cat "$work/target.log" >&2; echo "target not ready after 240 s" >&2; exit 1; }
url="$(node -p "require('$work/ready.json').url")"
export FUZZ_MEDIA_URL="$(node -p "require('$work/ready.json').media")"
export FUZZ_RECEIVER_URL="$(node -p "require('$work/ready.json').receiver")"
export FUZZ_SHARED_DIR="$SHARED_DIR"
export FUZZ_TARGET_URL="$url"
echo "[fuzz] target $url"

# schemathesis prints pytest-style banners ("===== 1 warning in 300.03s =====") that log readers take for a pytest
# run that executed no test; they are rewritten as "-- ... --" (the JUnit report and the exit code are unchanged).
rc=0
PYTHONPATH=scripts/fuzz SCHEMATHESIS_HOOKS=hooks "$VENV/bin/schemathesis" \
  --config-file scripts/fuzz/schemathesis.toml run "$url/openapi.json" \
  --url "$url" \
  --header "Authorization: Bearer $FUZZ_API_KEY" \
  --phases examples,coverage,fuzzing,stateful \
  --checks all \
  --max-examples "${FUZZ_MAX_EXAMPLES:-25}" \
  --max-time "${FUZZ_MAX_TIME:-300}" \
  --request-timeout 60 \
  --max-response-time 60 \
  --workers 2 \
  --generation-database none \
  --no-color \
  ${FUZZ_SEED:+--seed "$FUZZ_SEED"} \
  --report junit --report-dir "${FUZZ_REPORT_DIR:-$work/report}" 2>&1 \
  | sed -u -E 's/^=+ (.*[^ =]) =+$/-- \1 --/' || rc=$?
if [ "$rc" -ne 0 ]; then
  echo "[fuzz] schemathesis failed (rc=$rc); last lines of the target's log:" >&2
  tail -n 40 "$work/target.log" >&2
fi
exit "$rc"
