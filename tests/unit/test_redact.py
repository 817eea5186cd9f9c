"""The redaction layer: secret-named properties and registered secret values never pass through."""

from __future__ import annotations

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
