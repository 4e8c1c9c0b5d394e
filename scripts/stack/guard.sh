# Sourced: takes the machine-wide guard of the servers of scripts/stack for the sourcing script's run, the one
# scripts/stack/session.sh takes; a script that changes those servers (stops a broker of another version,
# scripts/test-kafka-current.sh) sources it before it touches them. One run at a time: a deployment empties the
# Kafka topics when it starts, so two runs would break each other. A second run exits at once with status 75 (with
# VISION_STACK_WAIT_S=N it first waits up to N seconds for the other to end). A script run inside the holder
# (VISION_STACK_SESSION, exported by the holder, names it) shares its guard. The guard is a pid file, not a lock on
# a descriptor: the servers started under it would inherit the descriptor and hold the lock after the run. It is
# created exclusively (noclobber), so of two runs started together one gets it. It is one file per machine, not per
# stack directory: the servers listen on fixed ports, so a run with another HOME or VISION_STACK_DIR (a cold cache)
# would take the same ports. Each set of servers (VISION_STACK_SET, scripts/stack/common.sh) has a guard of its own:
# their ports differ. The sourcing script calls session_release last, once its servers are as they were.
session_guard="/tmp/vision-stack${VISION_STACK_SET:+.$VISION_STACK_SET}.session.pid"
# The other run, if one holds the guard (its pid in $other).
session_other() {
  other="$(cat "$session_guard" 2>/dev/null)" && [ -n "$other" ] && [ "$other" != "$$" ] &&
    kill -0 "$other" 2>/dev/null && tr '\0' ' ' <"/proc/$other/cmdline" 2>/dev/null | grep -q 'scripts/'
}
session_nested=0
if [ -n "${VISION_STACK_SESSION:-}" ] && [ "$(cat "$session_guard" 2>/dev/null)" = "$VISION_STACK_SESSION" ] &&
  kill -0 "$VISION_STACK_SESSION" 2>/dev/null; then
  session_nested=1
else
  # A run still stopping its servers (scripts/stack/stop.sh) is waited for: they must not be taken as running.
  for _ in $(seq 1 120); do pgrep -f 'scripts/stack/stop\.sh' >/dev/null || break; sleep 1; done
  mkdir -p "$(dirname "$session_guard")"
  session_waited=0
  while ! (set -o noclobber && echo "$$" >"$session_guard") 2>/dev/null; do
    if session_other; then
      if [ "$session_waited" -ge "${VISION_STACK_WAIT_S:-0}" ]; then
        echo "another run (pid $other: $(tr '\0' ' ' <"/proc/$other/cmdline")) is using the servers of scripts/stack;" \
          "try again when it has ended" >&2
        exit 75
      fi
      sleep 5
      session_waited=$((session_waited + 5))
    else
      # Left by a run that ended without giving it back (or just being written: looked at again a second later).
      session_stale="$(cat "$session_guard" 2>/dev/null || true)"
      sleep 1
      if [ "$(cat "$session_guard" 2>/dev/null || true)" = "$session_stale" ] && ! session_other; then
        rm -f "$session_guard"
      fi
    fi
  done
  [ "$session_waited" -eq 0 ] || echo "[session] waited ${session_waited}s for another run of the stack's servers" >&2
  export VISION_STACK_SESSION=$$
fi
# Gives the guard back, if this run took it.
session_release() {
  if [ "$session_nested" = 0 ] && [ "$(cat "$session_guard" 2>/dev/null)" = "$$" ]; then rm -f "$session_guard"; fi
}
