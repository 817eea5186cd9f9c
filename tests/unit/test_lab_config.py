"""Lab configuration, rendered files, state file and process bookkeeping (no cluster started)."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tuner.core.errors import BadInput, EnvironmentProblem
from tuner.lab import LabConfig, load_state
from tuner.lab.config import CONTROLLER_NODE_ID, default_lab_dir
from tuner.lab.layout import LabLayout
from tuner.lab.node_config import (
    broker_command,
    broker_properties,
    controller_command,
    controller_properties,
    format_command,
)
from tuner.lab.processes import is_alive, is_ours, port_in_use, spawn, stop, tail
from tuner.lab.profiles import PRESSURE, PROFILES
from tuner.lab.prometheus_config import prometheus_config, render_prometheus_config
from tuner.lab.state import Phase, new_state, read_state, save_state
from tuner.measure.catalog import SERIES
from tuner.measure.promql import QUERIES, promql, query, rate_window, substitute


def cfg(tmp_path: Path, **kw: object) -> LabConfig:
    return LabConfig.parse({"lab_dir": tmp_path / "lab", "base_port": 19090, **kw})


# ---- config ----------------------------------------------------------------------------------


def test_defaults_and_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KBT_LAB_DIR", raising=False)
    monkeypatch.delenv("KBT_LAB_BASE_PORT", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    c = LabConfig()
    assert (c.brokers, c.base_port, c.tiered, c.scrape_interval_s) == (3, 19090, True, 5.0)
    assert c.lab_dir == tmp_path / "state" / "kbt" / "lab"
    monkeypatch.setenv("KBT_LAB_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("KBT_LAB_BASE_PORT", "19290")
    assert default_lab_dir() == tmp_path / "elsewhere"
    assert LabConfig().base_port == 19290
    monkeypatch.setenv("KBT_LAB_BASE_PORT", "high")
    with pytest.raises(BadInput, match="KBT_LAB_BASE_PORT"):
        LabConfig()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"brokers": 0}, "brokers"),
        ({"brokers": 6}, "brokers"),
        ({"heap": "1 GB"}, "heap"),
        ({"scrape_interval_s": 0}, "scrape_interval_s"),
        ({"scrape_interval_s": 2, "scrape_timeout_s": 3}, "scrape_timeout_s (3) must not exceed"),
        ({"base_port": 80}, "base_port"),
        ({"borkers": 3}, "unknown lab setting 'borkers' (did you mean \"brokers\"?)"),
        ({"profile": "presure"}, "unknown lab profile 'presure' (did you mean \"pressure\"?)"),
        ({"profile": {}}, "unknown lab profile {}"),  # a TypeError traceback (unhashable) from a state file
        ({"profile": ["pressure"]}, "unknown lab profile ['pressure']"),
        ({"queued_max_requests": 0}, "queued_max_requests"),
        ({"flush_interval_messages": 0}, "flush_interval_messages"),
    ],
)
def test_bad_settings_are_one_line(tmp_path: Path, data: dict[str, object], message: str) -> None:
    with pytest.raises(BadInput) as exc:
        cfg(tmp_path, **data)
    assert message in exc.value.message and "\n" not in exc.value.message


def test_port_layout_has_no_collisions(tmp_path: Path) -> None:
    c = cfg(tmp_path, brokers=5, client_exporter_count=64)
    ports = [p for _, p in c.named_ports()]
    assert len(ports) == len(set(ports)) == 1 + 1 + 5 * 2 + 64
    assert c.client_exporter_ports[0] == 19190 and c.client_exporter_ports[-1] == 19253
    assert (c.broker_port(1), c.controller_port, c.jmx_port(1), c.prometheus_port) == (
        19091,
        19100,
        19111,
        19090,
    )


# ---- rendered files ---------------------------------------------------------------------------


def test_broker_properties(tmp_path: Path) -> None:
    c = cfg(tmp_path, brokers=2)
    props = broker_properties(c, LabLayout(c.lab_dir), 2)
    assert props["process.roles"] == "broker" and props["node.id"] == "2"
    assert props["controller.quorum.voters"] == f"{CONTROLLER_NODE_ID}@127.0.0.1:19100"
    assert props["listeners"] == props["advertised.listeners"] == "PLAINTEXT://127.0.0.1:19092"
    assert props["offsets.topic.replication.factor"] == "2"
    assert props["rlmm.config.remote.log.metadata.topic.replication.factor"] == "2"
    assert props["remote.log.storage.manager.class.name"].endswith("LocalTieredStorage")
    assert props["rsm.config.dir"] == str(c.lab_dir / "remote-storage")
    assert props["num.network.threads"] == "3"
    for key, value in props.items():
        if "://" in value:
            assert re.fullmatch(r"(\w+://127\.0\.0\.1:\d+,?)+", value), (key, value)


def test_pressure_profile(tmp_path: Path) -> None:
    """Every knob the profile sets reaches server.properties; flags given beside it win."""
    c = cfg(tmp_path, profile="pressure")
    assert (c.brokers, c.network_threads, c.io_threads, c.tiered) == (1, 1, 1, False)
    props = broker_properties(c, LabLayout(c.lab_dir), 1)
    assert props["num.network.threads"] == props["num.io.threads"] == "1"
    assert props["queued.max.requests"] == str(PRESSURE.knobs["queued_max_requests"].value)
    # the service time: Kafka's own authorizer with the lab plugin's wait, everything allowed
    assert props["authorizer.class.name"] == "kbt.lab.ServiceTimeAuthorizer"
    assert props["allow.everyone.if.no.acl.found"] == "true"
    assert props["kbt.produce.service.time.us"] == str(PRESSURE.knobs["produce_service_time_us"].value)
    assert props["metrics.sample.window.ms"] == "5000"
    assert not any(k.startswith("remote.") for k in props)
    assert all(knob.why for knob in PRESSURE.knobs.values())
    assert set(PRESSURE.knobs) <= set(LabConfig.model_fields)
    # the default lab keeps Kafka's queue, leaves flushing to the OS and has no authorizer
    plain = broker_properties(cfg(tmp_path), LabLayout(c.lab_dir), 1)
    assert plain["queued.max.requests"] == "500" and "log.flush.interval.messages" not in plain
    assert "authorizer.class.name" not in plain and "metrics.sample.window.ms" not in plain


def test_chaos_profile_is_the_lab_the_fault_matrix_needs(tmp_path: Path) -> None:
    """Three brokers (RF 3, one may go down), clients through Toxiproxy (the network faults), and
    every profile's knob is a LabConfig field with its reason."""
    c = cfg(tmp_path, profile="chaos")
    assert (c.brokers, c.via_toxiproxy, c.tiered) == (3, True, True)
    assert cfg(tmp_path, profile="chaos", brokers=4).brokers == 4  # a flag beside it wins
    for profile in PROFILES.values():
        assert set(profile.knobs) <= set(LabConfig.model_fields), profile.name
        assert all(knob.why for knob in profile.knobs.values()), profile.name


