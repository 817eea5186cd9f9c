"""`kbt probe compression` as a subprocess: bad input is one line and exit 2; a good run prints the
table and advice and writes a loadable JSON record and a PNG."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

from tests.e2e.kbt_process import kbt
from tuner.store.probe_record import PROBE_SCHEMA_VERSION, load_probe_record

pytestmark = pytest.mark.e2e

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

SUMMARY = "librdkafka/Java/OpenTelemetry Collector: all four; Filebeat: gzip, snappy, lz4"  # codecs by kind


def _kbt(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return kbt("probe", "compression", *args, cwd=cwd)


def _log(path: Path, lines: int = 400) -> Path:
    rng = random.Random(3)
    words = ["GET", "POST", "/api/orders", "took", "ms", "user", "retry", "status=200", "status=500"]
    path.write_text(
        "".join(
            f"2024-05-01 12:{i // 60 % 60:02d}:{i % 60:02d} INFO [worker-{i % 4}]"
            f" req-{rng.getrandbits(32):08x} "
            + " ".join(rng.choice(words) for _ in range(rng.randint(5, 15)))
            + "\n"
            for i in range(lines)
        )
    )
    return path


BAD = {
    "missing file": ([], "nope.log: no such file"),
    "empty file": ([], "empty.log: empty file"),
    "binary garbage": ([], "garbage.bin: binary data, not a text log"),
    "unknown codec": (["--codecs", "gzip,brotli"], '--codecs: unknown codec "brotli"'),
    "level out of range": (["--codecs", "zstd", "--levels", "zstd=99"], "level 99 is outside 1..22 for zstd"),
    "batch size 0": (["--batch-sizes", "0,1,2"], "0 messages per batch"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_one_line_exit_2(case: str, tmp_path: Path) -> None:
    flags, expected = BAD[case]
    _log(tmp_path / "good.log")
    (tmp_path / "empty.log").write_bytes(b"")
    (tmp_path / "garbage.bin").write_bytes(random.Random(1).randbytes(20_000))
    target = {"missing file": "nope.log", "empty file": "empty.log", "binary garbage": "garbage.bin"}
    files = [target.get(case, "good.log")]
    proc = _kbt(*files, *flags, "--json", "out.json", cwd=tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip("\n").splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("kbt: error: ")
    assert expected in lines[0]
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out.json").exists()


def test_bad_file_among_good_ones_fails_before_measuring(tmp_path: Path) -> None:
    _log(tmp_path / "good.log")
    (tmp_path / "empty.log").write_bytes(b"\n")
    proc = _kbt("good.log", "empty.log", "--json", "out.json", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "kbt: error: empty.log: empty file (no log lines to probe)"
    assert proc.stdout == ""


def test_probe_writes_table_advice_json_and_plot(tmp_path: Path) -> None:
    _log(tmp_path / "app.log")
    proc = _kbt(
        "app.log", "--codecs", "gzip,snappy,zstd", "--levels", "zstd=1,3", "--batch-sizes", "1,2,4,...,64",
        "--batches", "10", "--json", "out/probe.json", "--plot", "out/probe.png", "--markdown", "md/probe.md",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for text in ("compression probe", "gzip-6", "snappy", "zstd-1", "zstd-3", "x64", "knee"):
        assert text in out
    advice = [line for line in out.splitlines() if line.startswith("app.log: ")]
    assert len(advice) == 1 and SUMMARY in advice[0]

    record = load_probe_record(tmp_path / "out" / "probe.json")
    assert record.schema_version == PROBE_SCHEMA_VERSION
    (sample,) = record.samples
    assert sample.name == "app.log" and sample.messages == 400
    assert [c.label for c in sample.curves] == ["gzip-6", "snappy", "zstd-1", "zstd-3"]
    for curve in sample.curves:
        assert [p.batch_messages for p in curve.points] == [1, 2, 4, 8, 16, 32, 64]
        assert curve.knee is not None and curve.knee.knee_batch_messages in (1, 2, 4, 8, 16, 32, 64)
        assert all(p.compress_cpu_ms_per_mb > 0 and p.decompress_cpu_ms_per_mb > 0 for p in curve.points)
    assert sample.skipped_batch_sizes == []
    assert json.loads((tmp_path / "out" / "probe.json").read_text())["kind"] == "compression-probe"

    markdown = (tmp_path / "md" / "probe.md").read_text()
    assert markdown.startswith("| sample | codec | x1 |") and "| app.log | zstd-3 |" in markdown
    assert "- app.log: " in markdown

    png = (tmp_path / "out" / "probe.png").read_bytes()
    assert png.startswith(PNG_MAGIC) and len(png) > 20_000


def test_sizes_the_sample_cannot_hold_are_skipped(tmp_path: Path) -> None:
    _log(tmp_path / "small.log", lines=40)
    proc = _kbt("small.log", "--codecs", "lz4", "--batches", "5", "--json", "p.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (sample,) = load_probe_record(tmp_path / "p.json").samples
    assert [p.batch_messages for p in sample.curves[0].points] == [1, 2, 4, 8]
    assert sample.skipped_batch_sizes == [16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
