# Sourced by scripts that need the servers of scripts/stack for their whole run (test-distributed.sh,
# soak.sh): installs them when missing, starts those not running, and on exit stops the ones this run
# started (VISION_STACK_KEEP=1 leaves them running). The exit status is the script's, or 1 if a stop fails.
# One run at a time: the guard of scripts/stack/guard.sh (exit 75 when another run holds it; VISION_STACK_WAIT_S).
# The observability backends (Jaeger, Prometheus) start with the others when they are built. On a machine where their
# build is still going (the set-up compiles them in the background), they start in the background once it is done:
# the files that read traces or series wait for them (test/helpers/observability.ts) and the distributed suite runs
# those files last; a deployment started before them exports no spans and is not scraped.
# shellcheck source=guard.sh
source "$(dirname "${BASH_SOURCE[0]}")/guard.sh"
started="$(mktemp)"
observability_pid=""
cleanup() {
  local rc=$?
  # A start of the observability backends still going ends first; what it started is then in $started.
  if [ -n "$observability_pid" ] && kill -0 "$observability_pid" 2>/dev/null; then
    kill -- "-$observability_pid" 2>/dev/null || true
    wait "$observability_pid" 2>/dev/null || true
    # Killed while a backend was coming up: its pid file is written before it is ready.
    [ "${VISION_STACK_KEEP:-0}" = 1 ] || scripts/stack/stop.sh jaeger prometheus || rc=1
  fi
  # The servers stop before the guard goes: a run starting in between would take them as running for it.
  if [ "${VISION_STACK_KEEP:-0}" != 1 ] && [ -s "$started" ]; then
    # shellcheck disable=SC2046
    scripts/stack/stop.sh $(tac "$started" | tr '\n' ' ') || rc=1
  fi
  session_release
  rm -f "$started"
  exit "$rc"
}
trap cleanup EXIT

# What must hold before the servers start, run once this run holds the guard (scripts/test-cluster.sh: the node's
# host address, which the servers bind and which a node cluster run before this one removed when it ended).
if [ -n "${VISION_STACK_BEFORE_START:-}" ]; then bash -c "$VISION_STACK_BEFORE_START"; fi
scripts/stack/install.sh postgres redis kafka s3 toxiproxy
scripts/stack/start.sh --started-file "$started" postgres redis kafka s3 toxiproxy
if scripts/stack/install.sh --check jaeger prometheus; then
  scripts/stack/start.sh --started-file "$started" jaeger prometheus
else
  echo "[vision-stack] Jaeger and Prometheus start once their build is done" >&2
  observability_log="$(scripts/stack/status.sh --state-dir)/log/observability-start.log"
  set -m # its own process group, so that cleanup stops the build's waiters and the start with it
  (nice -n 19 scripts/stack/install.sh jaeger prometheus && scripts/stack/start.sh --started-file "$started" jaeger prometheus) \
    >>"$observability_log" 2>&1 &
  observability_pid=$!
  set +m
fi
