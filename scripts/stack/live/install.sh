#!/usr/bin/env bash
# Installs the real stream servers the live-stream tests and bench/live.bench.js run against, from Debian
# (idempotent: packages already installed are skipped), then encodes the camera-like test clips into the
# cache (scripts/stack/live/media.sh). Needs root for apt-get. The packaged nginx service is never started:
# the scripts here run their own instances on loopback.
#   RTSP   GStreamer's gst-rtsp-server through Debian's /usr/bin/python3 (python3-gi)
#   RTMP   nginx + libnginx-mod-rtmp, fed by ffmpeg
#   HLS    ffmpeg's hls muxer behind nginx; progressive MP4 over http and https (openssl makes the certificate)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
PACKAGES=(ffmpeg python3-gi python3-gst-1.0 gir1.2-gst-rtsp-server-1.0 gstreamer1.0-plugins-base
  gstreamer1.0-plugins-good gstreamer1.0-plugins-bad nginx libnginx-mod-rtmp openssl)
log() { echo "[live-stack] $*" >&2; }
missing=()
for p in "${PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ "${#missing[@]}" -gt 0 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  log "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  policy=/usr/sbin/policy-rc.d created=0
  if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null; $SUDO chmod +x "$policy"; created=1; fi
  rc=0
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/live-stack-apt.log 2>&1 \
    || { $SUDO apt-get update -qq >>/tmp/live-stack-apt.log 2>&1 \
      && $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >>/tmp/live-stack-apt.log 2>&1; } || rc=$?
  [ "$created" = 1 ] && $SUDO rm -f "$policy"
  [ "$rc" = 0 ] || { cat /tmp/live-stack-apt.log >&2; log "ERROR: apt-get install failed"; exit 1; }
fi
/usr/bin/python3 -c 'import gi; gi.require_version("GstRtspServer", "1.0"); from gi.repository import GstRtspServer' \
  || { log "ERROR: /usr/bin/python3 cannot load GstRtspServer"; exit 1; }
[ -f /usr/lib/nginx/modules/ngx_rtmp_module.so ] || { log "ERROR: nginx RTMP module missing"; exit 1; }
log "camera-like clips in $(bash "$HERE/media.sh")"
log "test TLS certificates in $(bash "$HERE/tls.sh")"
