#!/usr/bin/env bash
# Installs the peers and scorers the tracking bench (bench/tracking.bench.js) compares the service's tracker with,
# pinned, in a venv of their own under ~/.cache/vision-reference/trackers-venv (apart from the supervision venv of
# the analytics reference, which pins another supervision): `trackers` (SORT, ByteTrack, OC-SORT), supervision's
# ByteTrack, motmetrics (CLEAR MOT and identity metrics) and TrackEval (HOTA). Idempotent: a venv whose pinned
# versions all import is kept. Prints the venv's python on its last line. Exits non-zero (loudly) when the install
# fails.
set -euo pipefail

PINS=("trackers==2.6.1" "supervision==0.26.1" "motmetrics==1.4.0" "trackeval==1.3.0")
ROOT="${VISION_REFERENCE_DIR:-$HOME/.cache/vision-reference}"
VENV="$ROOT/trackers-venv"
PY="$VENV/bin/python"

pins_installed() {
  "$PY" - "${PINS[@]}" <<'PYEOF' >/dev/null 2>&1
import importlib, importlib.metadata as m, sys
for pin in sys.argv[1:]:
    name, version = pin.split("==")
    if m.version(name) != version:
        sys.exit(1)
for module in ("trackers", "supervision", "motmetrics", "trackeval"):
    importlib.import_module(module)
PYEOF
}

if [ -x "$PY" ] && pins_installed; then
  echo "$PY"
  exit 0
fi

mkdir -p "$ROOT"
exec 9>"$ROOT/trackers-install.lock"
flock 9
# Another run may have finished the install while this one waited for the lock.
if [ -x "$PY" ] && pins_installed; then
  echo "$PY"
  exit 0
fi

PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)'; then
  echo "install-trackers: trackers 2.6.1 needs Python >= 3.10 ($PYTHON is missing or older)" >&2
  exit 1
fi
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
"$PY" -m pip install --quiet --disable-pip-version-check "${PINS[@]}" >&2
if ! pins_installed; then
  echo "install-trackers: ${PINS[*]} did not install in $VENV" >&2
  exit 1
fi
echo "$PY"
