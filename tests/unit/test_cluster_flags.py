"""Kafka-tool flags (--bootstrap-server, --command-config, --prometheus): the target they build is
the one a target file holding the same three gives; Kafka's properties format read back as written
(hypothesis); a secret written in the operator's own properties file is held in the environment and
never shown; bad combinations are one line."""

from __future__ import annotations

import os
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tuner.cli.cluster_flags import target_source
from tuner.core.envref import is_reference
from tuner.core.errors import BadInput
from tuner.core.properties import parse_properties, properties_line
from tuner.core.redact import redact, scrub
from tuner.target.base import ClusterFlags
from tuner.target.registry import resolve_target
from tuner.target.security import (
    SECRET_ENV_PREFIX,
    hold_literal_secrets,
    librdkafka_config,
    resolve,
)

CONFIG = """\
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\
    username="svc" password="{password}";
ssl.truststore.type=PEM
ssl.truststore.location=ca.pem
"""


def test_flags_build_the_target_a_target_file_would(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KBT_UNIT_FLAGS_PASSWORD", "not-used-here")
    (tmp_path / "client.properties").write_text(CONFIG.format(password="${KBT_UNIT_FLAGS_PASSWORD}"))
    (tmp_path / "target.yaml").write_text(
        "name: kafka-0.example:9093\n"
        "bootstrap_servers: kafka-0.example:9093,kafka-1.example:9093\n"
        "client: {properties_file: client.properties}\n"
        "prometheus: {url: 'https://prom.example/api?tenant=a'}\n"
    )
    monkeypatch.chdir(tmp_path)
    from_file = resolve_target(None, tmp_path / "target.yaml")
    flags = ClusterFlags(
        "kafka-0.example:9093,kafka-1.example:9093",
        Path("client.properties"),
        "https://prom.example/api?tenant=a",
    )
    assert resolve_target(None, flags) == from_file
    assert from_file.client_properties["ssl.truststore.location"] == str(tmp_path / "ca.pem")


def test_a_written_password_is_held_and_never_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "w0rd-in-the-file-3f9a"
    (tmp_path / "c.properties").write_text(
        CONFIG.format(password=secret) + "ssl.key.password=ks-" + secret + "\n"
    )
    for name in [n for n in os.environ if n.startswith(SECRET_ENV_PREFIX)]:
        monkeypatch.delenv(name)
    target = resolve_target(None, ClusterFlags("127.0.0.1:9093", tmp_path / "c.properties"))
    shown = repr(target) + repr(redact(dict(target.client_properties)))
    assert secret not in shown
    sec = resolve(target.client_properties, "t")
    assert sec.username == "svc" and sec.password == secret and sec.key_password == "ks-" + secret
    assert scrub(f"librdkafka said {librdkafka_config(sec)}").count(secret) == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("t.yaml", "h:9092", None, None), "--target names the cluster already"),
        (("t.yaml", None, None, "http://p:9090"), "--target names the cluster already"),
        ((None, None, "c.properties", None), "--command-config needs --bootstrap-server"),
        ((None, None, None, "http://p:9090"), "--prometheus needs --bootstrap-server"),
        ((None, "no-port", None, None), "--bootstrap-server: 'no-port' is not host:port"),
        ((None, "h:9092", None, "ftp://p"), "--prometheus: 'ftp://p' is not an http(s) URL"),
        ((None, "h:9092", "missing.properties", None), "missing.properties: no such client properties file"),
    ],
)
def test_bad_combinations_are_one_line(tmp_path: Path, args: tuple, message: str) -> None:
    file, bootstrap, config, prom = args
    with pytest.raises(BadInput) as err:
        target_source(Path(file) if file else None, bootstrap, tmp_path / config if config else None, prom)
    assert message in err.value.message and "\n" not in err.value.message


def test_lab_dir_and_flags_conflict() -> None:
    with pytest.raises(BadInput, match="--lab-dir"):
        target_source(None, "127.0.0.1:9092", None, None, lab_dir=Path("lab"))


def test_a_bare_prometheus_stays_where_a_command_reads_one() -> None:
    assert target_source(None, None, None, "http://p:9090", prometheus_alone=True) is None


# Kafka's properties format: keys without separators, values on one logical line.
_KEY = st.text(string.ascii_letters + string.digits + "._-", min_size=1, max_size=30)
# (A value starting with '=' or ':' after a blank separator is Java's "key = value" form.)
_VALUE = (
    st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp")), max_size=40)
    .map(str.strip)
    .filter(lambda v: not v.endswith("\\") and not v.startswith(("=", ":")))
)


@given(st.dictionaries(_KEY, _VALUE, max_size=8), st.sampled_from(["=", ": ", " = ", " "]))
def test_properties_read_back_as_written(props: dict[str, str], sep: str) -> None:
    # written as java.util.Properties wants them: a backslash doubled (a value read as Java reads it)
    text = "# a comment\n\n" + "".join(
        f"{k}{sep}{v.replace(chr(92), chr(92) * 2)}\n" for k, v in props.items()
    )
    assert parse_properties(text, "t") == props


