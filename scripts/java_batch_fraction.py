"""The compressed fraction kafka-clients computes for a batch of n records of a sweep's workload
(the figure the Java producer's compression-ratio estimator follows; docs/benchmarks.md, "Java
model: the estimator followed"). Writes the workload's corpus as the Java engine reads it, then
runs scripts/java/BatchFraction.java with the Java engine's kafka-clients jars.

    python scripts/java_batch_fraction.py loadtests/truth/truth-java.yaml lz4,zstd

Prints one line per codec: `records:p10/p50/p90` of the fraction at 1-100 records per batch (40
batches each).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from tuner.core.paths import repo_root
from tuner.driver.corpus import write_corpus
from tuner.spec import load_sweep

JARS = Path.home() / ".cache" / "kbt" / "java-engine"


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: java_batch_fraction.py <sweep.yaml> <codec>[,<codec>...]", file=sys.stderr)
        return 2
    jars = sorted(JARS.glob("*.jar"))
    if not jars:
        print(f"java_batch_fraction: no jars in {JARS} (make install builds the Java engine)", file=sys.stderr)
        return 2
    workload = load_sweep(Path(argv[0])).runs[0].workload
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.jsonl"
        write_corpus(workload, corpus)
        source = repo_root() / "scripts" / "java" / "BatchFraction.java"
        classpath = ":".join(str(j) for j in jars)
        done = subprocess.run(["java", "-cp", classpath, str(source), str(corpus), argv[1]], check=False)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
