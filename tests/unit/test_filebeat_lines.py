"""Filebeat version lines (tuner/spec/filebeat_lines.py): per-line queue defaults, the wait each line's
queue makes before it hands over a batch, the 9.x input rule, and the simulated queue built on them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from tuner.model.filebeat_profiles import PROFILES, FilebeatProfile
from tuner.model.simulate import queue_batches
from tuner.render.filebeat_profiles import render_filebeat_yaml
from tuner.spec.clients import profile_of
from tuner.spec.clients.base import SearchContext
from tuner.spec.clients.filebeat import KIND as FILEBEAT
from tuner.spec.clients.filebeat import as_fragment, compact, config_of
from tuner.spec.duration import Duration
from tuner.spec.filebeat import FilebeatConfig
from tuner.spec.filebeat_lines import LINES, has_log_input, line_of, parse_version
from tuner.spec.filebeat_load import filebeat_warnings, load_filebeat


def _config(section: dict[str, Any]) -> FilebeatConfig:
    return FilebeatConfig.model_validate(as_fragment(section))


@pytest.mark.parametrize(
    ("version", "line"),
    [
        ("7.17.29", "7.17"),
        ("7.17", "7.17"),
        ("8.13.0", "8.13+"),
        ("8.19.4", "8.13+"),
        ("9.5.5", "8.13+"),
        ("9.0", "8.13+"),
    ],
)
def test_versions_fall_in_their_line(version: str, line: str) -> None:
    assert line_of(version).name == line


@pytest.mark.parametrize("version", ["8.12.2", "8.0.0", "7.16.3", "6.8.23", "10.0.0"])
def test_unmodelled_versions_are_refused_by_name(version: str) -> None:
    with pytest.raises(
        ValueError, match=rf"^Filebeat {version} is not modelled \(kbt models 7\.17, 8\.13 and later\)$"
    ):
        line_of(version)


@given(st.text(max_size=30))
@settings(max_examples=300, deadline=None)
def test_any_version_text_gives_a_line_or_one_value_error(text: str) -> None:
    try:
        line = line_of(text)
    except ValueError as exc:
        assert "\n" not in str(exc)
        return
    major, minor, _ = parse_version(text)
    assert line.covers((major, minor))


@given(st.integers(7, 9), st.integers(0, 30), st.integers(0, 40))
def test_the_log_input_is_gone_from_9_on(major: int, minor: int, patch: int) -> None:
    assert has_log_input(f"{major}.{minor}.{patch}") == (major < 9)


def test_a_version_line_supplies_its_queue_defaults() -> None:
    old, new = _config({}), _config({"filebeat_version": "9.5.5"})
    assert (old.mem.events, old.mem.flush.min_events, old.mem.flush.timeout) == (
        4096,
        2048,
        Duration.parse("1s"),
    )
    assert (new.mem.events, new.mem.flush.min_events, new.mem.flush.timeout) == (
        3200,
        1600,
        Duration.parse("10s"),
    )
    assert new.input.type == "filestream" and old.input.type == "log"
    # What the fragment states wins over the line's defaults.
    mixed = _config({"filebeat_version": "9.5", "queue.mem": {"events": 4096, "flush.timeout": "0s"}})
    assert (mixed.mem.events, mixed.mem.flush.min_events, mixed.mem.flush.timeout.ms) == (4096, 1600, 0)


@given(
    st.sampled_from(["7.17.29", "8.13.4", "9.5.5"]),
    st.integers(32, 8192),
    st.integers(0, 4096),
    st.integers(0, 20_000),
)
@settings(max_examples=150, deadline=None)
def test_compact_round_trips_on_every_line(
    version: str, events: int, min_events: int, timeout_ms: int
) -> None:
    """The settings kbt writes back (records, rendered profiles) read as the same queue on every line,
    including values that equal another line's defaults."""
    section = {
        "filebeat_version": version,
        "queue.mem": {
            "events": events,
            "flush.min_events": min(min_events, events),
            "flush.timeout": f"{timeout_ms}ms",
        },
    }
    config = _config(section)
    again = FilebeatConfig.model_validate(as_fragment(compact(config)))
    assert again.mem == config.mem
    assert again.filebeat_version == config.filebeat_version


def test_9x_has_no_log_input() -> None:
    with pytest.raises(ValidationError, match=r"Filebeat 9\.5\.5 has no log input .*use filestream"):
        _config({"filebeat_version": "9.5.5", "input": {"type": "log"}})
    assert _config({"filebeat_version": "8.19.0", "input": {"type": "log"}}).input.type == "log"


@pytest.mark.parametrize("bad", ["8.5", "nine", "9.x", ""])
def test_bad_filebeat_version_is_a_validation_error(bad: str) -> None:
    with pytest.raises(ValidationError, match="filebeat_version"):
        _config({"filebeat_version": bad})


