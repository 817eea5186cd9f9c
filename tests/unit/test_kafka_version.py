"""Reading the Kafka release of a target's brokers: from version-labelled series (kbt's app-info
rule or another rule file's), else a pre-4.0 protocol version config, else "not readable" with
every reason. Never guessed."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tuner.measure.kafka_api_versions import REFERENCE, RELEASE
from tuner.measure.kafka_version import (
    api_versions,
    from_configs,
    from_series,
    infer_from_api_versions,
    read_version,
    version_query,
)


def test_one_release_across_brokers() -> None:
    series = [{"__name__": "kafka_server_app_version", "broker": b, "version": "4.1.1"} for b in "123"]
    assert from_series(series, "broker") == "4.1.1"
    version = read_version(series, "broker", {})
    assert version.version == "4.1.1" and "app-info" in version.source


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


B1 = "APIVERSION [rdkafka#producer-1] [thrd:127.0.0.1:19091/bootstrap]: 127.0.0.1:19091/bootstrap:"
B2 = "APIVERSION [rdkafka#producer-1] [thrd:127.0.0.1:19092/2]: 127.0.0.1:19092/2:"
LINES = [
    f"{B1} Broker API support:",
    f"{B1}   ApiKey Produce (0) Versions 3..13",
    f"{B1}   ApiKey Fetch (1) Versions 4..18",
    f"{B2}   ApiKey Produce (0) Versions 3..13",
    f"{B2}   ApiKey Fetch (1) Versions 4..18",
    B2.replace("APIVERSION", "FEATURE") + " Updated enabled protocol features",
]


def test_api_versions_from_librdkafka_lines() -> None:
    assert api_versions(LINES) == {
        "127.0.0.1:19091/bootstrap": {0: 13, 1: 18},
        "127.0.0.1:19092/2": {0: 13, 1: 18},
    }
    assert api_versions(["FAIL ... ApiKey Produce (0) Versions 3..13"]) == {}


def test_a_release_is_inferred_only_from_an_equal_answer() -> None:
    reference = {0: 13, 1: 18}
    assert infer_from_api_versions(api_versions(LINES), reference, "4.1") == ("4.1.x", "")
    newer = infer_from_api_versions({"b/1": {0: 14, 1: 18, 90: 0}}, reference, "4.1")
    assert newer == (
        None,
        "the brokers' API versions differ from Kafka 4.1's (newer); no release is inferred",
    )
    older = infer_from_api_versions({"b/1": {0: 12}}, reference, "4.1")
    assert older[0] is None and "(older)" in older[1]
    mixed = infer_from_api_versions({"b/1": {0: 14, 1: 17}, "b/2": {0: 13, 1: 18}}, reference, "4.1")
    assert mixed[0] is None and "(equal, mixed)" in mixed[1]
    assert infer_from_api_versions({}, reference, "4.1") == (None, "librdkafka logged no ApiVersions answer")


def test_the_inference_comes_last_and_says_so() -> None:
    tables = {"b/1": dict(REFERENCE)}
    version = read_version([], "broker", {}, None, tables)
    assert version.version == f"{RELEASE}.x" and "ApiVersions, inferred" in version.source
    exact = read_version([{"broker": "1", "version": "4.1.1"}], "broker", {}, None, tables)
    assert exact.version == "4.1.1" and "app-info" in exact.source
    other = read_version([], "broker", {}, None, {"b/1": {0: 99}})
    assert other.version is None and "no release is inferred" in other.why_not
