"""Reading the Kafka release of a target's brokers: from version-labelled series (kbt's app-info
rule or another rule file's), else a pre-4.0 protocol version config, else "not readable" with
every reason. Never guessed."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tuner.measure.kafka_version import from_configs, from_series, read_version, version_query


def test_one_release_across_brokers() -> None:
    series = [{"__name__": "kafka_server_app_version", "broker": b, "version": "4.1.1"} for b in "123"]
    assert from_series(series, "broker") == "4.1.1"
    version = read_version(series, "broker", {})
    assert version.version == "4.1.1" and "app-info" in version.source
    assert version.text() == "4.1.1 (from the brokers' app-info Version in Prometheus)"


def test_brokers_on_different_releases_are_listed() -> None:
    series = [
        {"pod": "kafka-0", "version": "4.1.1"},
        {"pod": "kafka-1", "version": "4.1.1"},
        {"pod": "kafka-2", "version": "4.0.0"},
    ]
    assert from_series(series, "pod") == "4.1.1 (brokers kafka-0, kafka-1), 4.0.0 (broker kafka-2)"


def test_series_without_a_version_label_tell_nothing() -> None:
    assert from_series([{"broker": "1"}, {"broker": "2", "version": " "}], "broker") is None


def test_a_pre_4_protocol_config_gives_the_release_line() -> None:
    assert from_configs({"inter.broker.protocol.version": "3.7-IV4"}) == "3.7.x"
    assert from_configs({"inter.broker.protocol.version": "2.8"}) == "2.8.x"
    assert from_configs({"log.message.format.version": "3.0-IV1"}) == "3.0.x"
    assert from_configs({"inter.broker.protocol.version": "banana"}) is None
    version = read_version([], "broker", {"inter.broker.protocol.version": "3.7-IV4"})
    assert version.version == "3.7.x" and "inter.broker.protocol.version" in version.source


def test_the_series_win_over_the_protocol_line() -> None:
    version = read_version(
        [{"broker": "1", "version": "3.7.2"}], "broker", {"inter.broker.protocol.version": "3.6"}
    )
    assert version.version == "3.7.2"


def test_not_readable_says_why() -> None:
    kafka4 = read_version([], "broker", {})
    assert kafka4.version is None
    assert "removed in Kafka 4.0" in kafka4.why_not and "no broker series" in kafka4.why_not
    assert kafka4.text().startswith("version not readable (")
    no_prom = read_version(None, "broker", None)
    assert "could not be described" in no_prom.why_not and "no Prometheus is named" in no_prom.why_not
    down = read_version(None, "broker", {}, "Prometheus: cannot reach http://127.0.0.1:1")
    assert down.why_not.endswith("Prometheus: cannot reach http://127.0.0.1:1")


def test_the_query_keeps_the_target_scope() -> None:
    assert version_query('job="kafka",cluster="a"') == (
        '{__name__=~"kafka_server_.*(version|info).*",version!="",job="kafka",cluster="a"}'
    )
    assert version_query("") == '{__name__=~"kafka_server_.*(version|info).*",version!=""}'


@given(
    st.lists(st.dictionaries(st.sampled_from(["broker", "version", "x"]), st.text(max_size=12)), max_size=8)
)
def test_any_label_sets_give_a_reading_or_none(series: list[dict[str, str]]) -> None:
    found = from_series(series, "broker")
    assert found is None or found.strip()
    assert (found is None) == all(not s.get("version", "").strip() for s in series)
