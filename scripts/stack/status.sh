#!/usr/bin/env bash
# Prints `<component> running|stopped` for each component (default: all); exit 0 when all asked are running.
#   --state-dir  prints the state directory of the set of servers (VISION_STACK_SET): its run/, log/ and stack.env
source "$(dirname "$0")/common.sh"
if [ "${1:-}" = --state-dir ]; then echo "$STATE_DIR"; exit 0; fi
rc=0
for c in $(components_from_args "$@"); do
  if [ "$c" = postgres ] && [ -f "$(pg_data_dir)/postmaster.pid" ] && kill -0 "$(head -1 "$(pg_data_dir)/postmaster.pid")" 2>/dev/null; then
    echo "$c running"
  elif pid_alive "$c"; then echo "$c running"; else echo "$c stopped"; rc=1; fi
done
exit $rc
