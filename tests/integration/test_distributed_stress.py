"""Distributed stress for real: `kbt stress --target FILE --remote-workers 2` with both workers in a
network namespace the test creates, joined to the host by a veth pair of private addresses.

The workers know only two addresses: the master's and the target's bootstrap servers, both on the
host's side of the veth (a lab started with `--listen-address`). The lab's loopback listeners are
out of their reach (checked). Each worker is started with the one documented command
(`kbt stress-worker --master HOST:PORT`) and gets the plan from the master. What the master merged
must equal what the workers say they shipped, every acked record is read back, the run's topics
are gone, and the namespace and every process are removed afterwards, also when the test fails.

Skipped with the reason where the machine does not allow network namespaces (not root, no `ip`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient

from tests.integration.conftest import TEST_BASE_PORT
from tuner.core.paths import repo_root
from tuner.driver.stress.tally import Tally
from tuner.lab import Lab, LabConfig, LabState
from tuner.store.results import ResultsStore

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BASE = int(os.environ.get("KBT_TEST_LAB_BASE_PORT", TEST_BASE_PORT))
LAB_BASE = BASE + 800  # its own block: the session lab, the target and dialect labs sit below
MASTER_PORT, WEB_PORT = LAB_BASE + 180, LAB_BASE + 185
PREFIX = "kbt-dist-"
SUBNET = 231  # 10.231.<n>.0/30, <n> from the process id: parallel sessions do not collide
SPEC = """\
name: dist-stress
workload:
  name: dist
  topics: [{name: dist, partitions: 4, replication_factor: 1}]
  producers: 4
  rate_per_producer: 25
  message: {kind: generated, bytes: 300}
  duration_s: 10
profiles:
  batched: {name: batched, linger_ms: 20, compression: lz4, acks: all, idempotence: true}
shape: {steps: [1], step_s: 12, drain_s: 8, settle_s: 2}
gates: {network_idle_min: 0.01, on_fail: continue}
"""


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)


class Namespace:
    """A network namespace with a veth pair to the host: host side .1, namespace side .2 of a /30."""

    def __init__(self) -> None:
        tag = uuid.uuid4().hex[:6]
        self.name = f"kbt-dist-{tag}"
        self.host_if, self.ns_if = f"kbtd{tag}h", f"kbtd{tag}n"
        third = os.getpid() % 250
        self.host_addr, self.ns_addr = f"10.{SUBNET}.{third}.1", f"10.{SUBNET}.{third}.2"
        self.created = False

    def create(self) -> None:
        steps = [
            ("netns", "add", self.name),
            ("link", "add", self.host_if, "type", "veth", "peer", "name", self.ns_if),
            ("link", "set", self.ns_if, "netns", self.name),
            ("addr", "add", f"{self.host_addr}/30", "dev", self.host_if),
            ("link", "set", self.host_if, "up"),
            ("-n", self.name, "addr", "add", f"{self.ns_addr}/30", "dev", self.ns_if),
            ("-n", self.name, "link", "set", self.ns_if, "up"),
            ("-n", self.name, "link", "set", "lo", "up"),
        ]
        for step in steps:
            done = _ip(*step)
            if done.returncode != 0:
                raise RuntimeError(f"ip {' '.join(step)}: {done.stderr.strip()}")
            self.created = self.created or step[0] == "netns"

    def exec(self, *cmd: str) -> list[str]:
        return ["ip", "netns", "exec", self.name, *cmd]

    def remove(self) -> None:
        """Deleting the namespace deletes its end of the veth, and with it the host's end."""
        _ip("link", "del", self.host_if)  # in case the namespace was never made
        if self.created:
            _ip("netns", "del", self.name)

    def exists(self) -> bool:
        return self.name in _ip("netns", "list").stdout or _ip("link", "show", self.host_if).returncode == 0


def _netns_unavailable() -> str | None:
    if shutil.which("ip") is None:
        return "the 'ip' command (iproute2) is not installed"
    if os.geteuid() != 0:
        return "creating a network namespace needs root"
    probe = f"kbt-probe-{uuid.uuid4().hex[:6]}"
    made = _ip("netns", "add", probe)
    if made.returncode != 0:
        return f"ip netns add is not allowed here: {made.stderr.strip()}"
    _ip("netns", "del", probe)
    return None


@pytest.fixture(scope="module")
def netns() -> Iterator[Namespace]:
    reason = _netns_unavailable()
    if reason is not None:
        pytest.skip(f"distributed stress needs a network namespace: {reason}")
    ns = Namespace()
    try:
        ns.create()
        yield ns
    finally:
        ns.remove()
    assert not ns.exists(), f"namespace {ns.name} or its veth left behind"


@pytest.fixture(scope="module")
def dist_lab(netns: Namespace, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabState]:
    config = LabConfig(
        brokers=1,
        base_port=LAB_BASE,
        lab_dir=tmp_path_factory.mktemp("dist-lab"),
        tiered=False,
        scrape_interval_s=1.0,
        client_exporter_count=4,
        listen_address=netns.host_addr,
    )
    lab = Lab(config)
    try:
        yield lab.up(timeout_s=180)
    finally:
        lab.down()


