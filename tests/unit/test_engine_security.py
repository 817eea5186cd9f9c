"""A connection's security for the Java producer and Filebeat (tuner/target/engine_security.py): the
clients' own keys, every secret a reference the client resolves, the value in the child's
environment alone (no processes: what the engines write and the environment they start with)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.test_filebeat_real_parts import _config, _yml
from tuner.core.envref import ENV_CONFIG_PROVIDER
from tuner.core.errors import BadInput
from tuner.core.properties import parse_properties
from tuner.core.redact import scrub
from tuner.driver.engines import ENGINES
from tuner.driver.otelcol.pod_config import base_config
from tuner.spec.engine_id import EngineId
from tuner.target.engine_security import (
    AUTOMATIC_PROVIDERS_PROPERTY,
    SecretEnv,
    filebeat_security,
    java_security,
    java_system_properties,
    librdkafka_security,
    otelcol_security,
    split_security,
)
from tuner.target.security import ClientSecurity, librdkafka_config, resolve

# Printable passwords with a marker no key or reference holds, so "not in the output" can fail.
passwords = st.text(
    st.characters(min_codepoint=0x21, max_codepoint=0x7E, blacklist_characters="$"), min_size=4, max_size=40
).map(lambda t: f"Pw{t}")


def _lab_like(password: str, mechanism: str = "SCRAM-SHA-512") -> dict[str, str]:
    """What every engine is handed: the connection in librdkafka terms, the password resolved."""
    return {
        "security.protocol": "SASL_SSL",
        "sasl.mechanisms": mechanism,
        "sasl.username": "svc-kbt",
        "sasl.password": password,
        "ssl.ca.location": "/etc/kbt/ca.pem",
        "ssl.endpoint.identification.algorithm": "https",
    }


def _jaas_unquoted(text: str) -> str:
    """What Kafka's JAAS parser reads between double quotes (its tokenizer's \\ escapes)."""
    return re.sub(r"\\(.)", r"\1", text)


@given(password=passwords, mechanism=st.sampled_from(["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]))
def test_java_holds_the_password_as_an_env_provider_reference(password: str, mechanism: str) -> None:
    sec, rest = split_security({**_lab_like(password, mechanism), "linger.ms": "5"})
    env = SecretEnv()
    props = java_security(sec, rest, env)
    assert password not in json.dumps(props)
    name = "KBT_CLIENT_SECRET_SASL_PASSWORD"
    assert f'password="${{env:{name}}}";' in props["sasl.jaas.config"]
    module = "plain.PlainLoginModule" if mechanism == "PLAIN" else "scram.ScramLoginModule"
    assert f"org.apache.kafka.common.security.{module} required" in props["sasl.jaas.config"]
    # The provider substitutes the variable's text into the quotes: it reads back as the password.
    assert _jaas_unquoted(env.values[name]) == password
    assert set(env.values) == {name}
    assert props["config.providers"] == "env"
    assert props["config.providers.env.class"] == ENV_CONFIG_PROVIDER
    assert re.fullmatch(props["config.providers.env.param.allowlist.pattern"], name)
    assert not re.fullmatch(props["config.providers.env.param.allowlist.pattern"], "HOME")
    assert props["ssl.truststore.type"] == "PEM" and props["ssl.truststore.location"] == "/etc/kbt/ca.pem"
    assert props["linger.ms"] == "5" and props["sasl.mechanism"] == mechanism
    assert java_system_properties(props) == [f"-D{AUTOMATIC_PROVIDERS_PROPERTY}={ENV_CONFIG_PROVIDER}"]
    assert scrub(env.values[name]) != env.values[name]  # registered for redaction


@given(password=passwords)
def test_filebeat_holds_the_password_as_an_env_reference(password: str) -> None:
    sec, _ = split_security(_lab_like(password))
    env = SecretEnv()
    output = filebeat_security(sec, env)
    doc = _yml(_config(), output_security=output)
    assert password not in json.dumps(doc)
    kafka = doc["output.kafka"]
    assert kafka["password"] == "${KBT_CLIENT_SECRET_SASL_PASSWORD}"
    # Quoted: Filebeat would read "a,b" as a list and "{...}" as an object; the quotes make it a string.
    assert set(env.values) == {"KBT_CLIENT_SECRET_SASL_PASSWORD"}
    assert json.loads(env.values["KBT_CLIENT_SECRET_SASL_PASSWORD"]) == password
    assert kafka["username"] == "svc-kbt" and kafka["sasl.mechanism"] == "SCRAM-SHA-512"
    assert kafka["ssl"] == {
        "enabled": True,
        "certificate_authorities": ["/etc/kbt/ca.pem"],
        "verification_mode": "full",
    }
    assert "hosts" not in kafka and "topic" not in kafka  # the rendered file's, from the environment


@given(password=passwords, mechanism=st.sampled_from(["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]))
def test_the_collector_holds_the_password_as_an_env_provider_reference(password: str, mechanism: str) -> None:
    sec, _ = split_security(_lab_like(password, mechanism))
    env = SecretEnv()
    exporter = otelcol_security(sec, env)
    doc = base_config(log_file=Path("/p/pod.log"), metrics_port=1, workdir=Path("/p"), client=exporter)
    assert password not in json.dumps(doc)
    kafka = doc["exporters"]["kafka"]
    assert kafka["auth"] == {
        "sasl": {
            "username": "svc-kbt",
            "password": "${env:KBT_CLIENT_SECRET_SASL_PASSWORD}",
            "mechanism": mechanism,
        }
    }
    assert kafka["tls"] == {"insecure": False, "ca_file": "/etc/kbt/ca.pem"}
    # the collector keeps a string field's variable text as it is: the value is the password itself
    assert env.values == {"KBT_CLIENT_SECRET_SASL_PASSWORD": password}
    assert scrub(password) != password  # registered for redaction
    assert otelcol_security(None, SecretEnv()) == {}


@pytest.mark.parametrize(
    ("sec", "words"),
    [
        (ClientSecurity("SSL", keystore=("/k.p12", "PKCS12", "x")), "PEM files only"),
        (ClientSecurity("SSL", ca_file="/ca.pem", key_password="k"), "unencrypted PEM"),
        (ClientSecurity("SSL", ca_file="/ca.pem", verify_hostname=False), "host name"),
        (ClientSecurity("SASL_SSL", mechanism="GSSAPI", username="u", password="p"), "PLAIN or SCRAM"),
    ],
)
def test_what_the_collector_cannot_take_is_one_clear_refusal(sec: ClientSecurity, words: str) -> None:
    with pytest.raises(BadInput, match=words):
        otelcol_security(sec, SecretEnv())


def test_a_target_file_reaches_every_engine_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """A target file's properties (Kafka's format, ${VAR} password) -> librdkafka -> read back for
    Java and Filebeat: the same login, trust and host name check."""
    monkeypatch.setenv("KBT_TEST_ENGINE_PW", "s3cret-engine-pw")
    props = parse_properties(
        "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-256\n"
        'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="u"'
        ' password="${KBT_TEST_ENGINE_PW}";\nssl.truststore.type=PEM\nssl.truststore.location=/ca.pem\n'
        "ssl.endpoint.identification.algorithm=\n",
        "target",
    )
    rd = librdkafka_config(resolve(props, "target"))
    sec, rest = split_security(rd)
    assert rest == {} and librdkafka_security(rd) == rd
    assert sec is not None
    assert (sec.protocol, sec.mechanism, sec.username, sec.password) == (
        "SASL_SSL",
        "SCRAM-SHA-256",
        "u",
        "s3cret-engine-pw",
    )
    assert sec.ca_file == "/ca.pem" and not sec.verify_hostname
    java = java_security(sec, {}, SecretEnv())
    assert java["ssl.endpoint.identification.algorithm"] == ""
    assert filebeat_security(sec, SecretEnv())["ssl"]["verification_mode"] == "certificate"


def test_secret_named_overrides_go_through_the_environment_too() -> None:
    env = SecretEnv()
    props = java_security(None, {"ssl.key.password": "override-pw-77", "acks": "all"}, env)
    assert props["ssl.key.password"] == "${env:KBT_CLIENT_SECRET_SSL_KEY_PASSWORD}"
    assert env.values == {"KBT_CLIENT_SECRET_SSL_KEY_PASSWORD": "override-pw-77"}
    assert props["acks"] == "all" and "security.protocol" not in props
    plain = java_security(None, {"acks": "all"}, SecretEnv())
    assert plain == {"acks": "all"} and java_system_properties(plain) == []
    assert filebeat_security(None, SecretEnv()) == {}
    assert split_security({"acks": "all"}) == (None, {"acks": "all"})


@pytest.mark.parametrize(
    ("sec", "engine", "words"),
    [
        (ClientSecurity("SSL", certificate_file="/c.pem", key_file="/k.pem"), "java", "keystore"),
        (ClientSecurity("SSL", keystore=("/k.p12", "PKCS12", "x")), "filebeat", "PEM files"),
    ],
)
def test_what_a_client_cannot_read_is_one_clear_refusal(sec: ClientSecurity, engine: str, words: str) -> None:
    with pytest.raises(BadInput, match=words):
        if engine == "java":
            java_security(sec, {}, SecretEnv())
        else:
            filebeat_security(sec, SecretEnv())


def test_client_stores_keep_their_passwords_out_of_the_java_properties() -> None:
    sec = ClientSecurity(
        "SSL",
        truststore=("/t.jks", "JKS", "trust-pw-1"),
        keystore=("/k.p12", "PKCS12", "store-pw-2"),
        key_password="key-pw-3",
    )
    env = SecretEnv()
    props = java_security(sec, {}, env)
    assert not {"trust-pw-1", "store-pw-2", "key-pw-3"} & set(props.values())
    assert set(env.values.values()) == {"trust-pw-1", "store-pw-2", "key-pw-3"}
    assert props["ssl.truststore.type"] == "JKS" and props["ssl.keystore.type"] == "PKCS12"


def test_bad_security_values_are_refused_in_one_line() -> None:
    with pytest.raises(BadInput, match=r"security\.protocol"):
        split_security({"security.protocol": "SASL_TLS"})
    with pytest.raises(BadInput, match=r"sasl\.mechanism"):
        split_security({"security.protocol": "SASL_SSL", "sasl.mechanisms": "GSSAPI"})


def test_the_engines_take_secure_targets() -> None:
    secure = {engine_id for engine_id, engine in ENGINES.items() if engine.capabilities.secure}
    assert secure >= {EngineId.LIBRDKAFKA, EngineId.JAVA, EngineId.FILEBEAT, EngineId.OTELCOL}


def test_the_sarama_emulation_refuses_a_secure_connection(tmp_path: Path) -> None:
    """Filebeat takes a secure target through real Filebeat only: the emulation says so in one line
    before it starts anything."""
    from tuner.driver.engine import Placement
    from tuner.driver.engines import drive
    from tuner.spec.loader import load_sweep

    workload: dict[str, Any] = {"name": "w", "topics": [{"name": "t", "partitions": 1}]}
    workload.update(rate_per_producer=1, duration_s=5, message={"kind": "generated", "bytes": 100})
    profile: dict[str, Any] = {"name": "fb-emulated", "client": "filebeat", "security": "sasl_ssl"}
    profile["filebeat"] = {"input.engine": "emulated"}
    spec = tmp_path / "s.yaml"  # JSON is YAML
    spec.write_text(json.dumps({"name": "s", "workload": workload, "profiles": [profile]}))
    plan = load_sweep(spec).runs[0]
    with pytest.raises(BadInput, match="profile fb-emulated: a secure connection needs real Filebeat"):
        drive(plan, Placement("r", ("t",), "127.0.0.1:1", security=_lab_like("Pw-emulated")))


@given(
    password=passwords,
    username=st.text(
        st.characters(min_codepoint=0x21, max_codepoint=0x7E, blacklist_characters="$"), max_size=20
    ).map(lambda t: f"u{t}"),
)
def test_a_jaas_line_reads_quotes_and_backslashes_whole(password: str, username: str) -> None:
    """A target file's `sasl.jaas.config`: a `${VAR}` password holding `"` or `\\` is read whole
    (it was cut at its first quote), and a literal username written with JAAS escapes reads as the
    text it stands for."""
    import os

    escaped = username.replace("\\", "\\\\").replace('"', '\\"')
    module = "org.apache.kafka.common.security.plain.PlainLoginModule"
    line = f'{module} required username="{escaped}" password="${{KBT_T_PW}}";'
    props = {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.jaas.config": line}
    os.environ["KBT_T_PW"] = password
    try:
        sec = resolve(props, "target.yaml")
    finally:
        del os.environ["KBT_T_PW"]
    assert (sec.username, sec.password) == (username, password)
