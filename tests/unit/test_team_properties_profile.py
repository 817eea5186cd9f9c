"""A team's own producer properties named where a profile goes (`java:producer.properties`,
`librdkafka:...`): every property as the client reads it, but what the deployment sets (brokers,
security, client id, serializers, secrets), which is the lab's or the target's; durability is the
file's. A properties file says no client, so naming it without one is one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.team_files import sweep_naming
from tuner.core.errors import BadInput
from tuner.spec.clients import KINDS, kind_of
from tuner.spec.clients.base import ClientKind
from tuner.spec.loader import load_sweep
from tuner.spec.stress_load import load_stress

JAVA = """\
# the team's deployed producer
bootstrap.servers=kafka-0.kafka:9092,kafka-1.kafka:9092
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="app" \\
  password="${env:KAFKA_PASSWORD}";
ssl.truststore.location=/etc/kafka/truststore.jks
ssl.truststore.password=changeit
key.serializer=org.apache.kafka.common.serialization.StringSerializer
value.serializer=org.apache.kafka.common.serialization.StringSerializer
client.id=orders-api
acks=1
linger.ms=10
batch.size=65536
compression.type=lz4
max.request.size=2097152
"""

LIBRDKAFKA = """\
metadata.broker.list=k1:9092
queue.buffering.max.ms=20
batch.num.messages=5000
compression.codec=zstd
request.required.acks=-1
enable.idempotence=true
sasl.password=hunter2
"""


def test_a_java_file_is_its_settings_without_the_deployments(tmp_path: Path) -> None:
    [run] = load_sweep(
        sweep_naming(tmp_path, "java:team/producer.properties", {"team/producer.properties": JAVA})
    ).runs
    profile = run.profile
    assert (profile.client, profile.name) == ("java", "producer")
    settings = kind_of(profile).client_settings(profile)
    team = {"acks": "1", "linger.ms": "10", "batch.size": "65536", "compression.type": "lz4"}
    assert {k: settings[k] for k in team} == team and settings["max.request.size"] == "2097152"
    left = ("bootstrap.servers", "security.protocol", "sasl.", "ssl.", "client.id", "serializer")
    assert not [k for k in settings if any(part in k for part in left)]
    assert profile.description == (
        "producer.properties as Java reads it (bootstrap.servers, client.id, key.serializer,"
        " sasl.jaas.config, sasl.mechanism, security.protocol, ssl.truststore.location,"
        " ssl.truststore.password, value.serializer: the lab's or the target's)"
    )
    # the team's durability is what runs, and what a recommendation keeps
    assert kind_of(profile).durability(profile)["acks"] == "1"
    kept = kind_of(profile).kept(profile)
    assert kept["overrides"] == {"acks": "1", "max.request.size": "2097152"}
    assert "changeit" not in kind_of(profile).render(profile, ()).text


def test_a_librdkafka_file_runs_its_aliases_as_librdkafka_reads_them(tmp_path: Path) -> None:
    [run] = load_sweep(
        sweep_naming(tmp_path, "librdkafka:rdk.properties", {"rdk.properties": LIBRDKAFKA})
    ).runs
    profile = run.profile
    rules = kind_of(profile).rules(profile)
    assert (profile.client, rules.linger_ms, rules.compression) == ("librdkafka", 20.0, "zstd")
    settings = kind_of(profile).client_settings(profile)
    assert "metadata.broker.list" not in settings and "sasl.password" not in settings
    assert kind_of(profile).durability(profile)["enable.idempotence"] == "true"


STRESS = """\
name: own-stress
workload:
  name: own
  topics: [{name: own, partitions: 3}]
  producers: 2
  rate_per_producer: 10
  message: {kind: generated, bytes: 100}
  duration_s: 5
profiles:
  current: java:producer.properties
  recommended: {name: batched, client: java, linger_ms: 50, compression: lz4}
shape: {prefill_s: 10, steps: [1, 2], step_s: 10, drain_s: 5, settle_s: 2}
consumer_groups: [{name: rt, mode: realtime}]
gates: {p99_ms: 1000, request_queue_max: 20}
"""


def test_a_stress_spec_takes_the_same_reference(tmp_path: Path) -> None:
    (tmp_path / "producer.properties").write_text(JAVA)
    (tmp_path / "stress.yaml").write_text(STRESS)
    current = load_stress(tmp_path / "stress.yaml").spec.profiles["current"]
    assert (current.client, current.name) == ("java", "producer")
    assert kind_of(current).client_settings(current)["linger.ms"] == "10"


@pytest.mark.parametrize(
    ("ref", "line"),
    [
        ("producer.properties", "producer.properties says no client: name it"
         " librdkafka:producer.properties or java:producer.properties"),
        ("jaav:producer.properties", "unknown client 'jaav' (did you mean \"java\"?)"),
        ("JAVA:producer.properties", "unknown client 'JAVA' (did you mean \"java\"?)"),
        ("java:absent.properties", 'no such file "absent.properties"'),
    ],
)  # fmt: skip
def test_a_file_that_says_no_client_or_a_wrong_one_is_one_line(tmp_path: Path, ref: str, line: str) -> None:
    spec = sweep_naming(tmp_path, ref, {"producer.properties": JAVA})
    with pytest.raises(BadInput) as err:
        load_sweep(spec)
    assert err.value.message == f"{spec}:11: profiles[0]: {line}"


def test_a_kind_that_reads_no_own_file_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # every kind reads its own files today: a kind without the hook (the base's) stands in
    kind = KINDS["otelcol"]
    monkeypatch.setattr(type(kind), "own_file_profile", ClientKind.own_file_profile)
    spec = sweep_naming(tmp_path, "otelcol:producer.properties", {"producer.properties": JAVA})
    with pytest.raises(BadInput) as err:
        load_sweep(spec)
    assert err.value.message.endswith(
        "producer.properties: kbt does not read otelcol's own files as profiles"
    )


def test_an_unknown_java_property_is_named(tmp_path: Path) -> None:
    spec = sweep_naming(tmp_path, "java:rdk.properties", {"rdk.properties": LIBRDKAFKA})
    with pytest.raises(BadInput) as err:
        load_sweep(spec)
    named = (
        '"queue.buffering.max.ms"',
        '"batch.num.messages"',
        '"compression.codec"',
        '"request.required.acks"',
    )
    assert "unknown Java producer property" in err.value.message
    assert any(name in err.value.message for name in named), err.value.message


_LINES = st.lists(
    st.tuples(
        st.sampled_from(
            ["linger.ms", "batch.size", "acks", "compression.type", "ssl.key.password", "x.y", "#c"]
        ),
        st.text(alphabet="0123456789abclz=:\\ ", max_size=8),
    ),
    max_size=6,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_LINES, st.sampled_from(["java", "librdkafka"]))
def test_any_properties_file_loads_or_is_one_line(
    tmp_path: Path, lines: list[tuple[str, str]], kind: str
) -> None:
    text = "".join(f"{k}={v}\n" for k, v in lines)
    spec = sweep_naming(tmp_path, f"{kind}:p.properties", {"p.properties": text})
    try:
        [run] = load_sweep(spec).runs
    except BadInput as exc:
        assert "\n" not in exc.message and exc.message
    else:
        assert run.profile.client == kind
        assert "ssl.key.password" not in kind_of(run.profile).client_settings(run.profile)
