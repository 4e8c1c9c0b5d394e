#!/usr/bin/env bash
# Installs the peers and scorers the tracking bench (bench/tracking.bench.js) compares the service's tracker with,
# pinned, in a venv of their own under ~/.cache/vision-reference/trackers-venv (apart from the supervision venv of
# the analytics reference, which pins another supervision; scripts/reference/venv.sh): `trackers` (SORT, ByteTrack,
# OC-SORT), supervision's ByteTrack, motmetrics (CLEAR MOT and identity metrics) and TrackEval (HOTA). Prints the
# venv's python on its last line. Exits non-zero (loudly) when the install fails.
set -euo pipefail
# shellcheck source=venv.sh
source "$(dirname "$0")/venv.sh"
pinned_venv trackers-venv "trackers==2.6.1" "supervision==0.26.1" "motmetrics==1.4.0" "trackeval==1.3.0"
