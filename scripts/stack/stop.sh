#!/usr/bin/env bash
# Stops the servers started by scripts/stack/start.sh, by the pid each one wrote (never by name).
# Usage: scripts/stack/stop.sh [component...]   (default: all)
source "$(dirname "$0")/common.sh"

stop_pid() { # <name> <signal> <timeout-s>
  local name="$1" sig="$2" secs="$3" f="$RUN_DIR/$1.pid" pid
  [ -f "$f" ] || return 0
  pid="$(cat "$f")"
  if kill -0 "$pid" 2>/dev/null; then
    kill "-$sig" "$pid" 2>/dev/null || true
    local end=$((SECONDS + secs))
    while kill -0 "$pid" 2>/dev/null; do
      if [ "$SECONDS" -ge "$end" ]; then log "$name (pid $pid) did not stop after ${secs}s; SIGKILL"; kill -KILL "$pid" 2>/dev/null || true; sleep 0.5; break; fi
      sleep 0.2
    done
    log "$name stopped (pid $pid)"
  fi
  rm -f "$f"
}

for c in $(components_from_args "$@"); do
  case "$c" in
    postgres) stop_pid postgres INT 60 ;; # fast shutdown
    kafka) stop_pid kafka TERM 60; rm -f "$RUN_DIR/kafka.version" ;;
    *) stop_pid "$c" TERM 60 ;;
  esac
done
