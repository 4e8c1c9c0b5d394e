#!/usr/bin/env bash
# Sourced by the reference installers (install-supervision.sh, install-trackers.sh): `pinned_venv DIR PIN...` installs
# the pins ("name==version", each name also the module imported) in a venv of their own under
# ${VISION_REFERENCE_DIR:-~/.cache/vision-reference}/DIR, one install at a time (a lock beside it). Idempotent: a venv
# whose pinned versions all import is kept. Prints the venv's python; exits non-zero (loudly) when the install fails.
set -euo pipefail

pinned_venv() {
  local dir="$1"
  shift
  local root="${VISION_REFERENCE_DIR:-$HOME/.cache/vision-reference}"
  local venv="$root/$dir" py="$root/$dir/bin/python" python="${PYTHON:-python3}"
  pins_installed() {
    "$py" - "$@" <<'PYEOF' >/dev/null 2>&1
import importlib, importlib.metadata as m, sys
for pin in sys.argv[1:]:
    name, version = pin.split("==")
    if m.version(name) != version:
        sys.exit(1)
    importlib.import_module(name)
PYEOF
  }
  if [ -x "$py" ] && pins_installed "$@"; then
    echo "$py"
    return 0
  fi
  mkdir -p "$root"
  exec 9>"$venv.lock"
  flock 9
  # Another run may have finished the install while this one waited for the lock.
  if [ -x "$py" ] && pins_installed "$@"; then
    echo "$py"
    return 0
  fi
  if ! "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)'; then
    echo "reference venv $dir: $* need Python >= 3.10 ($python is missing or older)" >&2
    return 1
  fi
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$py" -m pip install --quiet --disable-pip-version-check "$@" >&2
  if ! pins_installed "$@"; then
    echo "reference venv $dir: $* did not install in $venv" >&2
    return 1
  fi
  echo "$py"
}
