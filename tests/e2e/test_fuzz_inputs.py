"""Property-based fuzzing of every input surface, through the real CLI (kbt as a subprocess).

Each surface gets a few dozen generated inputs built from a good one with hostile values planted
in it (NaN, infinities, huge and non-ASCII numbers, deep nesting, aliases, control characters, long
strings, wrong types, secrets in every form the policy names). For each run:

- the exit code is one docs/errors.md documents;
- stderr is at most one line and never a traceback;
- the run ends within TIME_CAP_S and within MEMORY_CAP of address space;
- the planted secret appears in no output and in no file kbt wrote.

Prometheus answers come from a fake HTTP server on 127.0.0.1. The whole module stays within a few
minutes: EXAMPLES per surface, each a ~1 s subprocess.
"""

from __future__ import annotations

import http.server
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.e2e.bad_inputs import GOOD_ENGINE_STRESS, GOOD_FILEBEAT, GOOD_SPEC, GOOD_STRESS, endpoint
from tests.unit.mutations import field_changed
from tests.unit.pkcs12_stores import ca_truststore
from tuner.core.errors import ExitStatus

pytestmark = pytest.mark.e2e

SECRET = "pl4nted-S3cret-value"
EXAMPLES = 6
TIME_CAP_S = 45.0
MEMORY_CAP = 3 << 30  # address space of one kbt run
DOCUMENTED = {int(s) for s in ExitStatus}
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# ---- hostile values --------------------------------------------------------------------------

NUMBERS = st.sampled_from(
    [".nan", ".inf", "-.inf", "1e308", "-1e308", "1e26", "-1", "0", "9" * 40, "1e-320", "0x10", "1_000"]
)
WEIRD_TEXT = st.sampled_from(
    [
        '"nan"', '"inf"', '"\u0661\u0662"', '"1e35h"', '"99999999999h"', '"\\e[31mred\\e[0m"',
        '"' + "x" * 5000 + '"', '"line\\nbreak"', '"\\u202eevil"', "[]", "{}", "[[[[[[]]]]]]", "null",
        "true", "~", '"${X:' + SECRET + '}"', '"http://u:' + SECRET + '@h:1/?token=' + SECRET + '"',
    ]
)  # fmt: skip
SECRET_ENTRIES = st.sampled_from(
    [
        f'"sasl.password": "{SECRET}"',
        f'"ssl.key.pem": "-----BEGIN PRIVATE KEY-----\\n{SECRET}\\n-----END PRIVATE KEY-----"',
        f'"sasl.oauthbearer.config": "principal=x secret={SECRET}"',
        f'"basic.auth.user.info": "user:{SECRET}"',
        f'"sasl.jaas.config": "org.x.PlainLoginModule required username=a password=\\"{SECRET}\\";"',
        f'" ssl.keystore.password ": "{SECRET}"',
        f'"SSL.KEY.PASSWORD": "{SECRET}"',
        f'"sasl.password": "${{KAFKA_PW:{SECRET}}}"',
        f'"client.id": "http://kbt:{SECRET}@host:1/x"',
        f'"client.id": "token={SECRET}"',
    ]
)
DEEP = st.integers(min_value=40, max_value=600).map(lambda n: "[" * n + "]" * n)
# Digits of other scripts (Arabic-Indic, Devanagari, fullwidth, Bengali): isdigit() and float()
# read them, the number grammar does not.
UNICODE_DIGITS = st.text(
    alphabet="\u0660\u0661\u0669\u0966\u096f\uff10\uff19\u09e6.", min_size=1, max_size=12
).map(lambda t: f'"{t}"')
# Strings that made backtracking patterns run for minutes (Go durations, the scrubber's user info
# and query patterns), bounded in size so each case stays cheap.
REGEX_HOSTILE = st.sampled_from(["11s", "1.1ms", "a:", "?a=b&", "password=", "x://", ":@"]).flatmap(
    lambda unit: st.integers(min_value=20, max_value=400).map(lambda n: '"' + unit * n + 'x"')
)
VALUE = st.one_of(NUMBERS, WEIRD_TEXT, DEEP, UNICODE_DIGITS, REGEX_HOSTILE)


