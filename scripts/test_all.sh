#!/usr/bin/env bash
# `make test` (the README's test command; `.ci/run` runs it): install, lint, every tier and the fault
# matrix (`make test-chaos`), scheduled so they overlap where they can without disturbing each other.
# CI has a clean clone, 2 cores and 90 minutes (target: under 70):
#
#   1. install (with Chromium), lint, the generated-files check        ~1 min (empty caches: +4 min)
#   2. the integration tier, alone: its lab figures are timing-sensitive
#   3. two lanes side by side: the e2e tier; and the unit tier then the fault matrix (`make
#      test-chaos`, a lab of its own on ports 19500-19700)
#
# Why the unit tier and the fault matrix beside the e2e tier: none of them asserts a lab figure that
# another job's CPU would change (the e2e tier is mostly `kbt` run as a subprocess and checked for
# its output; the unit tier has no network; the fault matrix judges delivery, not speed), and the two
# lanes take about as long. The integration tier's labs are down by then (its secure lab, base port +
# 400 = 19690, would also collide with the fault matrix's ports).
#
# Every step runs to the end and CI fails if any of them failed (pytest's exit 5, no test collected,
# too). The second lane's output is kept in build/ci/lane.log and printed, each line prefixed
# `lane| `, once it is done. tests/README.md (CI time) has what was measured.
# Everything runs in the checkout's virtual environment (.venv, made by `make install`): nothing is
# pip-installed into the system Python.
set -euo pipefail
cd "$(dirname "$0")/.."  # the checkout
export KBT_WITH_CHROMIUM=1  # the report's browser test needs headless Chromium, as in `make test`
py="${KBT_VENV:-.venv}/bin/python"
mkdir -p build/ci
lane_log=build/ci/lane.log
lane_status=build/ci/lane.status
chaos_pid=""

step() { printf '\n==== %s (%s)\n' "$1" "$(date -u +%H:%M:%S)"; }

stop_chaos() {  # an early exit (a failed step, a cancelled job): Ctrl-C the second lane, show its log
  if [ -n "$chaos_pid" ] && kill -0 "$chaos_pid" 2>/dev/null; then
    kill -INT -- "-$chaos_pid" 2>/dev/null || true
    wait "$chaos_pid" 2>/dev/null || true
    sed 's/^/lane| /' "$lane_log" || true
  fi
}
trap stop_chaos EXIT

step "install, lint, generated files"
make --no-print-directory install
make --no-print-directory lint check-generated

step "integration tier"
integration=0
"$py" -m pytest --durations=40 tests/integration || integration=$?

step "in the background (> $lane_log): the unit tier, then the fault matrix; the e2e tier"
rm -f "$lane_status"
# The lane writes each job's status, so a failed unit tier still lets the fault matrix run.
setsid bash -c '
  unit=0; "$1" -m pytest --durations=15 tests/unit || unit=$?
  printf "\n==== fault matrix (%s)\n" "$(date -u +%H:%M:%S)"
  chaos=0; make --no-print-directory test-chaos || chaos=$?
  echo "$unit $chaos" >"$2"' lane "$py" "$lane_status" >"$lane_log" 2>&1 &
chaos_pid=$!
e2e=0
"$py" -m pytest --durations=25 tests/e2e || e2e=$?

step "waiting for the unit tier and the fault matrix"
wait "$chaos_pid" || true
chaos_pid=""
sed 's/^/lane| /' "$lane_log"
read -r unit chaos <"$lane_status" 2>/dev/null || { unit=1; chaos=1; }

step "exit statuses: integration $integration, e2e $e2e, unit $unit, fault matrix $chaos"
[ "$integration" -eq 0 ] && [ "$e2e" -eq 0 ] && [ "$unit" -eq 0 ] && [ "$chaos" -eq 0 ]
