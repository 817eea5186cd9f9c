"""The real lab for integration tests: one per session, shared by every test.

KBT_TEST_LAB_DIR=<dir> reuses a lab already brought up with `kbt lab up --lab-dir <dir>` (it is left
running). Otherwise the session starts its own: 3 brokers, tiered storage, 1 s scrapes, base port
19290 (KBT_TEST_LAB_BASE_PORT overrides), in a temporary directory, and stops it at the end.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.labhelp import wait_for_leaders
from tuner.lab import Lab, LabConfig, LabState, load_state
from tuner.measure.prometheus import Prometheus

TEST_BASE_PORT = 19290


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabState]:
    reuse = os.environ.get("KBT_TEST_LAB_DIR")
    if reuse:
        yield load_state(Path(reuse))
        return
    config = LabConfig(
        brokers=3,
        base_port=int(os.environ.get("KBT_TEST_LAB_BASE_PORT", TEST_BASE_PORT)),
        lab_dir=tmp_path_factory.mktemp("lab"),
        tiered=True,
        scrape_interval_s=1.0,
    )
    running = Lab(config)
    state = running.up(timeout_s=180)
    try:
        yield state
    finally:
        running.down()


@pytest.fixture(scope="session")
def admin(lab: LabState) -> AdminClient:
    return AdminClient({"bootstrap.servers": lab.bootstrap_servers})


@pytest.fixture(scope="session")
def prometheus(lab: LabState) -> Prometheus:
    return Prometheus(lab.prometheus_url)


TopicFactory = Callable[..., str]


@pytest.fixture
def make_topic(admin: AdminClient, request: pytest.FixtureRequest) -> Iterator[TopicFactory]:
    """make_topic(partitions=1, replication=3, **config) -> a fresh topic name, deleted afterwards."""
    created: list[str] = []
    prefix = request.node.name.replace("[", "-").replace("]", "")[:40]

    def make(partitions: int = 1, replication: int = 3, **config: Any) -> str:
        name = f"it-{prefix}-{uuid.uuid4().hex[:8]}"
        topic_config = {k.replace("_", "."): str(v) for k, v in config.items()}
        futures = admin.create_topics([NewTopic(name, partitions, replication, config=topic_config)])
        futures[name].result(30)
        created.append(name)
        wait_for_leaders(admin, name, partitions)
        return name

    yield make
    if created:
        for fut in admin.delete_topics(created, operation_timeout=30).values():
            try:
                fut.result(30)
            except Exception as exc:  # a failed cleanup must not hide the test's own result
                print(f"could not delete topic: {exc}")