def _mutate(good: str, data: st.DataObject) -> str:
    """`good` with one scalar after a `key: ` replaced by a hostile value, maybe a secret override
    in the first profile, maybe an alias bomb or deep nesting appended."""
    lines = good.splitlines()
    candidates = [i for i, line in enumerate(lines) if ": " in line and not line.rstrip().endswith(":")]
    i = data.draw(st.sampled_from(candidates))
    key = lines[i].split(": ", 1)[0]
    lines[i] = f"{key}: {data.draw(VALUE)}"
    text = "\n".join(lines) + "\n"
    if data.draw(st.booleans()):
        secret = data.draw(SECRET_ENTRIES)
        text = text.replace("linger_ms: 50", f"linger_ms: 50, overrides: {{{secret}}}", 1)
    extra = data.draw(st.sampled_from(["", "bomb", "deep", "dup"]))
    if extra == "bomb":
        text += (
            "x-a: &a [1,1,1,1,1,1,1,1]\nx-b: &b [*a,*a,*a,*a,*a,*a,*a,*a]\nx-c: [*b,*b,*b,*b,*b,*b,*b,*b]\n"
        )
    elif extra == "deep":
        text += "x-deep: " + "[" * 300 + "]" * 300 + "\n"
    elif extra == "dup":
        text += text.splitlines()[0] + "\n"
    return text


