#!/usr/bin/env bash
# `make demo`'s pressure step (scripts/demo.sh, 7/7): the loop on a team's own traffic, on a running
# pressure lab (`kbt lab up --profile pressure`: one broker in Qunar's regime).
#   1. the team's clients (loadtests/pressure-mix/: librdkafka services and a Java audit trail, a mix
#      kbt is not told about) load the lab;
#   2. `kbt capture` reads them from the cluster alone (admin API, Prometheus, the request log);
#   3. each captured group is replayed on the lab and `kbt recommend` proposes its settings within
#      the p99 SLO ($KBT_LOOP_SLO_P99 ms);
#   4. the recommendations are rolled out to the team's clients (`python -m tuner.render.rollout`:
#      the same clients and ids, the recommended settings), which load the lab again;
#   5. `kbt compare`: the broker and each client group, before -> after (also $OUT/compare.json),
#      and what the clients saw (`python -m tuner.render.rollout_summary`: delivery p99 against the
#      SLO, every acked record read back). Both are kept in $OUT/loop.txt.
# Usage: scripts/pressure_loop.sh LAB_DIR OUT     (about 4 minutes; bounded: every run has its length)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { echo "usage: scripts/pressure_loop.sh LAB_DIR OUT" >&2; exit 2; }
lab=$1 out=$2
py=${PYTHON:-${KBT_VENV:-.venv}/bin/python}
slo=${KBT_LOOP_SLO_P99:-2000}
window=${KBT_LOOP_WINDOW_S:-25}
mix=(loadtests/pressure-mix/services-rdkafka.yaml loadtests/pressure-mix/audit-java.yaml)
kbt() { "$py" -m tuner "$@"; }
# the lab's Prometheus; no running lab there is kbt's one line, not a traceback
prometheus=$("$py" -c 'import sys
from tuner.core.errors import KbtError
from tuner.lab import load_state
try:
    print(load_state(sys.argv[1]).prometheus_url)
except KbtError as exc:
    sys.exit(f"kbt: error: {exc.message}")' "$lab")
rm -rf "$out" && mkdir -p "$out"
log="$lab/logs/broker-1.log"

kbt lab request-log on --lab-dir "$lab"
stop() { kill $(jobs -p) 2>/dev/null || true; wait || true; kbt lab request-log off --lab-dir "$lab" >/dev/null 2>&1 || true; }
trap stop EXIT

echo "loop 1/5: the team's clients (a mix kbt is not told about) load the lab"
for spec in "${mix[@]}"; do
  kbt sweep "$spec" --lab-dir "$lab" --results "$out/before" >"$out/before-$(basename "$spec" .yaml).log" 2>&1 &
done
sleep "${KBT_LOOP_SETTLE_S:-30}"  # the clients started (a JVM too) and the idle meter showing them
echo "loop 2/5: kbt capture, ${window} s"
kbt capture --lab-dir "$lab" --window "${window}s" --request-log "$log" --out "$out/capture" --lab-brokers 1 \
  --duration 40s --warmup 15s
wait

echo "loop 3/5: each captured group replayed on the lab, then kbt recommend (p99 <= $slo ms)"
groups=()
for sweep in "$out"/capture/*/sweep.yaml; do
  groups+=("$(basename "$(dirname "$sweep")")")
  kbt sweep "$sweep" --lab-dir "$lab" --results "$out/capture/results" >"$out/replay-${groups[-1]}.log" 2>&1 &
done
wait
recs=()
for group in "${groups[@]}"; do
  client=$(sed -n 's/^client: //p' "$out/capture/$group/profile.yaml")
  set +e
  kbt recommend --results "$out/capture/results" --sweep "captured-$group" --client "$client" --slo-p99 "$slo" \
    --out "$out/capture/$group/recommend"
  status=$?
  set -e
  if [ "$status" -ne 0 ]; then echo "loop: no setting meets the SLO for $group (exit $status)" >&2; exit "$status"; fi
  recs+=("$(ls "$out"/capture/"$group"/recommend/*/recommendation.json)")
done

echo "loop 4/5: the recommendations rolled out to the team's clients"
for spec in "${mix[@]}"; do
  rolled="$out/rollout-$(basename "$spec")"
  "$py" -m tuner.render.rollout "$spec" "${recs[@]}" --out "$rolled"
  kbt sweep "$rolled" --lab-dir "$lab" --results "$out/after" >"$out/after-$(basename "$spec" .yaml).log" 2>&1 &
done
wait
trap - EXIT
kbt lab request-log off --lab-dir "$lab"

echo "loop 5/5: kbt compare, before (the capture's window) -> after (the rollout's last ${window} s)"
# each through kbt's typed reader: a damaged capture.json or run record is one line (set -e stops here)
before=$("$py" -m tuner.render.capture_window "$out/capture")
after=$("$py" -m tuner.render.capture_window --runs "$out/after")
kbt compare --prometheus "$prometheus" --before "$before" --after "$after" --window "${window}s" --step 2s \
  --request-log "$log" --json "$out/compare.json" >"$out/loop.txt"
"$py" -m tuner.render.rollout_summary "$out/before" "$out/after" --slo-p99 "$slo" >>"$out/loop.txt"
cat "$out/loop.txt"
