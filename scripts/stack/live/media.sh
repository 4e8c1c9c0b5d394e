#!/usr/bin/env bash
# Camera-like test sources for the live-stream servers: re-encodes clips of the shared test data
# (../shared/media/videos, or $VISION_SHARED_DIR/media/videos) with a keyframe every second, no B-frames,
# into $VISION_STACK_DIR/live-media (the clips as shipped have 25 s between keyframes, which stalls a client
# that joins mid-stream; cameras send one every 1-2 s). Cached: a clip is encoded once. Never in the repo.
# Usage: scripts/stack/live/media.sh   -> prints the cache directory
#   camera.mp4   pedestrians (80 s, 480x360, 10 fps), keyframe every 10 frames, faststart
#   camera.ts    the same as MPEG-TS (the feed the RTSP/RTMP/HLS servers loop)
#   camera-long.mp4  camera.mp4 four times over (5 min 20 s): the progressive http(s) file, long enough that
#                a test's task is still running when its server restarts
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
SHARED="${VISION_SHARED_DIR:-$HERE/../../../../shared}"
OUT="${VISION_STACK_DIR:-${HOME:-/tmp}/.cache/vision-stack}/live-media"
SRC="$SHARED/media/videos/pedestrians_vtest_opencv.mp4"
[ -f "$SRC" ] || { echo "[live-media] missing $SRC (set VISION_SHARED_DIR)" >&2; exit 1; }
command -v ffmpeg >/dev/null || { echo "[live-media] ffmpeg is not installed" >&2; exit 1; }
mkdir -p "$OUT"
exec 9>"$OUT/.lock"
flock 9
if [ ! -s "$OUT/camera.mp4" ]; then
  ffmpeg -hide_banner -loglevel error -y -i "$SRC" -an -c:v libx264 -preset veryfast -tune zerolatency \
    -profile:v baseline -pix_fmt yuv420p -g 10 -keyint_min 10 -sc_threshold 0 -bf 0 \
    -movflags +faststart "$OUT/camera.tmp.mp4"
  mv "$OUT/camera.tmp.mp4" "$OUT/camera.mp4"
fi
if [ ! -s "$OUT/camera.ts" ]; then
  ffmpeg -hide_banner -loglevel error -y -i "$OUT/camera.mp4" -c copy -bsf:v h264_mp4toannexb -f mpegts "$OUT/camera.tmp.ts"
  mv "$OUT/camera.tmp.ts" "$OUT/camera.ts"
fi
if [ ! -s "$OUT/camera-long.mp4" ]; then
  ffmpeg -hide_banner -loglevel error -y -stream_loop 3 -i "$OUT/camera.mp4" -c copy -movflags +faststart "$OUT/camera-long.tmp.mp4"
  mv "$OUT/camera-long.tmp.mp4" "$OUT/camera-long.mp4"
fi
echo "$OUT"
