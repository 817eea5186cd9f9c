"""The Java engine's Python side without a broker: plans, property names, result aggregation, the
generated ProducerConfig names, and the broker's run count starting at the last scrape before a run."""

from __future__ import annotations

import json
import string
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hdrh.histogram import HdrHistogram
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.caps import SUBPROCESS_CAP_S
from tests.unit.team_files import sweep_naming
from tuner.core.errors import BadInput
from tuner.core.properties import parse_properties
from tuner.driver.engine import Placement
from tuner.driver.engine_process import ProcessSite
from tuner.driver.engines import client_refusal
from tuner.driver.java_engine import aggregate, merge_client_metrics
from tuner.driver.java_plan import config_names_json, engine_dir, process_plans
from tuner.runner.preflight import clients_checked
from tuner.spec.clients import ClientProfile
from tuner.spec.clients.java import KIND, JavaProfile
from tuner.spec.clients.librdkafka import LibrdkafkaProfile
from tuner.spec.java_client import (
    COMMON_NAMES,
    COMMON_PREFIXES,
    check_property_names,
    producer_config_names,
    unknown_property,
)
from tuner.spec.loader import load_sweep
from tuner.spec.workload import WorkloadSpec

ROUND_ROBIN = "org.apache.kafka.clients.producer.RoundRobinPartitioner"


def java_properties(profile: ClientProfile) -> dict[str, str]:
    return profile.client_settings()


# The settings a user tunes (issue: every one passes through to the client).
TUNED = {
    "batch.size": "262144",
    "linger.ms": "200",
    "compression.type": "zstd",
    "compression.gzip.level": "6",
    "compression.lz4.level": "9",
    "compression.zstd.level": "3",
    "acks": "all",
    "enable.idempotence": "true",
    "max.in.flight.requests.per.connection": "5",
    "buffer.memory": "67108864",
    "max.request.size": "2097152",
    "partitioner.class": ROUND_ROBIN,
    "partitioner.adaptive.partitioning.enable": "false",
    "partitioner.availability.timeout.ms": "100",
    "partitioner.ignore.keys": "true",
}


def _workload(**kw: Any) -> WorkloadSpec:
    base: dict[str, Any] = {
        "name": "w",
        "topics": [{"name": "t", "partitions": 6}],
        "producers": 5,
        "processes": 2,
        "rate_per_producer": 100,
        "message": {"kind": "generated", "bytes": 500},
        "duration_s": 20,
        "warmup_s": 5,
    }
    return WorkloadSpec.model_validate({**base, **kw})


def test_every_tuned_setting_passes_through_to_the_plan(tmp_path: Path) -> None:
    profile = JavaProfile(name="p", overrides=TUNED)
    props = java_properties(profile)
    # Every tuned setting as given, and the durability the file states explicitly (retries at the
    # client's default: the overrides leave it unset).
    assert props == {**TUNED, "retries": "2147483647"}
    artifact = KIND.artifact(profile)
    site = ProcessSite(Placement("r", ("t",), "127.0.0.1:1"), "t", tmp_path, tmp_path / "c.jsonl", 1.0)
    plans = process_plans(_workload(), artifact.text, site)
    assert [p.plan["pods"] for p in plans] == [3, 2]
    assert [p.plan["pod_offset"] for p in plans] == [0, 3]
    # The producers load the rendered file itself; nothing else is layered on without a target.
    files = {p.plan["properties_file"] for p in plans}
    assert len(files) == 1 and all(p.plan["properties"] == {} for p in plans)
    written = Path(files.pop()).read_text()
    assert written == artifact.text and parse_properties(written, "java.properties") == props
    assert plans[0].plan["rate_per_pod"] == 100.0 and plans[0].plan["start_at"] == 1.0
    assert plans[0].plan["drain_s"] == 125.0  # delivery.timeout.ms default 120 s + 5 s


def test_rate_max_is_a_closed_loop_and_drain_follows_the_delivery_timeout(tmp_path: Path) -> None:
    [plan] = process_plans(
        _workload(producers=1, processes=1, rate_per_producer="max"), "delivery.timeout.ms=30000\n",
        ProcessSite(Placement("r", ("t",), "b"), "t", tmp_path, tmp_path / "c", 0),
    )  # fmt: skip
    assert plan.plan["rate_per_pod"] == 0.0 and plan.plan["drain_s"] == 35.0


