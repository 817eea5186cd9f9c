"""Capture's request-log reader on a broker's log as it is: mostly replica Fetch lines, a few
Produce lines. Reads a generated log (`--lines`, `--produce-every`) and the same log's Produce lines
alone, side by side in one run (rounds interleaved, medians compared).

    python -m bench.capture_read [--lines 100000] [--produce-every 10] [--rounds 3]

Only Produce lines are parsed whole; every other request is recognised by its API key and skipped,
so the mixed log should read in little more than its Produce lines' time. Prints a Markdown table.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench._common import arguments
from tuner.measure.capture_log import read_produce_traffic

FEEDS = '"Capture and replay (issue 43)"'
T0 = 1_795_000_000.0


def _line(i: int, produce: bool) -> str:
    at = T0 + i * 0.001
    stamp = datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S,") + f"{int(at * 1000) % 1000:03d}"
    if produce:
        request = {"acks": -1, "topicData": [{"name": "logs", "partitionData": [
            {"index": p, "recordsSizeInBytes": 16384} for p in range(3)]}]}  # fmt: skip
        header = {"requestApiKey": 0, "clientId": f"filebeat-{i % 7}"}
        port, took = 40000 + i % 50, 2.5
    else:  # a follower's fetch: 4 topics x 12 partitions
        request = {"replicaId": 2, "maxWaitMs": 500, "topics": [{"topic": f"t{k}", "partitions": [
            {"partition": p, "fetchOffset": 12345, "partitionMaxBytes": 1048576} for p in range(12)]}
            for k in range(4)]}  # fmt: skip
        header = {"requestApiKey": 1, "clientId": "broker-2-fetcher-0"}
        port, took = 50000, 500.0
    body = {
        "requestHeader": header,
        "request": request,
        "connection": f"127.0.0.1:9092-127.0.0.1:{port}-0-1",
        "totalTimeMs": took,
        "clientInformation": {"softwareName": "apache-kafka-java", "softwareVersion": "4.1.1"},
    }
    return f"[{stamp}] DEBUG Completed request:{json.dumps(body)} (kafka.request.logger)\n"


def _read_s(path: Path) -> tuple[float, int]:
    start = time.perf_counter()
    traffic = read_produce_traffic([path], 0, 2e9)
    return time.perf_counter() - start, sum(row["requests"] for row in traffic.rows)


def main() -> None:
    parser = arguments(__doc__, FEEDS)
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--produce-every", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not 1 <= args.lines <= 10_000_000 or not 1 <= args.produce_every <= 1000 or not 1 <= args.rounds <= 50:
        raise SystemExit("bench.capture_read: --lines 1..10,000,000, --produce-every 1..1000, --rounds 1..50")
    with tempfile.TemporaryDirectory(prefix="kbt-bench-capture-") as tmp:
        mixed, produce_only = Path(tmp) / "mixed.log", Path(tmp) / "produce.log"
        with mixed.open("w") as m, produce_only.open("w") as p:
            for i in range(args.lines):
                line = _line(i, i % args.produce_every == 0)
                m.write(line)
                if i % args.produce_every == 0:
                    p.write(line)
        times: dict[str, list[float]] = {"mixed": [], "produce": []}
        counted: dict[str, int] = {}
        for _ in range(args.rounds):
            for name, path in (("mixed", mixed), ("produce", produce_only)):
                seconds, counted[name] = _read_s(path)
                times[name].append(seconds)
        if counted["mixed"] != counted["produce"]:
            raise SystemExit(f"the logs counted {counted['mixed']} and {counted['produce']} produce requests")
        sizes = {"mixed": mixed.stat().st_size, "produce": produce_only.stat().st_size}
    mixed_s, produce_s = statistics.median(times["mixed"]), statistics.median(times["produce"])
    print("| log | lines | MB | produce requests | read (median) | ratio |")
    print("|---|---|---|---|---|---|")
    print(f"| Fetch and Produce | {args.lines:,} | {sizes['mixed'] / 1e6:.0f} | {counted['mixed']:,}"
          f" | {mixed_s:.2f} s | {mixed_s / produce_s:.2f}x |")  # fmt: skip
    print(f"| its Produce lines alone | {counted['produce']:,} | {sizes['produce'] / 1e6:.0f}"
          f" | {counted['produce']:,} | {produce_s:.2f} s | 1.00x |")  # fmt: skip


if __name__ == "__main__":
    main()
