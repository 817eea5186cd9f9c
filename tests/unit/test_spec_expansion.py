"""Sweep expansion (cross product, listed subsets, names), profile mapping, spec hashes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tuner.core.paths import repo_root
from tuner.spec.clients import profile_of
from tuner.spec.clients.librdkafka import LibrdkafkaProfile
from tuner.spec.loader import load_sweep, read_yaml
from tuner.spec.stress_load import load_stress
from tuner.spec.sweep import spec_hash

BASE = """\
name: s
workload:
  name: w
  topics: [{name: w, partitions: 6}]
  producers: 4
  processes: 2
  rate_per_producer: 10
  message: {kind: generated, bytes: 100}
  duration_s: 10
  warmup_s: 1
profiles:
  - {name: a, linger_ms: 0}
  - {name: b, linger_ms: 100, compression: zstd}
"""


def _load(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "s.yaml"
    path.write_text(text)
    return load_sweep(path)


def test_cross_product_of_profiles_and_vary(tmp_path: Path) -> None:
    loaded = _load(
        tmp_path, BASE + "vary:\n  profile.batch_messages: [10, 1000]\n  workload.producers: [4, 8]\n"
    )
    assert len(loaded.runs) == 2 * 2 * 2
    names = [r.name for r in loaded.runs]
    assert names[0] == "a-batch_messages10-producers4"
    assert len(set(names)) == 8
    last = loaded.runs[-1]
    assert (last.profile.name, last.profile.batch_messages, last.workload.producers) == ("b", 1000, 8)
    assert last.profile.compression == "zstd"  # the base profile's other knobs survive
    assert last.assignments == {"profile": "b", "profile.batch_messages": 1000, "workload.producers": 8}
    assert [r.index for r in loaded.runs] == list(range(8))


def test_listed_subset_with_name_format(tmp_path: Path) -> None:
    runs = "runs:\n  - {profile: a}\n  - {profile: b, profile.linger_ms: 500}\n"
    text = BASE + runs + 'name_format: "{profile}-l{linger_ms}"\n'
    loaded = _load(tmp_path, text)
    assert [r.name for r in loaded.runs] == ["a-l0", "b-l500"]
    assert loaded.runs[1].profile.linger_ms == 500


def test_run_name_is_sanitized(tmp_path: Path) -> None:
    loaded = _load(tmp_path, BASE + 'name_format: "{profile} / {sweep}"\n')
    assert [r.name for r in loaded.runs] == ["a_s", "b_s"]


def test_spec_hash_is_stable_and_sensitive(tmp_path: Path) -> None:
    one = _load(tmp_path, BASE).runs
    two = _load(tmp_path, BASE.replace("  warmup_s: 1\n", "  warmup_s: 1.0\n")).runs
    assert one[0].spec_hash == two[0].spec_hash
    assert one[0].spec_hash != one[1].spec_hash
    three = _load(tmp_path, BASE.replace("bytes: 100", "bytes: 101")).runs
    assert three[0].spec_hash != one[0].spec_hash
    assert spec_hash({"b": 1, "a": [1, 2]}) == spec_hash({"a": [1, 2], "b": 1})


def test_librdkafka_mapping() -> None:
    profile = LibrdkafkaProfile(
        name="p",
        linger_ms=200,
        batch_messages=5000,
        batch_bytes=500000,
        compression="zstd",
        compression_level=3,
        acks="all",
        idempotence=True,
        partitioner="sticky",
        max_in_flight=5,
        overrides={"queue.buffering.max.kbytes": "65536", "linger.ms": "250"},
    )
    assert profile.client_settings() == {
        "linger.ms": "250",  # overrides win
        "batch.num.messages": "5000",
        "batch.size": "500000",
        "compression.type": "zstd",
        "compression.level": "3",
        "acks": "-1",
        "enable.idempotence": "true",
        "partitioner": "consistent_random",
        "sticky.partitioning.linger.ms": "500",  # twice the linger that runs, the override's
        "max.in.flight.requests.per.connection": "5",
        "queue.buffering.max.kbytes": "65536",
        "retries": "2147483647",  # durability is always stated: librdkafka's default
    }
    # a profile that sets nothing states librdkafka's durability defaults, and nothing else
    assert LibrdkafkaProfile(name="d").client_settings() == {
        "acks": "-1", "enable.idempotence": "false", "retries": "2147483647",
        "max.in.flight.requests.per.connection": "1000000",
    }  # fmt: skip


def test_acks_spellings() -> None:
    assert profile_of({"name": "p", "acks": -1}).acks == "all"
    assert profile_of({"name": "p", "acks": 1}).acks == "1"


def test_models_are_frozen() -> None:
    profile = LibrdkafkaProfile(name="p")
    with pytest.raises(ValueError):
        profile.linger_ms = 5  # type: ignore[misc]


def test_librdkafka_accepts_every_example_profile() -> None:
    confluent_kafka = pytest.importorskip("confluent_kafka")
    for spec in sorted((repo_root() / "loadtests").glob("*.yaml")):
        if "shape" in read_yaml(spec):  # a stress spec (kbt stress): its profiles by label
            profiles = list(load_stress(spec).spec.profiles.values())
        else:
            profiles = [run.profile for run in load_sweep(spec).runs]
        for profile in profiles:
            if profile.client != "librdkafka":
                continue
            # Constructing a producer validates every property name and value. Without
            # bootstrap.servers it never opens a connection.
            producer = confluent_kafka.Producer({"log_level": 0, **profile.client_settings()})
            producer.flush(0)


@pytest.mark.parametrize("name", ["smoke", "qunar-logs", "large-events", "qunar-linger-sweep"])
def test_example_specs_load(name: str) -> None:
    loaded = load_sweep(repo_root() / "loadtests" / f"{name}.yaml")
    assert loaded.runs
    for run in loaded.runs:
        assert run.workload.warmup_s < run.workload.duration_s


def test_example_specs_are_indexed_in_readme() -> None:
    readme = (repo_root() / "loadtests" / "README.md").read_text()
    for spec in sorted((repo_root() / "loadtests").rglob("*.yaml")):
        rel = spec.relative_to(repo_root() / "loadtests").as_posix()
        assert f"`{rel}`" in readme, f"loadtests/README.md does not list {rel}"


def test_qunar_workload_shape() -> None:
    run = load_sweep(repo_root() / "loadtests" / "qunar-logs.yaml").runs[0]
    workload = run.workload
    assert workload.producers >= 24 and workload.processes >= 2
    assert workload.topics[0].partitions >= 24
    assert workload.message.nominal_bytes == 1620
    names = {r.profile.name for r in load_sweep(repo_root() / "loadtests" / "qunar-logs.yaml").runs}
    assert "filebeat-like" in names
