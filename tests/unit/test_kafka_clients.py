"""The one Kafka-client factory and what targets declare: how a client reaches the cluster always
wins over its own settings, every client is built there, and a target kind that says nothing gets
the careful defaults (a topic ledger, queries in its dialect), not the lab's."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tuner.core.kafka_clients import Connection, admin_client, new_consumer, new_producer
from tuner.core.paths import repo_root
from tuner.target.base import LabSide, Target
from tuner.target.registry import resolve_target
from tuner.target.security import connection

KEYS = st.sampled_from(
    ["bootstrap.servers", "security.protocol", "sasl.username", "client.id", "linger.ms", "group.id"]
)


@given(
    st.text(min_size=1, max_size=30),
    st.dictionaries(KEYS, st.text(max_size=8)),
    st.dictionaries(KEYS, st.text(max_size=8)),
)
def test_the_connection_wins_over_a_clients_own_settings(
    bootstrap: str, properties: dict[str, str], settings: dict[str, str]
) -> None:
    conf = Connection(bootstrap, properties).conf(settings)
    assert conf["bootstrap.servers"] == bootstrap
    for key, value in properties.items():
        if key != "bootstrap.servers":
            assert conf[key] == value
    for key, value in settings.items():
        if key not in properties and key != "bootstrap.servers":
            assert conf[key] == value
    assert set(conf) == {*properties, *settings, "bootstrap.servers"}


def test_the_factory_builds_each_client_without_connecting() -> None:
    conn = Connection("127.0.0.1:1")
    assert type(admin_client(conn)).__name__ == "AdminClient"
    producer = new_producer(conn, {"client.id": "kbt-unit"})
    assert type(producer).__name__ == "Producer" and producer.flush(0) == 0
    consumer = new_consumer(conn, {"group.id": "kbt-unit"})
    try:
        assert type(consumer).__name__ == "Consumer"
    finally:
        consumer.close()


def test_no_client_is_built_outside_the_factory() -> None:
    """A call of AdminClient / Producer / Consumer anywhere in tuner/ but the factory (the CLI's
    two are counted apart: that code is being moved to runner/ on another branch)."""
    factory = Path("tuner/core/kafka_clients.py")
    found: list[str] = []
    for path in sorted((repo_root() / "tuner").rglob("*.py")):
        rel = path.relative_to(repo_root())
        if rel == factory:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            called = node.func if isinstance(node, ast.Call) else None
            if isinstance(called, ast.Name) and called.id in ("AdminClient", "Producer", "Consumer"):
                found.append(f"{rel}:{called.lineno}")
    assert [f for f in found if not f.startswith("tuner/cli/")] == []
    assert len(found) <= 2, found


def test_a_target_kind_that_declares_nothing_is_not_treated_like_the_lab() -> None:
    other = Target(name="other", kind="future", bootstrap_servers="k:9092")
    assert other.translated_prometheus
    assert other.topic_ledger is not None and other.topic_ledger.name.endswith(".json")
    assert Target(name="other", kind="future", bootstrap_servers="k:9093").topic_ledger != other.topic_ledger
    lab_like = Target(name="lab x", kind="lab", bootstrap_servers="k:9092", lab=LabSide(Path("/nonexistent")))
    assert lab_like.topic_ledger is None


def test_a_target_files_connection_carries_its_resolved_security(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "client.properties").write_text(
        "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\nsasl.username=svc\n"
        "sasl.password=${KBT_UNIT_FACTORY_PASSWORD}\nssl.ca.location=ca.pem\n"
    )
    (tmp_path / "target.yaml").write_text(
        "name: staging\nbootstrap_servers: kafka-0.example:9093\n"
        "client:\n  properties_file: client.properties\n"
    )
    monkeypatch.setenv("KBT_UNIT_FACTORY_PASSWORD", "s3cret-pass")
    target = resolve_target(None, tmp_path / "target.yaml")
    assert target.topic_ledger is not None and target.translated_prometheus
    conn = connection(target)
    assert conn.bootstrap_servers == "kafka-0.example:9093"
    assert conn.properties["security.protocol"] == "SASL_SSL"
    assert conn.properties["sasl.password"] == "s3cret-pass"  # resolved only here, when a client is built
    assert "${" not in "".join(conn.conf({"client.id": "x"}).values())
