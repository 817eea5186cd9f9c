"""Qunar's pressure regime on the lab: many small TLS produce requests into one network thread.

    make bench-pressure        # or: python scripts/bench_pressure.py [--base-port P] [--markdown F]

Starts a lab of its own (one broker, num.network.threads=1, a SASL_SSL listener, no tiered
storage, 1 s scrapes), runs loadtests/pressure.yaml (Filebeat-like vs kbt's batched profile at the
same offered load, both over SASL_SSL), takes the lab down and prints, per run: produce requests/s
(client and broker), NetworkProcessorAvgIdlePercent, and the broker's network threads measured
from the kernel over the same window, so a low idle figure can be told apart from a busy machine:

- own CPU: the thread's CPU time per second (/proc/<pid>/task/<tid>/schedstat, run time);
- runqueue wait: time per second the thread was runnable but waiting for a core (same file) --
  host CPU contention, which Kafka's idle meter counts as busy;
- host CPU busy (all cores, /proc/stat) and the 1-minute load average.

Kafka names its threads in Java; the kernel keeps only 15 characters ("data-plane-kafk" for network
threads and request handlers alike), so thread ids are matched to names with `jcmd Thread.print`.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from tuner.core.paths import repo_root
from tuner.lab import Lab, LabConfig
from tuner.runner.wiring import sweep_runner
from tuner.spec import load_sweep
from tuner.store.record import RunRecord

SPEC = repo_root() / "loadtests" / "pressure.yaml"
NETWORK = re.compile(r'^"(data-plane-kafka-network-thread-[^"]*)".*?nid=0x([0-9a-f]+)', re.MULTILINE)
SAMPLE_S = 1.0


@dataclass
class Sample:
    t: float
    threads: dict[str, tuple[int, int]]  # thread name -> (run ns, runqueue wait ns)
    host_busy: int  # jiffies, all cores
    host_total: int


@dataclass
class Sampler:
    """Per-thread scheduler figures of the broker's network threads, and host CPU, once a second."""

    pid: int
    tids: dict[str, int] = field(default_factory=dict)
    samples: list[Sample] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def find_threads(self) -> None:
        out = subprocess.run(["jcmd", str(self.pid), "Thread.print"], capture_output=True, text=True,
                             timeout=60).stdout  # fmt: skip
        self.tids = {name: int(nid, 16) for name, nid in NETWORK.findall(out)}
        if not self.tids:
            raise SystemExit("no network threads found in the broker's thread dump")

    def sample(self) -> Sample:
        threads = {}
        for name, tid in self.tids.items():
            run_ns, wait_ns, _ = Path(f"/proc/{self.pid}/task/{tid}/schedstat").read_text().split()
            threads[name] = (int(run_ns), int(wait_ns))
        cpu = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
        idle = cpu[3] + cpu[4]  # idle + iowait
        return Sample(time.time(), threads, sum(cpu) - idle, sum(cpu))

    def run(self) -> None:
        while not self.stop.wait(SAMPLE_S):
            self.samples.append(self.sample())

    def over(self, start: float, end: float) -> dict[str, float]:
        """Per-second figures between the samples nearest to [start, end]."""
        inside = [s for s in self.samples if start <= s.t <= end]
        if len(inside) < 2:
            return {}
        a, b = inside[0], inside[-1]
        span = b.t - a.t
        out: dict[str, float] = {}
        for name in self.tids:
            out[f"cpu {name}"] = (b.threads[name][0] - a.threads[name][0]) / 1e9 / span
            out[f"wait {name}"] = (b.threads[name][1] - a.threads[name][1]) / 1e9 / span
        out["host busy"] = (b.host_busy - a.host_busy) / max(1, b.host_total - a.host_total)
        return out


def row(record: RunRecord, figures: dict[str, float], load: float) -> str:
    client, broker = record.client, record.broker
    idle = broker.network_idle_ratio if broker else None
    handler = broker.request_handler_idle_ratio if broker else None
    broker_rps = broker.produce_requests_per_s if broker else None
    threads = sorted({k.split(" ", 1)[1] for k in figures if k.startswith("cpu ")})
    own = " / ".join(f"{figures[f'cpu {t}']:.3f}" for t in threads)
    wait = " / ".join(f"{figures[f'wait {t}']:.3f}" for t in threads)
    lag = client.send_lag_ms.p99 if client.send_lag_ms else None
    return (
        f"| {record.name} | {record.status} | {client.offered_records / client.window_s:,.0f} |"
        f" {client.requests_per_s:,.0f} | {_f(broker_rps, 0)} | {_f(client.records_per_request, 1)} |"
        f" {_f(idle, 3)} | {_f(handler, 3)} | {own} | {wait} | {figures.get('host busy', 0):.2f} |"
        f" {load:.1f} | {_f(lag, 0)} | {record.delivery.lost} |"
    )


def _f(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-port", type=int, default=22900)
    parser.add_argument("--markdown", type=Path, help="also write the table here")
    parser.add_argument("--results", type=Path, help="keep the run records here (for kbt forecast)")
    args = parser.parse_args()
    lines = []
    with tempfile.TemporaryDirectory(prefix="kbt-bench-pressure-") as tmp:
        lab = Lab(LabConfig(brokers=1, base_port=args.base_port, lab_dir=Path(tmp) / "lab", tiered=False,
                            network_threads=1, security="sasl_ssl", scrape_interval_s=1.0))  # fmt: skip
        state = lab.up(timeout_s=240)
        try:
            pid = state.brokers[0].pid
            assert pid is not None
            sampler = Sampler(pid)
            sampler.find_threads()
            ticker = threading.Thread(target=sampler.run, daemon=True)
            ticker.start()
            loaded = load_sweep(SPEC)
            results = args.results or Path(tmp) / "results"
            runner = sweep_runner(lab_dir=state.lab_dir, results=results)
            for plan in loaded.runs:
                one = type(loaded)(path=loaded.path, spec=loaded.spec, runs=[plan])
                [record] = runner.run(one).records
                c = record.client
                load = os.getloadavg()[0]
                lines.append(row(record, sampler.over(c.window_start, c.window_end), load))
                print(lines[-1], file=sys.stderr, flush=True)
                for problem in record.problems:
                    print(f"  {record.name}: {problem}", file=sys.stderr, flush=True)
            sampler.stop.set()
            threads = ", ".join(sorted(sampler.tids))
        finally:
            lab.down()
    header = (
        "| run | status | offered msgs/s | client req/s | broker req/s | msgs/req | network idle |"
        " handler idle | network thread own CPU (s/s) | network thread runqueue wait (s/s) |"
        " host CPU busy | load avg | send lag p99 ms | lost |\n" + "|---" * 14 + "|"
    )
    text = f"{header}\n" + "\n".join(lines) + f"\n\nnetwork threads (in column order): {threads}\n"
    print("\n" + text)
    if args.markdown is not None:
        args.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
