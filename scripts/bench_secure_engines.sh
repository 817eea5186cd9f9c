#!/usr/bin/env bash
# A SASL_SSL run per engine (librdkafka, Kafka's Java producer, real Filebeat, the collector) with a planted
# password, then a search for that password everywhere kbt and its engines write:
#
#   scripts/bench_secure_engines.sh BASE_PORT [OUT_DIR]
#
# A 1-broker lab of its own (`--security sasl_ssl`, the SCRAM password a fresh random string from
# KBT_LAB_SASL_PASSWORD) runs loadtests/secure-engines.yaml. While the sweep runs, the engines'
# temporary work directories (TMPDIR: plans, filebeat.yml, Filebeat's own logs) and every process's
# command line are searched five times a second; afterwards stdout, stderr, every file under the
# results and every lab log. The lab's own secret file (<lab>/security/sasl-password, mode 0600) is
# where the lab keeps the password by design and is the one file not searched. Prints the sweep's
# table, each run's delivery and the number of places the password was found (0 expected).
set -euo pipefail
base=${1:?usage: bench_secure_engines.sh BASE_PORT [OUT_DIR]}
out=${2:-$(mktemp -d -t kbt-secure-engines-XXXXXX)}
here=$(cd "$(dirname "$0")/.." && pwd)
kbt=${KBT:-$here/.venv/bin/kbt}
lab="$out/lab"
mkdir -p "$out/work"
password="planted-$(od -An -tx1 -N12 /dev/urandom | tr -d ' \n')"
export KBT_LAB_SASL_PASSWORD=$password
"$kbt" lab up --brokers 1 --no-tiered --security sasl_ssl --client-exporters 4 \
  --base-port "$base" --lab-dir "$lab" > "$out/lab-up.txt" 2>&1
unset KBT_LAB_SASL_PASSWORD  # the sweep reads the lab's login from the lab, not from here
trap '"$kbt" lab down --lab-dir "$lab" > /dev/null 2>&1 || true' EXIT
(
  while sleep 0.2; do
    grep -rlF -- "$password" "$out/work" 2>/dev/null || true
    for f in /proc/[0-9]*/cmdline; do grep -qaF -- "$password" "$f" 2>/dev/null && echo "$f"; done
    find "$out/work" \( -name filebeat.yml -o -name 'plan-*.json' -o -name collector.yaml \) 2>/dev/null >> "$out/work-files.txt"
  done > "$out/hits-while-running.txt"
) &
watcher=$!
start=$(date +%s)
TMPDIR="$out/work" "$kbt" sweep "$here/loadtests/secure-engines.yaml" --lab-dir "$lab" \
  --results "$out/results" > "$out/stdout.txt" 2> "$out/stderr.txt"
echo "sweep: $(($(date +%s) - start)) s"
kill "$watcher"
wait "$watcher" 2> /dev/null || true
grep -v '^live ' "$out/stdout.txt" | sed -n '/^sweep /,$p'
"$here/.venv/bin/python" - "$out/results" <<'EOF'
import json, sys
from pathlib import Path
for path in sorted(Path(sys.argv[1]).rglob("*.json")):
    if path.parent.name == "series":
        continue
    r = json.loads(path.read_text())
    d = r["delivery"]
    print(f"{r['name']}: engine {r['client']['engine']}, {r['status']}, acked {d['acked']},"
          f" read back {d['consumed']}, lost {d['lost']}, duplicates {d['duplicates']}")
EOF
after=$(grep -rlF -- "$password" "$out/stdout.txt" "$out/stderr.txt" "$out/results" "$lab/logs" || true)
searched=$(find "$out/results" "$lab/logs" -type f | wc -l)
seen=$(sort -u "$out/work-files.txt" | wc -l)
echo "password found: $(sort -u "$out/hits-while-running.txt" | wc -l) place(s) while running" \
  "($seen engine config files read), $(echo -n "$after" | grep -c . || true) file(s) after" \
  "(stdout, stderr, $searched result and lab log files)"