def test_profile_knobs_map_to_java_names() -> None:
    profile = JavaProfile(
        name="p", linger_ms=12.4, batch_bytes=65536, compression="lz4", compression_level=9,
        acks="1", idempotence=False, max_in_flight=3, partitioner="random",
    )  # fmt: skip
    assert java_properties(profile) == {
        "linger.ms": "12",
        "batch.size": "65536",
        "compression.type": "lz4",
        "compression.lz4.level": "9",
        "acks": "1",
        "enable.idempotence": "false",
        "max.in.flight.requests.per.connection": "3",
        "retries": "2147483647",  # durability stated explicitly, at the client's default
        "partitioner.class": ROUND_ROBIN,
    }


def test_misspelled_property_fails_at_spec_load_with_a_suggestion() -> None:
    with pytest.raises(
        ValueError, match=r'unknown Java producer property "batch.szie".*did you mean "batch.size"'
    ):
        JavaProfile(name="p", overrides={"batch.szie": "1"})
    # librdkafka names are not Java's.
    with pytest.raises(ValueError, match=r"queue\.buffering\.max\.ms"):
        JavaProfile(name="p", overrides={"queue.buffering.max.ms": "5"})
    # Another client kind is not checked against Java's names.
    LibrdkafkaProfile(name="p", overrides={"queue.buffering.max.ms": "5"})


def test_engine_owned_properties_are_refused(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="set by the Java engine"):
        process_plans(
            _workload(), "bootstrap.servers=x:1\n",
            ProcessSite(Placement("r", ("t",), "b"), "t", tmp_path, tmp_path / "c", 0),
        )  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(producer_config_names())), st.data())
def test_one_typo_in_a_real_name_is_caught_and_named(name: str, data: st.DataObject) -> None:
    """Any single-character change to a real property name that is not itself a real name fails
    with one line; close typos name a real property."""
    at = data.draw(st.integers(0, len(name) - 1))
    char = data.draw(st.sampled_from(string.ascii_lowercase + "._-"))
    typo = name[:at] + char + name[at + 1 :]
    if typo in producer_config_names() or typo.startswith(COMMON_PREFIXES):
        assert unknown_property(typo) is None
        return
    problem = unknown_property(typo)
    assert problem is not None and "\n" not in problem and f'"{typo}"' in problem
    assert "did you mean" in problem


@given(st.dictionaries(st.sampled_from(sorted(producer_config_names())), st.text(max_size=8), max_size=6))
def test_any_real_names_pass(props: dict[str, str]) -> None:
    check_property_names(props)


@given(st.text(string.ascii_letters + "._", min_size=1, max_size=40))
def test_unknown_names_never_pass(name: str) -> None:
    if name in producer_config_names() or name in COMMON_NAMES or name.startswith(COMMON_PREFIXES):
        return
    with pytest.raises(ValueError, match="unknown Java producer property"):
        check_property_names([name])


def test_every_client_reads_config_providers_and_metrics_context() -> None:
    """AbstractConfig's names, outside ProducerConfig's: a team's `${env:VAR}` secrets come through
    `config.providers` (and the engine's own env provider), labels through `metrics.context.*`."""
    check_property_names({
        "config.providers": "env",
        "config.providers.env.class": "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
        "config.providers.env.param.allowlist.pattern": "^KBT_.*$",
        "metrics.context.team": "logs",
    })  # fmt: skip
    problem = unknown_property("config.provider")
    assert problem is not None and 'did you mean "config.providers"' in problem


def _hist(*values_us: int) -> str:
    h = HdrHistogram(1, 600_000_000, 3)
    for v in values_us:
        h.record_value(v)
    return h.encode().decode()


def _result(requests: int, by_node: dict[str, int], acked: int, lat: str, **kw: Any) -> dict[str, Any]:
    snap = {"requests": requests, "produce_requests": by_node, "records_sent": acked, "bytes_out": 1,
            "batches": requests * 2}  # fmt: skip
    return {
        "schema": 1, "started_at": 10.0, "window_start": 13.0, "window_end": 25.0, "finished_at": 27.0,
        "offered": acked, "sent": acked, "acked": acked, "failed": 0, "bytes_acked": acked * 100,
        "acked_total": acked, "window": snap, "total": snap, "batch_bytes": 1000.0,
        "compression_ratio": 2.0, "latency_histogram": lat, **kw,
    }  # fmt: skip


