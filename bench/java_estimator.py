"""The Java producer's compression-ratio estimate, measured on kafka-clients itself (docs/benchmarks.md,
"Java model: the estimator followed"). Both commands write a sweep's workload corpus as kbt's Java
engine reads it and run bench/java/Estimator.java with the Java engine's jars.

    python -m bench.java_estimator fractions <sweep.yaml> lz4,zstd
        the compressed fraction kafka-clients computes for a batch of 1-100 of the workload's
        records (MemoryRecordsBuilder.compressionRatio(), what the estimator follows): p10/p50/p90
        over 40 batches (bench/java/Estimator.java)
    python -m bench.java_estimator watch <sweep.yaml> <profile> <bootstrap> [seconds]
        a real run of the workload's producers (one JVM, as the engine) with the profile's codec,
        linger.ms and batch.size against a lab: the estimate and records per request every 0.5 s,
        and every rise of the estimate (bench/java/Estimator.java)
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._common import ROOT, arguments
from tuner.driver.corpus import write_corpus
from tuner.spec.clients.java import JavaProfile
from tuner.spec.loader import load_sweep

FEEDS = '"Java model: the estimator followed (issue 31, third pass)"'

JARS = Path.home() / ".cache" / "kbt" / "java-engine"


def _java(mode: str, corpus_args: list[str], sweep: str, run_name: str | None) -> int:
    jars = sorted(JARS.glob("*.jar"))
    if not jars:
        print(f"java_estimator: no jars in {JARS} (make install builds the Java engine)", file=sys.stderr)
        return 2
    runs = load_sweep(Path(sweep)).runs
    plan = next((r for r in runs if run_name in (None, r.name, r.profile.name)), None)
    if plan is None:
        print(f"java_estimator: {sweep}: no run or profile named {run_name}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.jsonl"
        write_corpus(plan.workload, corpus)
        args = [a.format(corpus=corpus) for a in corpus_args]
        if run_name is not None:  # watch: the workload's and profile's settings before the corpus
            w, p = plan.workload, plan.profile
            if not isinstance(p, JavaProfile):
                print(f"java_estimator: {p.name} is a {p.client} profile, not java", file=sys.stderr)
                return 2
            settings = [
                f"kbt-estimate-watch-{int(time.time())}",
                str(sum(t.partitions for t in w.topics)),
                str(w.producers),
                f"{w.rate_per_producer:g}",
                args.pop(1),  # seconds
                p.compression or "none",
                str(round(p.linger_ms if p.linger_ms is not None else 5)),  # kafka-clients 4.x defaults
                str(p.batch_bytes if p.batch_bytes is not None else 16384),
            ]
            args = [args[0], *settings, *args[1:]]
        classpath = ":".join(str(j) for j in jars)
        source = str(ROOT / "bench" / "java" / "Estimator.java")
        return subprocess.run(["java", "-cp", classpath, source, mode, *args], check=False).returncode


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__, FEEDS)
    commands = parser.add_subparsers(dest="command", required=True)
    fractions = commands.add_parser("fractions", help="the compressed fraction per batch size, per codec")
    fractions.add_argument("sweep", help="sweep spec (its first run's workload)")
    fractions.add_argument("codecs", help="comma list, e.g. lz4,zstd")
    watch = commands.add_parser("watch", help="a real run against a lab: the estimate every 0.5 s")
    watch.add_argument("sweep", help="sweep spec")
    watch.add_argument("profile", help="a run or profile name of the sweep (a java profile)")
    watch.add_argument("bootstrap", help="the lab's bootstrap servers")
    watch.add_argument("seconds", nargs="?", default="20")
    args = parser.parse_args(argv)
    if args.command == "fractions":
        return _java("fractions", ["{corpus}", args.codecs], args.sweep, None)
    return _java("watch", [args.bootstrap, args.seconds, "{corpus}"], args.sweep, args.profile)


if __name__ == "__main__":
    sys.exit(main())
