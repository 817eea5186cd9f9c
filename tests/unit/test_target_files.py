"""Target files, client security mapping, metric dialect translation and the load caps (no network)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tuner.core.errors import BadInput, EnvironmentProblem
from tuner.core.properties import parse_properties
from tuner.core.redact import scrub
from tuner.measure.dialects import (
    DIAGNOSE_NEEDS,
    DIALECTS,
    MissingSeries,
    Translator,
    assess,
    detect,
    dialect_names,
)
from tuner.measure.promql import QUERIES, promql
from tuner.target.base import Target, TargetLimits
from tuner.target.registry import resolve_target
from tuner.target.safety import Offered, check_caps
from tuner.target.security import (
    librdkafka_config,
    resolve,
)


def _write(tmp_path: Path, text: str, name: str = "target.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


GOOD = """
name: staging
bootstrap_servers: kafka-0.example:9093, kafka-1.example:9093
client:
  properties_file: client.properties
prometheus:
  url: https://prom.example/prometheus?tenant=a
  bearer_token_file: token
  headers: {X-Scope-OrgID: team-a}
brokers: {job: kafka, matchers: {cluster: staging}, broker_label: pod}
dialect: strimzi
limits: {max_msgs_per_s: 5000}
topic_prefix: kbt-test-
"""
CLIENT = """# Kafka's own format
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\
    username="svc" password="${KBT_UNIT_PASSWORD}";
