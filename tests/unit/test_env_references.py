"""One home for `${env:NAME}` (tuner/core/envref.py): each reader's form, as that reader takes it.

The collector's forms were checked against its own `validate` (0.165): `${NAME}` is an env reference
(its default scheme), `${NAME:-x}` an invalid uri it refuses, and a dotted name refused by its env
provider. The Java client's are Kafka's ConfigTransformer `${provider:[path:]key}`, anywhere in a
value; its EnvVarConfigProvider takes any key, dots included."""

from __future__ import annotations

import pytest

from tuner.core.envref import (
    collector_names,
    collector_reference,
    java_env_names,
    java_spelling,
    profile_spelling,
)
from tuner.driver.java_plan import UNRESOLVED, unset_references
from tuner.driver.otelcol import check as otelcol_check
from tuner.spec.otelcol_own import _resolved


@pytest.mark.parametrize(
    ("value", "name", "default"),
    [
        ("${env:KAFKA_TIMEOUT}", "KAFKA_TIMEOUT", None),
        (" ${env:KAFKA_TIMEOUT:-5s} ", "KAFKA_TIMEOUT", "5s"),
        ("${env:T:-}", "T", ""),
        ("${KAFKA_TIMEOUT}", "KAFKA_TIMEOUT", None),  # the collector's default scheme is env
    ],
)
def test_a_collector_reference_is_read_as_the_collector_reads_it(
    value: str, name: str, default: str | None
) -> None:
    ref = collector_reference(value)
    assert ref is not None and (ref.name, ref.default) == (name, default)


@pytest.mark.parametrize("value", ["${KAFKA_TIMEOUT:-5s}", "${env:A.B}", "x ${env:A}", "${env:1A}", "5s"])
def test_what_the_collector_does_not_read_as_a_variable_is_no_reference(value: str) -> None:
    assert collector_reference(value) is None


def test_a_collectors_text_names_each_variable_and_its_fallback() -> None:
    text = "a: ${env:A}\nb: ${env:B:-1s}\nc: ${C}\nd: ${D:-x}\ne: ${env:E.F}\n"
    assert collector_names(text) == [("A", False), ("B", True), ("C", False)]


def test_a_team_collectors_unread_default_form_is_left_to_the_collector() -> None:
    """`${NAME:-x}` was read as the variable NAME with a default; the collector refuses the file
    (invalid uri), so kbt does not stand in a value the collector never reads."""
    assert _resolved("${KBT_T:-5s}", "at", {}) == "${KBT_T:-5s}"
    assert _resolved("${env:KBT_T:-5s}", "at", {}) == "5s"
    assert _resolved("${KBT_T}", "at", {"KBT_T": "7s"}) == "7s"


def test_a_secrets_bare_reference_gets_the_placeholder_not_this_environments_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`password: ${KBT_PW}` is the collector's env reference too: it got this environment's value
    (a complaint could quote it); now the placeholder, as `${env:KBT_PW}` always did."""
    monkeypatch.setenv("KBT_PW", "hunter2-real")
    monkeypatch.delenv("KBT_TIMEOUT", raising=False)
    data = {
        "exporters": {
            "kafka": {"auth": {"plain_text": {"password": "${KBT_PW}"}}, "timeout": "${KBT_TIMEOUT}"}
        }
    }
    text = "password: ${KBT_PW}\ntimeout: ${KBT_TIMEOUT}\n"
    assert otelcol_check._substitutions(data, text) == {
        "KBT_PW": otelcol_check.PLACEHOLDER,
        "KBT_TIMEOUT": otelcol_check.PLACEHOLDER,
    }


def test_a_java_value_names_its_variables_dots_and_all() -> None:
    jaas = 'PlainLoginModule required username="${env:KAFKA_USER}" password="${env:kafka.pw}";'
    assert java_env_names(jaas) == ["KAFKA_USER", "kafka.pw"]
    assert java_env_names("${file:/etc/s.properties:pw} ${env:A-B}") == ["A-B"]


def test_the_profile_and_the_java_file_spell_one_reference() -> None:
    assert java_spelling("${KAFKA.PW}") == "${env:KAFKA.PW}"
    assert profile_spelling("${env:KAFKA.PW}") == "${KAFKA.PW}"
    assert profile_spelling("${env:A-B}") == "${env:A-B}"  # no profile reference: kept as written


def test_an_unset_java_reference_is_named_never_its_value() -> None:
    props = {
        "sasl.jaas.config": 'x username="${env:KBT_U}" password="${env:KBT_PW.X}";',
        "ssl.key.password": "${env:KBT_KEY}",
        "linger.ms": "5",
    }
    reported = {"sasl.jaas.config": UNRESOLVED, "ssl.key.password": UNRESOLVED, "linger.ms": "5"}
    said = unset_references(props, reported, {"KBT_U": "app", "KBT_KEY": "s3cret-value"})
    assert said == {
        "sasl.jaas.config": "${env:KBT_PW.X} is not set here",
        "ssl.key.password": "${env:KBT_KEY} not resolved (config.providers names no env provider?)",
    }
    assert "s3cret" not in str(said)
    both = unset_references(props, reported, {})
    assert both["sasl.jaas.config"] == "${env:KBT_U} and ${env:KBT_PW.X} are not set here"
