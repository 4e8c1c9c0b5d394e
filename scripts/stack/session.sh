# Sourced by scripts that need the servers of scripts/stack for their whole run (test-distributed.sh,
# soak.sh): installs them when missing, starts those not running, and on exit stops the ones this run
# started (VISION_STACK_KEEP=1 leaves them running). The exit status is the script's, or 1 if a stop fails.
# One run at a time: a deployment empties the Kafka topics when it starts, so two runs would break each other.
# A second run exits at once with status 75 (with VISION_STACK_WAIT_S=N it first waits up to N seconds for the
# other to end). The guard is a pid file, not a lock on a descriptor: the servers started below would inherit the
# descriptor and hold the lock after the run. It is one file per machine, not per stack directory: the servers
# listen on fixed ports, so a run with another HOME or VISION_STACK_DIR (a cold cache) would take the same ports.
session_guard=/tmp/vision-stack.session.pid
# A run still stopping its servers (scripts/stack/stop.sh) is waited for: they must not be taken as running.
for _ in $(seq 1 120); do pgrep -f 'scripts/stack/stop\.sh' >/dev/null || break; sleep 1; done
# The other run, if one holds the guard (its pid in $other); a wait is printed.
session_other() {
  other="$(cat "$session_guard" 2>/dev/null)" && [ -n "$other" ] && [ "$other" != "$$" ] &&
    kill -0 "$other" 2>/dev/null && tr '\0' ' ' <"/proc/$other/cmdline" 2>/dev/null | grep -q 'scripts/'
}
session_waited=0
while session_other; do
  if [ "$session_waited" -ge "${VISION_STACK_WAIT_S:-0}" ]; then
    echo "another run (pid $other: $(tr '\0' ' ' <"/proc/$other/cmdline")) is using the servers of scripts/stack;" \
      "try again when it has ended" >&2
    exit 75
  fi
  sleep 5
  session_waited=$((session_waited + 5))
done
[ "$session_waited" -eq 0 ] || echo "[session] waited ${session_waited}s for another run of the stack's servers" >&2
mkdir -p "$(dirname "$session_guard")"
echo "$$" >"$session_guard"
started="$(mktemp)"
cleanup() {
  local rc=$?
  # The servers stop before the guard goes: a run starting in between would take them as running for it.
  if [ "${VISION_STACK_KEEP:-0}" != 1 ] && [ -s "$started" ]; then
    # shellcheck disable=SC2046
    scripts/stack/stop.sh $(tac "$started" | tr '\n' ' ') || rc=1
  fi
  if [ "$(cat "$session_guard" 2>/dev/null)" = "$$" ]; then rm -f "$session_guard"; fi
  rm -f "$started"
  exit "$rc"
}
trap cleanup EXIT

scripts/stack/install.sh
scripts/stack/start.sh --started-file "$started"
