"""loadtests/locustfile.py on the real lab: headless in one process, then a master with 2 local
workers at the same offered load; every process exits, delivery is verified, the topics are gone.

`pytest -s` prints the 1-process vs 2-worker figures (docs/benchmarks.md, ## locust).
"""

from __future__ import annotations

import csv
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tuner.core.paths import repo_root

pytestmark = pytest.mark.integration

USERS, RATE, RUN_TIME_S = 4, 100, 20
SPEC = f"""\
name: locust-it
workload:
  name: locust-it
  topics: [{{name: locust-it, partitions: 3, replication_factor: 1}}]
  producers: {USERS}
  processes: 1
  rate_per_producer: {RATE}
  message: {{kind: generated, bytes: 300}}
  duration_s: {RUN_TIME_S}
  warmup_s: 1
profiles:
  - {{name: batched, linger_ms: 20, acks: all, idempotence: true, compression: lz4}}
"""
EXIT_TIMEOUT_S = RUN_TIME_S + 150


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _locust(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "locust", "-f", str(repo_root() / "loadtests" / "locustfile.py"), *args]
    return subprocess.Popen(
        cmd, cwd=repo_root(), stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True
    )


def _wait_all(procs: list[subprocess.Popen[bytes]], logs: list[Path]) -> list[int]:
    """Every process's exit code; a process still running after the deadline is killed and fails."""
    deadline = time.monotonic() + EXIT_TIMEOUT_S
    codes: list[int] = []
    try:
        for proc in procs:
            codes.append(proc.wait(timeout=max(1.0, deadline - time.monotonic())))
    except subprocess.TimeoutExpired:
        tails = "\n".join(log.read_text(errors="replace")[-1500:] for log in logs)
        pytest.fail(f"locust did not exit within {EXIT_TIMEOUT_S} s:\n{tails}")
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
    return codes


def _aggregated(stats_csv: Path) -> dict[str, str]:
    with stats_csv.open(encoding="utf-8") as handle:
        return next(row for row in csv.DictReader(handle) if row["Name"] == "Aggregated")


def _check_run(out: Path, admin: Any, processes: int) -> dict[str, Any]:
    delivery = json.loads((out / "delivery.json").read_text())
    assert delivery["ok"] and delivery["verified"], delivery["line"]
    assert delivery["processes"] == processes and not delivery["missing"]
    assert delivery["lost"] == 0 and delivery["failed"] == 0 and delivery["duplicates"] == 0
    assert delivery["acked"] == delivery["consumed"] == delivery["sent"] > 0
    assert delivery["producers"] == USERS
    stats = _aggregated(out / "locust_stats.csv")
    assert int(stats["Failure Count"]) == 0
    assert int(stats["Request Count"]) == delivery["acked"]  # one request event per acked record
    deadline = time.monotonic() + 20
    while set(delivery["topics"]) & set(admin.list_topics(timeout=10).topics):
        assert time.monotonic() < deadline, f"topics not deleted: {delivery['topics']}"
        time.sleep(0.5)
    return {**delivery, "p50_ms": stats["50%"], "p99_ms": stats["99%"], "rps": float(stats["Requests/s"])}


def test_headless_and_distributed_runs_deliver_the_same_load(lab: Any, admin: Any, tmp_path: Path) -> None:
    spec = tmp_path / "locust-it.yaml"
    spec.write_text(SPEC)
    common = ["--headless", "-u", str(USERS), "-r", "100", "--run-time", f"{RUN_TIME_S}s",
              "--kbt-spec", str(spec), "--kbt-bootstrap", lab.bootstrap_servers,
              "--only-summary"]  # fmt: skip

    one, log = tmp_path / "one", tmp_path / "one.log"
    codes = _wait_all([_locust([*common, "--kbt-out", str(one), "--csv", str(one / "locust")], log)], [log])
    assert codes == [0], log.read_text()[-3000:]
    single = _check_run(one, admin, processes=1)

    two, port = tmp_path / "two", _free_port()
    logs = [tmp_path / f"{name}.log" for name in ("master", "worker-1", "worker-2")]
    workers = [
        _locust(["--worker", "--master-host", "127.0.0.1", "--master-port", str(port)], log)
        for log in logs[1:]
    ]
    master = _locust(
        [*common, "--master", "--master-bind-host", "127.0.0.1", "--master-bind-port", str(port),
         "--expect-workers", "2", "--expect-workers-max-wait", "60",
         "--kbt-out", str(two), "--csv", str(two / "locust")],
        logs[0],
    )  # fmt: skip
    codes = _wait_all([master, *workers], logs)
    assert codes == [0, 0, 0], logs[0].read_text()[-3000:]
    double = _check_run(two, admin, processes=2)
    assert all(r["producers"] == USERS // 2 for r in double["by_process"].values())

    offered = USERS * RATE * (RUN_TIME_S - 5)  # schedules: 3 s after the start to 2 s before the end
    assert 0.95 * offered <= single["sent"] <= 1.02 * offered
    gap = abs(double["acked"] - single["acked"]) / single["acked"]
    print(
        f"\nlocust {USERS} users x {RATE} msgs/s, --run-time {RUN_TIME_S}s (offered {offered}):"
        + "".join(
            f"\n  {label}: acked {r['acked']}, lost {r['lost']}, {r['rps']:.0f} req/s over the run,"
            f" p50 {r['p50_ms']} ms, p99 {r['p99_ms']} ms"
            for label, r in (("1 process", single), ("master + 2 workers", double))
        )
        + f"\n  totals {gap:.1%} apart"
    )
    assert gap <= 0.05
