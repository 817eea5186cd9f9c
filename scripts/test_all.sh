#!/usr/bin/env bash
# `make test` (the README's test command; `.ci/run` runs it): install, lint, every tier and the fault
# matrix (`make test-chaos`), scheduled so they overlap where they can without disturbing each other.
# CI has a clean clone, 2 cores and 90 minutes (target: under 70):
#
#   1. install (with Chromium), lint, the generated-files check   ~1 min (empty caches: +3-4 min)
#   2. unit + integration tiers, alone: their lab figures are timing-sensitive          ~41 min
#   3. e2e tier (~20 min), with the fault matrix (`make test-chaos`, a lab of its own on ports
#      19500-19700, ~22 min beside it) running in the background                         ~22 min
#
# Why beside the e2e tier: it is mostly `kbt` run as a subprocess and checked for its output, not lab
# figures; the integration tier's labs are down by then (its secure lab, base port + 400 = 19690,
# would also collide with the fault matrix's ports).
#
# Every step runs to the end and CI fails if any of them failed (pytest's exit 5, no test collected,
# too). The fault matrix's output is kept in build/ci/chaos.log and printed, each line prefixed
# `chaos| `, once it is done. 63.5 min warm in its last rehearsal; serial, the same work takes ~84
# min (tests/README.md, CI time: what was measured and what is estimated).
# Everything runs in the checkout's virtual environment (.venv, made by `make install`): nothing is
# pip-installed into the system Python.
set -euo pipefail
cd "$(dirname "$0")/.."  # the checkout
export KBT_WITH_CHROMIUM=1  # the report's browser test needs headless Chromium, as in `make test`
py="${KBT_VENV:-.venv}/bin/python"
mkdir -p build/ci
chaos_log=build/ci/chaos.log
chaos_pid=""

step() { printf '\n==== %s (%s)\n' "$1" "$(date -u +%H:%M:%S)"; }

stop_chaos() {  # an early exit (a failed step, a cancelled job): Ctrl-C the fault matrix, show its log
  if [ -n "$chaos_pid" ] && kill -0 "$chaos_pid" 2>/dev/null; then
    kill -INT -- "-$chaos_pid" 2>/dev/null || true
    wait "$chaos_pid" 2>/dev/null || true
    sed 's/^/chaos| /' "$chaos_log" || true
  fi
}
trap stop_chaos EXIT

step "install, lint, generated files"
make --no-print-directory install
make --no-print-directory lint check-generated

step "unit and integration tiers"
tiers=0
"$py" -m pytest --durations=25 tests/unit tests/integration || tiers=$?

step "fault matrix in the background (make test-chaos > $chaos_log), e2e tier"
setsid make --no-print-directory test-chaos >"$chaos_log" 2>&1 &
chaos_pid=$!
e2e=0
"$py" -m pytest --durations=25 tests/e2e || e2e=$?

step "waiting for the fault matrix"
chaos=0
wait "$chaos_pid" || chaos=$?
chaos_pid=""
sed 's/^/chaos| /' "$chaos_log"

step "exit statuses: unit+integration $tiers, e2e $e2e, fault matrix $chaos"
[ "$tiers" -eq 0 ] && [ "$e2e" -eq 0 ] && [ "$chaos" -eq 0 ]