class Processes:
    """Every process the test starts, stopped by id (its own process group) however the test ends."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[str]] = []

    def start(self, cmd: list[str], **kwargs: object) -> subprocess.Popen[str]:
        env = {**os.environ, "PYTHONPATH": str(repo_root())}
        proc = subprocess.Popen(
            cmd, env=env, cwd=repo_root(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, start_new_session=True, **kwargs,  # type: ignore[call-overload]
        )  # fmt: skip
        self.procs.append(proc)
        return proc

    def stop_all(self) -> None:
        """SIGTERM first (kbt stops its locust processes and deletes its topics), then SIGKILL."""
        for sig, grace in ((signal.SIGTERM, 30.0), (signal.SIGKILL, 10.0)):
            for proc in self.procs:
                if proc.poll() is None:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, sig)
            for proc in self.procs:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=grace)


@pytest.fixture
def processes() -> Iterator[Processes]:
    started = Processes()
    try:
        yield started
    finally:
        started.stop_all()


def _reachable_from(ns: Namespace, host: str, port: int) -> bool:
    probe = (
        f"import socket,sys\ns=socket.socket(); s.settimeout(3)\nsys.exit(s.connect_ex(({host!r}, {port})))\n"
    )
    return subprocess.run(ns.exec(sys.executable, "-c", probe), timeout=30).returncode == 0


def _summaries(text: str) -> list[dict[str, int]]:
    """The workers' own lines: 'profile P: worker I sent S, acked A, failed F (shipped ...)'."""
    found = re.findall(r"worker (\d+) sent (\d+), acked (\d+), failed (\d+)", text)
    return [{"worker": int(w), "sent": int(s), "acked": int(a), "failed": int(f)} for w, s, a, f in found]


def test_remote_workers_in_a_namespace(
    netns: Namespace, dist_lab: LabState, processes: Processes, tmp_path: Path
) -> None:
    external = dist_lab.external_bootstrap_servers
    host, port = external.split(",")[0].rsplit(":", 1)
    assert host == netns.host_addr
    # The workers' world: the target's advertised address answers, the lab's loopback does not.
    assert _reachable_from(netns, host, int(port))
    assert not _reachable_from(netns, "127.0.0.1", dist_lab.brokers[0].port)

    target = tmp_path / "target.yaml"
    target.write_text(
        "name: dist-target\n"
        f"bootstrap_servers: [{external}]\n"
        f'prometheus: {{url: "{dist_lab.prometheus_url}", scrape_interval_s: 1}}\n'
        f"topic_prefix: {PREFIX}\n"
    )
    spec = tmp_path / "stress.yaml"
    spec.write_text(SPEC)
    results = tmp_path / "results"
    kbt = [sys.executable, "-m", "tuner"]
    master = processes.start(
        [*kbt, "stress", str(spec), "--target", str(target), "--remote-workers", "2", "--yes",
         "--master-host", netns.host_addr, "--master-port", str(MASTER_PORT), "--web-port", str(WEB_PORT),
         "--join-timeout", "20", "--results", str(results), "--json", str(tmp_path / "stress.json")]
    )  # fmt: skip
    worker_cmd = [*kbt, "stress-worker", "--master", f"{netns.host_addr}:{MASTER_PORT}"]
    workers = [processes.start(netns.exec(*worker_cmd)) for _ in range(2)]

    out, err = master.communicate(timeout=300)
    worker_out = [w.communicate(timeout=60) for w in workers]
    assert master.returncode == 0, out + err + "".join(o + e for o, e in worker_out)
    for proc, (w_out, w_err) in zip(workers, worker_out, strict=True):
        assert proc.returncode == 0, w_out + w_err

    summaries = [s for w_out, _ in worker_out for s in _summaries(w_out)]
    assert sorted(s["worker"] for s in summaries) == [0, 1], worker_out
    assert all(s["acked"] > 0 for s in summaries), summaries  # both produced
    # Merged exactly: the master's tally (every stage) is the sum of what each worker shipped.
    status = json.loads(next(results.glob("dist-stress/*.locust/status.json")).read_text())
    assert status["done"] is True
    merged = Tally.from_wire(status["tally"])
    for key in ("sent", "acked", "failed"):
        assert sum(getattr(t, key) for t in merged.stages.values()) == sum(s[key] for s in summaries), (
            key, summaries, status["tally"]["stages"],
        )  # fmt: skip
    records = [r for r in ResultsStore(results).records("dist-stress") if r.stress is not None]
    assert [r.stress.stage.name for r in records if r.stress] == ["step1-x1"]
    record = records[0]
    assert record.stress is not None and record.stress.locust_workers == 2
    sent = sum(t.sent for t in merged.stages.values())
    acked = sum(t.acked for t in merged.stages.values())
    failed = sum(t.failed for t in merged.stages.values())
    offered = 4 * 25 * 12  # in the step; producers run on into the drain until locust stops them
    assert abs(record.client.records_sent - offered) / offered < 0.05, (record.client.records_sent, offered)
    assert failed == 0
    report = json.loads((tmp_path / "stress.json").read_text())["profiles"][0]
    assert report["delivery_verified"] is True and report["lost"] == 0, report
    assert record.delivery.verified and record.delivery.lost == 0

    admin = AdminClient({"bootstrap.servers": dist_lab.bootstrap_servers})
    assert [t for t in admin.list_topics(timeout=10).topics if t.startswith(PREFIX)] == []
    left = _ip("netns", "pids", netns.name).stdout.split()
    assert left == [], "a process outlived its run in the namespace"
    print(
        f"\nkbt stress, 2 remote workers in a network namespace, 4 producers x 25 msgs/s for 12 s"
        f" (offered {offered}): step sent {record.client.records_sent}, all stages sent {sent},"
        f" acked {acked}, failed {failed};"
        f" per worker {[(s['sent'], s['acked']) for s in summaries]}; every acked record read back"
    )
