"""Issue 41's surfaces held to the promise by generation, in-process (the CLI's side of the same
promise is tests/e2e/test_fuzz_inputs.py): request logs, truststores, command-config files and
collector fragments built hostile (secrets planted in every place the policy names, line breaks
and terminal controls, packed and binary data, huge values and counts, a MAC iteration count of
2^31-1) either read or refused with one BadInput line that holds no planted secret, within a time
bound.
"""

from __future__ import annotations

import datetime
import gzip
import json
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.pkcs12_stores import ca_truststore
from tuner.core.errors import BadInput, KbtError
from tuner.core.inputs import parse_yaml
from tuner.core.text import gate, one_line
from tuner.driver.otelcol.check import _literal_secret
from tuner.measure.request_log import check_request_logs, read_request_logs
from tuner.target.base import ClusterFlags
from tuner.target.file import flags_target
from tuner.target.truststore import MAX_PKCS12_ITERATIONS, mac_iterations, truststore_ca_file

pytestmark = pytest.mark.wall_clock  # asserts a wall-clock bound: CI runs it at normal priority

# One planted secret per surface: the scrubber's registry lives as long as the process, so a
# secret one test registered would be scrubbed in the next test's messages too.
SECRET = "hostile-S3cret-yaml"
LOG_SECRET = "hostile-S3cret-log"
STORE_SECRET = "hostile-S3cret-store"
PROPS_SECRET = "hostile-S3cret-props"
OTEL_SECRET = "hostile-S3cret-otel"
FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
T0 = 1_795_000_000.0


def _fresh() -> None:
    """Forget every registered secret: each example must register its own input's secrets (a
    secret another example registered would be scrubbed here too and hide a leak)."""
    from tuner.core import redact

    with redact._lock:
        redact._secrets.clear()


def _refused(exc: KbtError, secret: str) -> str:
    """The message as the CLI prints it, checked against the promise."""
    message = exc.message
    assert "\n" not in message and "\r" not in message, message
    assert secret not in message, message
    assert "\x1b" not in gate(message, tty=False) and "\x9b" not in gate(message, tty=False)
    return message


@pytest.fixture
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="kbt-hostile-") as d:
        yield Path(d)


# ---- one scrubber: secrets of the input, whichever message quotes them ---------------------------

SECRET_KEYS = st.sampled_from(
    ["sasl.password", "password", "ssl.key.password", "Authorization", "X-Api-Key", "client_secret",
     "prometheus.headers.Authorization", "output.kafka.password", "sasl.oauthbearer.client.secret"]
)  # fmt: skip
QUOTES = st.sampled_from(['"{}"', "'{}'", "{}", '"Bearer {}"', '"${{X:{}}}"'])


@FAST
@given(key=SECRET_KEYS, quote=QUOTES, first=st.sampled_from(['"${KBT_PW}"', "x", '"other-value-1"']))
def test_a_key_given_twice_never_prints_either_value(key: str, quote: str, first: str) -> None:
    _fresh()
    # the first entry is not the mapping's first key: the line is the key's, not the mapping's
    text = f"a:\n  other: 1\n  {key}: {first}\n  {key}: {quote.format(SECRET)}\n"
    with pytest.raises(BadInput) as caught:
        parse_yaml(text, "f.yaml")
    message = _refused(caught.value, SECRET)
    assert message.startswith("f.yaml:4: ") and "given twice (first given on line 3)" in message


# ---- request logs --------------------------------------------------------------------------------


def _line(at: float, api: object = 0, client: str = "c", extra: str = "") -> str:
    stamp = datetime.datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M:%S,000")
    request = {
        "requestHeader": {"requestApiKey": api, "clientId": client},
        "request": {
            "acks": -1,  # as Kafka logs every produce request: one without is unreadable
            "topicData": [{"name": "t", "partitionData": [{"index": 0, "recordsSizeInBytes": 100}]}],
        },
        "principal": "User:u",
    }
    body = json.dumps(request)
    if extra:
        body = body[:-1] + ", " + extra + "}"
    return f"[{stamp}] DEBUG Completed request:{body} (kafka.request.logger)\n"


API_KEYS = st.sampled_from([0, 1, False, True, None, "0", 0.0, -0, [0], {"k": 0}])
EXTRAS = st.sampled_from(
    ["", f'"password": "{LOG_SECRET}"', '"pad": [' + ",".join(["1"] * 200_000) + "]",
     '"deep": ' + "[" * 5000 + "]" * 5000, '"n": 1e999', '"n": NaN', '"s": "\\u001b[31m"']
)  # fmt: skip


