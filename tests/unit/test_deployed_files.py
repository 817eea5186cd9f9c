"""The properties kinds' rendered files are what their runs start from (issue 39): the file a user
receives is the header's comment lines over the kind's artifact, the librdkafka producers' settings
are that artifact read back with the one properties reader (plus the environment's layer, named
in the file), and a Java producer that read the file otherwise is caught."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tuner.core.errors import BadInput
from tuner.core.properties import parse_properties
from tuner.core.redact import redact
from tuner.driver.file_check import check_librdkafka_file, unlike
from tuner.driver.rdkafka_worker import STATS_INTERVAL_MS, producer_config
from tuner.spec.clients import kind_of, profile_of
from tuner.spec.clients.producer import ProducerKind, same_value

_KNOBS = st.fixed_dictionaries(
    {"name": st.just("p")},
    optional={
        "linger_ms": st.integers(0, 5000),
        "batch_bytes": st.integers(1, 10**6),
        "compression": st.sampled_from(["none", "gzip", "lz4", "zstd"]),
        "acks": st.sampled_from(["0", "1", "all"]),
        "idempotence": st.booleans(),
        "partitioner": st.sampled_from(["default", "random", "sticky", "hash"]),
        "max_in_flight": st.integers(1, 5),
        "overrides": st.sampled_from(
            [
                {},
                {"client.id": "app 1"},
                {"client.id": "Zürich\tapp "},  # written as ASCII escapes, read back as given
                {"sasl.jaas.config": "${KBT_UNIT_JAAS}"},
                {"buffer.memory": "1048576"},
            ]
        ),
    },
)


def _profile(client: str, knobs: dict[str, Any]) -> Any:
    try:
        return profile_of({"client": client, **knobs})
    except ValueError:
        return None  # refused where it is written (idempotence with acks 1, ...)


@settings(max_examples=150, deadline=None)
@given(
    client=st.sampled_from(["librdkafka", "java"]),
    knobs=_KNOBS,
    header=st.lists(st.text(max_size=30), max_size=3),
)
def test_the_users_file_is_the_header_over_the_artifact_and_says_the_settings(
    client: str, knobs: dict[str, Any], header: list[str]
) -> None:
    profile = _profile(client, knobs)
    if profile is None:
        return
    kind = kind_of(profile)
    assert isinstance(kind, ProducerKind)
    artifact = kind.artifact(profile)
    header = [line.replace("\n", " ").replace("\r", " ") for line in header]
    users = kind.render(profile, header).text
    comments = "".join(f"# {line}\n" if line else "#\n" for line in header)
    assert users == comments + artifact.text  # the contract: the header's `#` lines, then the artifact
    read = parse_properties(users, artifact.filename)
    assert read == parse_properties(artifact.text, artifact.filename)
    assert read == kind.file_settings(redact(kind.client_settings(profile)))  # every setting, as written


@settings(max_examples=100, deadline=None)
@given(knobs=_KNOBS)
def test_librdkafka_producers_take_the_files_settings_and_only_the_environment_on_top(
    knobs: dict[str, Any],
) -> None:
    profile = _profile("librdkafka", knobs)
    if profile is None:
        return
    text = kind_of(profile).artifact(profile).text
    conf = producer_config(text, "kbt-run-0")
    file = parse_properties(text, "librdkafka.properties")
    layered = {k: v for k, v in conf.items() if k not in file}
    assert {k: conf[k] for k in file} == file
    assert layered == {
        "statistics.interval.ms": STATS_INTERVAL_MS,
        **({} if "client.id" in file else {"client.id": "kbt-run-0"}),
    }
    # the file, not the profile, is the source: an edited file runs as edited
    edited = producer_config(text + "linger.ms=7\n", "kbt-run-0", error_reports_only=True)
    assert edited["linger.ms"] == "7" and edited["delivery.report.only.error"] is True


def test_a_java_producer_that_read_the_file_otherwise_is_named() -> None:
    file = {"acks": "all", "linger.ms": "500", "enable.idempotence": "true", "sasl.jaas.config": "${env:X}"}
    reported = {
        "acks": "-1",
        "linger.ms": "500",
        "enable.idempotence": "true",
        "sasl.jaas.config": "[hidden]",
    }
    assert unlike(file, reported) == []  # the client's own spelling of acks all; secrets never compared
    assert unlike(file, {**reported, "linger.ms": "0"}) == ["linger.ms: file 500, client 0"]
    assert unlike({"acks": "1"}, {"acks": "-1"}) == ["acks: file 1, client -1"]


def test_a_value_the_client_stores_in_its_own_spelling_is_the_same_setting() -> None:
    assert same_value("acks", "all", "-1") and same_value("compression.codec", "LZ4", "lz4")
    assert same_value("enable.idempotence", "1", "true") and same_value("linger.ms", "5.0", "5")
    assert not same_value("batch.size", "010", "8")  # librdkafka reads 010 as octal: not the file's
    assert not same_value("client.id", "a", "b") and not same_value("enable.idempotence", "1", "false")


def test_librdkafka_check_takes_a_files_own_spellings_and_its_debug() -> None:
    """Checked against librdkafka's own reading (debug=conf): each line means what the client runs."""
    text = "linger.ms=5.0\ncompression.codec=LZ4\nenable.idempotence=1\ndebug=broker\nacks=all\n"
    assert check_librdkafka_file(text, "f")["enable.idempotence"] == "true"
    with pytest.raises(BadInput, match=r"batch\.size: file 001000, client 512"):
        check_librdkafka_file("batch.size=001000\n", "f")
