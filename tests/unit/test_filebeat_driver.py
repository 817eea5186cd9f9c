"""Filebeat client kind, offline: profile -> Filebeat config, engine plans, corpus, result merging,
acked-file reading."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hdrh.histogram import HdrHistogram

from tuner.core.errors import BadInput
from tuner.driver.corpus import write_corpus
from tuner.driver.delivery.ledger import Ledger, event_key
from tuner.driver.engine import Placement
from tuner.driver.engine_process import ProcessSite
from tuner.driver.filebeat.plan import check_emulated, drain_s, output_section, process_plans, queue_section
from tuner.driver.filebeat.sarama import aggregate
from tuner.spec.clients import ClientProfile, kind_of, profile_of
from tuner.spec.clients.filebeat import KIND as FILEBEAT
from tuner.spec.clients.filebeat import config_of
from tuner.spec.duration import Duration
from tuner.spec.filebeat import FilebeatConfig
from tuner.spec.workload import WorkloadSpec
from tuner.store.record_upgrade import upgrade_profiles


def _profile(**kw: Any) -> ClientProfile:
    return profile_of({"name": "p", "client": "filebeat", **kw})


def _workload(**kw: Any) -> WorkloadSpec:
    data: dict[str, Any] = {
        "name": "w",
        "topics": [{"name": "t", "partitions": 6}],
        "producers": 5,
        "processes": 2,
        "rate_per_producer": 40,
        "message": {"kind": "generated", "bytes": 1600},
        "duration_s": 20,
        "warmup_s": 5,
    }
    data.update(kw)
    return WorkloadSpec.model_validate(data)


def _config(**fragment: Any) -> FilebeatConfig:
    return config_of(_profile(filebeat=fragment) if fragment else _profile())


def test_profile_without_settings_is_filebeats_defaults() -> None:
    cfg = _config()
    assert cfg.kafka.bulk_max_size == 2048 and cfg.kafka.compression == "gzip"
    assert cfg.kafka.partition.strategy == "hash"
    # Filebeat 7.17's queue defaults: the build kbt runs.
    assert (cfg.mem.events, cfg.mem.flush.min_events, cfg.mem.flush.timeout) == (
        4096,
        2048,
        Duration.parse("1s"),
    )
    assert FILEBEAT.client_settings(_profile()) == {}


def test_version_1_knobs_and_overrides_upgrade_to_the_typed_section() -> None:
    old = {
        "name": "p",
        "client": "filebeat",
        "linger_ms": 250,
        "batch_messages": 4096,
        "compression": "lz4",
        "acks": "all",
        "partitioner": "sticky",
        "overrides": {"queue.mem.events": "8192", "queue.mem.flush.min_events": "4096"},
    }
    cfg = config_of(profile_of(upgrade_profiles(old)))
    k = cfg.kafka
    assert (k.bulk_flush_frequency, k.bulk_max_size, k.compression, k.required_acks) == (
        Duration.parse("250ms"),
        4096,
        "lz4",
        -1,
    )
    assert cfg.mem.events == 8192
    # sticky: keyless events stay on one partition for a whole queue batch.
    assert k.partition.strategy == "random" and k.partition.group_events == 4096
    random = upgrade_profiles({"name": "p", "client": "filebeat", "partitioner": "random"})
    assert config_of(profile_of(random)).kafka.partition.group_events == 1


def test_settings_round_trip() -> None:
    profile = _profile(
        filebeat={
            "output.kafka": {
                "bulk_flush_frequency": "500ms",
                "partition.round_robin.group_events": 64,
                "channel_buffer_size": 1024,
            },
            "queue": {"mem": {"flush": {"timeout": "2s"}}},
        }
    )
    settings = FILEBEAT.client_settings(profile)
    assert settings["output.kafka.bulk_flush_frequency"] == "500ms"
    assert settings["output.kafka.partition.round_robin.group_events"] == "64"
    assert settings["queue.mem.flush.timeout"] == "2s"
    again = profile_of(profile.model_dump(mode="json"))
    assert again == profile


def test_settings_state_lists_and_empty_sections_as_yaml_reads_them() -> None:
    """Filebeat's and the collector's settings are flattened by one rule: a list (topic rules with a
    regexp, headers) is JSON, which YAML reads back as it was (a Python repr kept `\\d` doubled in
    single quotes and wrote None and True); an empty strategy section ({}) is kept, it switches the
    strategy on; the output section left empty by the engine's placeholders is not listed."""
    rules = [{"topic": "it's", "when": {"regexp": {"message": "\\d+ ms"}}}]
    headers = [{"key": "k", "value": "v"}]
    profile = _profile(
        filebeat={
            "output.kafka": {"topics": rules, "headers": headers, "partition": {"round_robin": {}}},
            "output.kafka.ssl.supported_protocols": ["TLSv1.2"],
        }
    )
    settings = FILEBEAT.client_settings(profile)
    assert json.loads(settings["output.kafka.topics"]) == rules
    assert json.loads(settings["output.kafka.headers"]) == headers
    assert json.loads(settings["output.kafka.ssl.supported_protocols"]) == ["TLSv1.2"]
    assert settings["output.kafka.partition.round_robin"] == "{}"
    assert "output.kafka" not in settings and "output.kafka" not in FILEBEAT.client_settings(_profile())
    otelcol = profile_of(
        {"name": "o", "client": "otelcol", "otelcol": {"kafka.record_partitioner.round_robin": {}}}
    )
    strategy = "exporters.kafka.record_partitioner.round_robin"
    assert kind_of(otelcol).client_settings(otelcol) == {strategy: "{}"}


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"filebeat": {"output.kafka.compression": "zstd"}}, "compression"),
        ({"batch_bytes": 1000}, "batch_bytes: not a filebeat setting (Filebeat does not expose"),
        ({"max_in_flight": 1}, "max_in_flight: not a filebeat setting"),
        ({"idempotence": True, "acks": "all"}, "acks: not a filebeat setting"),
        ({"linger_ms": 850}, "set filebeat: output.kafka.bulk_flush_frequency"),
        ({"overrides": {"output.kafka.bulk_max_size": "5"}}, "overrides: not a filebeat setting"),
        (
            {"filebeat": {"queue.mem.flush_timeout": "1s"}},
            'queue.mem\n  Value error, unknown key "flush_timeout"',
        ),
        ({"filebeat": {"output.kafka.required_acks": 2}}, "required_acks"),
        ({"filebeat": {"queue.mem": {"flush.min_events": 9000}}}, "must not exceed events"),
        ({"filebeat": {"output.kafka.bulk_flush_frequency": "-1s"}}, "must not be negative"),
        ({"filebeat": {"output.kafka.timeout": "0s"}}, "must be at least 1s (got 0s)"),
        ({"filebeat": {"output.kafka.bulk_max_size": 1, "output.kafka": {"bulk_max_size": 2}}}, "set twice"),
    ],
)
def test_profile_problems_name_the_setting(kw: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as exc:
        _profile(**kw)
    assert message in str(exc.value)


def test_process_plans_split_pods_and_carry_every_option(tmp_path: Path) -> None:
    cfg = _config(**{"output.kafka.bulk_flush_frequency": "100ms", "queue.mem.flush.timeout": "250ms"})
    site = ProcessSite(
        Placement("r", ("run-t",), "127.0.0.1:1"), "run-t", tmp_path, tmp_path / "c.jsonl", 100.0
    )
    plans = process_plans(_workload(), cfg, site)
    assert [p.plan["pods"] for p in plans] == [3, 2]
    assert [p.plan["pod_offset"] for p in plans] == [0, 3]
    out = plans[0].plan["output"]
    assert out["bulk_flush_frequency_ms"] == 100 and out["bulk_max_size"] == 2048
    assert out["broker_timeout_ms"] == 10_000 and out["timeout_ms"] == 30_000 and out["client_id"] == "beats"
    assert out["partition"] == {"strategy": "hash", "group_events": 1, "reachable_only": False}
    assert plans[0].plan["queue"] == {"events": 4096, "flush_min_events": 2048, "flush_timeout_ms": 250}
    # Plan keys are exactly what the Go engine reads (plan.go rejects unknown fields).
    assert set(plans[0].plan) >= {"schema", "bootstrap", "topic", "rate_per_pod", "drain_s", "acked_file"}
    assert drain_s(cfg) == pytest.approx(0.25 + 0.1 + 10 + 10)


def test_plan_fields_match_the_go_structs() -> None:
    go = (Path(__file__).resolve().parents[2] / "loadtests" / "sarama-engine" / "plan.go").read_text()
    cfg = FilebeatConfig.model_validate({"output": {"kafka": {"hosts": ["k:1"], "topic": "t"}}})
    for section in (output_section(cfg), queue_section(cfg)):
        for key, value in section.items():
            assert f'json:"{key}"' in go, key
            if isinstance(value, dict):
                for sub in value:
                    assert f'json:"{sub}"' in go, sub


@pytest.mark.parametrize(
    ("option", "data"),
    [
        ("queue.mem.bytes", {"queue": {"mem": {"bytes": 65536}}}),
        ("output.kafka.worker", {"output": {"kafka": {"worker": 2}}}),
        ("output.kafka.headers", {"output": {"kafka": {"headers": [{"key": "a", "value": "b"}]}}}),
    ],
)
def test_options_the_engine_does_not_emulate_are_rejected(option: str, data: dict[str, Any]) -> None:
    base: dict[str, Any] = {"output": {"kafka": {"hosts": ["k:1"], "topic": "t"}}}
    base["output"]["kafka"].update(data.get("output", {}).get("kafka", {}))
    base["queue"] = data.get("queue", {})
    with pytest.raises(BadInput, match=option):
        check_emulated(FilebeatConfig.model_validate(base))


def test_corpus_follows_the_size_distribution(tmp_path: Path) -> None:
    workload = _workload(
        message={
            "kind": "size_distribution",
            "buckets": [{"bytes": 1600, "weight": 0.9}, {"bytes": 200_000, "weight": 0.1}],
        }
    )
    path = tmp_path / "c.jsonl"
    n = write_corpus(workload, path)
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(entries) == n
    large = [e for e in entries if e["bytes"] == 200_000]
    assert 0.05 < len(large) / n < 0.2
    assert all(len(e["message"]) >= e["bytes"] for e in entries)  # enough text to fill each event
    assert all(e["key"] is None for e in entries)


def test_corpus_keys_from_a_field_pattern(tmp_path: Path) -> None:
    workload = _workload(keys={"kind": "field", "pattern": r"req-([0-9a-f]{8})"})
    path = tmp_path / "c.jsonl"
    write_corpus(workload, path)
    keys = [json.loads(line)["key"] for line in path.read_text().splitlines()]
    assert all(k is not None and len(k) == 8 for k in keys)


def _engine_result(requests: dict[str, int], latencies_us: list[int], **kw: Any) -> dict[str, Any]:
    hist = HdrHistogram(1, 600_000_000, 3)
    for v in latencies_us:
        hist.record_value(v)
    result: dict[str, Any] = {
        "schema": 1,
        "started_at": 10.0,
        "window_start": 15.0,
        "window_end": 35.0,
        "finished_at": 40.0,
        "offered": 100,
        "sent": 100,
        "acked": 100,
        "bytes_acked": 160_000,
        "acked_total": 125,
        "failed": 0,
        "dropped": 0,
        "indeterminate": 0,
        "window": {"produce_requests": requests, "bytes_out": 0, "records_sent": 0},
        "total": {
            "produce_requests": {b: n + 5 for b, n in requests.items()},
            "bytes_out": 0,
            "records_sent": 250,
        },
        "batch_bytes": 2000.0,
        "compression_ratio": 4.0,
        "latency_histogram": hist.encode().decode(),
    }
    result.update(kw)
    return result


def test_aggregate_sums_processes_and_merges_latency() -> None:
    a = _engine_result({"1": 10, "2": 20}, [1000] * 99 + [900_000])
    b = _engine_result({"2": 5, "3": 15}, [2000] * 100, compression_ratio=2.0, dropped=3, window_end=36.0)
    client = aggregate([a, b], producers=4, processes=2)
    assert client.produce_requests_by_broker == {"1": 10, "2": 25, "3": 15}
    assert client.produce_requests == 50
    assert client.produce_requests_total == 50 + 4 * 5
    assert client.records_acked == 200 and client.records_acked_total == 250 and client.records_failed == 3
    assert client.window_end == 36.0 and client.window_start == 15.0
    assert client.records_per_request == pytest.approx(500 / 70)
    # Weighted by total requests: a has 40, b has 30.
    assert client.compression_ratio == pytest.approx((4.0 * 40 + 2.0 * 30) / 70)
    lat = client.delivery_latency_ms
    assert lat.count == 200
    assert lat.p50 == pytest.approx(1.0, rel=0.01) or lat.p50 == pytest.approx(2.0, rel=0.01)
    assert lat.max == pytest.approx(900.0, rel=0.01)


def test_read_acked_and_event_ids(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("0 5 0-1\n0 7 0-2\n3 2 1-1\n")
    (tmp_path / "b.txt").write_text("3 9 2-1\nbroken\n")
    ledger = Ledger(topics=["t"]).read_acked_files(
        "t", [tmp_path / n for n in ("a.txt", "b.txt", "absent.txt")]
    )
    assert ledger.last_offsets == {("t", 0): 7, ("t", 3): 9}
    assert {p: bytes(m) for p, m in ledger.acked.items()} == {
        0: b"\x00\x01\x01",
        1: b"\x00\x01",
        2: b"\x00\x01",
    }
    value = b'{"@timestamp":"x","message":"a \\"kbt\\" b","kbt":{"id":"12-345"}}'
    assert event_key(value) == (12, 345)
    assert event_key(b'{"message":"no id"}') is None