@settings(max_examples=40, deadline=None)
@given(
    brokers=st.integers(1, 5),
    queue=st.integers(1, 100_000),
    scrape=st.floats(0.5, 60.0, allow_nan=False),
)
def test_flags_beside_a_profile_win(brokers: int, queue: int, scrape: float) -> None:
    c = LabConfig.parse(
        {"lab_dir": "/tmp/x", "base_port": 19090, "profile": "pressure", "brokers": brokers,
         "queued_max_requests": queue, "scrape_interval_s": scrape}
    )  # fmt: skip
    assert (c.brokers, c.queued_max_requests, c.scrape_interval_s) == (brokers, queue, scrape)
    assert c.io_threads == 1 and c.produce_service_time_us > 0 and c.profile == "pressure"


def test_no_tiered(tmp_path: Path) -> None:
    c = cfg(tmp_path, tiered=False)
    layout = LabLayout(c.lab_dir)
    assert not any(k.startswith(("remote.", "rsm.", "rlmm.")) for k in broker_properties(c, layout, 1))
    assert "remote.log.storage.system.enable" not in controller_properties(c, layout)
    assert controller_properties(cfg(tmp_path), layout)["remote.log.storage.system.enable"] == "true"


def test_commands(tmp_path: Path) -> None:
    c = cfg(tmp_path, heap="640m")
    layout = LabLayout(c.lab_dir)
    cmd = broker_command(c, layout, 3, java="/usr/bin/java")
    agent = next(a for a in cmd if a.startswith("-javaagent:"))
    assert agent.endswith(
        f"=127.0.0.1:19113:{Path(__file__).resolve().parents[2]}/exporters/jmx/kafka-broker.yml"
    )
    assert "-Xmx640m" in cmd and cmd[-2:] == ["kafka.Kafka", str(layout.node_properties("broker-3"))]
    assert cmd[cmd.index("-cp") + 1].split(":")[0].endswith("/libs/*")
    assert not any(a.startswith("-javaagent") for a in controller_command(c, layout))
    fmt = format_command(layout, "controller", "AbCdEfGhIjKlMnOpQrStUv")
    assert "--standalone" not in fmt and fmt[fmt.index("-t") + 1] == "AbCdEfGhIjKlMnOpQrStUv"


