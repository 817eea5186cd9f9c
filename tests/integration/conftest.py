"""The real lab for integration tests: one per session, shared by every test.

Tests that need a broker in Qunar's pressure regime take `pressure_lab` instead: a second, one-broker
lab on the pressure profile, started in the background the same way (KBT_TEST_PRESSURE_LAB_DIR
reuses a running one). The one-saturated-broker alert test takes `saturation_lab`: three
brokers on the pressure profile's knobs, scraped also Kubernetes-style (KBT_TEST_SATURATION_LAB_DIR).

KBT_TEST_LAB_DIR=<dir> reuses a lab already brought up with `kbt lab up --lab-dir <dir>` (it is left
running). Otherwise the session starts its own: 3 brokers, tiered storage, 2 s scrapes, base port
19290 (KBT_TEST_LAB_BASE_PORT overrides), in a temporary directory, and stops it at the end.

The session's own lab starts in the background as soon as collection shows a test that needs it,
so its boot and the minute its brokers' idle meters need to settle (tuner.measure.meter_warmup)
overlap the unit tier instead of delaying the first sweep.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
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


def _session_lab_config() -> LabConfig:
    return LabConfig(
        brokers=3,
        base_port=int(os.environ.get("KBT_TEST_LAB_BASE_PORT", TEST_BASE_PORT)),
        lab_dir=Path(tempfile.mkdtemp(prefix="kbt-test-lab-")),
        tiered=True,
        # 2 s scrapes, timing out at 1.5 s: at 1 s (and a 1 s timeout) the brokers of a loaded 2-core
        # CI machine missed most scrapes and read unmeasured.
        scrape_interval_s=2.0,
        scrape_timeout_s=1.5,
    )


def _pressure_lab_config() -> LabConfig:
    """The pressure profile (tuner/lab/profiles.py): one broker, so a small and quick second lab.
    Ports from KBT_TEST_PRESSURE_LAB_BASE_PORT, else 200 above the session lab's."""
    base = os.environ.get("KBT_TEST_PRESSURE_LAB_BASE_PORT")
    session = int(os.environ.get("KBT_TEST_LAB_BASE_PORT", TEST_BASE_PORT))
    return LabConfig(
        profile="pressure",
        base_port=int(base) if base else session + 200,
        lab_dir=Path(tempfile.mkdtemp(prefix="kbt-test-pressure-lab-")),
        client_exporter_count=8,
    )


class _LabInBackground:
    """`Lab.up` on a thread of its own; `state()` waits for it. Waits are on an event, not
    `Thread.join`: a join interrupted by Ctrl-C or SIGTERM (tests/conftest.py) returns at once
    when called again, and `down` then raced the lab still coming up (its lock refused the stop
    and the brokers were left running)."""

    def __init__(self, config: LabConfig) -> None:
        self.lab = Lab(config)
        self._state: LabState | None = None
        self._error: BaseException | None = None
        self._done = threading.Event()
        threading.Thread(target=self._up, name="kbt-test-lab-up", daemon=True).start()

    def _up(self) -> None:
        try:
            self._state = self.lab.up(timeout_s=180)
        except BaseException as exc:  # re-raised in the test that asks for the lab
            self._error = exc
        finally:
            self._done.set()

    def state(self) -> LabState:
        self._done.wait()
        if self._error is not None:
            raise self._error
        assert self._state is not None
        return self._state

    def down(self) -> None:
        self._done.wait()
        self.lab.down()
        shutil.rmtree(self.lab.config.lab_dir, ignore_errors=True)


def _saturation_lab_config() -> LabConfig:
    """Three brokers on the pressure profile's knobs, scraped also the way a Kubernetes Prometheus
    labels Strimzi's pods (job kafka, pod labels, no broker label): a test saturates one broker of
    them alone (test_alert_one_broker.py). Ports from KBT_TEST_SATURATION_LAB_BASE_PORT, else 700
    above the session lab's (no client exporter ports: the distributed stress lab starts at +800)."""
    base = os.environ.get("KBT_TEST_SATURATION_LAB_BASE_PORT")
    session = int(os.environ.get("KBT_TEST_LAB_BASE_PORT", TEST_BASE_PORT))
    return LabConfig(
        profile="pressure",
        brokers=3,
        kubernetes_job=True,
        base_port=int(base) if base else session + 700,
        lab_dir=Path(tempfile.mkdtemp(prefix="kbt-test-saturation-lab-")),
        client_exporter_count=0,
    )


# Labs started in the background at collection when a selected test asks for their fixture:
# fixture name -> (the variable naming a running lab to reuse instead, its config, what it is).
_LABS: dict[str, tuple[str, Callable[[], LabConfig], str]] = {
    "lab": ("KBT_TEST_LAB_DIR", _session_lab_config, "session lab"),
    "pressure_lab": ("KBT_TEST_PRESSURE_LAB_DIR", _pressure_lab_config, "pressure lab"),
    "saturation_lab": ("KBT_TEST_SATURATION_LAB_DIR", _saturation_lab_config, "saturation lab"),
}
_started: dict[str, _LabInBackground] = {}


def _wanted(items: list[pytest.Item], fixture: str) -> bool:
    return any(fixture in getattr(item, "fixturenames", ()) for item in items)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for fixture, (reuse_env, config, _) in _LABS.items():
        if _wanted(items, fixture) and fixture not in _started and not os.environ.get(reuse_env):
            _started[fixture] = _LabInBackground(config())


def pytest_sessionfinish() -> None:
    for started in _started.values():  # also when no selected test asked for it after all
        started.down()


def release(fixture: str) -> None:
    """Take down a lab its only user is done with, rather than at the session's end: the saturation
    lab's three brokers would otherwise idle beside every later lab measurement of the tier (a lab
    reused from KBT_TEST_*_LAB_DIR was not started here and is left running)."""
    started = _started.pop(fixture, None)
    if started is not None:
        started.down()


def _state(fixture: str) -> LabState:
    reuse_env, _, what = _LABS[fixture]
    reuse = os.environ.get(reuse_env)
    if reuse:
        return load_state(Path(reuse))
    if fixture not in _started:
        raise RuntimeError(f"the {what} was not started at collection")
    return _started[fixture].state()


@pytest.fixture(scope="session")
def lab() -> LabState:
    return _state("lab")


@pytest.fixture(scope="session")
def pressure_lab() -> LabState:
    """A lab on the pressure profile (`kbt lab up --profile pressure`), shared by every test that
    needs the broker in Qunar's regime; KBT_TEST_PRESSURE_LAB_DIR reuses a running one."""
    return _state("pressure_lab")


@pytest.fixture(scope="module")
def saturation_lab() -> Iterator[LabState]:
    """Three pressure-profile brokers with Strimzi-style pod labels (KBT_TEST_SATURATION_LAB_DIR
    reuses a running one). Its one module is its only user: it goes down when that module ends."""
    yield _state("saturation_lab")
    release("saturation_lab")


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
