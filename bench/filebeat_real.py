"""Summarise real-Filebeat vs emulation runs (docs/benchmarks.md "Real Filebeat") from sweep records.

    kbt sweep loadtests/filebeat-real-vs-emulated.yaml --results DIR
    python -m bench.filebeat_real DIR [--sweep filebeat-real-vs-emulated]

Produce requests are the brokers' (RequestMetrics RequestsPerSec{request=Produce}, once per request,
whole run); events per request = events delivered over the whole run / those requests. Profile
names end in `-emulated`, `-real-log` or `-real-filestream`; the ratio column is the emulation's
requests over real Filebeat's for the same profile and load.
"""

from __future__ import annotations

import sys
from pathlib import Path

from bench._common import arguments
from tuner.store.record import RunRecord
from tuner.store.results import ResultsStore

FEEDS = (
    '"Real Filebeat vs kbt\'s Sarama emulation", '
    '"P1 with real Filebeat: the Qunar-like workload", "The knobs, '
    'swept with the real collector", "P1 with the real collector: the Qunar-like workload"'
)

ENGINES = ("-emulated", "-real-log", "-real-filestream", "-real")


def split(name: str) -> tuple[str, str]:
    for suffix in ENGINES:
        if name.endswith(suffix):
            return name[: -len(suffix)], suffix[1:]
    return name, "?"


def row(record: RunRecord) -> dict[str, float | str | None]:
    broker, client = record.broker, record.client
    requests = broker.produce_requests_total if broker else None
    events = client.records_acked_total or client.records_acked
    rate = broker.produce_requests_per_s if broker else None
    return {
        "events_per_request": events / requests if requests else None,
        "requests_per_s": rate,
        "p99_ms": client.delivery_latency_ms.p99,
        "lost": record.delivery.lost,
        "status": record.status,
    }


def main(argv: list[str]) -> int:
    parser = arguments(__doc__, FEEDS)
    parser.add_argument("results", type=Path)
    parser.add_argument("--sweep", default="filebeat-real-vs-emulated")
    args = parser.parse_args(argv)
    records = ResultsStore(args.results).records(args.sweep)
    if not records:
        sys.stderr.write(f"bench.filebeat_real: no records of sweep {args.sweep} in {args.results}\n")
        return 2
    rows = {split(r.name): row(r) for r in records}
    head = "| profile | engine | events/request | produce req/s | p99 ms (write -> ack) | lost"
    print(head + " | emulated / real requests |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for (profile, engine), r in sorted(rows.items()):
        emulated = rows.get((profile, "emulated"))
        ratio = ""
        if engine != "emulated" and emulated and emulated["requests_per_s"] and r["requests_per_s"]:
            ratio = f"{float(emulated['requests_per_s']) / float(r['requests_per_s']):.1f}x"
        epr, rps, p99 = r["events_per_request"], r["requests_per_s"], r["p99_ms"]
        print(
            f"| {profile} | {engine} | {epr:.1f} | {rps:.1f} | {p99:.0f} | {r['lost']} | {ratio} |"
            if isinstance(epr, float) and isinstance(rps, float) and isinstance(p99, float)
            else f"| {profile} | {engine} | - | - | - | {r['lost']} | |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
