#!/usr/bin/env bash
# The main job on the embedded lab, end to end (`make demo`):
#   1. bring the lab up (3 brokers, tiered storage, exporters, Prometheus)
#   2. sweep the Qunar-like workload: Filebeat-like defaults vs batched, same offered load
#   3. kbt recommend on those run records; the model's best settings per client kind are confirmed
#      by lab runs (--live, at most $KBT_DEMO_TRIALS runs per client kind)
#   4. print the rendered Filebeat profile and client properties
#   5. kbt report: one self-contained HTML page
#   6. bring the lab down (a lab that was already running is reused and left running)
# Everything lands in $KBT_DEMO_OUT (default out/demo). Bounded: about 8 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-${KBT_VENV:-.venv}/bin/python}
out=${KBT_DEMO_OUT:-out/demo}
spec=${KBT_DEMO_SPEC:-loadtests/qunar-logs-short.yaml}
trials=${KBT_DEMO_TRIALS:-2}  # lab runs per client kind to confirm the recommendation
kbt() { "$py" -m tuner "$@"; }
# Bold on a terminal; plain in a log (`make demo > demo.log`: no escape codes, no line over 120 columns).
if [ -t 1 ]; then step() { printf '\n\033[1m== demo %s\033[0m\n' "$*"; }; else step() { printf '\n== demo %s\n' "$*"; }; fi

started=$(date +%s)
rm -rf "$out/results" "$out/recommend" "$out/report.html" "$out/report-png"
mkdir -p "$out"

started_here=0
if kbt lab status >/dev/null 2>&1; then
  step "1/6: reusing the running lab"
  kbt lab status
else
  started_here=1
  trap 'kbt lab down || true' EXIT
  step "1/6: lab up"
  kbt lab up
fi

step "2/6: sweep $spec (fresh topics, broker metrics, every acked record read back)"
kbt sweep "$spec" --results "$out/results"

step "3/6: recommend (the model proposes settings per client kind, lab runs confirm them)"
set +e
kbt recommend --results "$out/results" --live "$spec" --max-trials "$trials" --out "$out/recommend"
status=$?
set -e
if [ "$status" -ne 0 ] && [ "$status" -ne 3 ]; then exit "$status"; fi

step "4/6: the rendered settings (beside the recommendation)"
rec_dir=$(ls -td "$out"/recommend/*/ | head -n 1)
for f in filebeat.yml librdkafka.properties java.properties; do
  if [ -f "$rec_dir$f" ]; then
    printf -- '--- %s\n' "$f"
    cat "$rec_dir$f"
  fi
done

step "5/6: report"
kbt report --results "$out/results" --recommendation "${rec_dir}recommendation.json" --out "$out/report.html" --png-dir "$out/report-png" --title "kbt demo: $(basename "$spec" .yaml)"

if [ "$started_here" = 1 ]; then
  step "6/6: lab down"
  trap - EXIT
  kbt lab down
else
  step "6/6: the lab was running before the demo: left running"
fi
printf '\ndemo done in %d s:\n  records %s\n  recommendation %s\n  report %s\n' \
  "$(( $(date +%s) - started ))" "$out/results" "$out/recommend" "$out/report.html"
exit "$status"