# ---- running kbt -----------------------------------------------------------------------------


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_kbt(
    args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run kbt and check the properties every run must have."""
    before = {p: p.stat().st_mtime_ns for p in cwd.rglob("*") if p.is_file() and not p.is_fifo()}
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("KBT_")}
    full_env.update({"COLUMNS": "200", "KBT_LAB_DIR": str(cwd / "no-lab"), **(env or {})})
    started = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "tuner", *args],
            cwd=cwd,
            env=full_env,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=TIME_CAP_S,
            preexec_fn=_limit,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"kbt {' '.join(args)[:200]} ran longer than {TIME_CAP_S} s")
    elapsed = time.monotonic() - started
    shown = f"kbt {' '.join(args)[:200]} -> {proc.returncode}: {proc.stderr[-1500:]}"
    assert elapsed < TIME_CAP_S, shown
    assert "Traceback" not in proc.stderr, shown
    assert "MemoryError" not in proc.stderr, shown
    assert proc.returncode in DOCUMENTED, shown
    assert len(proc.stderr.strip("\n").splitlines()) <= 1, shown
    if proc.returncode not in (0, int(ExitStatus.WARNING), int(ExitStatus.CRITICAL)):
        assert proc.stderr.startswith("kbt: "), shown
    assert SECRET not in proc.stdout + proc.stderr, "a planted secret was printed: " + shown
    for path in cwd.rglob("*"):
        if path.is_file() and not path.is_fifo() and before.get(path) != path.stat().st_mtime_ns:
            assert SECRET not in path.read_text(errors="replace"), f"{path.name} holds the planted secret"
    return proc


def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="kbt-fuzz-") as d:
        yield Path(d)


# ---- surfaces --------------------------------------------------------------------------------


@SETTINGS
@given(data=st.data())
def test_fuzz_sweep_spec(data: st.DataObject) -> None:
    for d in workdir():
        (d / "spec.yaml").write_text(_mutate(GOOD_SPEC, data))
        run_kbt(["sweep", "spec.yaml", "--dry-run"], d)


@SETTINGS
@given(data=st.data())
def test_fuzz_stress_spec(data: st.DataObject) -> None:
    for d in workdir():
        good = data.draw(st.sampled_from([GOOD_STRESS, GOOD_ENGINE_STRESS]))  # on locust, or engines
        (d / "stress.yaml").write_text(_mutate(good, data))
        run_kbt(["stress", "stress.yaml", "--dry-run"], d)


@SETTINGS
@given(data=st.data())
def test_fuzz_filebeat_profile(data: st.DataObject) -> None:
    for d in workdir():
        text = _mutate(GOOD_FILEBEAT, data)
        if data.draw(st.booleans()):
            creds = data.draw(st.sampled_from([f"kbt:{SECRET}@b:9092", f"u:{SECRET}/x@y@b:9092"]))
            text = text.replace('"${KAFKA_HOSTS}"', f'"{creds}"')
        if data.draw(st.booleans()):
            text += f'output.kafka.password: "{SECRET}"\n'
        (d / "filebeat.yml").write_text(text)
        run_kbt(["check", "filebeat", "filebeat.yml"], d)


CLIENT_LINE = "  properties: {security.protocol: SASL_SSL, sasl.mechanism: SCRAM-SHA-512, sasl.username: kbt}"
GOOD_TARGET = f"""name: staging
bootstrap_servers: [127.0.0.1:9]
client:
{CLIENT_LINE}
prometheus:
  url: http://127.0.0.1:9/prometheus?tenant=a
  headers: {{X-Scope-OrgID: staging}}
brokers:
  job: kafka
  matchers: {{cluster: staging}}
  broker_label: pod
dialect: auto
limits: {{max_msgs_per_s: 20000, max_bytes_per_s: 20000000}}
topic_prefix: kbt-
"""
TARGET_SECRETS = st.sampled_from(
    [
        f'  properties: {{security.protocol: SASL_SSL, sasl.password: "{SECRET}"}}',
        f'  properties: {{sasl.jaas.config: "x required username=a password=\\"{SECRET}\\";"}}',
        f'  properties: {{ssl.key.pem: "-----BEGIN PRIVATE KEY-----{SECRET}-----END PRIVATE KEY-----"}}',
        f'  properties: {{" ssl.truststore.password ": "{SECRET}"}}',
        f'  properties: {{sasl.password: "${{KAFKA_PW:{SECRET}}}"}}',
    ]
)


@SETTINGS
@given(data=st.data())
def test_fuzz_target_file(data: st.DataObject) -> None:
    """Target files (docs/targets.md) through `kbt sweep --target --dry-run`: read, checked against
    the caps, never connected to; planted credentials and URL secrets never echoed."""
    for d in workdir():
        text = _mutate(GOOD_TARGET, data)
        if data.draw(st.booleans()):
            text = text.replace(CLIENT_LINE, data.draw(TARGET_SECRETS))
        if data.draw(st.booleans()):
            text = text.replace("http://127.0.0.1:9/", f"http://kbt:{SECRET}@127.0.0.1:9/").replace(
                "tenant=a", f"tenant=a&token={SECRET}"
            )
        (d / "target.yaml").write_text(text)
        (d / "spec.yaml").write_text(GOOD_SPEC)
        run_kbt(["sweep", "spec.yaml", "--target", "target.yaml", "--dry-run"], d)


def test_the_good_target_file_is_read(tmp_path: Path) -> None:
    """The fuzzer's starting point passes, so its mutations reach the target file's checks."""
    (tmp_path / "target.yaml").write_text(GOOD_TARGET)
    (tmp_path / "spec.yaml").write_text(GOOD_SPEC)
    proc = run_kbt(["sweep", "spec.yaml", "--target", "target.yaml", "--dry-run"], tmp_path)
    assert proc.returncode == 0 and "kbt-" in proc.stdout, proc.stderr


@SETTINGS
@given(data=st.data())
def test_fuzz_thresholds(data: st.DataObject) -> None:
    for d in workdir():
        key = data.draw(st.sampled_from(["warning_idle", "critical_idle", "flush_p99_ms", "nope"]))
        (d / "t.yaml").write_text(f"{key}: {data.draw(VALUE)}\n")
        # a refusing Prometheus: the thresholds are read first, the URL only afterwards
        run_kbt(["diagnose", "--prometheus", "http://127.0.0.1:9", "--thresholds", "t.yaml"], d)


JSON_VALUES = st.recursive(
    st.one_of(
        st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30),
        st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=30),
        st.just(SECRET), st.just(f"http://u:{SECRET}@h/"),
    ),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)  # fmt: skip
RAW_JSON = st.one_of(
    JSON_VALUES.map(json.dumps),
    st.sampled_from(["NaN", "[1e999]", '{"a": Infinity}', "[" * 5000, "{", "", "\x00\x01", "9" * 5000]),
    st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
)


@SETTINGS
@given(record=RAW_JSON, command=st.sampled_from(["report", "recommend", "forecast"]))
def test_fuzz_records(record: str, command: str) -> None:
    for d in workdir():
        (d / "results" / "s").mkdir(parents=True)
        (d / "results" / "s" / "r.json").write_text(record, encoding="latin-1", errors="replace")
        args = {
            "report": ["report", "--results", "results", "--out", "r.html"],
            "recommend": ["recommend", "--results", "results"],
            "forecast": ["forecast", "--results", "results", "--peak", "2"],
        }[command]
        run_kbt(args, d)


@SETTINGS
@given(body=st.binary(max_size=3000), kind=st.sampled_from(["bytes", "latin", "lines"]))
def test_fuzz_probe_files(body: bytes, kind: str) -> None:
    for d in workdir():
        if kind == "latin":
            body = b"".join(b"caf\xe9 line %d " % i + body[:20] + b"\n" for i in range(60))
        elif kind == "lines":
            body = b"\n".join(body[i : i + 30] for i in range(0, len(body), 30)) * 3
        (d / "s.log").write_bytes(body)
        run_kbt(
            ["probe", "compression", "s.log", "--codecs", "gzip", "--batch-sizes", "1,4", "--batches", "4"], d
        )


FLAG_VALUES = st.one_of(
    st.sampled_from(["nan", "inf", "-inf", "1e308", "-5", "0", "\u0661\u0662", "1e35h", "abc", "", " ", "5"]),
    UNICODE_DIGITS.map(lambda t: t.strip('"')),
    REGEX_HOSTILE.map(lambda t: t.strip('"')),
    st.text(max_size=20),
    st.just("x" * 100_000),
)
FLAG_COMMANDS = [
    ["recommend", "--results", ".", "--slo-p99", "{v}"],
    ["recommend", "--results", ".", "--slo-memory", "{v}"],
    ["recommend", "--results", ".", "--min-network-idle", "{v}"],
    ["diagnose", "--prometheus", "http://127.0.0.1:9", "--window", "{v}"],
    ["diagnose", "--prometheus", "http://127.0.0.1:9", "--end", "{v}"],
    ["diagnose", "--prometheus", "{v}"],
    ["forecast", "--peak", "{v}"],
    ["probe", "compression", "s.log", "--batch-sizes", "{v}"],
    ["probe", "compression", "s.log", "--levels", "{v}"],
    ["probe", "compression", "s.log", "--json", "out/{v}"],
    ["sweep", "s.log", "--dry-run", "--results", "{v}"],
    ["report", "--results", ".", "--prometheus", "{v}"],
]


@settings(SETTINGS, max_examples=EXAMPLES * 2)
@given(value=FLAG_VALUES, command=st.sampled_from(FLAG_COMMANDS))
def test_fuzz_cli_flags(value: str, command: list[str]) -> None:
    if "\x00" in value:
        value = value.replace("\x00", "")  # an OS argument cannot hold NUL
    for d in workdir():
        (d / "s.log").write_text("".join(f"line {i}\n" for i in range(40)))
        run_kbt([a.replace("{v}", value) for a in command], d)


# ---- Prometheus answers from a fake server ---------------------------------------------------


class _Answers:
    body: bytes = b"{}"
    status: int = 200


class _FakePrometheus(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(_Answers.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(_Answers.body)))
        self.end_headers()
        self.wfile.write(_Answers.body)

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass


@pytest.fixture(scope="module")
def fake_prometheus() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _FakePrometheus)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


SAMPLE_VALUES = st.one_of(
    st.sampled_from(["NaN", "+Inf", "-Inf", "1e308", "abc", "", "\u0661"]),
    st.floats(allow_nan=False, allow_infinity=False).map(str),
    JSON_VALUES,
)


def _answer(data: st.DataObject) -> Any:
    shape = data.draw(st.sampled_from(["vector", "matrix", "scalar", "error", "garbage"]))
    metric = data.draw(
        st.dictionaries(st.sampled_from(["instance", "job", "topic", "le"]), JSON_VALUES, max_size=3)
        | JSON_VALUES
    )
    if shape == "vector":
        result: Any = [{"metric": metric, "value": [time.time(), data.draw(SAMPLE_VALUES)]}]
    elif shape == "matrix":
        result = [{"metric": metric, "values": [[time.time(), data.draw(SAMPLE_VALUES)]] * 3}]
    elif shape == "scalar":
        result = [time.time(), data.draw(SAMPLE_VALUES)]
    elif shape == "error":
        error = data.draw(st.text(max_size=300)) + f" password={SECRET}"  # a value pattern the policy covers
        return {"status": "error", "errorType": "bad_data", "error": error}
    else:
        return data.draw(JSON_VALUES)
    return {"status": "success", "data": {"resultType": shape, "result": result}}


@SETTINGS
@given(data=st.data())
def test_fuzz_prometheus_answers(fake_prometheus: str, data: st.DataObject) -> None:
    raw = data.draw(st.one_of(st.builds(lambda a: json.dumps(a), st.just(None)), st.just(None)))
    answer = _answer(data)
    _Answers.body = (json.dumps(answer) if raw is None else raw).encode()
    _Answers.status = data.draw(st.sampled_from([200, 200, 200, 400, 500, 503]))
    url = fake_prometheus + data.draw(st.sampled_from(["", "/", "/?tenant=a", f"/?token={SECRET}"]))
    for d in workdir():
        run_kbt(["diagnose", "--prometheus", url, "--window", "1m", "--step", "30s"], d)


# ---- special files and hostile HTTP servers (issue 30) -------------------------------------------

SPECIAL = st.sampled_from(["fifo", "directory", "dev-zero", "empty", "symlink-loop"])


def _special(path: Path, kind: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "empty":
        path.write_bytes(b"")
    else:
        path.symlink_to(path.name)


@settings(SETTINGS, max_examples=EXAMPLES // 2)
@given(kind=SPECIAL, surface=st.sampled_from(["spec", "filebeat", "record", "properties", "probe", "token"]))
def test_fuzz_special_files(kind: str, surface: str) -> None:
    """Every file kbt reads is refused, with one line and in bounded time, when it is not a regular
    file: nothing blocks on a FIFO or reads /dev/zero without end."""
    for d in workdir():
        target = "name: t\nbootstrap_servers: [127.0.0.1:9092]\n"
        args, path = {
            "spec": (["sweep", "s.yaml", "--dry-run"], "s.yaml"),
            "filebeat": (["check", "filebeat", "f.yml"], "f.yml"),
            "record": (["recommend", "--results", "results"], "results/s/r.json"),
            "properties": (["target", "check", "t.yaml"], "client.properties"),
            "probe": (["probe", "compression", "s.log", "--batches", "2"], "s.log"),
            "token": (["target", "check", "t.yaml"], "token"),
        }[surface]
        if surface == "properties":
            (d / "t.yaml").write_text(target + "client: {properties_file: client.properties}\n")
        elif surface == "token":
            (d / "t.yaml").write_text(
                target + "prometheus: {url: 'http://127.0.0.1:9', bearer_token_file: token}\n"
            )
        _special(d / path, kind)
        proc = run_kbt(args, d)
        assert proc.returncode != 0 or (kind == "empty" and surface == "probe"), proc.stderr


@pytest.fixture(scope="module")
def hostile_prometheus() -> Iterator[str]:
    """The catalog's fake Prometheus (a fault a real one never makes): host:port."""
    with endpoint("hostile") as url:
        yield url.removeprefix("http://")


@settings(SETTINGS, max_examples=EXAMPLES // 2, suppress_health_check=list(HealthCheck))
@given(
    fault=st.sampled_from(["badgzip", "truncated", "badchunk", "away", "echo", "latin1"]),
    credential=st.sampled_from(["userinfo", "query", "both"]),
)
def test_fuzz_hostile_prometheus(hostile_prometheus: str, fault: str, credential: str) -> None:
    """Bad encodings, truncation, redirects across origins and echoed credentials: one line, a
    documented code, and the planted credential in no output."""
    userinfo = f"kbt:{SECRET}@" if credential in ("userinfo", "both") else ""
    query = f"?token={SECRET}" if credential in ("query", "both") else ""
    for d in workdir():
        proc = run_kbt(
            ["diagnose", "--prometheus", f"http://{userinfo}{hostile_prometheus}/{fault}{query}"], d
        )
        assert proc.returncode in (int(ExitStatus.UNREACHABLE), int(ExitStatus.BAD_INPUT)), proc.stderr


# ---- issue 41: request logs, truststores, command-config, collector fragments -------------------


def _request_line(api: object, extra: str = "") -> str:
    body = json.dumps({"requestHeader": {"requestApiKey": api, "clientId": "c"}, "principal": "User:u"})
    return f"[2026-11-26 22:46:08,982] DEBUG Completed request:{body[:-1]}{extra}}} (kafka.request.logger)\n"


REQUEST_LOG_BODIES = st.one_of(
    st.sampled_from([0, 1, False, None, "0"]).map(lambda api: _request_line(api).encode()),
    st.just(_request_line(0, f', "password": "{SECRET}"').encode()),
    st.just(_request_line(0, ', "pad": [' + ",".join(["1"] * 300_000) + "]").encode()),
    st.binary(max_size=300),
    st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")),
)


@SETTINGS
@given(
    bodies=st.lists(REQUEST_LOG_BODIES, min_size=1, max_size=5),
    pack=st.sampled_from(["", "gzip", "twice", "fifo"]),
)
def test_fuzz_request_logs(bodies: list[bytes], pack: str) -> None:
    """Request logs are checked before Prometheus is asked: a packed, binary, repeated or special
    file is one line (exit 2); a readable one meets the refusing Prometheus (exit 5)."""
    import gzip

    for d in workdir():
        path = d / "broker.log"
        data = b"".join(bodies)
        logs = ["broker.log"]
        if pack == "gzip":
            path.write_bytes(gzip.compress(data))
        elif pack == "fifo":
            os.mkfifo(path)
        else:
            path.write_bytes(data)
            logs += ["./broker.log"] if pack == "twice" else []
        args = ["diagnose", "--prometheus", "http://127.0.0.1:9"]
        proc = run_kbt([*args, *(a for log in logs for a in ("--request-log", log))], d)
        assert proc.returncode in (int(ExitStatus.BAD_INPUT), int(ExitStatus.UNREACHABLE)), proc.stderr
        if pack in ("gzip", "twice", "fifo") or b"\x00" in data[:65536]:
            assert proc.returncode == int(ExitStatus.BAD_INPUT), proc.stderr


PROPERTIES_LINES = st.sampled_from(
    [
        f"sasl.password={SECRET}",
        f"sasl.username=u\\\\\\\nsasl.password={SECRET}",  # an odd run of backslashes: Java joins
        f"sasl.username=u\\\\\nsasl.password={SECRET}",  # an even run: it does not
        f'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="{SECRET}";',  # noqa: E501
        f"ssl.key.password={SECRET}\\",
        "sasl.mechanism=\u202eNIALP",
        "bogus.property=1",
        "security.protocol=SASL_SSL\x1b]0;title\x07",
        "\\u00zz=1",
        "x" * 5000,
    ]
)


@SETTINGS
@given(lines=st.lists(PROPERTIES_LINES, min_size=1, max_size=5))
def test_fuzz_command_config(lines: list[str]) -> None:
    """Kafka's client properties as `--command-config` takes them (a secret may be written in it):
    read as Java reads them, whatever is wrong is one line without the secret."""
    for d in workdir():
        (d / "c.properties").write_text(
            "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n" + "\n".join(lines)
        )
        args = ["target", "check", "--bootstrap-server", "127.0.0.1:9", "--command-config", "c.properties"]
        proc = run_kbt(args, d)
        assert proc.returncode in (int(ExitStatus.BAD_INPUT), int(ExitStatus.UNREACHABLE)), proc.stderr


def _pkcs12(password: str) -> bytes:
    return ca_truststore(password.encode(), "kbt fuzz CA")


STORE = _pkcs12(SECRET)


@settings(SETTINGS, max_examples=EXAMPLES)
@given(
    mutation=st.one_of(
        st.sampled_from([2**31 - 1, 0, 10]).map(lambda n: ("mac", n)),
        st.integers(0, len(STORE) - 1).map(lambda i: ("flip", i)),
        st.integers(0, len(STORE) - 1).map(lambda i: ("cut", i)),
        st.binary(max_size=100).map(lambda b: ("bytes", b)),
    ),
    kind=st.sampled_from(["PKCS12", "PEM", "JKS"]),
)
def test_fuzz_truststore(mutation: tuple[str, Any], kind: str) -> None:
    """A truststore named by a target's client properties, broken in any way: one line (exit 2), or
    the refusing cluster (exit 5); its password (planted) never printed; a 2^31-1 round store never
    runs past the time cap."""
    from tests.unit.test_hostile_inputs import _with_mac_iterations

    what, arg = mutation
    if what == "mac":
        data = _with_mac_iterations(STORE, arg)
    elif what == "flip":
        data = STORE[:arg] + bytes([STORE[arg] ^ 0xFF]) + STORE[arg + 1 :]
    elif what == "cut":
        data = STORE[:arg]
    else:
        data = arg
    for d in workdir():
        (d / "trust.p12").write_bytes(data)
        (d / "t.yaml").write_text(
            "name: t\nbootstrap_servers: [127.0.0.1:9]\nclient:\n  properties:\n    security.protocol: SSL\n"
            f"    ssl.truststore.location: trust.p12\n    ssl.truststore.type: {kind}\n"
            "    ssl.truststore.password: ${KBT_TS_PW}\n"
        )
        proc = run_kbt(["target", "check", "t.yaml"], d, env={"KBT_TS_PW": SECRET})
        assert proc.returncode in (int(ExitStatus.BAD_INPUT), int(ExitStatus.UNREACHABLE)), proc.stderr


FRAGMENT_VALUES = st.sampled_from(
    [
        f'"{SECRET}"', '"${env:KPW}"', "${KPW}", "[1, 2]", "{}", ".nan", '"\\e[31m"', '"line\\nbreak"',
        '"' + "x" * 5000 + '"', "&a [*a]", "[" * 100 + "]" * 100,
    ]
)  # fmt: skip
FRAGMENT_KEYS = st.sampled_from(
    [
        "exporters.kafka.auth.sasl.password", "exporters.kafka.producer.max_message_bytes",
        "exporters.kafka.client_id", "exporters.kafka.brokers", "exporters.kafka.auth.tls.key_pem",
        "processors.batch.send_batch_size", "exporters.kafka.timeout",
    ]
)  # fmt: skip


@pytest.mark.skipif(
    __import__("tuner.driver.otelcol.build", fromlist=["collector_binary"]).collector_binary() is None,
    reason="the OpenTelemetry Collector is built by make install",
)
@SETTINGS
@given(entries=st.lists(st.tuples(FRAGMENT_KEYS, FRAGMENT_VALUES), min_size=1, max_size=4), dup=st.booleans())
def test_fuzz_collector_fragment(entries: list[tuple[str, str]], dup: bool) -> None:
    """`kbt check otelcol` of a hostile fragment: read through the bounded reader and parser, a
    literal secret refused before the collector runs, the collector's complaint scrubbed of the
    fragment's secrets and on one line."""
    lines = []
    for key, raw in entries:
        parts = key.split(".")
        lines.append("".join(f"{'  ' * i}{p}:\n" for i, p in enumerate(parts[:-1])))
        lines.append(f"{'  ' * (len(parts) - 1)}{parts[-1]}: {raw}\n")
        if dup:
            lines.append(f"{'  ' * (len(parts) - 1)}{parts[-1]}: {raw}\n")
    for d in workdir():
        (d / "otelcol.yaml").write_text("".join(lines))
        proc = run_kbt(["check", "otelcol", "otelcol.yaml"], d)
        assert proc.returncode in (0, int(ExitStatus.BAD_INPUT)), proc.stderr


@pytest.mark.parametrize("brokers", ["gone", "none"])
def test_request_log_on_a_lab_that_is_not_there(tmp_path: Path, brokers: str) -> None:
    """A lab whose state says up but whose brokers are gone (nothing listens on its ports, 28000 and
    up: this module's range) is one line at once, not a minute's wait; a state with no brokers is
    an error, never "request log on ()" and exit 0. Nothing is written where kbt runs."""
    from tuner.lab.config import LabConfig
    from tuner.lab.state import Phase, new_state, save_state

    lab = tmp_path / "lab"
    state = new_state(LabConfig(brokers=1, base_port=28_000, lab_dir=lab), "kbt-test", time.time())
    state = state.model_copy(update={"phase": Phase.UP, **({"brokers": []} if brokers == "none" else {})})
    lab.mkdir()
    save_state(state)
    work = tmp_path / "work"
    work.mkdir()
    started = time.monotonic()
    proc = run_kbt(["lab", "request-log", "on", "--lab-dir", str(lab)], work)
    assert time.monotonic() - started < 20
    expected = ExitStatus.UNREACHABLE if brokers == "gone" else ExitStatus.ENVIRONMENT
    assert proc.returncode == int(expected), proc.stderr
    assert list(work.iterdir()) == [], "kbt wrote into the working directory"


# ---- hand-edited documents: one value of a good run record or probe record changed ----------------

DEMO_RECORDS = Path(__file__).resolve().parents[1] / "unit" / "data" / "demo-loaded" / "qunar-logs-short"


def _edited(doc: Any, data: st.DataObject) -> Any:
    return json.loads(data.draw(field_changed(doc)).text)


@pytest.fixture(scope="module")
def probe_record() -> Iterator[Any]:
    for d in workdir():
        (d / "s.log").write_text("".join(f"GET /api/v1/orders/{i} 200 user-{i % 7}\n" for i in range(200)))
        args = ["probe", "compression", "s.log", "--codecs", "gzip,lz4", "--batch-sizes", "1,4"]
        run_kbt([*args, "--batches", "4", "--json", "p.json"], d)
        yield json.loads((d / "p.json").read_text())


@SETTINGS
@given(data=st.data(), kind=st.sampled_from(["record", "probe"]))
def test_fuzz_hand_edited_documents(probe_record: Any, data: st.DataObject, kind: str) -> None:
    """A good run record or probe record with one value changed (a count past any rate, a ratio of
    0, a window that ends before it starts, a wrong type): read, or refused in one line; never a
    math error or a validation error of a figure derived from it."""
    for d in workdir():
        results = d / "results" / "s"
        results.mkdir(parents=True)
        records = sorted(DEMO_RECORDS.glob("*.json"))
        for path in records[1:]:
            (results / path.name).write_text(path.read_text())
        if kind == "record":
            edited = _edited(json.loads(records[0].read_text()), data)
            (results / records[0].name).write_text(json.dumps(edited))
            command = data.draw(
                st.sampled_from(
                    [
                        ["forecast", "--results", "results", "--peak", "2"],
                        ["recommend", "--results", "results", "--client", "librdkafka", "--out", "o"],
                    ]
                )
            )
        else:
            (results / records[0].name).write_text(records[0].read_text())
            (d / "p.json").write_text(json.dumps(_edited(probe_record, data)))
            command = ["recommend", "--results", "results", "--client", "filebeat", "--probe", "p.json"]
        run_kbt(command, d)
