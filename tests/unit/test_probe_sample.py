"""Reading log files for the probe: lines, events joined to a size, and the files it refuses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tuner.core.errors import BadInput
from tuner.measure.compression import batch_starts, batches_of, check_measurable, measurable_sizes
from tuner.measure.log_sample import LogSample, join_lines, read_sample
from tuner.measure.record_batch import records_section
from tuner.spec.probe import build_options


def test_lines_keep_their_bytes(tmp_path: Path) -> None:
    path = tmp_path / "app.log"
    path.write_bytes(b"first line\r\n\n  \nsecond \xc3\xa9 line\nthird")
    sample = read_sample(path)
    assert sample.messages == [b"first line", b"second \xc3\xa9 line", b"third"]
    assert sample.lines == 3 and sample.name == "app.log" and sample.event_bytes is None


def test_events_are_joined_lines_of_at_least_the_size() -> None:
    lines = [b"a" * 40] * 10
    events = join_lines(lines, 100)
    assert events == [b"\n".join([b"a" * 40] * 3)] * 3  # 122 bytes each; the 10th line is a short tail
    assert join_lines([b"x" * 500, b"y"], 100) == [b"x" * 500]
    assert join_lines([b"short"], 100) == [b"short"]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", "empty file"),
        (b"\n\n   \n", "empty file"),
        (bytes(range(256)) * 20, "binary data, not a text log"),
        (b"text line\n" * 10 + b"\x00\x01\x02", "binary data"),
        (bytes([0xFF, 0xFE, 0x80, 0x81, 0x10, 0x11]) * 500, "binary data"),
    ],
)
def test_refused_files(tmp_path: Path, content: bytes, expected: str) -> None:
    path = tmp_path / "bad.log"
    path.write_bytes(content)
    with pytest.raises(BadInput, match=expected):
        read_sample(path)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="no such file"):
        read_sample(tmp_path / "nope.log")
    with pytest.raises(BadInput, match="is a directory, not a file"):
        read_sample(tmp_path)


def test_batches_nest_and_wrap(tmp_path: Path) -> None:
    path = tmp_path / "n.log"
    path.write_text("".join(f"message {i}\n" for i in range(10)))
    sample = read_sample(path)
    starts = [8]
    assert batches_of(sample, 4, starts) == [
        records_section([b"message 8", b"message 9", b"message 0", b"message 1"])
    ]
    starts = batch_starts(sample, 5, seed=1)
    assert len(set(starts)) == 5 and starts == batch_starts(sample, 5, seed=1)


def test_only_sizes_the_sample_holds_four_times(tmp_path: Path) -> None:
    path = tmp_path / "n.log"
    path.write_text("".join(f"message {i}\n" for i in range(10)))
    sample = read_sample(path)
    options = build_options("gzip", [], "1,2,4,8", None, 5, 1)
    assert measurable_sizes(sample, options) == [1, 2]
    tiny = build_options("gzip", [], "4,8", None, 5, 1)
    with pytest.raises(BadInput, match="10 message"):
        check_measurable(sample, tiny, "n.log")


def test_a_probe_of_many_files_holds_one_files_messages_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memory budget of a multi-file probe: after the checks only counts are kept; each file is
    read again for its measurement and released after it, so at most one file's messages are held."""
    import tuner.runner.probe as runner
    from tuner.measure import compression
    from tuner.runner.probe import load_samples, probe_samples

    files = []
    for i in range(4):
        path = tmp_path / f"app{i}.log"
        path.write_text("".join(f"{i} line {n} of a log\n" for n in range(400)))
        files.append(path)
    options = build_options("gzip", [], "1,8", None, 10, 1)
    samples = load_samples(files, options)
    assert [(s.messages, s.message_count) for s in samples] == [([], 400)] * 4
    held: list[int] = []
    real = compression.probe_sample

    def probe_sample(sample: LogSample, *args: Any, **kwargs: Any) -> compression.SampleMeasurement:
        """The real measurement, watched: what it is given and what is held meanwhile."""
        held.append(len(sample.messages))
        assert all(s.messages == [] for s in samples)  # the others stay released
        return real(sample, *args, **kwargs)

    monkeypatch.setattr(runner, "probe_sample", probe_sample)
    record = probe_samples(samples, options, min_cpu_s=0.001)
    assert held == [400] * 4
    assert [s.messages for s in record.samples] == [400] * 4
    assert round(record.samples[0].mean_message_bytes, 1) == round(samples[0].mean_message_bytes, 1)
    # a file changed between its check and its measurement is named, not measured as another
    files[2].write_text("changed\n" * 400)
    with pytest.raises(BadInput, match=r"app2\.log: changed while the probe ran"):
        probe_samples(samples, options, min_cpu_s=0.001)
