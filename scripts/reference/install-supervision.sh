#!/usr/bin/env bash
# Installs the reference implementation the line-crossing test compares against: supervision (PyPI, MIT), pinned,
# in a venv under ~/.cache/vision-reference/venv (scripts/reference/venv.sh). Prints the venv's python on its last
# line. Exits non-zero (loudly) when the install fails.
set -euo pipefail
# shellcheck source=venv.sh
source "$(dirname "$0")/venv.sh"
pinned_venv venv "supervision==0.31.2"
