"""TLS cost: PLAINTEXT vs SASL_SSL at identical settings, side by side in one run on one lab.

    make bench-tls        # or: python -m bench.tls_cost [--brokers 3] [--base-port 22700]

Starts a lab of its own with `--security sasl_ssl` (TLS + SCRAM-SHA-512 between clients and brokers,
plain text between brokers, as in Walmart's measurement), runs `kbt sweep loadtests/tls-cost.yaml`
(plain and SASL_SSL runs alternating: three pairs at a fixed offered load, two pairs as fast as the
machine goes), stops the lab and prints, per pair, MB/s acked, broker CPU seconds per MB, p99
delivery latency and the TLS/plain ratios, as Markdown (`--markdown FILE` also writes it there).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

from bench._common import ROOT, arguments, kbt, lab
from tuner.store.record import RunRecord
from tuner.store.results import ResultsStore

FEEDS = '"TLS cost"'

SPEC = ROOT / "loadtests" / "tls-cost.yaml"
PAIRS = {"fixed": ["1000-linger5", "1000-linger10", "1000-linger20"], "max": ["max-linger5", "max-linger20"]}
WALMART_PLAIN_MB_S, WALMART_TLS_MB_S = 580, 460


def mb_per_s(record: RunRecord) -> float:
    client = record.client
    assert client is not None
    return client.bytes_acked / client.window_s / 1e6


def p99(record: RunRecord) -> float:
    client = record.client
    assert client is not None and client.delivery_latency_ms is not None
    return float(client.delivery_latency_ms.p99 or 0.0)


def broker_cpu(record: RunRecord) -> float | None:
    """Broker CPU cores (all brokers) over the measured window."""
    return record.broker.cpu_cores if record.broker is not None else None


def pair_rows(records: dict[str, RunRecord], keys: list[str]) -> tuple[list[str], dict[str, list[float]]]:
    rows: list[str] = []
    ratios: dict[str, list[float]] = {"mb": [], "cpu_per_mb": [], "p99": []}
    for key in keys:
        plain, tls = records[f"plaintext-{key}"], records[f"sasl-ssl-{key}"]
        for r in (plain, tls):
            if r.delivery is None or not r.delivery.verified or r.delivery.lost:
                raise SystemExit(f"{r.name}: delivery not verified or records lost: the figures do not count")
        p, t = mb_per_s(plain), mb_per_s(tls)
        cp, ct = broker_cpu(plain), broker_cpu(tls)
        if cp is None or ct is None or p <= 0 or t <= 0:
            raise SystemExit(f"{key}: no broker CPU figures")
        lp, lt = p99(plain), p99(tls)
        ratios["mb"].append(t / p)
        ratios["cpu_per_mb"].append((ct / t) / (cp / p))
        ratios["p99"].append(lt / lp if lp > 0 else float("nan"))
        rate, linger = key.split("-linger")
        rows.append(
            f"| {'max' if rate == 'max' else f'{int(rate) * 4} msgs/s'}, linger.ms {linger}"
            f" | {p:.2f} / {t:.2f} | {t / p:.2f}x | {cp:.2f} / {ct:.2f} | {cp / p:.3f} / {ct / t:.3f}"
            f" | {(ct / t) / (cp / p):.2f}x | {lp:.0f} / {lt:.0f} |"
        )
    return rows, ratios


def report(records: dict[str, RunRecord], load: tuple[float, float], minutes: float) -> str:
    head = [
        "| load | MB/s acked plain / TLS | TLS/plain MB/s | broker CPU cores plain / TLS"
        " | broker CPU s per MB plain / TLS | TLS/plain CPU per MB | p99 ms plain / TLS |",
        "|---|---|---|---|---|---|---|",
    ]
    fixed, fixed_r = pair_rows(records, PAIRS["fixed"])
    full, full_r = pair_rows(records, PAIRS["max"])
    med = statistics.median
    walmart = WALMART_TLS_MB_S / WALMART_PLAIN_MB_S
    out = [
        *head, *fixed, *full, "",
        f"- fixed offered load, median TLS/plain broker CPU per MB: {med(fixed_r['cpu_per_mb']):.2f}x;"
        f" p99 {med(fixed_r['p99']):.2f}x",
        f"- full speed, median TLS/plain throughput: {med(full_r['mb']):.2f}x"
        f" ({(1 - med(full_r['mb'])) * 100:.0f}% less with TLS); broker CPU per MB"
        f" {med(full_r['cpu_per_mb']):.2f}x; p99 {med(full_r['p99']):.2f}x",
        f"- Walmart (Kafka 0.10, seed 003): TLS/plain throughput {walmart:.2f}x"
        f" ({WALMART_TLS_MB_S} vs {WALMART_PLAIN_MB_S} MB/s, {(1 - walmart) * 100:.0f}% less)",
        f"- {minutes:.1f} min; 1-minute load average {load[0]:.1f} before, {load[1]:.1f} after"
        f" ({os.cpu_count()} cores)",
    ]  # fmt: skip
    return "\n".join(out) + "\n"


def main() -> int:
    parser = arguments(__doc__, FEEDS)
    parser.add_argument("--brokers", type=int, default=3)
    parser.add_argument("--base-port", type=int, default=22700)
    parser.add_argument("--markdown", type=Path, help="also write the tables and ratios here")
    args = parser.parse_args()
    started, load_before = time.monotonic(), os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="kbt-bench-tls-") as tmp:
        results = Path(tmp) / "results"
        up = ("--security", "sasl_ssl", "--brokers", str(args.brokers), "--scrape-interval", "1")
        with lab(None, Path(tmp) / "lab", args.base_port, *up) as at:
            kbt("sweep", str(SPEC), *at.args, "--results", str(results))
        records = {r.name: r for r in ResultsStore(results).records()}
    text = report(records, (load_before, os.getloadavg()[0]), (time.monotonic() - started) / 60)
    print("\n" + text)
    if args.markdown is not None:
        args.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