def test_prometheus_config(tmp_path: Path) -> None:
    c = cfg(tmp_path, brokers=3, scrape_interval_s=1, client_exporter_count=64)
    conf = prometheus_config(c)
    assert conf["global"]["scrape_interval"] == conf["global"]["scrape_timeout"] == "1000ms"
    timed = prometheus_config(cfg(tmp_path, scrape_interval_s=2, scrape_timeout_s=1.5))["global"]
    assert (timed["scrape_interval"], timed["scrape_timeout"]) == ("2000ms", "1500ms")
    brokers, clients = conf["scrape_configs"]
    assert brokers["job_name"] == "kafka-broker" and clients["job_name"] == "kbt-client"
    assert [(t["targets"], t["labels"]) for t in brokers["static_configs"]] == [
        (["127.0.0.1:19111"], {"broker": "1"}),
        (["127.0.0.1:19112"], {"broker": "2"}),
        (["127.0.0.1:19113"], {"broker": "3"}),
    ]
    targets = clients["static_configs"][0]["targets"]
    assert len(targets) == 64 and targets[0] == "127.0.0.1:19190" and targets[-1] == "127.0.0.1:19253"
    assert len(prometheus_config(cfg(tmp_path, client_exporter_count=0))["scrape_configs"]) == 1


def test_kubernetes_style_job_scrapes_the_same_exporters(tmp_path: Path) -> None:
    conf = prometheus_config(cfg(tmp_path, brokers=2, client_exporter_count=0, kubernetes_job=True))
    ours, k8s = conf["scrape_configs"]
    assert k8s["job_name"] == "kafka"
    assert [t["targets"] for t in k8s["static_configs"]] == [t["targets"] for t in ours["static_configs"]]
    assert [t["labels"] for t in k8s["static_configs"]] == [
        {"pod": "my-cluster-kafka-1", "namespace": "kafka"},
        {"pod": "my-cluster-kafka-2", "namespace": "kafka"},
    ]


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool not installed (make install)")
def test_promtool_accepts_the_config(tmp_path: Path) -> None:
    path = tmp_path / "prometheus.yml"
    path.write_text(render_prometheus_config(cfg(tmp_path)))
    result = subprocess.run(["promtool", "check", "config", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


# ---- state ------------------------------------------------------------------------------------


def test_state_round_trip(tmp_path: Path) -> None:
    c = cfg(tmp_path, brokers=2)
    c.lab_dir.mkdir(parents=True)
    with pytest.raises(EnvironmentProblem, match="no running lab"):
        load_state(c.lab_dir)
    state = new_state(c, "cluster", 1.0)
    save_state(state)
    with pytest.raises(EnvironmentProblem, match="no running lab"):
        load_state(c.lab_dir)  # still starting
    state.phase = Phase.UP
    save_state(state)
    loaded = load_state(c.lab_dir)
    assert loaded.bootstrap_servers == "127.0.0.1:19091,127.0.0.1:19092"
    assert loaded.prometheus_url == "http://127.0.0.1:19090"
    assert loaded.remote_storage_dir == c.lab_dir / "remote-storage" and loaded.tiered
    assert [b.log_dir for b in loaded.brokers] == [
        c.lab_dir / "broker-1" / "data",
        c.lab_dir / "broker-2" / "data",
    ]
    assert loaded.client_exporter_ports == c.client_exporter_ports


def test_unreadable_state(tmp_path: Path) -> None:
    (tmp_path / "state.json").write_text("{not json")
    with pytest.raises(EnvironmentProblem, match="unreadable"):
        read_state(tmp_path)
    (tmp_path / "state.json").write_text('{"schema_version": 99}')
    with pytest.raises(EnvironmentProblem, match="schema 99"):
        read_state(tmp_path)


@pytest.mark.parametrize("profile", [{}, [], {"name": "pressure"}])
def test_a_state_whose_profile_is_not_a_name_is_unreadable(tmp_path: Path, profile: object) -> None:
    """`kbt lab status` over a state.json whose config.profile was a mapping: a TypeError traceback."""
    state = new_state(cfg(tmp_path), "abc", time.time())
    data = json.loads(state.model_dump_json())
    data["config"]["profile"] = profile
    (tmp_path / "state.json").write_text(json.dumps(data))
    with pytest.raises(EnvironmentProblem, match=r"unreadable \(config: unknown lab profile"):
        read_state(tmp_path)


# ---- processes --------------------------------------------------------------------------------


def test_spawn_and_stop_by_recorded_pid(tmp_path: Path) -> None:
    marker = str(tmp_path / "marker-arg")
    code = "import sys, time; print('started', flush=True); time.sleep(60)"
    pid = spawn([sys.executable, "-c", code, marker], tmp_path / "out.log")
    for _ in range(100):  # until the child has printed (bounded)
        if tail(tmp_path / "out.log", 1) == "started":
            break
        time.sleep(0.05)
    assert is_alive(pid) and is_ours(pid, marker)
    assert stop([(pid, marker)], timeout_s=5) == []  # SIGTERM was enough
    assert not is_alive(pid) and not is_ours(pid, marker)
    assert tail(tmp_path / "out.log", 5) == "started"


def test_foreign_pid_needs_the_marker(tmp_path: Path) -> None:
    """A PID this interpreter did not spawn (say, recorded by an earlier kbt) is only signalled while
    its command line still shows the lab's marker."""
    marker = str(tmp_path / "marker-arg")
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", marker])
    try:
        assert is_ours(other.pid, marker)
        assert not is_ours(other.pid, str(tmp_path / "other-marker"))
        assert stop([(other.pid, str(tmp_path / "other-marker"))], timeout_s=1) == []
        assert other.poll() is None
        assert stop([(other.pid, marker)], timeout_s=5) == []
        assert other.wait(timeout=5) is not None
    finally:
        other.kill()
        other.wait()


def test_port_in_use() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.listen()
        assert port_in_use(port)
    assert not port_in_use(port)


# ---- PromQL catalog -----------------------------------------------------------------------------


def test_queries_use_catalog_series_only() -> None:
    names = {s.name for s in SERIES}
    for q in QUERIES:
        used = set(re.findall(r"\b(kafka_\w+|process_\w+)\b", q.expr))
        assert used and used <= names, (q.name, used - names)


def test_window_substitution() -> None:
    assert "[$__rate_interval]" in query("PRODUCE_REQUESTS_RATE").expr
    assert promql("PRODUCE_REQUESTS_RATE", "30s") == (
        'sum by (broker)(rate(kafka_network_requests_total{request="Produce"}[30s]))'
    )
    assert substitute("rate(x[$__rate_interval])", "1m") == "rate(x[1m])"
    assert rate_window(1) == "4s" and rate_window(5) == "20s"
    with pytest.raises(BadInput, match='did you mean "NETWORK_IDLE"'):
        query("NETWORK_IDEL")


def test_a_taken_port_in_the_ephemeral_range_says_so(tmp_path: Path) -> None:
    from tuner.core.errors import EnvironmentProblem
    from tuner.lab.preflight import check_ports, ephemeral_ports

    span = ephemeral_ports()
    if span is None:
        pytest.skip("no ephemeral port range to read on this system")
    with socket.socket() as blocker:  # the kernel picks a port from its ephemeral range
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        taken = blocker.getsockname()[1]
        assert span[0] <= taken <= span[1]
        cfg = LabConfig(brokers=1, base_port=taken - 1, client_exporter_count=0, lab_dir=tmp_path / "lab")
        with pytest.raises(EnvironmentProblem, match=f"port {taken} .*below the ephemeral ports"):
            check_ports(cfg)
