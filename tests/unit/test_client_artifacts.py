"""The file a run's client starts from (`ClientKind.artifact`) and the file a user receives
(`render`): the same text, the header's `#` lines aside; and for the tailed shippers (Filebeat, the
collector) a profile that sets one nested option writes that option alone, never an unset one as
null, however often the profile is dumped and read back (sweeps and records do both)."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from tests.unit.team_files import sweep_naming
from tuner.core.errors import BadInput
from tuner.core.text import sorted_lists
from tuner.driver.engines import client_refusal
from tuner.driver.filebeat import testconfig
from tuner.driver.filebeat.builds import filebeat_builds
from tuner.driver.otelcol.build import collector_binary
from tuner.runner.preflight import clients_checked
from tuner.spec.clients import KINDS, profile_of
from tuner.spec.clients.filebeat import HOSTS_LINE, config_of
from tuner.spec.duration import Duration
from tuner.spec.filebeat_load import expand_dotted, load_filebeat
from tuner.spec.loader import load_profile, load_sweep

_HEADERS = st.lists(
    st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs")), max_size=30), max_size=4
)


def _durations(low_ms: int, high_ms: int) -> st.SearchStrategy[str]:
    return st.integers(low_ms, high_ms).map(lambda ms: f"{ms}ms")


# One nested option per entry: its dotted path and the values it takes.
OTELCOL_OPTIONS: dict[str, st.SearchStrategy[Any]] = {
    "kafka.producer.linger": _durations(1, 5000),
    "kafka.producer.flush_max_messages": st.integers(1, 100_000),
    "kafka.producer.max_message_bytes": st.integers(1000, 1_000_000),
    "kafka.producer.compression": st.sampled_from(["none", "gzip", "snappy", "lz4", "zstd"]),
    "kafka.producer.compression_params.level": st.integers(-2, 9),  # any level with no codec
    "kafka.producer.required_acks": st.sampled_from(["0", "1", "all"]),
    "kafka.producer.max_inflight_requests_per_broker": st.integers(1, 10),
    "kafka.sending_queue.enabled": st.booleans(),
    "kafka.sending_queue.num_consumers": st.integers(1, 50),
    "kafka.sending_queue.queue_size": st.integers(1, 100_000),
    "kafka.sending_queue.batch.flush_timeout": _durations(1, 5000),
    "kafka.sending_queue.batch.min_size": st.integers(0, 100_000),
    "kafka.logs.encoding": st.sampled_from(["otlp_proto", "otlp_json", "raw"]),
    "filelog.poll_interval": _durations(1, 5000),
}
FILEBEAT_OPTIONS: dict[str, st.SearchStrategy[Any]] = {
    "output.kafka.bulk_max_size": st.integers(1, 2048),
    "output.kafka.bulk_flush_frequency": _durations(0, 5000),
    "output.kafka.compression": st.sampled_from(["none", "gzip", "snappy", "lz4"]),
    "output.kafka.compression_level": st.integers(0, 9),
    "output.kafka.required_acks": st.sampled_from([-1, 0, 1]),
    "output.kafka.max_message_bytes": st.integers(1000, 1_000_000),
    # strings YAML 1.1 (Filebeat's reader) would take for a bool or a number unless quoted
    "output.kafka.client_id": st.sampled_from(["beats", "app-logs", "on", "no", "y", "0755", "1_000"]),
    "output.kafka.partition.hash.hash": st.lists(st.sampled_from(["message", "yes", "off"]), max_size=2),
    "output.kafka.timeout": _durations(1000, 60_000),
    "output.kafka.backoff.init": _durations(0, 5000),
    "output.kafka.channel_buffer_size": st.integers(1, 4096),
    "output.kafka.metadata.retry.max": st.integers(0, 10),
    "output.kafka.partition.random.group_events": st.integers(1, 4096),
    "output.kafka.partition.round_robin.group_events": st.integers(1, 4096),
    "queue.mem.events": st.integers(2048, 65_536),
    "queue.mem.flush.min_events": st.integers(0, 4096),
    "queue.mem.flush.timeout": _durations(0, 10_000),
}


def _leaves(node: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(node, dict) and node:
        out: dict[str, Any] = {}
        for key, value in node.items():
            out.update(_leaves(value, f"{prefix}{key}."))
        return out
    return {prefix.removesuffix("."): node}


def _yaml(text: str, version: tuple[int, int] | None = None) -> Any:
    yaml = YAML(typ="safe")
    yaml.version = version  # (1, 1): as Filebeat's gopkg.in/yaml.v2 reads it
    return yaml.load(io.StringIO(text))


def _reread(profile: Any) -> Any:
    """The profile as a sweep reads a profile file and a record stores it: dumped, then validated."""
    return profile_of(profile.model_dump(mode="json"))


@pytest.mark.parametrize("name", sorted(KINDS))
@settings(max_examples=10, deadline=None)
@given(header=_HEADERS)
def test_the_file_a_user_receives_is_the_artifact_under_its_header(name: str, header: list[str]) -> None:
    kind = KINDS[name]
    profile = profile_of({"name": "p", "client": name})
    artifact = kind.artifact(profile)
    rendered = kind.render(profile, header)
    lines = [f"# {h}" if h else "#" for h in header]
    assert rendered.filename == artifact.filename
    assert rendered.text == "".join(f"{line}\n" for line in lines) + artifact.text
    assert kind.artifact(_reread(profile)).sha256 == artifact.sha256


@settings(max_examples=60, deadline=None)
@given(data=st.data(), path=st.sampled_from(sorted(OTELCOL_OPTIONS)))
def test_a_collector_profile_writes_its_one_option_and_no_null(data: st.DataObject, path: str) -> None:
    value = data.draw(OTELCOL_OPTIONS[path])
    profile = profile_of({"name": "p", "client": "otelcol", "otelcol": {path: value}})
    kind = KINDS["otelcol"]
    for seen in (profile, _reread(profile), _reread(_reread(profile))):
        text = kind.artifact(seen).text
        assert "null" not in text and "None" not in text, text
        doc = _yaml(text)
        found = _leaves(doc.get("exporters", {}).get("kafka", {}), "kafka.")
        found.update(_leaves(doc.get("receivers", {}).get("file_log", {}), "filelog."))
        found.pop("filelog", None)
        found.pop("kafka", None)
        assert list(found) == [path], text
        if isinstance(value, str) and value.endswith("ms"):  # a Go duration, written as it renders
            assert Duration.parse(found[path]) == Duration.parse(value), text
        else:
            assert str(found[path]).lower() == str(value).lower(), text
        assert kind.artifact(seen).sha256 == kind.artifact(profile).sha256


@settings(max_examples=60, deadline=None)
@given(data=st.data(), path=st.sampled_from(sorted(FILEBEAT_OPTIONS)))
def test_a_filebeat_profile_writes_its_one_option_and_filebeat_reads_the_same_settings(
    tmp_path_factory: Any, data: st.DataObject, path: str
) -> None:
    value = data.draw(FILEBEAT_OPTIONS[path])
    profile = profile_of({"name": "p", "client": "filebeat", "filebeat": {path: value}})
    kind = KINDS["filebeat"]
    tmp = tmp_path_factory.mktemp("fb")
    for seen in (profile, _reread(profile)):
        text = kind.artifact(seen).text
        assert "null" not in text and "None" not in text, text
        assert f"  {HOSTS_LINE}\n" in text and '["${' not in text.replace('(["${KAFKA_HOSTS}"])', "")
        doc = expand_dotted(_yaml(text, (1, 1)))
        kafka = dict(doc["output"]["kafka"])
        assert kafka.pop("hosts") == "${KAFKA_HOSTS}" and kafka.pop("topic") == "${KAFKA_TOPIC}"
        assert kafka.pop("version") == "2.1.0"  # always stated: Kafka 4.x refuses 7.17's default
        found = {**_leaves(kafka, "output.kafka."), **_leaves(doc.get("queue") or {}, "queue.")}
        found.pop("output.kafka", None)
        found.pop("queue", None)
        assert list(found) == [path], text
        if not (isinstance(value, str) and value.endswith("ms")):  # durations are written as they render
            assert found[path] == value, text
        # The file read back as Filebeat's settings is the profile's own configuration.
        file = Path(tmp) / "filebeat.yml"
        file.write_text(text, encoding="utf-8")
        read = load_filebeat(file).config
        wanted = config_of(seen)
        assert read.kafka.model_dump(exclude={"hosts", "topic"}) == wanted.kafka.model_dump(
            exclude={"hosts", "topic"}
        )
        assert read.mem == wanted.mem


# ---- the real clients' own checks (skipped without the builds `make install` makes) -------------

_FILEBEAT = bool(filebeat_builds())
_COLLECTOR = collector_binary() is not None
ROOT = Path(__file__).resolve().parents[2]


def _shipped_profiles(client: str) -> list[Path]:
    out = []
    for path in sorted((ROOT / "loadtests" / "profiles").glob("*.yaml")):
        if load_profile(path).client == client:
            out.append(path)
    return out


@pytest.mark.skipif(not _FILEBEAT, reason="no real Filebeat build: run make install")
def test_filebeat_test_config_passes_every_rendered_and_shipped_file(
    tmp_path: Path,
) -> None:
    """`filebeat test config` with KAFKA_HOSTS naming three brokers (testconfig.THREE_HOSTS): the
    published fragments, and every Filebeat profile of loadtests/profiles/ and a recommender
    candidate as rendered (the file a user receives)."""
    files = sorted((ROOT / "filebeat-profiles").glob("*.yml"))
    kind = KINDS["filebeat"]
    profiles = [load_profile(p) for p in _shipped_profiles("filebeat")]
    assert len(files) >= 4 and len(profiles) >= 6
    candidate = profile_of(
        {"name": "rec", "client": "filebeat", "filebeat": {"output.kafka.partition.round_robin": None}}
    )
    for profile in [*profiles, candidate]:
        path = tmp_path / f"{profile.name}.yml"
        path.write_text(kind.render(profile, ["kbt test"]).text, encoding="utf-8")
        files.append(path)
    for path in files:
        assert "${KAFKA_HOSTS}" in path.read_text(encoding="utf-8")
        version, problem = testconfig.test_config(path)
        assert problem is None, f"{path.name}: filebeat {version}: {problem}"


@pytest.mark.skipif(not _FILEBEAT, reason="no real Filebeat build: run make install")
def test_filebeat_test_config_sees_what_a_deployment_sets(tmp_path: Path) -> None:
    """SASL variables and TLS files are given as a deployment gives them (the check passes), and the
    hosts variable holds three brokers: the list form fails in the real binary as it does on a
    multi-broker cluster (the check would pass it with one broker)."""
    secure = tmp_path / "secure.yml"
    secure.write_text(
        "output.kafka:\n"
        '  hosts: "${KAFKA_HOSTS}"\n'
        '  topic: "${KAFKA_TOPIC}"\n'
        '  username: "${KAFKA_USERNAME}"\n'
        '  password: "${KAFKA_PASSWORD}"\n'
        "  sasl.mechanism: SCRAM-SHA-512\n"
        '  ssl.certificate_authorities: ["${KAFKA_CA}"]\n'
        '  ssl.certificate: "${KAFKA_CERT}"\n'
        '  ssl.key: "${KAFKA_KEY}"\n'
        "  version: 2.1.0\n",
        encoding="utf-8",
    )
    assert testconfig.test_config(secure)[1] is None
    listed = tmp_path / "listed.yml"
    listed.write_text(secure.read_text().replace('"${KAFKA_HOSTS}"', '["${KAFKA_HOSTS}"]'), encoding="utf-8")
    problem = testconfig.test_config(listed)[1]
    assert problem is not None and "output.kafka.hosts.0" in problem, problem


def test_a_filebeat_profile_naming_hosts_and_topic_still_gets_the_deployments_variables() -> None:
    profile = profile_of(
        {
            "name": "p",
            "client": "filebeat",
            "filebeat": {"output.kafka": {"hosts": ["a:9092"], "topic": "logs"}},
        }
    )
    doc = expand_dotted(_yaml(KINDS["filebeat"].artifact(profile).text))  # a duplicate key would raise
    assert (
        doc["output"]["kafka"]["hosts"] == "${KAFKA_HOSTS}"
        and doc["output"]["kafka"]["topic"] == "${KAFKA_TOPIC}"
    )


# ---- the run's own file asked of its client before anything runs (runner/preflight.py) ---------

_BAD_FORMAT = {"output.kafka.codec.format.string": "%{[message"}  # kbt's schema takes it; Filebeat not


@pytest.mark.skipif(not _FILEBEAT, reason="no real Filebeat build: run make install")
def test_a_filebeat_profile_real_filebeat_refuses_is_one_line_before_the_run() -> None:
    bad = profile_of({"name": "fmt", "client": "filebeat", "filebeat": _BAD_FORMAT})
    problem = client_refusal(bad)
    assert problem is not None
    assert re.match(r"profile fmt: filebeat 7\.17\.\d+ test config of the filebeat\.yml it runs: ", problem)
    assert "accessing 'output.kafka.codec.format.string' (source:'filebeat.yml')" in problem  # no temp path
    with pytest.raises(BadInput) as err:
        clients_checked([profile_of({"name": "ok", "client": "filebeat"}), bad], {})
    assert err.value.message == problem
    assert client_refusal(profile_of({"name": "ok", "client": "filebeat"})) is None


@pytest.mark.skipif(not _FILEBEAT, reason="no real Filebeat build: run make install")
def test_filebeat_names_its_processors_in_one_order_each_run(tmp_path: Path) -> None:
    # Filebeat lists its actions in Go's map order: each run named others before the line's cut
    path = tmp_path / "fb.yml"
    path.write_text(
        'processors:\n  - no_such_processor: {}\noutput.kafka:\n  hosts: "${KAFKA_HOSTS}"\n  topic: t\n',
        encoding="utf-8",
    )
    problems = {testconfig.test_config(path)[1] for _ in range(3)}
    assert len(problems) == 1, problems
    (problem,) = problems
    listed = re.search(r"Valid actions: ([\w, ]+)$", problem or "")
    assert listed is not None, problem
    actions = listed.group(1).split(", ")
    assert len(actions) > 10 and actions == sorted(actions) and "rename" in actions


def test_a_go_map_list_is_sorted_and_nothing_else_moves() -> None:
    said = "Exiting: the processor action x does not exist. Valid actions: rename, dns, add_id"
    assert sorted_lists(said) == said.replace("rename, dns, add_id", "add_id, dns, rename")
    for kept in ("hosts: b, a", "Valid actions: one", "error: b, a (valid: yes)"):
        assert sorted_lists(kept) == kept


def test_the_emulation_reads_no_filebeat_yml_so_nothing_is_asked() -> None:
    emulated = profile_of(
        {"name": "fmt", "client": "filebeat", "filebeat": {**_BAD_FORMAT, "input.engine": "emulated"}}
    )
    assert client_refusal(emulated) is None
    assert client_refusal(profile_of({"name": "l", "overrides": {"linger.ms": "5"}})) is None  # at load


@pytest.mark.skipif(not _COLLECTOR, reason="no collector build: run make install")
def test_a_collector_profile_is_validated_as_it_runs() -> None:
    assert client_refusal(profile_of({"name": "c", "client": "otelcol"})) is None


@pytest.mark.skipif(not _FILEBEAT, reason="no real Filebeat build: run make install")
def test_a_teams_filebeat_yml_is_tested_as_kbt_check_filebeat_tests_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A processor Filebeat does not have: kbt runs no processors, so the run went on, measuring a
    file the team cannot deploy."""
    monkeypatch.chdir(tmp_path)
    team = 'output.kafka:\n  hosts: "${KAFKA_HOSTS}"\n  topic: "${KAFKA_TOPIC}"\n  bulk_max_size: 1024\n'
    spec = sweep_naming(tmp_path, "filebeat.yml", {"filebeat.yml": team + "processors: [{no_such: {}}]\n"})
    loaded = load_sweep(spec)
    with pytest.raises(BadInput) as err:
        clients_checked((plan.profile for plan in loaded.runs), loaded.own_files)
    assert re.match(
        r"filebeat\.yml: filebeat 7\.17\.\d+ test config: .*no_such does not exist", err.value.message
    )
    good = load_sweep(sweep_naming(tmp_path, "filebeat.yml", {"filebeat.yml": team}))
    clients_checked((plan.profile for plan in good.runs), good.own_files)