def test_the_wait_differs_by_line_when_bulk_max_size_is_below_flush_min_events() -> None:
    section: dict[str, Any] = {
        "output.kafka": {"bulk_max_size": 512},
        "queue.mem": {"flush.min_events": 2048},
    }
    old = _config(section)
    new = _config({**section, "filebeat_version": "9.5.5"})
    assert (old.batch_events, old.fill_events) == (512, 2048)  # 7.17 fills its buffer, hands out 512s
    assert (new.batch_events, new.fill_events) == (512, 512)  # 8.13+ waits for the batch alone
    for config, fill in ((old, 2048), (new, 512)):
        profile = profile_of({"name": "p", "client": "filebeat", "filebeat": compact(config)})
        rules = FILEBEAT.rules(profile)
        assert (rules.queue_batch, rules.queue_fill) == (512, fill)


def test_shipped_defaults_per_line_reach_the_model() -> None:
    for line in LINES:
        version = line.measured or f"{line.last[0]}.0.0"
        rules = FILEBEAT.rules(
            profile_of({"name": "p", "client": "filebeat", "filebeat": {"filebeat_version": version}})
        )
        assert rules.queue_events == line.queue_events
        assert rules.queue_timeout_ms == Duration.parse(line.queue_timeout).ms
        assert rules.queue_batch == min(2048, line.queue_min_events)  # bulk_max_size 2048 by default


def test_queue_hands_over_a_7x_buffer_in_pieces_and_a_9x_batch_alone() -> None:
    times = [i / 1000 for i in range(16)]  # one event per ms
    # 8.13+: each batch of 4 goes as soon as its 4th event is there.
    assert queue_batches(times, 4, 1.0) == [(0.003, 0, 4), (0.007, 4, 8), (0.011, 8, 12), (0.015, 12, 16)]
    # 7.17: the queue waits for its 8-event buffer, then hands it over as two batches of 4 at once.
    assert queue_batches(times, 4, 1.0, fill=8) == [
        (0.007, 0, 4), (0.007, 4, 8), (0.015, 8, 12), (0.015, 12, 16),
    ]  # fmt: skip
    # Without a timeout nothing waits: the fill does not matter.
    assert queue_batches(times, 4, 0.0, fill=8) == queue_batches(times, 4, 0.0)


@given(
    st.lists(st.floats(0, 5, allow_nan=False), min_size=1, max_size=200).map(sorted),
    st.integers(1, 64),
    st.integers(0, 128),
    st.sampled_from([0.0, 0.01, 0.5, 10.0]),
)
@settings(max_examples=200, deadline=None)
def test_every_event_leaves_the_queue_once_in_order(
    times: list[float], batch: int, fill: int, timeout: float
) -> None:
    out = queue_batches(times, batch, timeout, fill)
    assert [i for _, start, end in out for i in range(start, end)] == list(range(len(times)))
    releases = [release for release, _, _ in out]
    assert releases == sorted(releases)
    for release, start, end in out:
        assert 0 < end - start <= batch
        assert release >= times[end - 1]  # nothing leaves before it was written
    # Without a timeout the queue never holds an event back: the first batch leaves with its first event.
    if timeout == 0:
        assert releases[0] == times[0]


@pytest.mark.parametrize("p", [p for p in PROFILES if p.published], ids=lambda p: p.name)
def test_published_profiles_say_how_they_read_per_version(p: FilebeatProfile) -> None:
    """Each published profile names the build its figures come from, in its version notes too, and the
    rendered file carries those notes."""
    assert p.effect is not None and p.effect.filebeat is not None
    notes = " ".join(p.by_version)
    assert p.effect.filebeat in notes and "9.x" in notes
    assert "# By Filebeat version:" in render_filebeat_yaml(p)


def test_a_9x_profile_renders_for_9x_and_its_file_checks_on_that_line(tmp_path: Path) -> None:
    """The rendered filebeat.yml of a 9.x profile names its version, runs a filestream input, states the
    line's queue, and reads back (as `kbt check filebeat --filebeat-version` does) to the same queue."""
    profile = profile_of({"name": "p", "client": "filebeat", "filebeat": {"filebeat_version": "9.5.5"}})
    text = FILEBEAT.render(profile, ["x"]).text
    assert "# For Filebeat 9.5.5 (queue rules of the 8.13+ line)." in text
    assert "kbt check filebeat --filebeat-version 9.5.5 <file>" in text
    for option in ("events: 3200", "flush.min_events: 1600", "flush.timeout: 10s"):
        assert f"  {option}\n" in text
    path = tmp_path / "filebeat.yml"
    path.write_text(text)
    loaded = load_filebeat(path, "9.5.5")
    assert loaded.config.mem == config_of(profile).mem
    assert any("160 events/s" in w for w in filebeat_warnings(loaded))
    assert not any("160 events/s" in w for w in filebeat_warnings(load_filebeat(path, "7.17.29")))


def _families(base: Any) -> list[Any]:
    ctx = SearchContext(
        budget_ms=1000,
        rate_per_producer=40,
        keyless=True,
        topic_max_bytes=1 << 20,
        max_request_bytes=None,
        base=base,
    )
    return FILEBEAT.families(ctx)


def test_recommendations_keep_the_baselines_filebeat_version() -> None:
    base = profile_of({"name": "b", "client": "filebeat", "filebeat": {"filebeat_version": "9.5.5"}})
    for family in _families(base):
        candidate = config_of(family.make(200.0, "none"))
        assert candidate.filebeat_version == "9.5.5" and candidate.input.type == "filestream"
    assert all(config_of(f.make(200.0, "none")).filebeat_version == "7.17.29" for f in _families(None))
