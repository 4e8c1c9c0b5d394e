#!/usr/bin/env bash
# HTTP(S) test server: nginx serving a directory on 127.0.0.1:<port> (and TLS on <tls-port> with a
# certificate signed by the test CA of tls.sh), and, with --hls, ffmpeg's hls muxer writing a live playlist into it
# (1 s segments, -hls_flags delete_segments: a sliding window as a live origin serves it).
# Paths: /camera.mp4 (progressive MP4, byte ranges), /live/cam.m3u8 (live HLS, with --hls).
# Runs in the foreground until SIGTERM/SIGINT; prints "ready http://..." once nginx listens.
#   http-server.sh --port 28088 [--tls-port 28448] --mp4 camera.mp4 [--hls camera.ts] --dir <state dir>
set -euo pipefail
PORT="" TLS_PORT="" MP4="" HLS="" DIR=""
while [ $# -gt 0 ]; do
  case "$1" in
    --port) PORT="$2"; shift 2 ;;
    --tls-port) TLS_PORT="$2"; shift 2 ;;
    --mp4) MP4="$2"; shift 2 ;;
    --hls) HLS="$2"; shift 2 ;;
    --dir) DIR="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$PORT" ] && [ -f "$MP4" ] && [ -n "$DIR" ] || { echo "usage: $0 --port P [--tls-port Q] --mp4 FILE [--hls TS] --dir DIR" >&2; exit 2; }
NGINX="${NGINX:-/usr/sbin/nginx}"
[ -x "$NGINX" ] || { echo "nginx is missing (scripts/stack/live/install.sh)" >&2; exit 1; }
mkdir -p "$DIR/www/live" "$DIR/tmp"
cp -f "$MP4" "$DIR/www/camera.mp4"
# The progressive MP4 is sent at about its own bitrate (+5 %, after a first 256 KiB for the header), as a
# camera's HTTP endpoint sends it. Unthrottled, the kernel buffers of a loopback connection (several MiB at
# each end) would hold minutes of this video, and a client would play on for minutes after a server stop.
RATE="$(ffprobe -v error -show_entries format=size,duration -of default=nw=1:nk=1 "$MP4" |
  paste -sd' ' | awk '{ d = ($1 > 1000) ? $2 : $1; s = ($1 > 1000) ? $1 : $2; printf "%d", s / d * 1.05 }')"
TLS_BLOCK=""
if [ -n "$TLS_PORT" ]; then
  TLS="$(bash "$(dirname "$0")/tls.sh")"
  TLS_BLOCK="server { listen 127.0.0.1:$TLS_PORT ssl; ssl_certificate $TLS/cert.pem; ssl_certificate_key $TLS/key.pem; root $DIR/www; location = /camera.mp4 { limit_rate_after 256k; limit_rate $RATE; } }"
fi
USER_LINE=""; [ "$(id -u)" = 0 ] && USER_LINE="user root;"
cat >"$DIR/nginx.conf" <<CONF
$USER_LINE
worker_processes 1;
pid $DIR/nginx.pid;
error_log $DIR/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $DIR/tmp; proxy_temp_path $DIR/tmp; fastcgi_temp_path $DIR/tmp;
  uwsgi_temp_path $DIR/tmp; scgi_temp_path $DIR/tmp;
  types { video/mp4 mp4; application/vnd.apple.mpegurl m3u8; video/mp2t ts; }
  server {
    listen 127.0.0.1:$PORT;
    root $DIR/www;
    location /live/ { add_header Cache-Control no-cache; }
    location = /camera.mp4 { limit_rate_after 256k; limit_rate $RATE; }
  }
  $TLS_BLOCK
}
CONF
pids=()
stop() { trap - TERM INT EXIT; for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; exit 0; }
trap stop TERM INT EXIT
"$NGINX" -p "$DIR" -e "$DIR/error.log" -c "$DIR/nginx.conf" -g 'daemon off;' &
pids+=($!)
if [ -n "$HLS" ]; then
  ( ff=""; trap '[ -n "$ff" ] && kill "$ff" 2>/dev/null; exit 0' TERM
    while :; do
      ffmpeg -hide_banner -loglevel error -nostdin -re -stream_loop -1 -i "$HLS" -map 0:v:0 -c copy -f hls \
        -hls_time 1 -hls_list_size 6 -hls_flags delete_segments+independent_segments \
        -hls_segment_filename "$DIR/www/live/seg-%06d.ts" "$DIR/www/live/cam.m3u8" &
      ff=$!; wait "$ff" || true
      sleep 0.5
    done ) &
  pids+=($!)
fi
for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null || { echo "nginx did not listen on $PORT" >&2; cat "$DIR/error.log" >&2; exit 1; }
if [ -n "$HLS" ]; then
  for _ in $(seq 1 100); do [ -s "$DIR/www/live/cam.m3u8" ] && break; sleep 0.1; done
fi
echo "ready http://127.0.0.1:$PORT"
wait
