# Sourced by scripts that need the servers of scripts/stack for their whole run (test-distributed.sh,
# soak.sh): installs them when missing, starts those not running, and on exit stops the ones this run
# started (VISION_STACK_KEEP=1 leaves them running). The exit status is the script's, or 1 if a stop fails.
# One run at a time: the guard of scripts/stack/guard.sh (exit 75 when another run holds it; VISION_STACK_WAIT_S).
# shellcheck source=guard.sh
source "$(dirname "${BASH_SOURCE[0]}")/guard.sh"
started="$(mktemp)"
cleanup() {
  local rc=$?
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

scripts/stack/install.sh
scripts/stack/start.sh --started-file "$started"
