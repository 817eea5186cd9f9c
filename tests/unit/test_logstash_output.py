"""The Java recommendation rendered as Logstash `kafka` output options: the same batching as the
measured client (Logstash's own linger 0 / acks 1 never replace what the client ran with), options
only where the output has one, secrets never in clear."""

from __future__ import annotations

import os
import re

from hypothesis import assume, given, reject, settings
from hypothesis import strategies as st

from tuner.core.numbers import check_config_value, kafka_number_type
from tuner.core.redact import is_secret_name
from tuner.spec.clients import ClientProfile, kind_of
from tuner.spec.clients.java import JavaProfile
from tuner.spec.clients.librdkafka import LibrdkafkaProfile
from tuner.spec.clients.logstash_output import FILENAME, OPTIONS, STRING_OPTIONS


def _options(text: str) -> dict[str, str]:
    body = text.split("output {", 1)[1]
    return dict(re.findall(r"^\s+(\w+) => (.+)$", body, flags=re.MULTILINE))


def _logstash(profile: ClientProfile) -> str:
    (rendered,) = kind_of(profile).also_rendered(profile, ["recommended by kbt"])
    assert rendered.filename == FILENAME
    return rendered.text


def test_recommended_settings_become_output_options() -> None:
    profile = JavaProfile(
        name="j", linger_ms=900, batch_bytes=131_072, compression="zstd", compression_level=3
    )
    text = _logstash(profile)
    assert text.startswith("# recommended by kbt\n")
    assert _options(text) == {
        "acks": '"all"', "batch_size": "131072", "compression_type": '"zstd"', "linger_ms": "900",
        "retries": "2147483647",  # durability stated as the client ran it
    }  # fmt: skip
    # no output option sets a codec level: said, not silently dropped
    assert "# compression.zstd.level: no kafka output option" in text


def test_client_defaults_are_written_out_because_logstash_overrides_them() -> None:
    # The Java producer's own defaults (linger 5 ms, acks all) are not Logstash's (0, "1").
    options = _options(_logstash(JavaProfile(name="d")))
    assert options["linger_ms"] == "5" and options["acks"] == '"all"' and options["batch_size"] == "16384"


def test_round_robin_partitioner_uses_the_outputs_own_name() -> None:
    options = _options(_logstash(JavaProfile(name="r", partitioner="random")))
    assert options["partitioner"] == '"round_robin"'


def test_other_kinds_render_no_logstash_file() -> None:
    assert (
        kind_of(LibrdkafkaProfile(name="l", linger_ms=5)).also_rendered(LibrdkafkaProfile(name="l"), []) == ()
    )


@settings(max_examples=60, deadline=None)
@given(
    key=st.sampled_from(sorted(k for k in OPTIONS if not is_secret_name(k))),
    text=st.text(alphabet=st.characters(codec="ascii", exclude_categories=("Cc",)), min_size=1, max_size=20),
    number=st.integers(min_value=0, max_value=10**9),
    secret=st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=12, max_size=24),
)
def test_any_override_renders_one_option_and_no_secret(key: str, text: str, number: int, secret: str) -> None:
    # a quoted option takes any text; a numeric one only a number (the profile's grammar refuses others)
    value = text if OPTIONS[key] in STRING_OPTIONS else str(number)
    try:  # text a reader would take for a number must be a finite one ("inf" is refused, not rendered)
        check_config_value(key, value, kafka_number_type(key))
    except ValueError:
        reject()
    # A credential reaches a profile only as a ${VAR} reference; its value must never be rendered.
    assume(secret not in value)
    os.environ["KBT_TEST_LOGSTASH_JAAS"] = secret
    try:
        overrides = {key: value, "sasl.jaas.config": "${KBT_TEST_LOGSTASH_JAAS}"}
        rendered = _logstash(JavaProfile(name="o", overrides=overrides))
    finally:
        del os.environ["KBT_TEST_LOGSTASH_JAAS"]
    assert secret not in rendered and 'sasl_jaas_config => "${KBT_TEST_LOGSTASH_JAAS}"' in rendered
    body = rendered.split("output {", 1)[1]
    assert body.count(f" {OPTIONS[key]} => ") == 1
    # a string option's quotes and backslashes are escaped: the block stays one option per line
    assert body.count("\n") == len(_options(rendered)) + 4


def test_a_secure_profile_renders_the_outputs_security_options_with_references_only() -> None:
    """Item 3's check: a Java profile for a SASL_SSL cluster (secrets as ${VAR}, as the profile
    demands) renders Logstash's own security options; the planted values appear nowhere, and no
    header comment holds a reference Logstash would expand."""
    planted = {"KBT_TEST_LS_JAAS": "planted-jaas-4f9d2", "KBT_TEST_LS_TRUST": "planted-trust-8c1e7"}
    os.environ.update(planted)
    try:
        profile = JavaProfile(
            name="ls-secure",
            linger_ms=0,
            acks="1",
            overrides={
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": "SCRAM-SHA-512",
                "sasl.jaas.config": "${KBT_TEST_LS_JAAS}",
                "ssl.truststore.location": "/etc/kafka/truststore.jks",
                "ssl.truststore.password": "${KBT_TEST_LS_TRUST}",
            },
        )
        text = _logstash(profile)
    finally:
        for name in planted:
            del os.environ[name]
    options = _options(text)
    assert options["security_protocol"] == '"SASL_SSL"' and options["sasl_mechanism"] == '"SCRAM-SHA-512"'
    assert options["sasl_jaas_config"] == '"${KBT_TEST_LS_JAAS}"'
    assert options["ssl_truststore_password"] == '"${KBT_TEST_LS_TRUST}"'
    assert options["ssl_truststore_location"] == '"/etc/kafka/truststore.jks"'
    assert not any(value in text for value in planted.values())
    assert "${" not in "".join(line for line in text.splitlines() if line.startswith("#"))
