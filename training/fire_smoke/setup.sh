#!/usr/bin/env bash
# Creates the training virtual environment with the pinned packages of requirements.txt, from PyPI.
#   bash training/fire_smoke/setup.sh            # venv in $FIRESMOKE_VENV, default ~/.cache/firesmoke-venv
# Then: $FIRESMOKE_VENV/bin/python training/fire_smoke/train.py --smoke --out training/fire_smoke/runs/smoke
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${FIRESMOKE_VENV:-$HOME/.cache/firesmoke-venv}"
python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "Python >= 3.10 is required")'
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --disable-pip-version-check -q -r "$here/requirements.txt"
"$venv/bin/python" -c 'import cv2, numpy, onnx, onnxruntime, torch; print("torch", torch.__version__, "onnxruntime", onnxruntime.__version__)'
echo "venv ready: $venv"
