#!/usr/bin/env bash
# RTMP test server: nginx with libnginx-mod-rtmp on 127.0.0.1:<port>, fed by ffmpeg (the clip in an endless
# loop at real-time pace, published to rtmp://127.0.0.1:<port>/live/cam). Runs in the foreground until
# SIGTERM/SIGINT, then stops nginx and the feeder. Prints "ready rtmp://..." once nginx listens.
#   rtmp-server.sh --port 21935 --clip camera.ts --dir <state dir>
set -euo pipefail
PORT="" CLIP="" DIR=""
while [ $# -gt 0 ]; do
  case "$1" in
    --port) PORT="$2"; shift 2 ;;
    --clip) CLIP="$2"; shift 2 ;;
    --dir) DIR="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$PORT" ] && [ -f "$CLIP" ] && [ -n "$DIR" ] || { echo "usage: $0 --port P --clip FILE --dir DIR" >&2; exit 2; }
NGINX="${NGINX:-/usr/sbin/nginx}"
MODULE="${NGINX_RTMP_MODULE:-/usr/lib/nginx/modules/ngx_rtmp_module.so}"
[ -x "$NGINX" ] && [ -f "$MODULE" ] || { echo "nginx or its RTMP module is missing (scripts/stack/live/install.sh)" >&2; exit 1; }
mkdir -p "$DIR"
USER_LINE=""; [ "$(id -u)" = 0 ] && USER_LINE="user root;"
cat >"$DIR/nginx.conf" <<CONF
load_module $MODULE;
$USER_LINE
worker_processes 1;
pid $DIR/nginx.pid;
error_log $DIR/error.log warn;
events { worker_connections 1024; }
rtmp {
  server {
    listen 127.0.0.1:$PORT;
    chunk_size 4096;
    application live {
      live on;
      record off;
      wait_key on;
      wait_video on;
      allow publish 127.0.0.1;
      deny publish all;
      allow play all;
    }
  }
}
CONF
pids=()
stop() { trap - TERM INT EXIT; for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; exit 0; }
trap stop TERM INT EXIT
"$NGINX" -p "$DIR" -e "$DIR/error.log" -c "$DIR/nginx.conf" -g 'daemon off;' &
pids+=($!)
for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null || { echo "nginx did not listen on $PORT" >&2; cat "$DIR/error.log" >&2; exit 1; }
# The feeder republishes whenever it loses the server.
( ff=""; trap '[ -n "$ff" ] && kill "$ff" 2>/dev/null; exit 0' TERM
  while :; do
    ffmpeg -hide_banner -loglevel error -nostdin -re -stream_loop -1 -i "$CLIP" -map 0:v:0 -c copy -f flv \
      "rtmp://127.0.0.1:$PORT/live/cam" &
    ff=$!; wait "$ff" || true
    sleep 0.5
  done ) &
pids+=($!)
echo "ready rtmp://127.0.0.1:$PORT/live/cam"
wait