ssl.truststore.type=PEM
ssl.truststore.location=ca.pem
"""


def test_target_file_reads_every_part(tmp_path: Path) -> None:
    _write(tmp_path, CLIENT, "client.properties")
    _write(tmp_path, "a-token\n", "token")
    target = resolve_target(None, _write(tmp_path, GOOD))
    assert target.kind == "file" and target.name == "staging"
    assert target.bootstrap_servers == "kafka-0.example:9093,kafka-1.example:9093"
    assert not target.loopback
    assert target.client_properties["sasl.mechanism"] == "SCRAM-SHA-512"
    assert target.client_properties["ssl.truststore.location"] == str(tmp_path / "ca.pem")
    assert target.prometheus is not None and target.prometheus.bearer_token_file == tmp_path / "token"
    assert target.selectors.broker_label == "pod" and target.selectors.matchers == {"cluster": "staging"}
    assert target.dialect == "strimzi" and target.topic_prefix == "kbt-test-"
    assert target.limits == TargetLimits(5000, None)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "name: a\nbootstrap_server: h:1\n",
            'unknown key "bootstrap_server" (did you mean "bootstrap_servers"?)',
        ),
        (  # no close spelling: a small section's keys are listed
            "name: a\nbootstrap_servers: [h:1]\nclient: {security: x}\n",
            'client: unknown key "security" (known keys: properties, properties_file)',
        ),
        ("name: a\nbootstrap_servers: [h]\n", "'h' is not host:port"),
        ("name: a\nbootstrap_servers: [h:1]\ndialect: strimsi\n", "dialect"),
        ("name: a\nbootstrap_servers: [h:1]\nprometheus: {url: 'http://u:pw@h:9090'}\n", "holds a password"),
        (  # urllib's "Invalid IPv6 URL" was the whole message
            "name: a\nbootstrap_servers: [h:1]\nprometheus: {url: 'http://[::1:9090'}\n",
            "prometheus.url: 'http://[::1:9090' is not a URL (its [IPv6] host is not closed or not an"
            " address)",
        ),
        (
            "name: a\nbootstrap_servers: [h:1]\nclient: {properties: {sasl.password: hunter22}}\n",
            "must be a ${VAR} reference",
        ),
        (
            "name: a\nbootstrap_servers: [h:1]\nclient: {properties: {sasl.pasword: x}}\n",
            'did you mean "sasl.password"',
        ),
        (
            "name: a\nbootstrap_servers: [h:1]\nprometheus: {url: 'http://h', headers: {Authorization: x}}\n",
            "must be a ${VAR} reference",
        ),
        ("- just a list\n", "expected a mapping"),
        (  # it was "security.protocol 'TLS'", saying nothing of what is wrong
            "name: a\nbootstrap_servers: [h:1]\nclient: {properties: {security.protocol: TLS}}\n",
            "security.protocol 'TLS' is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL",
        ),
        ("name: a\nbootstrap_servers: [h:1]\ntopic_prefix: 'a b'\n", "topic_prefix"),
        (  # said when the target is read, before a command waits on the cluster
            "name: a\nbootstrap_servers: [h:1]\nprometheus: {url: 'http://h', bearer_token_file: gone}\n",
            "target file target.yaml: prometheus.bearer_token_file gone: no such file",
        ),
        (  # named as written ("." was named by its directory's name, /dev/zero as "zero")
            "name: a\nbootstrap_servers: [h:1]\nprometheus: {url: 'https://h', ca_file: .}\n",
            "prometheus.ca_file .: is a directory, not a file",
        ),
        (  # a traceback: pathlib's expanduser raises RuntimeError for a user who is not there
            "name: a\nbootstrap_servers: [h:1]\n"
            "prometheus: {url: 'http://h', bearer_token_file: '~nobodyxx/t'}\n",
            "prometheus.bearer_token_file ~nobodyxx/t: no such file",
        ),
        (
            "name: a\nbootstrap_servers: [h:1]\nclient: {properties_file: '~nobodyxx/c'}\n",
            "~nobodyxx/c: no such client properties file",
        ),
    ],
)
def test_bad_target_files_are_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(BadInput) as err:
        resolve_target(None, _write(tmp_path, text))
    assert message in err.value.message and "\n" not in err.value.message


def test_missing_target_file(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="no such target file"):
        resolve_target(None, tmp_path / "nope.yaml")


def test_loopback_detection(tmp_path: Path) -> None:
    t = resolve_target(
        None, _write(tmp_path, "name: a\nbootstrap_servers: [127.0.0.1:9092, 'localhost:9093']\n")
    )
    assert t.loopback


def test_security_maps_for_each_client(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KBT_UNIT_PASSWORD", "s3cret-pass")
    props = parse_properties(CLIENT, "client")
    props["ssl.truststore.location"] = "/etc/ca.pem"
    sec = resolve(props, "client")
    assert (sec.protocol, sec.mechanism, sec.username, sec.password) == (
        "SASL_SSL",
        "SCRAM-SHA-512",
        "svc",
        "s3cret-pass",
    )
    rd = librdkafka_config(sec)
    assert rd["sasl.mechanisms"] == "SCRAM-SHA-512" and rd["ssl.ca.location"] == "/etc/ca.pem"
    assert rd["sasl.username"] == "svc" and rd["sasl.password"] == "s3cret-pass"
    assert "s3cret-pass" not in scrub("error: login failed for svc/s3cret-pass")


def test_librdkafka_style_input_and_a_missing_truststore(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KBT_UNIT_PW", "another-secret")
    sec = resolve(
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanisms": "PLAIN",
            "sasl.username": "u",
            "sasl.password": "${KBT_UNIT_PW}",
        },
        "c",
    )
    assert librdkafka_config(sec)["sasl.password"] == "another-secret"
    jks = resolve({"security.protocol": "SSL", "ssl.truststore.location": "/nonexistent/t.jks"}, "c")
    with pytest.raises(BadInput, match=r"t\.jks: no such truststore"):
        librdkafka_config(jks)  # read as PEM for librdkafka (tests/unit/test_truststore.py)
    with pytest.raises(BadInput, match="KBT_UNSET_VAR"):
        resolve({"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.username": "u",
                 "sasl.password": "${KBT_UNSET_VAR}"}, "c")  # fmt: skip


def test_both_mechanism_names_must_agree() -> None:
    from tuner.target.security import check_properties

    both = {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.mechanisms": "SCRAM-SHA-512"}
    disagree = r"sasl\.mechanism 'PLAIN' and sasl\.mechanisms 'SCRAM-SHA-512' disagree: set one"
    with pytest.raises(BadInput, match=disagree):
        check_properties(both, "c")
    check_properties({**both, "sasl.mechanisms": "plain"}, "c")  # one mechanism, spelt twice


@given(st.dictionaries(st.from_regex(r"[a-z][a-z.]{0,20}", fullmatch=True), st.text(max_size=20), max_size=4))
def test_check_properties_never_crashes(props: dict[str, str]) -> None:
    from tuner.target.security import check_properties

    try:
        check_properties(props, "c")
    except BadInput as exc:
        assert "\n" not in exc.message


PRODUCE = promql("PRODUCE_REQUESTS_RATE", "30s")


def test_kbt_dialect_on_the_lab_is_identity() -> None:
    assert Translator(DIALECTS["kbt"]).translate(PRODUCE) == PRODUCE


def test_translation_scopes_and_renames() -> None:
    t = Translator(DIALECTS["upstream"], job="kafka", matchers={"cluster": "c1"}, broker_label="pod")
    out = t.translate(promql("PRODUCE_TOTAL_P999_MS", "30s"))
    assert out == (
        'max by (pod)(kafka_network_requestmetrics_totaltimems{job="kafka",cluster="c1",'
        'request="Produce",quantile="0.999"})'
    )
    assert 'quantile="0.50"' in t.translate(promql("PRODUCE_REQUEST_BYTES_P50", "30s"))
    assert t.labels({"pod": "kafka-0", "networkProcessor": "1", "quantile": "0.50"}) == {
        "pod": "kafka-0",
        "broker": "kafka-0",
        "networkProcessor": "1",
        "network_processor": "1",
        "quantile": "0.5",
    }


def test_candidate_names_follow_what_is_present() -> None:
    present = frozenset({"kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_count_total"})
    t = Translator(DIALECTS["strimzi"], present=present)
    assert "_count_total{" in t.translate(promql("REQUEST_HANDLER_IDLE", "30s"))


def test_missing_series_says_why() -> None:
    t = Translator(DIALECTS["strimzi"])
    with pytest.raises(MissingSeries, match=r"MeanRate"):
        t.translate("avg by (broker)(kafka_server_request_handler_avg_idle_ratio)")


@pytest.mark.parametrize("name", ["strimzi", "upstream", "confluent"])
def test_requests_come_from_request_metrics_never_from_per_partition_counts(name: str) -> None:
    """BrokerTopicMetrics' TotalProduceRequests counts once per partition a request carries: it never
    stands in for the request count (Strimzi keeps RequestMetrics, in its generic PerSec rules)."""
    t = Translator(DIALECTS[name])
    for query in ("PRODUCE_REQUESTS_RATE", "FETCH_REQUESTS_RATE", "BYTES_PER_PRODUCE_REQUEST"):
        out = t.translate(promql(query, "30s"))
        assert "requestmetrics_requests" in out and "totalproducerequests" not in out, out
    assert "requestmetrics_totaltimems" in t.translate(promql("PRODUCE_TOTAL_P999_MS", "30s"))


@pytest.mark.parametrize("name", ["strimzi", "upstream", "confluent"])
def test_every_catalog_query_translates_or_names_its_missing_series(name: str) -> None:
    t = Translator(DIALECTS[name], job="kafka")
    for q in QUERIES:
        try:
            out = t.translate(promql(q.name, "30s"))
        except MissingSeries as exc:
            assert exc.reason
            continue
        assert "kafka-broker" not in out
        assert 'job="kafka"' in out or "kafka_" not in out


@pytest.mark.parametrize("name", ["strimzi", "upstream", "confluent"])
def test_detection_picks_the_dialect_whose_names_are_present(name: str) -> None:
    found = detect(dialect_names(DIALECTS[name]) | {"process_cpu_seconds_total"})
    assert found.dialect.name == name and found.missing == ()


def test_detection_weighs_the_series_diagnose_needs_not_name_counts() -> None:
    """Strimzi's naming with many upstream-only names beside it: the network idle series decides."""
    strimzi = dialect_names(DIALECTS["strimzi"])
    upstream_only = dialect_names(DIALECTS["upstream"]) - strimzi
    found = detect(strimzi | upstream_only - {"kafka_network_socketserver_networkprocessoravgidlepercent"})
    assert found.dialect.name == "strimzi" and "kafka_network_processor_avg_idle_ratio" in found.found
    # A Strimzi copy whose rules exclude RequestMetrics: still Strimzi, the request series named missing.
    bare = {n for n in strimzi if "requestmetrics" not in n}
    found = detect(bare)
    assert found.dialect.name == "strimzi"
    assert "kafka_network_requests_total" in found.missing and "missing: " in found.statement()


@given(st.sets(st.sampled_from(sorted(set().union(*(dialect_names(d) for d in DIALECTS.values()))))))
def test_detection_states_what_it_found_for_any_present_set(present: set[str]) -> None:
    try:
        found = detect(present)
    except EnvironmentProblem:
        assert all(not assess(d, present).found for d in DIALECTS.values())
        return
    assert set(found.found) | set(found.missing) == set(DIAGNOSE_NEEDS)
    assert found.scores[found.dialect.name] == max(found.scores.values()) == len(found.found) > 0


def _target(**caps: float) -> Target:
    return Target(name="t", kind="file", bootstrap_servers="h:1", limits=TargetLimits(**caps))


def test_caps_refuse_before_load() -> None:
    check_caps(_target(max_msgs_per_s=100), "run", Offered(100, 1000))
    with pytest.raises(BadInput, match="over t's cap of 100"):
        check_caps(_target(max_msgs_per_s=100), "run", Offered(101, 1000))
    with pytest.raises(BadInput, match="unbounded"):
        check_caps(_target(max_msgs_per_s=100), "run", Offered(None, None))
    with pytest.raises(BadInput, match="B/s"):
        check_caps(_target(max_bytes_per_s=1e6), "run", Offered(10, 2e6))
