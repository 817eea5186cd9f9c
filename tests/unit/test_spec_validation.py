"""Bad specs give one clear line naming file, key and problem (BadInput, exit 2)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tuner.core.errors import BadInput, ExitStatus
from tuner.spec.loader import load_profile, load_sweep, load_workload

SWEEP = """\
name: t
workload:
  name: t
  topics:
    - name: t
      partitions: 3
      replication_factor: 1
  producers: 2
  processes: 1
  rate_per_producer: 50
  message: {kind: generated, bytes: 200}
  duration_s: 8
  warmup_s: 2
profiles:
  - name: base
  - name: batched
    linger_ms: 50
    batch_messages: 10000
    compression: lz4
"""


def _error(tmp_path: Path, text: str, loader=load_sweep) -> str:  # type: ignore[no-untyped-def]
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    with pytest.raises(BadInput) as exc:
        loader(path)
    assert exc.value.status == ExitStatus.BAD_INPUT
    message = exc.value.message
    assert "\n" not in message
    assert "spec.yaml" in message
    return message


def test_valid_sweep_loads(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(SWEEP)
    loaded = load_sweep(path)
    assert [r.name for r in loaded.runs] == ["base", "batched"]


def test_unknown_key_suggests_and_points_at_line(tmp_path: Path) -> None:
    msg = _error(tmp_path, SWEEP.replace("linger_ms: 50", "lingr_ms: 50"))
    assert msg.endswith('spec.yaml:17: profiles[1]: unknown key "lingr_ms" (did you mean "linger_ms"?)')


def test_unknown_top_level_key(tmp_path: Path) -> None:
    msg = _error(tmp_path, SWEEP + "profile: x\n")
    assert 'unknown key "profile" (did you mean "profiles"?)' in msg


def test_negative_rate(tmp_path: Path) -> None:
    msg = _error(tmp_path, SWEEP.replace("rate_per_producer: 50", "rate_per_producer: -5"))
    assert "workload.rate_per_producer: must be a positive number" in msg
    assert "(got -5)" in msg


def test_rate_word_other_than_max(tmp_path: Path) -> None:
    msg = _error(tmp_path, SWEEP.replace("rate_per_producer: 50", "rate_per_producer: fast"))
    assert 'or "max"' in msg


def test_warmup_not_shorter_than_duration(tmp_path: Path) -> None:
    msg = _error(tmp_path, SWEEP.replace("warmup_s: 2", "warmup_s: 8"))
    assert "warmup_s (8) must be shorter than duration_s (8)" in msg


def test_too_many_partitions(tmp_path: Path) -> None:
    msg = _error(tmp_path, SWEEP.replace("partitions: 3", "partitions: 5000"))
    assert "workload.topics[0].partitions: must be less than or equal to 1000 (got 5000)" in msg


def test_batch_bytes_above_broker_limit(tmp_path: Path) -> None:
    msg = _error(tmp_path, SWEEP.replace("batch_messages: 10000", "batch_bytes: 2000000"))
    assert "profiles[1].batch_bytes: 2000000" in msg
    assert "message.max.bytes 1048588" in msg


def test_batch_bytes_fits_a_raised_topic_limit(tmp_path: Path) -> None:
    text = SWEEP.replace("batch_messages: 10000", "batch_bytes: 2000000").replace(
        "replication_factor: 1", "replication_factor: 1\n      configs: {max.message.bytes: 4000000}"
    )
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    assert load_sweep(path).runs[1].profile.batch_bytes == 2000000


def test_varied_batch_bytes_above_limit_names_the_run(tmp_path: Path) -> None:
    msg = _error(tmp_path, SWEEP + "vary:\n  profile.batch_bytes: [16384, 5000000]\n")
    assert "batch_bytes=5000000" in msg
    assert "exceeds the broker's message.max.bytes" in msg


def test_unknown_compression(tmp_path: Path) -> None:
    msg = _error(tmp_path, SWEEP.replace("compression: lz4", "compression: zstdd"))
    assert 'profiles[1].compression: unknown value "zstdd"' in msg
    assert 'did you mean "zstd"' in msg


def test_compression_level_needs_a_leveled_codec(tmp_path: Path) -> None:
    msg = _error(tmp_path, SWEEP.replace("compression: lz4", "compression: snappy\n    compression_level: 3"))
    assert "compression_level does not apply to compression snappy" in msg


def test_compression_level_range(tmp_path: Path) -> None:
    msg = _error(tmp_path, SWEEP.replace("compression: lz4", "compression: gzip\n    compression_level: 12"))
    assert "outside -1..9 for gzip" in msg


def test_idempotence_needs_acks_all(tmp_path: Path) -> None:
    msg = _error(tmp_path, SWEEP.replace("compression: lz4", "idempotence: true\n    acks: 1"))
    assert "idempotence needs acks all" in msg


def test_unknown_message_kind(tmp_path: Path) -> None:
    msg = _error(tmp_path, SWEEP.replace("kind: generated", "kind: genrated"))
    assert 'workload.message: unknown kind "genrated"' in msg
    assert 'did you mean "generated"' in msg


def test_missing_message_kind(tmp_path: Path) -> None:
    # pydantic's own context quotes the key and names no kinds: the line said `missing "'kind'" (one of )`
    msg = _error(tmp_path, SWEEP.replace("kind: generated", "size_bytes: 100"))
    assert 'workload.message: missing "kind"' in msg
    assert "'kind'" not in msg and "one of )" not in msg


def test_missing_key(tmp_path: Path) -> None:
    msg = _error(tmp_path, SWEEP.replace("  duration_s: 8\n", ""))
    assert "workload.duration_s: missing required key" in msg


def test_event_larger_than_topic_limit(tmp_path: Path) -> None:
    msg = _error(tmp_path, SWEEP.replace("bytes: 200}", "bytes: 2000000}"))
    assert "events of 2000000 bytes exceed the topic limit of 1048588 bytes" in msg


def test_missing_log_file_errors_unless_generate(tmp_path: Path) -> None:
    text = SWEEP.replace("{kind: generated, bytes: 200}", "{kind: log_file, path: nothere.log}")
    assert 'no such log file "nothere.log"' in _error(tmp_path, text)
    path = tmp_path / "ok.yaml"
    path.write_text(text.replace("path: nothere.log", "path: nothere.log, if_missing: generate"))
    message = load_sweep(path).runs[0].workload.message
    assert not message.available  # type: ignore[union-attr]


def test_invalid_yaml(tmp_path: Path) -> None:
    assert "not valid YAML" in _error(tmp_path, SWEEP + "  : : [\n")


def test_not_a_mapping(tmp_path: Path) -> None:
    assert "expected a mapping" in _error(tmp_path, "- a\n- b\n")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="no such spec file"):
        load_sweep(tmp_path / "absent.yaml")


def test_unknown_vary_key(tmp_path: Path) -> None:
    msg = _error(tmp_path, SWEEP + "vary:\n  profile.lingerms: [1, 2]\n")
    assert 'vary: unknown key "profile.lingerms" (did you mean "profile.linger_ms"?)' in msg


def test_vary_value_validated(tmp_path: Path) -> None:
    msg = _error(tmp_path, SWEEP + "vary:\n  profile.compression: [gzip, brotli]\n")
    assert "compression=brotli" in msg
    assert "compression" in msg


def test_a_varied_value_out_of_bounds_is_named_in_kbts_words(tmp_path: Path) -> None:
    msg = _error(tmp_path, SWEEP + "vary:\n  profile.linger_ms: [5, -1]\n")
    assert "linger_ms: must be greater than or equal to 0 (got -1)" in msg, msg
    assert "Input should" not in msg


def test_a_long_value_is_echoed_cut(tmp_path: Path) -> None:
    msg = _error(
        tmp_path,
        SWEEP.replace("profiles:", "profiles:\n  - {name: long, linger_ms: [" + "1, " * 3000 + "1]}", 1),
    )
    assert "linger_ms: must be a number (got [1, 1, 1," in msg and msg.endswith("...)"), msg
    assert len(msg) < 200


def test_vary_and_runs_are_exclusive(tmp_path: Path) -> None:
    text = SWEEP + "vary:\n  profile.linger_ms: [1]\nruns:\n  - {profile: base}\n"
    assert "either vary" in _error(tmp_path, text)


def test_run_names_must_be_unique(tmp_path: Path) -> None:
    assert "both named" in _error(tmp_path, SWEEP + 'name_format: "same"\n')


def test_run_names_unknown_field(tmp_path: Path) -> None:
    assert "name_format: unknown field" in _error(tmp_path, SWEEP + 'name_format: "{nope}"\n')


@pytest.mark.parametrize(
    ("name_format", "message"),
    [  # Python's words were the message: "Single '{' encountered in format string", "unknown
        # field Unknown format code '%' for object of type 'str'"
        (
            "{",
            "name_format: '{' has a brace that is not closed or not doubled (write {{ for a literal brace)",
        ),
        ("{profile!x}", "name_format: {profile!x}: a conversion is !s, !r or !a"),
        ("{profile:%}", "name_format: format '%' of {profile} does not fit its value 'base'"),
    ],
)
def test_a_name_format_python_cannot_apply_is_named_in_kbts_words(
    tmp_path: Path, name_format: str, message: str
) -> None:
    assert _error(tmp_path, SWEEP + f"name_format: '{name_format}'\n").endswith(message)


def test_runs_unknown_profile(tmp_path: Path) -> None:
    msg = _error(tmp_path, SWEEP + "runs:\n  - {profile: batchd}\n")
    assert 'no profile named "batchd" (did you mean "batched"?)' in msg


def test_processes_cannot_exceed_producers(tmp_path: Path) -> None:
    assert "processes (3) cannot exceed producers (2)" in _error(
        tmp_path, SWEEP.replace("processes: 1", "processes: 3")
    )


def test_referenced_profile_errors_name_that_file(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text("name: p\nlinger: 5\n")
    path = tmp_path / "s.yaml"
    path.write_text(SWEEP.replace("  - name: base\n", "  - p.yaml\n"))
    with pytest.raises(BadInput) as exc:
        load_sweep(path)
    assert 'p.yaml:2: unknown key "linger" (did you mean "linger_ms"?)' in exc.value.message


def test_missing_referenced_file(tmp_path: Path) -> None:
    msg = _error(tmp_path, SWEEP.replace("  - name: base\n", "  - nofile.yaml\n"))
    assert 'profiles[0]: no such file "nofile.yaml"' in msg


def test_a_referenced_directory_or_fifo_is_named_as_such(tmp_path: Path) -> None:
    """They were "no such file": the name is there, it is just no file."""

    (tmp_path / "dir.properties").mkdir()
    os.mkfifo(tmp_path / "fifo.yaml")
    for ref, kind in [("java:dir.properties", "a directory"), ("fifo.yaml", "a FIFO")]:
        msg = _error(tmp_path, SWEEP.replace("  - name: base\n", f"  - {ref}\n"))
        assert f'profiles[0]: "{ref.split(":")[-1]}" is {kind}, not a file' in msg


def test_a_referenced_file_with_a_nul_in_its_name_is_no_such_file(tmp_path: Path) -> None:
    msg = _error(tmp_path, SWEEP.replace("  - name: base\n", '  - "p\\0.yaml"\n'))
    assert "profiles[0]: no such file" in msg


def test_workload_and_profile_loaders(tmp_path: Path) -> None:
    msg = _error(tmp_path, "name: w\ntopics: []\nrate_per_producer: 1\n", loader=load_workload)
    assert "topics" in msg
    msg = _error(tmp_path, "name: p\nacks: 2\n", loader=load_profile)
    assert 'acks: unknown value "2"' in msg
