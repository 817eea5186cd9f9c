"""Where the real loghub log samples are: $KBT_LOGHUB_DIR, else the copies the repository ships in
loadtests/data/loghub (with Loghub's licence). Tests that need them skip with this reason when they
are absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLE_NAMES = (
    "Apache_2k.log", "HDFS_2k.log", "Hadoop_2k.log", "Linux_2k.log",
    "OpenSSH_2k.log", "OpenStack_2k.log", "Spark_2k.log", "Zookeeper_2k.log",
)  # fmt: skip


def loghub_dir() -> Path:
    env = os.environ.get("KBT_LOGHUB_DIR")
    return Path(env) if env else REPO / "loadtests" / "data" / "loghub"


def loghub_samples() -> list[Path]:
    """The eight loghub samples, or a pytest skip saying where they were looked for."""
    base = loghub_dir()
    paths = [base / name for name in SAMPLE_NAMES]
    missing = [p.name for p in paths if not p.is_file()]
    if missing:
        pytest.skip(
            f"loghub samples not found in {base} (missing {', '.join(missing)}); set KBT_LOGHUB_DIR"
            " or restore loadtests/data/loghub"
        )
    return paths
