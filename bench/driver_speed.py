"""Driver speed: a kbt engine (closed loop) vs Kafka's ProducerPerformance, same lab, same settings,
same payload, alternating in one run. `--engine librdkafka` (default) or `--engine java` (kbt's Java
engine: the same Java client library as ProducerPerformance, so the pair shows the engine's own cost).

    make bench-driver          # or: python -m bench.driver_speed --runs 5 [--lab-dir DIR]
    python -m bench.driver_speed --engine java --runs 4

Without --lab-dir the script starts its own 3-broker lab (--base-port) and takes it down at the end.
Both clients send the same generated log-like 1 KB records, keyless, from one producer in one
process to a fresh 6-partition RF 1 topic with the settings in SETTINGS (acks=1, linger 5 ms,
256 KB batches, no compression, 5 requests in flight, a 32 MB send buffer), as fast as they can.

Steady-state msgs/s is the primary figure: kbt's acked records over its measured window (the first
3 s trimmed), ProducerPerformance's records over its 5 s report windows after the first one. The
whole-run figures (start to the last ack, warm-up included) are printed beside them, and the CPU time
each client's processes used per message sent (kbt's driver processes; the JVM, start-up included).
Runs alternate which client goes first; the ratios reported are medians of the per-pair ratios.

ProducerPerformance is given far more records than it can send and stopped once it has printed
enough report windows to cover --seconds (at least two, so a steady window always exists however
fast or slow the machine); a pair that cannot be measured (a client error) is reported and skipped,
and the script fails only when no pair could be measured or a delivery check finds a lost record.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench._common import arguments, lab
from tuner.core.errors import KbtError
from tuner.core.kafka_clients import Connection, admin_client
from tuner.core.paths import kafka_libs_dir
from tuner.driver.engine import Placement
from tuner.driver.java_engine import run_java_load
from tuner.driver.librdkafka_engine import run_load
from tuner.driver.payload import build_pool
from tuner.spec.sweep import RunPlan, SweepSpec
from tuner.target.topics import create_topics, delete_topics

FEEDS = (
    '"Driver speed" (--engine librdkafka), '
    '"Driver speed: the Java engine beside ProducerPerformance" (--engine java)'
)

WARMUP_S = 3.0
# client-neutral setting: (ClientProfile knob or librdkafka property, Java producer property, value)
SETTINGS = [
    ("acks", "acks", "1"),
    ("linger_ms", "linger.ms", "5"),
    ("batch_bytes", "batch.size", "262144"),
    ("compression", "compression.type", "none"),
    ("max_in_flight", "max.in.flight.requests.per.connection", "5"),
    ("queue.buffering.max.kbytes", "buffer.memory", "32768"),  # Java takes bytes (x 1024 below)
    ("enable.idempotence", "enable.idempotence", "false"),
]
JAVA_BYTES = {"buffer.memory"}
REPORT = re.compile(r"^(\d+) records sent, ([\d.]+) records/sec")
REPORT_WINDOW_S = 5.0  # ProducerPerformance prints a report every 5 s
JAVA_RECORDS = 2_000_000_000  # never reached: the run is stopped after enough report windows
JAVA_START_S = 60.0  # allowance for the JVM to start on a busy machine


class PairError(Exception):
    """One client could not be measured in this pair (the pair is skipped)."""


@dataclass
class Figures:
    steady: float  # msgs/s, warm-up trimmed
    whole: float  # msgs/s, whole run
    records: int
    cpu_s: float = 0.0  # CPU seconds (user + system) of the client's processes, whole run

    @property
    def cpu_us_per_msg(self) -> float:
        return 1e6 * self.cpu_s / max(1, self.records)


def children_cpu_s() -> float:
    """CPU seconds of every child process this script has waited for (the clients run as children:
    kbt's driver processes, the ProducerPerformance JVM)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def plan(seconds: float, record_bytes: int, engine: str = "librdkafka") -> RunPlan:
    knobs: dict[str, Any] = {"name": "same-as-java", "partitioner": "sticky", "overrides": {}}
    for key, java_key, value in SETTINGS:
        if engine == "java":  # the Java client's own names and units, as ProducerPerformance gets them
            knobs["overrides"][java_key] = str(int(value) * 1024) if java_key in JAVA_BYTES else value
        elif "." in key:
            knobs["overrides"][key] = value
        else:
            knobs[key] = value
    if engine == "java":
        knobs.update(client="java", partitioner="default")  # the built-in partitioner, like the tool's
    spec = SweepSpec.model_validate(
        {
            "name": "driver-speed",
            "workload": {
                "name": "driver-speed",
                "topics": [{"name": "driver-speed", "partitions": 6, "replication_factor": 1}],
                "producers": 1,
                "processes": 1,
                "rate_per_producer": "max",
                "message": {"kind": "generated", "bytes": record_bytes},
                "duration_s": seconds,
                "warmup_s": WARMUP_S,
            },
            "profiles": [knobs],
        }
    )
    return spec.expand()[0]


def run_kbt(run: RunPlan, bootstrap: str, topic: str) -> Figures:
    cpu = children_cpu_s()
    engine = run_java_load if run.profile.client == "java" else run_load
    result = engine(run, Placement("driver-speed", (topic,), bootstrap))
    cpu = children_cpu_s() - cpu
    delivery = result.delivery
    if delivery.lost:
        raise SystemExit(f"kbt delivery check failed: {delivery.lost} acked records lost ({delivery})")
    if not delivery.verified:
        took = f" after {delivery.read_back_s:.0f} s" if delivery.read_back_s is not None else ""
        raise SystemExit(
            f"kbt delivery unverified: the read-back ended{took} with {delivery.unread} of"
            f" {delivery.acked} acked records unread (none counted lost)"
        )
    client = result.client
    whole = client.records_acked_total / max(1e-9, client.finished_at - client.started_at)
    steady = client.records_acked / max(1e-9, client.window_end - client.window_start)
    return Figures(steady, whole, client.records_acked_total, cpu)


def run_java(bootstrap: str, topic: str, payload_file: Path, seconds: float) -> Figures:
    """ProducerPerformance at max rate until it has printed enough 5 s report windows to cover
    `seconds` after the first (JIT warm-up) window, then stopped."""
    props = {"bootstrap.servers": bootstrap}
    for _, java_key, value in SETTINGS:
        props[java_key] = str(int(value) * 1024) if java_key in JAVA_BYTES else value
    cmd = ["java", "-Xmx512m", "-cp", f"{kafka_libs_dir()}/*", "org.apache.kafka.tools.ProducerPerformance",
           "--topic", topic, "--num-records", str(JAVA_RECORDS), "--throughput", "-1",
           "--payload-file", str(payload_file),
           "--producer-props", *(f"{k}={v}" for k, v in props.items())]  # fmt: skip
    windows_needed = 1 + max(1, math.ceil((seconds - WARMUP_S) / REPORT_WINDOW_S))
    cpu = children_cpu_s()
    started = time.time()
    deadline = started + JAVA_START_S + seconds * 4
    reports: list[tuple[int, float]] = []
    tail: list[str] = []
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # one line per 5 s report (plus warnings)
            match = REPORT.match(line)
            if match:
                reports.append((int(match[1]), float(match[2])))
                if len(reports) >= windows_needed:
                    break
            else:
                tail = [*tail[-5:], line.strip()]
            if time.time() > deadline:
                break
        stopped = time.time()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    cpu = children_cpu_s() - cpu
    steady = reports[1:]  # the first 5 s window holds the JIT warm-up
    if not steady:
        raise PairError(f"ProducerPerformance printed {len(reports)} report(s): {' | '.join(tail)[-300:]}")
    sent = sum(n for n, _ in steady)
    elapsed = sum(n / rate for n, rate in steady if rate > 0)
    records = sum(n for n, _ in reports)
    return Figures(sent / elapsed, records / max(1e-9, stopped - started), records, cpu)


def run_java_and_drop(admin: Any, bootstrap: str, topic: str, payload_file: Path, seconds: float) -> Figures:
    """`run_java`, then its topic deleted at once: ProducerPerformance's records are never read back,
    and their ~15 GB beside kbt's run had filled the lab's disk and stopped its brokers."""
    try:
        return run_java(bootstrap, topic, payload_file, seconds)
    finally:
        delete_topics(admin, [topic])


def main() -> int:
    parser = arguments(__doc__, FEEDS)
    parser.add_argument("--engine", choices=("librdkafka", "java"), default="librdkafka")
    parser.add_argument("--runs", type=int, default=5, help="pairs of runs (kbt and Java)")
    parser.add_argument("--seconds", type=float, default=30.0, help="each client's run (>= 10)")
    parser.add_argument("--record-bytes", type=int, default=1000)
    parser.add_argument("--lab-dir", type=Path, default=None, help="use this running lab")
    parser.add_argument("--base-port", type=int, default=19490, help="for the script's own lab")
    args = parser.parse_args()
    if args.runs < 1 or args.seconds < 10:
        print("error: --runs must be >= 1 and --seconds >= 10", file=sys.stderr)
        return 2
    up = ("--brokers", "3", "--timeout", "180")
    with (
        tempfile.TemporaryDirectory(prefix="kbt-speed-lab-") as tmp,
        lab(args.lab_dir, Path(tmp) / "lab", args.base_port, *up) as at,
    ):
        try:
            ratios = bench(at.state().bootstrap_servers, args)
        finally:
            # The admin client's futures keep it in a reference cycle: free it before the lab stops,
            # or it logs every broker's disconnect and refused reconnects after the figures.
            gc.collect()
    if not ratios:
        print("error: no pair could be measured (see the lines above)", file=sys.stderr)
        return 1
    steady, whole, cpu = ([r[i] for r in ratios] for i in range(3))
    print(f"kbt {args.engine} / ProducerPerformance, steady state: median "
          f"{statistics.median(steady):.2f}x over "
          f"{len(steady)} pairs (min {min(steady):.2f}x, max {max(steady):.2f}x); whole run: median "
          f"{statistics.median(whole):.2f}x; client CPU per message: median "
          f"{statistics.median(cpu):.2f}x")  # fmt: skip
    return 0


def bench(bootstrap: str, args: argparse.Namespace) -> list[tuple[float, float, float]]:
    run = plan(args.seconds, args.record_bytes, args.engine)
    admin = admin_client(Connection(bootstrap))
    ratios: list[tuple[float, float, float]] = []
    with tempfile.TemporaryDirectory(prefix="kbt-speed-") as tmp:
        payload_file = Path(tmp) / "payloads.txt"
        payload_file.write_bytes(b"\n".join(build_pool(run.workload, seed=1)))
        for i in range(args.runs):
            stamp = f"{i}-{int(time.time())}"
            topics = [f"driver-speed-kbt-{stamp}", f"driver-speed-java-{stamp}"]
            create_topics(admin, run.workload.topics * 2, topics)
            load = os.getloadavg()[0]
            try:
                if i % 2 == 0:
                    ours = run_kbt(run, bootstrap, topics[0])
                    java = run_java_and_drop(admin, bootstrap, topics[1], payload_file, args.seconds)
                else:
                    java = run_java_and_drop(admin, bootstrap, topics[1], payload_file, args.seconds)
                    ours = run_kbt(run, bootstrap, topics[0])
            except (PairError, KbtError) as exc:
                print(f"pair {i + 1} skipped (load {load:.1f}): {exc}", file=sys.stderr, flush=True)
                continue
            finally:
                delete_topics(admin, topics)
            ratios.append((ours.steady / java.steady, ours.whole / java.whole,
                           ours.cpu_us_per_msg / java.cpu_us_per_msg))  # fmt: skip
            print(f"pair {i + 1} ({'kbt' if i % 2 == 0 else 'Java'} first, load {load:.1f}): "
                  f"kbt {ours.steady:,.0f} msgs/s steady ({ours.whole:,.0f} whole run), "
                  f"ProducerPerformance {java.steady:,.0f} ({java.whole:,.0f}), "
                  f"ratio {ratios[-1][0]:.2f}x ({ratios[-1][1]:.2f}x); client CPU per msg kbt "
                  f"{ours.cpu_us_per_msg:.1f} us, Java {java.cpu_us_per_msg:.1f} us",
                  file=sys.stderr, flush=True)  # fmt: skip
    return ratios


if __name__ == "__main__":
    sys.exit(main())
