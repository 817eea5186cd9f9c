#!/usr/bin/env bash
# The main job on the lab (interim, until the sweep lands): bring the lab up, drive a little
# traffic with two batching settings, print the key broker metrics from Prometheus, bring it down.
# A lab that was already running is reused and left running.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-python3}
kbt() { "$py" -m tuner "$@"; }

started_here=0
if ! kbt lab status >/dev/null 2>&1; then
  started_here=1
  trap 'kbt lab down || true' EXIT
fi
kbt lab up --scrape-interval 1
"$py" scripts/demo_traffic.py
if [ "$started_here" = 1 ]; then
  trap - EXIT
  kbt lab down
fi
