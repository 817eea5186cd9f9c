#!/usr/bin/env bash
# Capture and replay, the acceptance measurement (docs/benchmarks.md "Capture and replay"):
#   1. a source lab (3 brokers) runs a client mix `kbt capture` is not told about
#      (loadtests/capture-source/: keyed librdkafka, keyless Java, real Filebeat 7.17);
#   2. `kbt capture` reads it for a window; `kbt diagnose` reads the brokers over the same window;
#   3. the source lab goes down, a fresh one comes up, every captured group's sweep runs at once;
#   4. `kbt diagnose` reads the replay's brokers, `kbt capture` reads the replay's groups;
#   5. unless KBT_BENCH_CALIBRATE=0: the capture calibrated by that first replay (each group's
#      linger inferred again for the rate the replay, not the model, sends), replayed again (3-4);
#   6. per broker produce requests/s, bytes per request and records/s, source vs (last) replay, and
#      the groups of both captures.
# Usage: scripts/bench_capture.sh [OUT]   (default out/bench-capture; base port KBT_BENCH_BASE_PORT)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-out/bench-capture}
BASE=${KBT_BENCH_BASE_PORT:-25000}
WINDOW=${KBT_BENCH_CAPTURE_WINDOW:-90}
KBT=${KBT:-.venv/bin/kbt}
PY=${PY:-.venv/bin/python}
SRC=$OUT/source-lab
REP=$OUT/replay-lab
mkdir -p "$OUT"
# kafka-configs (a JVM started per call) may need minutes on a busy 2-core machine: the lab's
# request-log switch, with its time limit raised for this bench
request_log_on() {
  $PY -c "import sys, tuner.lab.config_command as c; c.CONFIG_COMMAND_TIMEOUT_S = 600
from tuner.lab.request_log import set_request_log; set_request_log(sys.argv[1], [1, 2, 3], True)" \
    "127.0.0.1:$((BASE + 1)),127.0.0.1:$((BASE + 2)),127.0.0.1:$((BASE + 3))"
}
logs() { for b in 1 2 3; do printf -- '--request-log %s/logs/broker-%s.log ' "$1" "$b"; done; }
down() { $KBT lab down --lab-dir "$SRC" >/dev/null 2>&1 || true; $KBT lab down --lab-dir "$REP" >/dev/null 2>&1 || true; }
trap 'kill $(jobs -p) 2>/dev/null || true; down' EXIT

# KBT_BENCH_REPLAY_ONLY=1: keep OUT's source capture and diagnosis, run the replay half again
if [ -z "${KBT_BENCH_REPLAY_ONLY:-}" ]; then
echo "bench-capture: source lab"
$KBT lab up --base-port "$BASE" --lab-dir "$SRC" --brokers 3 --no-tiered
request_log_on "$SRC"
for spec in rdkafka-keyed java-keyless filebeat-real; do
  $KBT sweep "loadtests/capture-source/$spec.yaml" --lab-dir "$SRC" --results "$OUT/source-results" \
    >"$OUT/source-$spec.log" 2>&1 &
done
sleep 75  # every group producing past its warm-up
echo "bench-capture: capture ${WINDOW}s"
# shellcheck disable=SC2046
$KBT capture --lab-dir "$SRC" --window "${WINDOW}s" $(logs "$SRC") --out "$OUT/capture" \
  --lab-brokers 3 --duration 200s --warmup 30s | tee "$OUT/capture.txt"
END=$($PY -m tuner.render.capture_window "$OUT/capture")  # read as kbt reads it: a damaged file is one line
$KBT diagnose --prometheus "http://127.0.0.1:$BASE" --window "${WINDOW}s" --end "$END" \
  --json "$OUT/source-diagnosis.json" >/dev/null || true
wait
$KBT lab down --lab-dir "$SRC"
fi

# One replay of CAPTURE's sweeps on a fresh lab: its capture in $OUT/$2-capture, the brokers' figures
# over its window in $OUT/$2-diagnosis.json.
replay() {
  local capture=$1 tag=$2 sweep group end
  echo "bench-capture: $tag on a fresh lab ($capture)"
  rm -rf "$OUT/$tag-results"
  $KBT lab up --base-port "$BASE" --lab-dir "$REP" --brokers 3 --no-tiered
  request_log_on "$REP"
  for sweep in "$capture"/*/sweep.yaml; do
    group=$(basename "$(dirname "$sweep")")
    $KBT sweep "$sweep" --lab-dir "$REP" --results "$OUT/$tag-results" >"$OUT/$tag-$group.log" 2>&1 &
  done
  sleep 75
  # shellcheck disable=SC2046
  $KBT capture --lab-dir "$REP" --window "${WINDOW}s" $(logs "$REP") --out "$OUT/$tag-capture" \
    --lab-brokers 3 | tee "$OUT/$tag-capture.txt"
  end=$($PY -m tuner.render.capture_window "$OUT/$tag-capture")
  $KBT diagnose --prometheus "http://127.0.0.1:$BASE" --window "${WINDOW}s" --end "$end" \
    --json "$OUT/$tag-diagnosis.json" >/dev/null || true
  wait
  $KBT lab down --lab-dir "$REP"
}

# KBT_BENCH_CALIBRATE=0: one replay of the capture as shaped. Else (the default) a first replay
# calibrates each group's linger (tuner/render/calibrate.py: the model's error at the inferred linger
# taken as a factor) and the replay judged is the second, from the calibrated capture.
if [ "${KBT_BENCH_CALIBRATE:-1}" = 0 ]; then
  replay "$OUT/capture" replay
else
  replay "$OUT/capture" first-replay
  mkdir -p "$OUT/first-round"
  ln -sfn ../capture "$OUT/first-round/capture"
  ln -sfn ../first-replay-capture "$OUT/first-round/replay-capture"
  ln -sfn ../source-diagnosis.json "$OUT/first-round/source-diagnosis.json"
  ln -sfn ../first-replay-diagnosis.json "$OUT/first-round/replay-diagnosis.json"
  echo "bench-capture: the first replay, judged as the acceptance judges"
  $PY -m tuner.render.capture_check "$OUT/first-round" | tee "$OUT/first-round/acceptance.txt" || true
  rm -rf "$OUT/capture-calibrated"
  $PY -m tuner.render.calibrate "$OUT/capture" "$OUT/first-replay-capture" "$OUT/capture-calibrated" \
    | tee "$OUT/calibration.txt"
  replay "$OUT/capture-calibrated" replay
fi
$PY -m tuner.render.capture_check "$OUT" | tee "$OUT/acceptance.txt"
