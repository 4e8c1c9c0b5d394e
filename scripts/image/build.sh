#!/usr/bin/env bash
# Builds the service image from the repository's Dockerfile with podman on the local base (scripts/image/base.sh)
# and checks its size budget.
#   VISION_IMAGE        tag to build (default: localhost/vision:dev)
#   VISION_COCO_MODELS  directory holding yolox_nano.onnx and yolox_nano.labels.txt (default: ../shared/models)
#   VISION_IMAGE_MAX_MB size budget in MB (default: 760; docs/DEPLOYMENT.md says why)
#   HOST_CA             CA bundle npm must trust (default: $NODE_EXTRA_CA_CERTS when set); a build secret only
set -euo pipefail
cd "$(dirname "$0")/../.."
TAG="${VISION_IMAGE:-localhost/vision:dev}"
COCO="${VISION_COCO_MODELS:-$(cd .. && pwd)/shared/models}"
MAX_MB="${VISION_IMAGE_MAX_MB:-760}"
BASE="$(bash scripts/image/base.sh)"
args=(--network host --build-arg "NODE_IMAGE=$BASE" --build-context "coco-model=$COCO" -t "$TAG")
ca="${HOST_CA:-${NODE_EXTRA_CA_CERTS:-}}"
if [ -n "$ca" ] && [ -s "$ca" ]; then args+=(--secret "id=host-ca,src=$ca"); fi
nice -n 10 podman build "${args[@]}" . >&2
bytes="$(podman image inspect --format '{{.Size}}' "$TAG")"
mb=$((bytes / 1000000))
echo "image-build: $TAG is $mb MB (budget $MAX_MB MB)" >&2
if [ "$mb" -ge "$MAX_MB" ]; then
  echo "image-build: over the size budget" >&2
  exit 1
fi
echo "$TAG"