@given(st.dictionaries(_KEY, _VALUE, max_size=4), st.integers(1, 20))
def test_continuation_lines_join(props: dict[str, str], cut: int) -> None:
    # a backslash is an escape (Java's reading), covered by the test above
    assume(not any("\\" in v for v in props.values()))
    text = "".join(
        f"{k}={v[:cut]}\\\n    {v[cut:]}\n" if len(v) > cut else f"{k}={v}\n" for k, v in props.items()
    )
    assert parse_properties(text, "t") == {k: v[:cut] + v[cut:].lstrip() for k, v in props.items()}


def test_escapes_read_as_java_reads_them() -> None:
    text = "a=C:\\\\certs\\\\ca.pem\nb=\\ lead\nc=tab\\there\nd=\\u00e9t\\u00e9\ne=x\\=y\\:z\nf=trail \\ \n"
    assert parse_properties(text, "t") == {
        "a": "C:\\certs\\ca.pem", "b": " lead", "c": "tab\there", "d": "\u00e9t\u00e9", "e": "x=y:z",
        "f": "trail  ",
    }  # fmt: skip


@given(st.text(max_size=300))
def test_any_text_is_properties_or_one_line(text: str) -> None:
    try:
        props = parse_properties(text, "--command-config c")
    except BadInput as exc:
        assert exc.message.startswith("--command-config c: line ") and "\n" not in exc.message
    else:
        assert all(props)  # a key is never empty (its separators may be escaped into it)


@given(
    st.dictionaries(
        st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=20),
        st.text(st.characters(exclude_categories=("Cs",)), max_size=40),
        max_size=8,
    )
)
def test_what_the_writer_writes_reads_back_as_given(props: dict[str, str]) -> None:
    """Any key and value, blanks, separators, line breaks, comment marks and emoji included, as
    ASCII lines (Kafka's tools read the file as ISO-8859-1)."""
    text = "".join(properties_line(k, v) + "\n" for k, v in props.items())
    assert text.isascii() and text.count("\n") == len(props)
    assert parse_properties(text, "t") == props


@given(
    st.lists(st.sampled_from(["# c", "! c", "", "   ", "a=1", "b=2\\\n  3", "c=\\\n\\\n4"]), max_size=8),
    st.sampled_from(["\n", "\r\n", "\r"]),
)
def test_a_bad_line_is_named_by_its_line_in_the_file(before: list[str], end: str) -> None:
    """Comments, blank lines and continuations before it count: the editor's line number."""
    text = "\n".join([*before, "=oops"]).replace("\n", end)
    with pytest.raises(BadInput) as caught:
        parse_properties(text, "p")
    assert caught.value.message == f"p: line {text.count(end) + 1} is not key=value"


@pytest.mark.parametrize("value", ["C:\\users\\k.jks", "\\u00zz", "x\\u12", "\\u"])
def test_a_u_escape_java_refuses_is_refused(value: str) -> None:
    """Java's Properties.load throws on a \\u without four hex digits (a Windows path's \\users)."""
    with pytest.raises(BadInput) as caught:
        parse_properties(f"acks=all\nk={value}\n", "p")
    assert caught.value.message.startswith("p: line 2 has a \\u escape without four hex digits")


def test_a_byte_order_mark_is_refused_not_dropped(tmp_path: Path) -> None:
    """Java reads the mark into the first key, which its client then ignores: kbt would run it."""
    from tuner.core.properties import read_properties

    path = tmp_path / "p.properties"
    path.write_bytes(b"linger.ms=5\n")
    assert read_properties(path) == "linger.ms=5\n"
    path.write_bytes(b"\xef\xbb\xbflinger.ms=5\n")
    with pytest.raises(BadInput, match="starts with a byte-order mark"):
        read_properties(path)


def test_escaped_separators_in_keys_read_as_java_reads_them() -> None:
    """Checked with java.util.Properties.load (Java 17)."""
    text = "a\\ b=1\nc\\:d=2\ni\\=j=5\nk=caf\\u00e9 \\ud83d\\ude00\n"
    assert parse_properties(text, "t") == {"a b": "1", "c:d": "2", "i=j": "5", "k": "caf\u00e9 \U0001f600"}


# Registered secrets are scrubbed from every later message of the process: these cannot occur in one.
_SECRET = st.text(string.ascii_letters + string.digits + "!#%&*+-/@^_~", min_size=4, max_size=30).map(
    lambda t: "kbt-unit-secret-" + t
)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_SECRET, _SECRET, st.sampled_from(['"', "'", ""]))
def test_held_secrets_resolve_back(
    monkeypatch: pytest.MonkeyPatch, jaas: str, plain: str, quote: str
) -> None:
    """Each JAAS quoting Kafka's JaasConfig accepts ("double", 'single', bare; checked on 4.1.1)."""
    props = {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "PLAIN",
        "sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required"
        f" username={quote}u{quote} password={quote}{jaas}{quote};",
        "ssl.key.password": plain,
    }
    held = hold_literal_secrets(props)
    try:
        assert is_reference(held["ssl.key.password"])
        assert held["sasl.jaas.config"].endswith(
            'password="${KBT_COMMAND_CONFIG_SASL_JAAS_CONFIG_PASSWORD}";'
        )
        sec = resolve(held, "t")
        assert sec.password == jaas and sec.key_password == plain and sec.username == "u"
    finally:
        for name in [n for n in os.environ if n.startswith(SECRET_ENV_PREFIX)]:
            monkeypatch.delenv(name)