@settings(FAST, max_examples=30)
@given(keys=st.lists(API_KEYS, min_size=1, max_size=6), extra=EXTRAS, copies=st.integers(1, 4))
def test_request_logs_count_integer_zero_only_and_stay_bounded(
    keys: list[object], extra: str, copies: int
) -> None:
    _fresh()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "broker.log"
        lines = [_line(T0 + 1 + i, api, extra=extra) for i, api in enumerate(keys)] * copies
        path.write_text(_line(T0 - 1, 1) + "".join(lines) + _line(T0 + 11, 1))
        started = time.monotonic()
        _, coverage = read_request_logs([path], T0, T0 + 10)
        assert time.monotonic() - started < 5.0
    produce = sum(1 for k in keys if type(k) is int and k == 0) * copies
    parsed = extra == "" or extra.startswith(('"password"', '"s"'))
    assert coverage[0]["produce_requests"] == (produce if parsed else 0)


def test_a_million_values_per_line_is_refused_before_it_is_built(scratch: Path) -> None:
    """Twenty 1 MB JSON arrays: each line's values are counted, none is parsed (parsing and walking
    one took 1.6 s)."""
    path = scratch / "broker.log"
    pad = '"pad": [' + ",".join(["1"] * 500_000) + "]"
    path.write_text("".join(_line(T0 + 1 + i, extra=pad) for i in range(20)))
    started = time.monotonic()
    _, coverage = read_request_logs([path], T0, T0 + 30)
    assert time.monotonic() - started < 3.0
    assert coverage[0]["produce_requests"] == 0 and coverage[0]["unreadable_lines"] == 20


@FAST
@given(kind=st.sampled_from(["gzip", "nul", "twice", "link", "fifo", "dir"]))
def test_request_logs_kbt_cannot_count_are_one_line(kind: str) -> None:
    _fresh()
    import os

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "broker.log"
        text = _line(T0 + 1, extra=f'"password": "{LOG_SECRET}"')
        paths = [path]
        if kind == "gzip":
            path.write_bytes(gzip.compress(text.encode()))
        elif kind == "nul":
            path.write_bytes(text.encode() + b"\x00" + text.encode())
        elif kind in ("twice", "link"):
            path.write_text(text)
            other = path if kind == "twice" else Path(d) / "other.log"
            if kind == "link":
                other.symlink_to(path)
            paths = [path, other]
        elif kind == "fifo":
            os.mkfifo(path)
        else:
            path.mkdir()
        with pytest.raises(BadInput) as caught:
            check_request_logs(paths)
        with pytest.raises(BadInput):
            read_request_logs(paths, T0, T0 + 10)
    _refused(caught.value, LOG_SECRET)


# ---- truststores ---------------------------------------------------------------------------------


def _der_length(n: int) -> bytes:
    if n < 0x80:
        return bytes([n])
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(raw)]) + raw


def _der(tag: int, body: bytes) -> bytes:
    return bytes([tag]) + _der_length(len(body)) + body


def _elements(data: bytes) -> list[bytes]:
    """The DER elements inside the SEQUENCE `data` (whole, tag and length included)."""
    from tuner.target.truststore import _der as read

    _, at, end = read(data, 0)
    out = []
    while at < end:
        _, _inner, after = read(data, at)
        out.append(data[at:after])
        at = after
    return out


