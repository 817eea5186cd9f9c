"""TLS cost: broker CPU per MB over PLAINTEXT vs SASL_SSL at identical settings and offered load.

    make bench-tls        # or: python scripts/bench_tls_cost.py [--brokers 3] [--base-port 22700]

Starts a lab of its own with `--security sasl_ssl` (TLS between clients and brokers, plain text
between brokers, as in Walmart's measurement), runs `kbt sweep loadtests/tls-cost.yaml` (plain and
SASL_SSL runs alternating, three pairs), prints MB/s acked, broker CPU seconds per MB and p99 per
pair with the TLS/plain ratios, and stops the lab.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from tuner.store.record import RunRecord
from tuner.store.results import ResultsStore

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "loadtests" / "tls-cost.yaml"


def kbt(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "tuner", *args], check=True, cwd=ROOT)


def mb_per_s(record: RunRecord) -> float:
    client = record.client
    assert client is not None
    window = client.window_end - client.window_start
    return client.bytes_acked / window / 1e6 if window > 0 else 0.0


def p99(record: RunRecord) -> float:
    client = record.client
    assert client is not None and client.delivery_latency_ms is not None
    return float(client.delivery_latency_ms.p99 or 0.0)


def broker_cpu(record: RunRecord) -> float | None:
    if record.broker is None:
        return None
    cores = [b.cpu_cores for b in record.broker.brokers if b.cpu_cores is not None]
    return sum(cores) if cores else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brokers", type=int, default=3)
    parser.add_argument("--base-port", type=int, default=22700)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kbt-bench-tls-") as tmp:
        lab_dir, results = Path(tmp) / "lab", Path(tmp) / "results"
        kbt("lab", "up", "--security", "sasl_ssl", "--brokers", str(args.brokers),
            "--base-port", str(args.base_port), "--lab-dir", str(lab_dir))  # fmt: skip
        try:
            kbt("sweep", str(SPEC), "--lab-dir", str(lab_dir), "--results", str(results))
        finally:
            kbt("lab", "down", "--lab-dir", str(lab_dir))
        records = {r.name: r for r in ResultsStore(results).records()}
    print(
        "\n| setting | MB/s plain / TLS | broker CPU s per MB plain / TLS | TLS/plain CPU per MB"
        " | p99 ms plain / TLS |"
    )
    print("|---|---|---|---|---|")
    ratios = []
    for linger in ("5", "10", "20"):
        plain, tls = records[f"plaintext-linger{linger}"], records[f"sasl-ssl-linger{linger}"]
        for r in (plain, tls):
            if r.delivery is None or r.delivery.lost:
                print(f"{r.name}: records lost: the figures do not count", file=sys.stderr)
                return 1
        p, t = mb_per_s(plain), mb_per_s(tls)
        cp, ct = broker_cpu(plain), broker_cpu(tls)
        if cp is None or ct is None or p <= 0 or t <= 0:
            print(f"linger {linger}: no broker CPU figures", file=sys.stderr)
            return 1
        ratio = (ct / t) / (cp / p)
        ratios.append(ratio)
        lp, lt = p99(plain), p99(tls)
        print(
            f"| linger.ms {linger} | {p:.2f} / {t:.2f} | {cp / p:.3f} / {ct / t:.3f} | {ratio:.2f}x"
            f" | {lp:.0f} / {lt:.0f} |"
        )
    print(f"\nmedian TLS/plain broker CPU per MB: {statistics.median(ratios):.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
