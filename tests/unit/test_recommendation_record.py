"""The recommendation record: round trip, version and kind checks, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tuner.core.errors import BadInput
from tuner.core.paths import repo_root
from tuner.core.writes import atomic_write
from tuner.spec.clients import profile_of
from tuner.spec.clients.librdkafka import LibrdkafkaProfile
from tuner.spec.loader import load_workload
from tuner.store.recommendation import (
    ClientRecommendation,
    Prediction,
    Recommendation,
    SLOBounds,
    load_recommendation,
    recommendation_text,
)


def write_recommendation(record: Recommendation, path: Path) -> Path:
    return atomic_write(path, recommendation_text(record), "recommendation")


def _record() -> Recommendation:
    workload = load_workload(repo_root() / "loadtests" / "workloads" / "qunar-logs.yaml")
    profile = LibrdkafkaProfile(name="rec", linger_ms=800, partitioner="sticky", compression="zstd")
    predicted = Prediction(
        requests_per_s=30.0,
        busiest_broker_requests_per_s=11.0,
        records_per_request=32.0,
        p50_ms=420,
        p99_ms=880,
    )
    return Recommendation(
        created_at=1.0,
        kbt_version="0",
        results_dir="results",
        workload=workload,
        brokers=3,
        slo=SLOBounds(p99_ms=1000),
        baseline=LibrdkafkaProfile(name="base", linger_ms=0),
        clients=[
            ClientRecommendation(
                client="librdkafka",
                status="predicted",
                profile=profile,
                properties=profile.client_settings(),
                predicted=predicted,
            )
        ],
    )


def test_roundtrip(tmp_path: Path) -> None:
    record = _record()
    path = write_recommendation(record, tmp_path / "sub" / "rec.json")
    again = load_recommendation(path)
    assert again.model_dump(mode="json") == record.model_dump(mode="json")
    assert again.clients[0].properties["linger.ms"] == "800"


def test_rejects_other_version_and_kind(tmp_path: Path) -> None:
    path = write_recommendation(_record(), tmp_path / "rec.json")
    data = json.loads(path.read_text())
    data["schema_version"] = 99
    path.write_text(json.dumps(data))
    with pytest.raises(BadInput, match="schema_version 99"):
        load_recommendation(path)
    data["kind"] = "run"
    path.write_text(json.dumps(data))
    with pytest.raises(BadInput, match="not a recommendation"):
        load_recommendation(path)


def test_invalid_field_is_one_line(tmp_path: Path) -> None:
    path = write_recommendation(_record(), tmp_path / "rec.json")
    data = json.loads(path.read_text())
    data["clients"][0]["status"] = "maybe"
    path.write_text(json.dumps(data))
    expected = r"clients\[0\]\.status: unknown value \"maybe\" \(expected one of confirmed,"
    with pytest.raises(BadInput, match=expected) as info:
        load_recommendation(path)
    assert "\n" not in info.value.message


def test_recommended_filebeat_yml_names_kbt_recommend_as_its_maker() -> None:
    from tuner.render.recommendation import render_files

    record = _record()
    fb = profile_of(
        {"name": "fb", "client": "filebeat", "filebeat": {"output.kafka": {"bulk_max_size": 2048}}}
    )
    client = ClientRecommendation(
        client="filebeat",
        status="predicted",
        profile=fb,
        properties={"output.kafka.bulk_max_size": "2048", "output.kafka.compression": "lz4"},
        predicted=record.clients[0].predicted,
    )
    text = render_files(record.model_copy(update={"clients": [client]}))["filebeat.yml"]
    assert "# Recommended by kbt 0 for workload qunar-logs" in text
    assert "kbt render filebeat" not in text


def test_each_client_is_compared_with_its_own_kinds_baseline() -> None:
    # A results directory of two kinds: the document names one baseline (here a Java one); the
    # librdkafka client's durability and its baseline row are its own kind's, never "never tuned".
    from tuner.render.recommendation import render_files, summary_lines
    from tuner.spec.clients.java import JavaProfile

    record = _record()
    own = LibrdkafkaProfile(name="rdk-base", linger_ms=5, acks="all", idempotence=True)
    java = JavaProfile(name="java-base", linger_ms=5)
    mixed = record.model_copy(update={"baseline": java})
    assert mixed.baseline_of(mixed.clients[0]) is None  # another kind's: nothing to compare with
    assert record.baseline_of(record.clients[0]) == record.baseline  # a document written before
    c = mixed.clients[0].model_copy(update={"baseline": own})
    kept = mixed.model_copy(update={"clients": [c]})
    assert kept.baseline_of(c) == own
    said = "Durability CHANGED from baseline rdk-base"  # the recommended profile left acks at 1
    assert any(said in line for line in summary_lines(kept))
    text = render_files(kept)["librdkafka.properties"]
    assert said in text.replace("\n#   ", " ")