def _with_mac_iterations(store: bytes, iterations: int) -> bytes:
    version, auth_safe, mac_data = _elements(store)
    digest, salt, *_ = _elements(mac_data)
    count = _der(0x02, iterations.to_bytes((iterations.bit_length() + 8) // 8, "big", signed=True))
    return _der(0x30, version + auth_safe + _der(0x30, digest + salt + count))


@pytest.fixture(scope="module")
def store() -> bytes:
    return ca_truststore(STORE_SECRET.encode(), "kbt hostile CA")


def test_the_mac_iteration_count_is_read_off_the_der(store: bytes) -> None:
    assert mac_iterations(store) is not None
    assert mac_iterations(_with_mac_iterations(store, 2**31 - 1)) == 2**31 - 1


@settings(FAST, max_examples=12)
@given(
    mutation=st.one_of(
        st.sampled_from([2**31 - 1, MAX_PKCS12_ITERATIONS + 1, 0, -5, 2**70]).map(lambda n: ("mac", n)),
        st.tuples(st.just("flip"), st.integers(0, 2000)),
        st.tuples(st.just("cut"), st.integers(0, 2000)),
        st.binary(max_size=64).map(lambda b: ("bytes", b)),
    ),
    password=st.sampled_from([STORE_SECRET, "wrong-password", None]),
)
def test_a_hostile_pkcs12_store_is_one_line_in_bounded_time(
    store: bytes, mutation: tuple[str, object], password: str | None
) -> None:
    """A 2^31-1 round store is refused before any derivation (in-process it ignored SIGTERM and
    SIGINT for minutes); anything else cryptography refuses, in its child, is one line."""
    _fresh()
    kind, arg = mutation
    if kind == "mac":
        data = _with_mac_iterations(store, int(arg))  # type: ignore[call-overload]
    elif kind == "flip":
        at = int(arg) % len(store)  # type: ignore[call-overload]
        data = store[:at] + bytes([store[at] ^ 0xFF]) + store[at + 1 :]
    elif kind == "cut":
        data = store[: int(arg) % len(store)]  # type: ignore[call-overload]
    else:
        data = bytes(arg)  # type: ignore[call-overload]
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "trust.p12"
        path.write_bytes(data)
        started = time.monotonic()
        try:
            pem = Path(truststore_ca_file(str(path), "PKCS12", password, "t"))
        except BadInput as exc:
            _refused(exc, STORE_SECRET)
        else:
            assert STORE_SECRET.encode() not in pem.read_bytes()
        assert time.monotonic() - started < 35.0
    if kind == "mac" and not 1 <= int(arg) <= MAX_PKCS12_ITERATIONS:  # type: ignore[call-overload]
        assert time.monotonic() - started < 2.0


# ---- command-config (Kafka's client properties, a secret allowed as written) ---------------------

PROPERTY_LINES = st.sampled_from(
    [
        f"sasl.password={PROPS_SECRET}",
        f"sasl.username=u\\\\\\\nsasl.password={PROPS_SECRET}",  # an odd run: Java joins the next line
        f"sasl.username=u\\\\\nsasl.password={PROPS_SECRET}",  # an even run: it does not
        f"sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required"
        f' username="u" password="{PROPS_SECRET}";',
        f"sasl.password:{PROPS_SECRET}\\\n   tail",
        f"ssl.truststore.password = {PROPS_SECRET}",
        f"sasl.password={PROPS_SECRET}\r\nsecurity.protocol=SASL_SSL\x1b[31m",
        f"ssl.key.password={PROPS_SECRET}\\",  # a continuation at the end of the file
        "security.protocol=\\u00",
        "bogus.key=1",
    ]
)


@settings(FAST, max_examples=40)
@given(lines=st.lists(PROPERTY_LINES, min_size=1, max_size=4), protocol=st.sampled_from(["SASL_SSL", "nope"]))
def test_command_config_never_prints_its_secret(lines: list[str], protocol: str) -> None:
    """The file may hold its secret as written (Kafka's tools allow it); whatever is wrong with
    it, the refusal names no secret, and the file is read as Java reads it (an odd run of
    backslashes joins the password's line to the one before: it never becomes a key)."""
    _fresh()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "client.properties"
        path.write_text(f"security.protocol={protocol}\nsasl.mechanism=PLAIN\n" + "\n".join(lines) + "\n")
        try:
            flags_target(ClusterFlags("127.0.0.1:9092", path, None))
        except KbtError as exc:
            _refused(exc, PROPS_SECRET)


# ---- collector fragments -------------------------------------------------------------------------

FRAGMENT_SECRETS = st.sampled_from(
    [
        ("exporters.kafka.auth.sasl.password", f'"{OTEL_SECRET}"', True),
        ("exporters.kafka.auth.sasl.password", '"${env:KPW}"', False),
        ("exporters.kafka.auth.sasl.password", '"${KPW}"', False),
        ("exporters.kafka.auth.tls.key_pem", f'"{OTEL_SECRET}"', True),
        ("exporters.kafka.client_id", f'"{OTEL_SECRET}"', False),
        ("exporters.kafka.auth.plain_text.password", "12345678", True),
    ]
)


@FAST
@given(entry=FRAGMENT_SECRETS, nest=st.booleans())
def test_a_literal_secret_in_a_collector_fragment_is_found(entry: tuple[str, str, bool], nest: bool) -> None:
    _fresh()
    dotted, value, literal = entry
    parts = dotted.split(".")
    text = (
        "".join(f"{'  ' * i}{p}:\n" for i, p in enumerate(parts[:-1]))
        + f"{'  ' * (len(parts) - 1)}{parts[-1]}: {value}\n"
    )
    if nest:
        text = "service:\n  pipelines: {}\n" + text
    found = _literal_secret(parse_yaml(text, "f.yaml"))
    assert (found == dotted) if literal else found is None


DUPLICATE_PASSWORD = (
    f"exporters:\n  kafka:\n    auth:\n      sasl:\n        password: x\n        password: {OTEL_SECRET}\n"
)
# nine anchors, each nine of the one before: 9^8 values once expanded
BOMB = "x0: &a0 [1,1,1,1,1,1,1,1,1]\n" + "".join(
    f"x{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9)
)


@FAST
@given(
    body=st.sampled_from(
        [
            DUPLICATE_PASSWORD,
            "a: " + "[" * 200 + "]" * 200 + "\n",
            BOMB,
            f'exporters:\n  kafka:\n    brokers: ["u:{OTEL_SECRET}@h:9092"]\n  kafka: {{}}\n',
            "\x00binary",
            "- exporters\n- service\n",  # no mapping: the collector's answer was its log line
            "hunter2\n",
        ]
    ),
    special=st.sampled_from(["", "fifo", "huge"]),
)
def test_a_hostile_collector_fragment_is_refused_before_the_collector_runs(body: str, special: str) -> None:
    _fresh()
    import os

    from tuner.driver.otelcol.check import MAX_FRAGMENT_BYTES, check_fragment

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "otelcol.yaml"
        if special == "fifo":
            os.mkfifo(path)
        elif special == "huge":
            with path.open("wb") as f:
                f.truncate(MAX_FRAGMENT_BYTES + 1)
        else:
            path.write_text(body)
        started = time.monotonic()
        with pytest.raises(BadInput) as caught:
            check_fragment(path)
        assert time.monotonic() - started < 5.0
    _refused(caught.value, OTEL_SECRET)


# ---- the one escaper ------------------------------------------------------------------------------


@FAST
@given(st.text(max_size=60) | st.binary(max_size=60).map(lambda b: b.decode("utf-8", "surrogateescape")))
def test_no_raw_control_or_undecodable_byte_reaches_the_terminal(text: str) -> None:
    """A path with a line break or an undecodable byte (U+DC9B would go out as a raw 8-bit CSI)."""
    _fresh()
    line = one_line(text)
    assert not any(c in line for c in "\n\r\x1b")
    for shown in (line, gate(text, tty=True), gate(text, tty=False)):
        assert not any(0x80 <= ord(c) <= 0x9F or 0xD800 <= ord(c) <= 0xDFFF for c in shown), repr(shown)


# ---- bounds of the input models ------------------------------------------------------------------


LONGEST_HOST = ".".join(["h" * 63] * 3 + ["h" * 61])  # 253 characters, labels of at most 63


@pytest.mark.parametrize(
    "servers",
    ["[:::::]:9092", "broker:9092\n", "h" * 254 + ":9092", "a." + "b" * 64 + ":9092", "broker:0",
     "broker:65536", "broker", "", "," * 3, ",".join(["b:9092"] * 101), "[::1:9092"],
)  # fmt: skip
def test_bootstrap_servers_out_of_bounds_are_one_line(servers: str) -> None:
    _fresh()
    with pytest.raises(BadInput) as caught:
        flags_target(ClusterFlags(servers, None, None))
    assert caught.value.message.startswith("--bootstrap-server: "), caught.value.message
    _refused(caught.value, SECRET)


@pytest.mark.parametrize(
    "servers", ["broker-0.kafka.svc:9092", "[::1]:9092", "10.0.0.1:9093,b:1", LONGEST_HOST + ":1"]
)
def test_bootstrap_servers_within_bounds_are_taken(servers: str) -> None:
    assert flags_target(ClusterFlags(servers, None, None)).bootstrap_servers == servers


def test_a_lab_log_that_is_not_a_file_is_one_line(scratch: Path) -> None:
    import os

    from tuner.lab.processes import tail

    fifo = scratch / "broker-1.log"
    os.mkfifo(fifo)
    zero = scratch / "controller.log"
    zero.symlink_to("/dev/zero")
    for path, kind in ((fifo, "a FIFO"), (zero, "a device")):
        started = time.monotonic()
        with pytest.raises(BadInput, match=f"is {kind}, not a lab log"):
            tail(path, 10)
        assert time.monotonic() - started < 2.0
    assert tail(scratch / "none.log", 10) == ""
