"""The redaction layer: secret-named properties and registered secret values never pass through."""

from __future__ import annotations

import pytest

from tuner.core.redact import REDACTED, is_secret_name, redact, register_secret, scrub


def test_secret_names_across_clients() -> None:
    for name in [
        "sasl.password",
        "ssl.key.password",
        "ssl.keystore.password",
        "sasl.jaas.config",
        "password",
        "output.kafka.password",
        "sasl.oauthbearer.client.secret",
        "api_key",
        "access-token",
    ]:
        assert is_secret_name(name), name
    for name in ["sasl.username", "linger.ms", "compression.type", "ssl.ca.location", "bootstrap.servers"]:
        assert not is_secret_name(name), name


def test_redact_masks_secret_values_but_keeps_references_and_structure() -> None:
    config = {
        "sasl.username": "kbt",
        "sasl.password": "hunter2-hunter2",
        "nested": {"ssl.key.password": "abc123", "linger.ms": 5},
        "password": "${KAFKA_PASSWORD}",
        "list": [{"token": "t0k3n-value"}],
    }
    out = redact(config)
    assert out == {
        "sasl.username": "kbt",
        "sasl.password": REDACTED,
        "nested": {"ssl.key.password": REDACTED, "linger.ms": 5},
        "password": "${KAFKA_PASSWORD}",
        "list": [{"token": REDACTED}],
    }
    assert config["sasl.password"] == "hunter2-hunter2"  # the input is not modified


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        # the collector's and the Java client's provider form: the variable's name is no secret
        ("${env:KAFKA_PASSWORD}", "${env:KAFKA_PASSWORD}"),
        ("${env:KBT_CLIENT_SECRET_sasl_password}", "${env:KBT_CLIENT_SECRET_sasl_password}"),
        # the collector's fallback is literal text: a secret written in the file
        ("${env:KAFKA_PASSWORD:-hunter2-otel}", "${env:KAFKA_PASSWORD:-[redacted]}"),
        ("${KAFKA_PASSWORD:hunter2-beat}", "${KAFKA_PASSWORD:[redacted]}"),
        ("${env:not a name}", "${env:[redacted]}"),
        ("hunter2-plain", REDACTED),
    ],
)
def test_a_provider_reference_keeps_its_variable_name(value: str, shown: str) -> None:
    """`${env:NAME}` showed as `${env:[redacted]}` (read as a variable `env` with a literal
    default): the name was hidden, and a rendered collector fragment no longer named its variable."""
    assert redact({"exporters": {"kafka": {"auth": {"sasl": {"password": value}}}}}) == {
        "exporters": {"kafka": {"auth": {"sasl": {"password": shown}}}}
    }
    assert "hunter2" not in str(redact({"sasl.password": value}))


def test_registered_values_are_scrubbed_from_any_text() -> None:
    secret = register_secret("s3cr3t-value-from-env")
    message = f"SASL authentication failed for password {secret} on 127.0.0.1:9093"
    assert secret not in scrub(message)
    assert REDACTED in scrub(message)
    assert redact({"error": message})["error"].count(REDACTED) == 1
    assert scrub("nothing to hide") == "nothing to hide"


def test_short_values_are_not_registered() -> None:
    register_secret("ab")
    assert scrub("a tab is a tab") == "a tab is a tab"


def test_error_messages_are_scrubbed() -> None:
    from tuner.core.errors import Unreachable

    secret = register_secret("pw-in-an-error-123")
    assert secret not in Unreachable(f"login failed with {secret}\nretrying").message


def test_url_passwords_are_scrubbed_and_the_rest_kept() -> None:
    text = "Prometheus at http://kbt:pa55-word@127.0.0.1:9090/api is unreachable; see https://h:1/x"
    assert scrub(text) == (
        f"Prometheus at http://kbt:{REDACTED}@127.0.0.1:9090/api is unreachable; see https://h:1/x"
    )
    assert scrub("http://user@host:1 and kbt:x@y") == "http://user@host:1 and kbt:x@y"  # no password


def test_a_quoted_provider_reference_registers_no_secret() -> None:
    """`password: "${env:KAFKA_PASSWORD}"` registered KAFKA_PASSWORD as a secret (read as the literal
    default of a variable `env`): the collector check's "given a placeholder: ${env:KAFKA_PASSWORD}"
    came out "${env:[redacted]}". A literal fallback is still a secret."""
    from tuner.core.redact import register_input_secrets

    register_input_secrets(
        'password: "${env:KBT_UNIT_NAMED_PW}"\n'
        'sasl.jaas.config: x required password="${env:KBT_UNIT_JAAS_PW}";\n'
        'token: "${env:KBT_UNIT_TOKEN:-fallback-t0ken}"\n'
    )
    text = scrub("given a placeholder: ${env:KBT_UNIT_NAMED_PW}, ${env:KBT_UNIT_JAAS_PW}; fallback-t0ken")
    assert text == "given a placeholder: ${env:KBT_UNIT_NAMED_PW}, ${env:KBT_UNIT_JAAS_PW}; [redacted]"
