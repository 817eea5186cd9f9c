#!/usr/bin/env bash
# `make test` (the README's test command; `.ci/run` runs it): install, lint, every tier and the fault
# matrix (`make test-chaos`), scheduled so they overlap where they can without disturbing each other.
# CI has a clean clone, 2 cores and 90 minutes (target: under 70):
#
#   1. install (with Chromium)                                          ~1 min (empty caches: +4 min)
#   2. the integration tier; beside it, at the lowest CPU priority (nice 19): lint, the
#      generated-files check and the unit tier but its `wall_clock` tests                  ~45 min
#   3. the e2e tier; beside it the unit tier's `wall_clock` tests, the e2e tier's clean-clone install
#      and lab lifecycle tests, `make demo`'s pressure loop (an integration module with a pressure
#      lab of its own: to even the two lanes out), then the fault matrix (`make test-chaos`, a lab
#      of its own on ports 19500-19700)                                                   ~29 min
#
# Why this way: the integration tier's lab figures (idle meters, request-queue shares, a producer's
# send lag) are timing-sensitive on 2 cores, so only work that yields the CPU at once runs beside
# it: lint and the unit tier are pure CPU (hypothesis runs without its deadline), and at nice 19
# they take what the labs leave idle; the unit tests that bound a wall-clock time (marked
# `wall_clock`, tests/unit/test_wall_clock_marked.py keeps the mark honest) wait for step 3. The e2e tier is mostly `kbt` run as
# a subprocess and checked for its output; the fault matrix judges delivery, not speed; the
# integration tier's labs are down by then (its secure lab, base port + 400 = 19690, would also
# collide with the fault matrix's ports).
#
# Every step runs to the end and CI fails if any of them failed (pytest's exit 5, no test collected,
# too). Background output is kept in build/ci/ and printed, each line prefixed, once it is done.
# tests/README.md (CI time) has what was measured.
# Everything runs in the checkout's virtual environment (.venv, made by `make install`): nothing is
# pip-installed into the system Python.
set -euo pipefail
cd "$(dirname "$0")/.."  # the checkout
export KBT_WITH_CHROMIUM=1  # the report's browser test needs headless Chromium, as in `make test`
py="${KBT_VENV:-.venv}/bin/python"
mkdir -p build/ci
beside_log=build/ci/beside-integration.log
beside_status=build/ci/beside-integration.status
chaos_log=build/ci/chaos.log
chaos_pid=""

step() { printf '\n==== %s (%s)\n' "$1" "$(date -u +%H:%M:%S)"; }

beside_pid=""
stop_background() {  # an early exit (a failed step, a cancelled job): Ctrl-C what runs beside, show its log
  local pid log prefix
  for pid_log in "$beside_pid:$beside_log:beside" "$chaos_pid:$chaos_log:chaos"; do
    IFS=: read -r pid log prefix <<<"$pid_log"
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill -INT -- "-$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
      sed "s/^/$prefix| /" "$log" || true
    fi
  done
}
trap stop_background EXIT

step "install"
make --no-print-directory install

# The integration module that runs in step 3's second lane instead (its pressure lab of its own,
# base port 19490, ends before the fault matrix starts on 19500): make demo's pressure loop, ~5 min.
lane_integration=(tests/integration/test_pressure_loop.py)
step "integration tier; beside it at nice 19 (> $beside_log): lint, generated files, unit tier"
rm -f "$beside_status"
setsid nice -n 19 bash -c '
  lint=0; make --no-print-directory lint check-generated || lint=$?
  printf "\n==== unit tier (%s)\n" "$(date -u +%H:%M:%S)"
  unit=0; "$1" -m pytest --durations=15 -m "not wall_clock" tests/unit || unit=$?
  echo "$lint $unit" >"$2"' beside "$py" "$beside_status" >"$beside_log" 2>&1 &
beside_pid=$!
integration=0
"$py" -m pytest --durations=40 "${lane_integration[@]/#/--ignore=}" tests/integration || integration=$?

step "waiting for lint and the unit tier"
wait "$beside_pid" || true
beside_pid=""
sed 's/^/beside| /' "$beside_log"
read -r lint unit <"$beside_status" 2>/dev/null || { lint=1; unit=1; }

# The e2e modules that run in the second lane (their own ports: 19200-19221; no runbook lab).
lane_e2e=(tests/e2e/test_clean_install.py tests/e2e/test_lab_cli.py)
step "in the background (> $chaos_log): the wall_clock unit tests, ${lane_e2e[*]}, ${lane_integration[*]}, then the fault matrix; the rest of the e2e tier"
chaos_status=build/ci/chaos.status
rm -f "$chaos_status"
setsid bash -c '
  py=$1 status=$2 loop=$3; shift 3
  timed=0; "$py" -m pytest -m wall_clock tests/unit || timed=$?
  printf "\n==== %s (%s)\n" "$*" "$(date -u +%H:%M:%S)"
  lane_e2e=0; "$py" -m pytest --durations=5 "$@" || lane_e2e=$?
  printf "\n==== %s (%s)\n" "$loop" "$(date -u +%H:%M:%S)"
  "$py" -m pytest --durations=5 "$loop" || lane_e2e=1
  printf "\n==== fault matrix (%s)\n" "$(date -u +%H:%M:%S)"
  chaos=0; make --no-print-directory test-chaos || chaos=$?
  echo "$timed $lane_e2e $chaos" >"$status"' chaos "$py" "$chaos_status" "${lane_integration[0]}" "${lane_e2e[@]}" >"$chaos_log" 2>&1 &
chaos_pid=$!
e2e=0
"$py" -m pytest --durations=25 "${lane_e2e[@]/#/--ignore=}" tests/e2e || e2e=$?

step "waiting for the fault matrix"
wait "$chaos_pid" || true
chaos_pid=""
sed 's/^/chaos| /' "$chaos_log"
read -r timed lane_e2e chaos <"$chaos_status" 2>/dev/null || { timed=1; lane_e2e=1; chaos=1; }

step "exit statuses: lint+generated $lint, unit $unit (wall_clock $timed), integration $integration, e2e $e2e (and $lane_e2e), fault matrix $chaos"
for status in "$lint" "$unit" "$timed" "$integration" "$e2e" "$lane_e2e" "$chaos"; do [ "$status" -eq 0 ] || exit 1; done
