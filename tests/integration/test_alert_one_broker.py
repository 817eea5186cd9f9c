"""One saturated broker among healthy ones, read the way a Kubernetes Prometheus labels Strimzi's
pods (job kafka, `kubernetes_pod_name`, `strimzi_io_*`, no `broker` label): kbt's recording rules
and alerts, as the lab's Prometheus loads them from exporters/prometheus/, and `kbt diagnose`
through a target file that names no broker label, must name that broker alone. An average over
the pods would read the cluster as healthy (one broker at ~0 and two at ~1: ~0.67) and fire
nothing: the promtool test (exporters/prometheus/dialects/pods_test.yml) says so on written
series, this test on a live lab.

The lab (conftest `saturation_lab`): three brokers on the pressure profile's knobs; the load (the
pressure lab's Filebeat-like shape: many producers, linger 0, acks 1) goes to a topic whose
partitions are all led by broker 1, so only broker 1's request queue fills.

The alerts hold `for: 5m`; the test waits for them to be *active* (pending or firing: the
expression is true) for broker 1 and for no other broker, which is what the rules decide; that a
pending alert fires after its `for:` is Prometheus' own. KBT_TEST_ALERT_UNTIL_FIRING=1 holds the
load until they fire (about 6 minutes; docs/benchmarks.md "One saturated broker, live").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.labhelp import wait_for_leaders
from tuner.core.kafka_clients import Connection, new_producer
from tuner.lab import LabState
from tuner.lab.prometheus_config import KUBERNETES_JOB, KUBERNETES_POD
from tuner.measure.meter_warmup import idle_meters_settled_at
from tuner.measure.prometheus import Prometheus

SATURATED = 1  # the node id whose partitions take the whole load
PRODUCERS, RATE_PER_PRODUCER, RECORD = 24, 50, b"x" * 900  # the pressure lab's Filebeat-like load
PARTITIONS = 12
ALERTS = ("KafkaNetworkThreadsSaturated", "KafkaNetworkThreadsBusy")
IDLE_RULE = "cluster_broker:kafka_network_processor_avg_idle_ratio:avg"
UNTIL_FIRING = os.environ.get("KBT_TEST_ALERT_UNTIL_FIRING") == "1"
ACTIVE_WITHIN_S = 420 if UNTIL_FIRING else 150  # from the load's start
WATCH_AFTER_S = 30  # the other brokers are watched this long after broker 1's alerts show
# diagnose reads the window from broker 1's alert to the end of the watch: an average over a window
# reaching back before the load (the meters still falling) may read "warning" on a loaded machine.


def _pod(node: int) -> str:
    return KUBERNETES_POD.format(node=node)


@pytest.fixture(scope="module")
def hot_topic(saturation_lab: LabState) -> Iterator[str]:
    """A topic whose every partition has broker 1 as its only replica (and leader)."""
    admin = AdminClient({"bootstrap.servers": saturation_lab.bootstrap_servers})
    name = f"it-one-broker-{int(time.time())}"
    topic = NewTopic(name, num_partitions=PARTITIONS, replica_assignment=[[SATURATED]] * PARTITIONS)
    admin.create_topics([topic])[name].result(30)
    wait_for_leaders(admin, name, PARTITIONS)
    yield name
    for fut in admin.delete_topics([name], operation_timeout=30).values():
        fut.result(30)


class _Load:
    """The Filebeat-like load on threads of this process, one confluent-kafka producer each, each at
    RATE_PER_PRODUCER records/s until `stop()` or `hard_stop_s` from the start (a bounded load)."""

    def __init__(self, bootstrap: str, topic: str, hard_stop_s: float) -> None:
        self._topic, self._hard_stop_at = topic, time.time() + hard_stop_s
        self._stop = threading.Event()
        self.failed: list[str] = []
        self.delivered = 0
        self._lock = threading.Lock()
        conn = Connection(bootstrap_servers=bootstrap)
        settings = {"linger.ms": 0, "acks": 1, "partitioner": "random"}
        self._producers = [new_producer(conn, settings) for _ in range(PRODUCERS)]
        self._threads = [threading.Thread(target=self._run, args=(p,), daemon=True) for p in self._producers]
        for thread in self._threads:
            thread.start()

    def _run(self, producer: Producer) -> None:
        sent, start = 0, time.time()
        while not self._stop.is_set() and (now := time.time()) < self._hard_stop_at:
            while sent < (now - start) * RATE_PER_PRODUCER:
                producer.produce(self._topic, RECORD, on_delivery=self._delivered)
                sent += 1
            producer.poll(0.005)
        producer.flush(15)

    def _delivered(self, err: Any, _msg: Any) -> None:
        with self._lock:
            if err is None:
                self.delivered += 1
            elif len(self.failed) < 5:
                self.failed.append(str(err))

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(60)
        self._producers.clear()  # closes their connections before the lab goes down


def _active(prometheus: Prometheus, now: float) -> dict[str, set[tuple[str, str]]]:
    """alert name -> {(broker, state)} of the kbt alerts active now, as Prometheus holds them."""
    names = "|".join(ALERTS)
    out: dict[str, set[tuple[str, str]]] = {name: set() for name in ALERTS}
    for s in prometheus.instant(f'ALERTS{{alertname=~"{names}"}}', now):
        out[s.labels["alertname"]].add((s.labels.get("broker", ""), s.labels.get("alertstate", "")))
    return out


def _idle(prometheus: Prometheus, now: float) -> dict[str, float]:
    return {s.labels.get("broker", ""): s.value for s in prometheus.instant(IDLE_RULE, now)}


def _pods_average(prometheus: Prometheus, now: float) -> float | None:
    """What a rule averaging over the pods (no per-broker grouping) reads."""
    expr = f'avg(kafka_network_processor_avg_idle_ratio{{job="{KUBERNETES_JOB}"}})'
    found = prometheus.instant(expr, now)
    return found[0].value if found else None


def _diagnose(state: LabState, directory: Path, window_s: int) -> dict[str, Any]:
    """`kbt diagnose` through a target file that reads the Kubernetes-style job and names no broker
    label: the broker comes from the pod labels. The window is given its end (`--end`), so the
    naming and the broker label are read from that window's series through Prometheus' names APIs
    (a past window's way), here on a real Prometheus."""
    target, scrape_s = directory / "k8s-target.yaml", state.config.scrape_interval_s
    target.write_text(
        f"name: k8s\nbootstrap_servers: [{state.bootstrap_servers}]\n"
        f'prometheus: {{url: "{state.prometheus_url}", scrape_interval_s: {scrape_s:g}}}\n'
        f"brokers: {{job: {KUBERNETES_JOB}, matchers: {{namespace: kafka}}}}\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "tuner", "diagnose", "--target", str(target), "--window", f"{window_s}s",
         "--end", f"{time.time():.3f}", "--json", "-"],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert done.returncode in (0, 10, 11), done.stderr
    return json.loads(done.stdout)


def test_one_saturated_pod_fires_for_that_broker_alone(
    saturation_lab: LabState, hot_topic: str, tmp_path: Path
) -> None:
    prometheus = Prometheus(saturation_lab.prometheus_url)
    deadline, settled = time.time() + 180, None
    while settled is None and time.time() < deadline:
        settled = idle_meters_settled_at(prometheus)
        time.sleep(2)
    assert settled is not None, "the brokers' idle meters never settled"
    time.sleep(max(0.0, settled - time.time()))
    # Before the load nothing is active: the alerts below are the load's.
    assert _active(prometheus, time.time()) == {name: set() for name in ALERTS}

    load = _Load(saturation_lab.bootstrap_servers, hot_topic, ACTIVE_WITHIN_S + WATCH_AFTER_S + 60)
    started, seen_at = time.time(), None
    seen: dict[str, set[tuple[str, str]]] = {name: set() for name in ALERTS}
    idle_at_seen: dict[str, float] = {}
    average_at_seen: float | None = None
    diagnosis: dict[str, Any] = {}
    try:
        want = {"firing"} if UNTIL_FIRING else {"pending", "firing"}
        while time.time() < started + ACTIVE_WITHIN_S + WATCH_AFTER_S:
            now = time.time()
            for name, active in _active(prometheus, now).items():
                seen[name] |= active
            hot = {b for b, state in seen["KafkaNetworkThreadsSaturated"] if state in want}
            if seen_at is None and {str(SATURATED), _pod(SATURATED)} <= hot:
                seen_at, idle_at_seen = now, _idle(prometheus, now)
                average_at_seen = _pods_average(prometheus, now)
            if seen_at is not None and now >= seen_at + WATCH_AFTER_S:
                break
            if seen_at is None and now > started + ACTIVE_WITHIN_S:
                break
            time.sleep(2)
        if seen_at is not None:
            diagnosis = _diagnose(saturation_lab, tmp_path, int(time.time() - seen_at))
    finally:
        load.stop()

    assert seen_at is not None, f"no alert active for broker {SATURATED} within {ACTIVE_WITHIN_S} s: {seen}"
    after = f"after {seen_at - started:.0f} s: idle {idle_at_seen}, pods avg {average_at_seen}"
    print(f"alerts active for broker {SATURATED} {after}")
    assert not load.failed and load.delivered > 0, load.failed
    # Each alert names broker 1 (by the kbt job's label, and by its pod on the Kubernetes job) and no other.
    for name in ALERTS:
        brokers = {b for b, _ in seen[name]}
        assert brokers == {str(SATURATED), _pod(SATURATED)}, (name, seen[name])
    # The other brokers were healthy, and an average over the pods would have hidden broker 1.
    for node in (2, 3):
        assert idle_at_seen[_pod(node)] > 0.9 and idle_at_seen[str(node)] > 0.9, idle_at_seen
    assert idle_at_seen[_pod(SATURATED)] < 0.3, idle_at_seen
    assert average_at_seen is not None and average_at_seen > 0.5, average_at_seen
    # diagnose, through the pod labels alone, names the saturated pod and only it.
    status = {b["broker"]: b["status"] for b in diagnosis["brokers"]}
    assert set(status) == {_pod(n) for n in (1, 2, 3)}, status
    idle = {b["broker"]: [f["summary"] for f in b["findings"]] for b in diagnosis["brokers"]}
    assert status[_pod(SATURATED)] == "critical" and diagnosis["status"] == "critical", (status, idle)
    assert {status[_pod(n)] for n in (2, 3)} <= {"healthy"}, status
