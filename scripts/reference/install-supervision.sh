#!/usr/bin/env bash
# Installs the reference implementation the line-crossing test compares against: supervision (PyPI, MIT), pinned,
# in a venv under ~/.cache/vision-reference/venv. Idempotent: a venv that already imports the pinned version is kept.
# Prints the venv's python on its last line. Exits non-zero (loudly) when the install fails.
set -euo pipefail

SUPERVISION_VERSION="0.31.2"
ROOT="${VISION_REFERENCE_DIR:-$HOME/.cache/vision-reference}"
VENV="$ROOT/venv"
PY="$VENV/bin/python"

installed_version() {
  "$PY" -c 'import importlib.metadata as m; print(m.version("supervision"))' 2>/dev/null || true
}

if [ -x "$PY" ] && [ "$(installed_version)" = "$SUPERVISION_VERSION" ] &&
  "$PY" -c 'import supervision' >/dev/null 2>&1; then
  echo "$PY"
  exit 0
fi

mkdir -p "$ROOT"
exec 9>"$ROOT/install.lock"
flock 9
# Another run may have finished the install while this one waited for the lock.
if [ -x "$PY" ] && [ "$(installed_version)" = "$SUPERVISION_VERSION" ]; then
  echo "$PY"
  exit 0
fi

PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)'; then
  echo "install-supervision: supervision $SUPERVISION_VERSION needs Python >= 3.10 ($PYTHON is missing or older)" >&2
  exit 1
fi
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
"$PY" -m pip install --quiet --disable-pip-version-check "supervision==$SUPERVISION_VERSION" >&2
if [ "$(installed_version)" != "$SUPERVISION_VERSION" ] || ! "$PY" -c 'import supervision' >&2; then
  echo "install-supervision: supervision $SUPERVISION_VERSION did not install in $VENV" >&2
  exit 1
fi
echo "$PY"