def test_processes_add_up() -> None:
    a = _result(100, {"1": 60, "2": 40}, 1000, _hist(1000, 2000), client_metrics={"request-rate": 5.0})
    b = _result(
        50, {"2": 10, "3": 40}, 500, _hist(4000), batch_bytes=4000.0,
        client_metrics={"request-rate": 3.0, "produce-throttle-time-max": 7.0, "batch-size-avg": 10.0},
    )  # fmt: skip
    c = aggregate([a, b], producers=4, processes=2)
    assert c.engine == "java"
    assert c.produce_requests_total == 150 and c.produce_requests_by_broker == {"1": 60, "2": 50, "3": 40}
    assert c.records_per_request == pytest.approx(1500 / 150)
    assert c.batch_bytes == pytest.approx((1000 * 200 + 4000 * 100) / 300)
    assert c.delivery_latency_ms.count == 3 and c.delivery_latency_ms.max == pytest.approx(4.0, rel=0.01)
    assert c.client_metrics == {"batch-size-avg": 10.0, "produce-throttle-time-max": 7.0, "request-rate": 8.0}


def test_client_metrics_merge_by_kind() -> None:
    merged = merge_client_metrics(
        [{"a-avg": 1.0, "b-max": 3.0, "c-total": 2.0}, {"a-avg": 3.0, "b-max": 1.0}]
    )
    assert merged == {"a-avg": 2.0, "b-max": 3.0, "c-total": 2.0}


def test_committed_property_names_are_the_clients() -> None:
    """tuner/spec/java_producer_config.json is what the built engine prints (make check-generated)."""
    if not (engine_dir() / "kbt-java-engine.jar").is_file():
        pytest.skip("the Java engine is not built (make install)")
    committed = json.loads(Path("tuner/spec/java_producer_config.json").read_text())
    assert json.loads(config_names_json()) == committed
    assert set(TUNED) <= set(committed["names"])


def test_engine_rejects_a_bad_plan_in_one_line(tmp_path: Path) -> None:
    if not (engine_dir() / "kbt-java-engine.jar").is_file():
        pytest.skip("the Java engine is not built (make install)")
    from tuner.driver.java_plan import engine_command

    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"schema": 1, "pods": 0, "extra": 1}))
    out = subprocess.run(
        [*engine_command(), "-plan", str(plan)], capture_output=True, text=True, timeout=SUBPROCESS_CAP_S
    )
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and out.stderr.startswith("java-engine: ")


def test_the_heap_holds_every_pods_buffer_memory() -> None:
    from tuner.driver.java_plan import HEAP_MAX_MB, heap_mb

    # 12 pods with 1 MB batches over 24 partitions each fill their 32 MB pools: 512 MB was too small.
    assert heap_mb(12, {}) >= 12 * 32 + 256
    assert heap_mb(12, {"buffer.memory": str(64 * 2**20)}) > heap_mb(12, {})
    assert heap_mb(1, {}) == 512
    with pytest.raises(BadInput, match="raise the workload's processes"):
        heap_mb(500, {})
    with pytest.raises(BadInput, match=r"buffer\.memory"):
        heap_mb(2, {"buffer.memory": "lots"})
    assert heap_mb(100, {}) <= HEAP_MAX_MB


def test_a_value_the_java_producer_refuses_is_one_line_before_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """compression.type=lz5: names are checked as the profile loads, values only the client judges;
    it was a run whose producers failed to start."""
    if not (engine_dir() / "kbt-java-engine.jar").is_file():
        pytest.skip("the Java engine is not built (make install)")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.properties").write_text("linger.ms=5\ncompression.type=lz5\n")
    loaded = load_sweep(sweep_naming(tmp_path, "java:p.properties", {}))
    with pytest.raises(BadInput) as err:
        clients_checked((plan.profile for plan in loaded.runs), loaded.own_files)
    assert err.value.message == (
        "p.properties: the Java producer refuses it: Invalid value lz5 for configuration compression.type:"
        " String must be one of: none, gzip, snappy, lz4, zstd"
    )
    inline = JavaProfile(name="o", overrides={"compression.type": "lz5"})
    assert client_refusal(inline) == (
        "profile o: the java.properties it runs: the Java producer refuses it: Invalid value lz5 for"
        " configuration compression.type:"
        " String must be one of: none, gzip, snappy, lz4, zstd"
    )
    assert client_refusal(JavaProfile(name="k", linger_ms=20, compression="zstd")) is None  # no JVM asked


def test_the_codec_is_the_one_the_file_runs() -> None:
    # overrides are written after the knobs: the codec that compression_level is judged by, and
    # the level's property named for, is theirs (it was the knob's: zstd judged, lz4 run)
    from tuner.spec.clients.base import kind_by_model
    from tuner.spec.clients.java import JavaProfile

    profile = JavaProfile(name="j", compression="zstd", overrides={"compression.type": "lz4"})
    assert kind_by_model(JavaProfile).client_settings(profile)["compression.type"] == "lz4"
    assert profile.codec == "lz4"
