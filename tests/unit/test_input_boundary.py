"""The input boundary in tuner/core: readers, the atomic writer, numbers, the ${VAR} grammar, the
redaction policy and the network deadline, each on the class of input it exists for."""

from __future__ import annotations

import http.server
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import hypothesis
import hypothesis.strategies as st
import pytest
import requests

from tuner.core import inputs
from tuner.core.envref import is_pure_reference, parse_reference
from tuner.core.errors import BadInput, EnvironmentProblem
from tuner.core.net import DeadlineExceeded, get_bounded, join_url, without_secrets
from tuner.core.numbers import check_duration, parse_int, parse_number
from tuner.core.redact import REDACTED, is_secret_name, redact, scrub
from tuner.core.text import one_line
from tuner.core.writes import atomic_write, atomic_write_all, atomic_write_json

pytestmark = pytest.mark.wall_clock  # asserts a wall-clock bound: CI runs it at normal priority


def test_readers_refuse_what_is_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    for path, word in [(fifo, "a FIFO"), (Path("/dev/zero"), "a device"), (tmp_path, "a directory")]:
        with pytest.raises(BadInput, match=word):
            inputs.read_bytes(path)
    assert time.monotonic() - started < 2  # nothing blocked, nothing read without end
    with pytest.raises(BadInput, match="no such spec file"):
        inputs.read_text(tmp_path / "nope.yaml", "spec file")
    with pytest.raises(BadInput, match="no such properties file"):  # a name from a document
        inputs.read_text(tmp_path / "a\0b", "properties file")
    big = tmp_path / "big"
    big.write_bytes(b"x" * 2000)
    with pytest.raises(BadInput, match="more than the 1000 bytes"):
        inputs.read_bytes(big, max_bytes=1000)


def test_a_directory_input_names_what_is_there_instead(tmp_path: Path) -> None:
    # a record file given as --results was "no such results directory" (report), "no run records
    # under" it (recommend) or "not a results directory" (forecast)
    (tmp_path / "r.json").write_text("{}")
    for path, said in [
        (tmp_path / "r.json", "is a file, not a results directory"),
        (Path("/dev/zero"), "is a device, not a results directory"),
        (tmp_path / "nope", "no such results directory"),
        (tmp_path / "r.json" / "x", "no such results directory (a parent is not a directory)"),
    ]:
        with pytest.raises(BadInput, match=re.escape(said)):
            inputs.check_directory(path, "results directory")
    inputs.check_directory(tmp_path, "results directory")


def test_text_decoding_names_latin1_and_binary(tmp_path: Path) -> None:
    latin = tmp_path / "l.yaml"
    latin.write_bytes("a: 1\nb: caf\xe9\n".encode("latin-1"))
    with pytest.raises(BadInput, match=r":2: not UTF-8 text \(byte 0xe9"):
        inputs.read_text(latin)
    binary = tmp_path / "b.yaml"
    binary.write_bytes(b"\x00\x01\x02")
    with pytest.raises(BadInput, match="binary data"):
        inputs.read_text(binary)
    for codec in ("utf-16", "utf-16-be"):  # with its mark, as Windows tools save it: text, not binary
        wide = tmp_path / "w.yaml"
        wide.write_bytes(("\ufeff" if codec.endswith("be") else "").encode(codec) + "a: 1\n".encode(codec))
        with pytest.raises(BadInput, match=r"w\.yaml: UTF-16 text, not UTF-8: save the file as UTF-8"):
            inputs.read_text(wide, "x")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "a: 1\n---\nb: 2\n",
            "x.yml:2: not valid YAML: a second document (after ---): kbt reads one document a file",
        ),
        ("a: " + "9" * 5000 + "\n", "x.yml: not valid YAML: a number with too many digits"),
    ],
)
def test_yaml_problems_are_said_in_kbts_words(text: str, said: str) -> None:
    """Not ruamel's fragment ("but found another document") nor Python's advice on its digit limit."""
    with pytest.raises(BadInput) as caught:
        inputs.parse_yaml(text, "x.yml")
    assert caught.value.message == said


@pytest.mark.parametrize("depth", [70, 500, 5000])
def test_deep_yaml_and_json_are_one_line_not_recursion(depth: int) -> None:
    with pytest.raises(BadInput, match="nested"):
        inputs.parse_yaml("a: " + "[" * depth + "]" * depth, "x.yaml")
    with pytest.raises(BadInput, match="nested"):
        inputs.parse_json("[" * depth + "]" * depth, "x.json")


def test_alias_bomb_is_counted_before_it_is_built() -> None:
    levels = ["a: &a [" + ", ".join(["x"] * 10) + "]"]
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        levels.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 10) + "]")
    started = time.monotonic()
    with pytest.raises(BadInput, match="aliases expand to more than"):
        inputs.parse_yaml("\n".join(levels), "bomb.yaml")
    assert time.monotonic() - started < 5
    assert inputs.parse_yaml("a: &a [1, 2]\nb: *a\n", "ok.yaml")["b"] == [1, 2]  # aliases still work


@pytest.mark.parametrize(
    "body", ["a: [" + "1," * 120_000 + "]\n", "".join(f"k{i}: {i}\n" for i in range(60_000))]
)
def test_yaml_is_read_in_bounded_time(tmp_path: Path, body: str) -> None:
    """Under 1 MiB, yet over 100,000 values: ruamel took about a minute a MiB of them (and a 64 MiB file
    was read to the end); refused while counted, as a larger file is before it is read."""
    started = time.monotonic()
    with pytest.raises(BadInput, match="more than 100,000 values: not a file kbt reads"):
        inputs.parse_yaml(body, "many.yaml")
    assert time.monotonic() - started < 10
    path = tmp_path / "big.yml"
    path.write_text("a: " + "x" * inputs.MAX_YAML_BYTES + "\n")
    with pytest.raises(BadInput, match="is more than the 1 MiB kbt reads for a Filebeat configuration"):
        inputs.read_yaml(path, "Filebeat configuration")


def test_yaml_past_its_size_cap_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    """Comment lines cost the parser time without being values (1 MB of them: 30 s): YAML files
    have their own size cap, far above any spec or client config."""
    text = "x: 1\n" + "#c\n" * (inputs.MAX_YAML_BYTES // 3)
    started = time.monotonic()
    with pytest.raises(BadInput, match=r"^s\.yaml: more than the 1 MiB kbt reads for a YAML file$"):
        inputs.parse_yaml(text, "s.yaml")
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    with pytest.raises(BadInput, match=r": 1 MiB is more than the 1 MiB kbt reads for a spec file$"):
        inputs.read_yaml(spec, "spec file")
    assert time.monotonic() - started < 2


@pytest.mark.parametrize(
    ("key", "text"), [("~", "null"), ("true", "true"), ("[a, 1]", "[a, 1]"), ("{a: b}", "{a: b}")]
)
def test_a_yaml_key_that_is_not_text_is_named_as_yaml_writes_it(key: str, text: str) -> None:
    """plain_data named such keys with str(): "None", "True", "('a', 1)", "ordereddict(...)"."""
    data = inputs.plain_data(inputs.parse_yaml(f"x:\n  ? {key}\n  : 1\n", "s.yaml"))
    assert list(data["x"]) == [text]


def test_a_path_under_the_home_of_no_such_user_is_kept_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """pathlib's expanduser raises RuntimeError for `~nobody/x` (a traceback from a target file's
    token file, KBT_LAB_DIR or a workload's log path); a shell keeps it as written."""
    from tuner.core.paths import expand_user
    from tuner.lab.config import default_lab_dir

    assert expand_user("~nobodyxx/t") == Path("~nobodyxx/t")
    assert expand_user("~/t") == Path.home() / "t"
    monkeypatch.setenv("KBT_LAB_DIR", "~nobodyxx/lab")
    assert default_lab_dir() == Path("~nobodyxx/lab")


def test_a_log_path_whose_link_loops_is_no_such_log_file(tmp_path: Path) -> None:
    """Path.resolve() raised RuntimeError ("Symlink loop") for a workload's log_file path."""
    from tuner.spec.loader import load_sweep

    (tmp_path / "loop.log").symlink_to("loop.log")
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: s\nworkload: {name: w, topics: [{name: t, partitions: 1}], producers: 1,"
        " rate_per_producer: 1, message: {kind: log_file, path: loop.log}}\nprofiles: [{name: p}]\n"
    )
    with pytest.raises(BadInput, match=r'path: no such log file "loop\.log"'):
        load_sweep(spec)


@pytest.mark.parametrize("text", [".nan", ".inf", "-.inf", "1e400", "1e26"])
def test_yaml_numbers_are_finite_and_bounded(text: str) -> None:
    with pytest.raises(BadInput, match=r"x\.y: (must be a finite number|.* is too large)"):
        inputs.parse_yaml(f"x: {{y: {text}}}", "s.yaml")


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", "[1e999]", "9" * 5000])
def test_json_numbers_are_finite(text: str) -> None:
    with pytest.raises(BadInput, match=r"s\.json"):
        inputs.parse_json(text, "s.json")


def test_numbers_are_ascii_finite_and_bounded() -> None:
    assert parse_number(" 1.5e3 ", "--x") == 1500.0
    for bad in ["nan", "inf", "1e308", "\u0661\u0662", "0x10", "1_000", ""]:
        with pytest.raises(ValueError):
            parse_number(bad, "--x")
    assert parse_int("42", "--n") == 42
    with pytest.raises(ValueError):
        parse_int("\u0664", "--n")
    with pytest.raises(ValueError, match="longer than a year"):
        check_duration(1e10, "d")


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("٢٠", "must be a whole number in ASCII digits (got '٢٠')"),
        ("20.5", "must be a whole number in ASCII digits (got '20.5')"),
        ("-5", "must be -1 or more (got '-5')"),
        (str(2**63), f"'{2**63}' is too large"),
    ],
)
def test_a_whole_config_value_is_refused_for_what_is_wrong_with_it(value: str, said: str) -> None:
    """-5 and 2**63 are whole numbers in ASCII digits: the sign or the size is what is wrong."""
    from tuner.core.numbers import check_config_value, kafka_number_type

    with pytest.raises(ValueError) as caught:
        check_config_value("linger.ms", value, kafka_number_type("linger.ms"))
    assert str(caught.value) == f'"linger.ms": {said}'
    assert check_config_value("linger.ms", "-1", kafka_number_type("linger.ms")) == "-1"


@pytest.mark.parametrize(
    ("number", "value", "taken"),
    [
        ("float", "0.5", True), ("float", "1e3", True), ("float", "-1", True),
        ("float", "0x10", False), ("float", "nan", False), ("float", "\u0661", False),
        ("float", "soon", False),
        ("named integer", "all", True), ("named integer", "12", True), ("named integer", "soon", True),
        ("named integer", "1e3", False), ("named integer", "0.5", False), ("named integer", ".5", False),
        ("integer", "12", True), ("integer", "all", False), ("integer", "0.5", False),
        (None, "soon", True), (None, "0.5", True), (None, "1e400", False),
    ],
)  # fmt: skip
def test_a_config_value_is_judged_by_the_type_its_client_reads(
    number: str | None, value: str, taken: bool
) -> None:
    """A float takes any number in the grammar; an integer only a whole one (librdkafka's named
    integers leave a word to librdkafka: acks all); a key of no number only a finite one if a number."""
    from tuner.core.numbers import NumberType, check_config_value

    typed: NumberType = number  # type: ignore[assignment]
    if taken:
        assert check_config_value("k.ms", value, typed) == value
    else:
        with pytest.raises(ValueError, match=r'^"k\.ms": '):
            check_config_value("k.ms", value, typed)
    assert check_config_value("k.ms", "${LINGER}", typed) == "${LINGER}"


def test_atomic_writer_refuses_devices_and_names_a_file_parent(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="is a device"):
        atomic_write("/dev/full", "x")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(BadInput, match="is a FIFO"):
        atomic_write(fifo, "x")
    (tmp_path / "file").write_text("x")
    with pytest.raises(BadInput, match="file is not a directory"):
        atomic_write(tmp_path / "file" / "out.json", "x")
    target = atomic_write_json(tmp_path / "new" / "out.json", {"a": float("nan"), "b": [1.5]})
    assert target.read_text() == '{\n  "a": null,\n  "b": [\n    1.5\n  ]\n}\n'
    with pytest.raises(FileExistsError):
        atomic_write(target, "y", replace=False)
    leftovers = [p.name for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []


def test_failed_write_leaves_no_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(EnvironmentProblem, match="No space left on device"):
        atomic_write(tmp_path / "out.bin", b"x")
    assert list(tmp_path.iterdir()) == []


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@hypothesis.settings(max_examples=40, deadline=None)
@hypothesis.given(st.integers(min_value=1, max_value=6), st.data())
def test_several_files_are_written_all_or_nothing(count: int, data: st.DataObject) -> None:
    """A batch whose k-th file cannot be staged (disk full) or whose k-th target is under a file
    leaves nothing: no file of the batch, no directory it made, no temporary file."""
    import tempfile

    bad = data.draw(st.integers(min_value=0, max_value=count - 1))
    under_a_file = data.draw(st.booleans())
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "afile").write_text("x")
        (root / "kept.txt").write_text("old")
        files: dict[Path, str | bytes] = {root / "new" / "sub" / f"f{i}.txt": f"{i}" for i in range(count)}
        files[root / "kept.txt"] = "new"
        before = _tree(root)
        real_fsync, calls = os.fsync, []

        def fsync(fd: int) -> None:
            calls.append(fd)
            if len(calls) == bad + 1:
                raise OSError(28, "No space left on device")
            real_fsync(fd)

        if under_a_file:
            files[root / "afile" / "sub" / "x.png"] = b"png"
            with pytest.raises(BadInput, match="afile is not a directory"):
                atomic_write_all(files, "report")
        else:
            os.fsync = fsync  # type: ignore[assignment]
            try:
                with pytest.raises(EnvironmentProblem, match="No space left on device"):
                    atomic_write_all(files, "report")
            finally:
                os.fsync = real_fsync
        assert _tree(root) == before and (root / "kept.txt").read_text() == "old"
        written = atomic_write_all({p: d for p, d in files.items() if "afile" not in str(p)}, "report")
        assert [p.read_text() for p in written] == [*(f"{i}" for i in range(count)), "new"]
        assert not [p for p in root.rglob("*.tmp")]


@hypothesis.settings(max_examples=40, deadline=None)
@hypothesis.given(st.integers(min_value=2, max_value=6), st.data())
def test_a_rename_failing_part_way_puts_the_replaced_files_back(count: int, data: st.DataObject) -> None:
    """The k-th rename into place fails (a fault no test can make real between two renames in one
    directory, so os.replace is wrapped): the files already renamed over old ones get the old bytes
    back, the new ones are gone, and no temporary or kept link is left."""
    import tempfile

    bad = data.draw(st.integers(min_value=1, max_value=count - 1))
    existing = data.draw(st.sets(st.integers(min_value=0, max_value=count - 1)))
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        for i in existing:
            (root / f"f{i}.txt").write_text(f"old {i}")
        files: dict[Path, str | bytes] = {root / f"f{i}.txt": f"new {i}" for i in range(count)}
        before = {p.name: p.read_text() for p in root.iterdir()}
        real_replace, renames = os.replace, []

        def replace(src: str, dst: Path) -> None:
            if str(src).endswith(".tmp"):
                renames.append(dst)
                if len(renames) == bad + 1:
                    raise OSError(5, "Input/output error")
            real_replace(src, dst)

        os.replace = replace  # type: ignore[assignment]
        try:
            with pytest.raises(EnvironmentProblem, match="Input/output error"):
                atomic_write_all(files, "report")
        finally:
            os.replace = real_replace
        assert {p.name: p.read_text() for p in root.iterdir()} == before


def test_one_var_grammar() -> None:
    assert parse_reference("${A}") is not None and is_pure_reference(" ${A} ")
    assert is_pure_reference("${A.b:?set A.b}")
    ref = parse_reference("${PW:hunter2}")
    assert ref is not None and ref.default == "hunter2" and not is_pure_reference("${PW:hunter2}")
    assert parse_reference("$A") is None and parse_reference("${1A}") is None


@pytest.mark.parametrize(
    "name",
    [
        "ssl.key.pem", "sasl.oauthbearer.config", "basic.auth.user.info", " sasl.password ",
        "SSL.KEYSTORE.PASSWORD", "ssl.truststore.password", "ssl.keystore.key", "bearer_token",
        "basic_auth.password", "oauth2.client_secret", "output.kafka.password", "key_passphrase",
        "sasl.oauthbearer.client.credentials.client.secret", "cloud.auth", "api_key",
    ],
)  # fmt: skip
def test_secret_keys_of_every_client(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name", ["ssl.ca.location", "sasl.username", "password_file", "sasl.mechanism", "linger.ms", "hosts"]
)
def test_keys_that_are_not_secrets(name: str) -> None:
    assert not is_secret_name(name)


@pytest.mark.parametrize(
    "text",
    [
        "http://kbt:hunter2/x@y@127.0.0.1:9090/api",
        "https://127.0.0.1/api?tenant=a&token=hunter2",
        "hosts: kbt:hunter2@broker:9092",
        'PlainLoginModule required username=a password="hunter2";',
        "-----BEGIN PRIVATE KEY-----\nhunter2\n-----END PRIVATE KEY-----",
        "oauth: principal=x secret=hunter2 scope=y",
    ],
)
def test_value_patterns_are_scrubbed(text: str) -> None:
    assert "hunter2" not in scrub(text)
    assert REDACTED in scrub(text)


def test_redact_keeps_pure_references_and_hides_literal_defaults() -> None:
    out = redact({"sasl.password": "${PW}", "ssl.key.password": "${PW:hunter2}", " Token ": "abc"})
    assert out == {"sasl.password": "${PW}", "ssl.key.password": "${PW:[redacted]}", " Token ": REDACTED}


def test_messages_escape_controls_and_cut_long_values() -> None:
    line = one_line("bad \x1b[2J key\n" + "x" * 10_000)
    assert "\x1b" not in line and "\n" not in line and "\\x1b" in line
    assert len(line) < 500 and "more characters" in line


class _Trickle(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "1000")
        self.end_headers()
        try:
            for _ in range(20):
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.5)
        except OSError:
            pass

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def trickle() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Trickle)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_trickling_server_cannot_outlast_the_deadline(trickle: str) -> None:
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded):
        get_bounded(requests.Session(), trickle + "/api", deadline_s=2.0)
    assert time.monotonic() - started < 4


def test_urls_keep_their_query_and_lose_their_secrets() -> None:
    joined = join_url("http://h:9090/prom/?tenant=a", "/api/v1/query", {"query": "up"})
    assert joined == "http://h:9090/prom/api/v1/query?tenant=a&query=up"
    assert without_secrets("http://u:p@h:9090/x?token=t") == "http://h:9090/x"


@hypothesis.settings(max_examples=200, deadline=None)
@hypothesis.given(st.text(max_size=40), st.text(alphabet="ab_", min_size=1, max_size=5))
def test_promql_label_values_stay_one_value(value: str, job: str) -> None:
    """A matcher value or job name from a target file (`a"} or vector(1) or up{x="`) is one
    escaped string literal: parsed back, it is one matcher per label holding exactly the value."""
    import json

    from tuner.measure.dialects import _parse, scope_matchers

    parsed = _parse(scope_matchers(job, {"cluster": value}))
    assert [(k, op) for k, op, _ in parsed] == [("job", "="), ("cluster", "=")]
    # PromQL's double-quoted strings escape like JSON's for \\, \" and line breaks
    assert json.loads('"' + parsed[1][2] + '"') == value


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        ("partitions: 3", "partitions: true", "partitions: must be a number, not true"),
        ("partitions: 3", 'partitions: "\u0663"', "partitions: must be a whole number such as 12, in ASCII"),
        ("duration_s: 5", "duration_s: 1e-9", "workload.duration_s: must be greater than or equal to 1"),
        ("rate_per_producer: 10", "rate_per_producer: 1e-300", "must be at least 0.01 msgs/s"),
        (
            "linger_ms: 50",
            'linger_ms: 50, overrides: {queue.buffering.max.kbytes: "1e400"}',
            '"queue.buffering.max.kbytes": must be a whole',
        ),
        (
            "linger_ms: 50",
            'linger_ms: 50, overrides: {acks: "\u0661"}',
            '"acks": must be a whole number in ASCII digits',  # an integer to librdkafka
        ),
        ("linger_ms: 50", "linger_ms: true", "linger_ms: must be a number, not true"),
    ],
)
def test_one_number_grammar_in_specs(tmp_path: Path, old: str, new: str, words: str) -> None:
    from tests.e2e.bad_inputs import GOOD_SPEC
    from tuner.spec.loader import load_sweep

    assert old in GOOD_SPEC
    path = tmp_path / "spec.yaml"
    path.write_text(GOOD_SPEC.replace(old, new, 1))
    with pytest.raises(BadInput, match=re.escape(words)):
        load_sweep(path)


@hypothesis.settings(max_examples=60, deadline=None)
@hypothesis.given(
    st.sampled_from(["11s", "1.1ms", "1m", ".5h", "9"]),
    st.integers(min_value=1, max_value=400),
    st.text(max_size=2),
)
def test_durations_are_read_in_linear_time(unit: str, count: int, tail: str) -> None:
    """A run of terms with a bad end fails at once (the old pattern backtracked 2**count times)."""
    from tuner.spec.duration import Duration

    text = unit * count + "x" + tail
    started = time.monotonic()
    with pytest.raises(ValueError, match="must be a duration"):
        Duration.parse(text)
    assert time.monotonic() - started < 1  # a bound on hanging, not a speed figure


@hypothesis.settings(max_examples=60, deadline=None)
@hypothesis.given(
    st.sampled_from(["(a*)*", "(a+)+", "(a|a)*", "(a|aa)+", "(.*a){12}", "(\\w+\\s?)+"]),
    st.integers(min_value=1, max_value=200_000),
    st.sampled_from(["b", "!", "$", ""]),
)
def test_key_patterns_match_in_linear_time(hostile: str, length: int, tail: str) -> None:
    """keys.pattern runs on every event: patterns that make a backtracking engine run for ever
    (nested quantifiers against a long run that fails at its end) answer at once."""
    from tuner.spec.workload import KeySpec

    keys = KeySpec(kind="field", pattern=f"^{hostile}b$")
    text = "a" * length + tail
    started = time.monotonic()
    key = keys.key_of(text)
    assert time.monotonic() - started < 1  # a bound on hanging, not a speed figure
    needed = 12 if hostile.startswith("(.*a)") else 1  # the a's the pattern needs before the b
    assert (key is not None) == (tail == "b" and length >= needed)


_ATOMS = st.sampled_from(["a", "b", "[ab]", ".", "\\d", "x"])
_PIECE = st.builds(lambda atom, q: atom + q, _ATOMS, st.sampled_from(["", "*", "+", "?", "{1,3}"]))


@hypothesis.settings(max_examples=150, deadline=None)
@hypothesis.given(
    st.lists(_PIECE, max_size=3), st.lists(_PIECE, min_size=1, max_size=3), st.lists(_PIECE, max_size=3),
    st.text(alphabet="abx1 ", max_size=30),
)  # fmt: skip
def test_key_patterns_find_the_key_python_would(
    before: list[str], group: list[str], after: list[str], text: str
) -> None:
    """RE2 takes the same leftmost-first match as Python's re on the patterns both accept."""
    from tuner.spec.workload import KeySpec

    pattern = "".join(before) + "(" + "".join(group) + ")" + "".join(after)
    expected = re.search(pattern, text)
    assert KeySpec(kind="field", pattern=pattern).key_of(text) == (expected.group(1) if expected else None)


@hypothesis.settings(max_examples=100, deadline=None)
@hypothesis.given(st.text(max_size=80))
def test_any_key_pattern_is_accepted_or_one_line(pattern: str) -> None:
    from pydantic import ValidationError

    from tuner.spec.workload import KeySpec

    try:
        KeySpec(kind="field", pattern=pattern)
    except ValidationError as exc:
        (error,) = exc.errors()
        assert str(error["msg"]).startswith("Value error, keys") and "\n" not in str(error["msg"])


def test_the_output_gate_keeps_kbts_own_sequences_only() -> None:
    from tuner.core.text import gate

    hostile = "ok\n\x1b]52;c;cGF5bG9hZA==\x07\x1b[2J\rkbt: error: forged\t\u202eevil"
    assert (
        gate(hostile, tty=False)
        == "ok\n\\x1b]52;c;cGF5bG9hZA==\\x07\\x1b[2J\\x0dkbt: error: forged\t\\u202eevil"
    )
    coloured = "\x1b[1;31mred\x1b[0m\r\x1b[2K"
    assert gate(coloured, tty=True) == coloured  # rich's colours and status-line redraws
    assert gate("\x1b]0;title\x07", tty=True) == "\\x1b]0;title\\x07"


def test_json_values_are_counted_before_the_tree_is_built() -> None:
    """`[{},{},...]` beyond the node limit is refused from its text (no million dicts built); commas
    inside strings are not values."""
    many = "[" + "{}," * (inputs.MAX_NODES + 1) + "{}]"
    with pytest.raises(BadInput, match="more than 1,000,000 values"):
        inputs.parse_json(many, "r.json")
    quoted = '["' + "a," * (inputs.MAX_NODES + 1) + '"]'
    assert len(inputs.parse_json(quoted, "r.json")[0]) == 2 * (inputs.MAX_NODES + 1)


def test_a_name_the_os_refuses_is_no_file(tmp_path: Path) -> None:
    # Path.is_file() raises for a name over NAME_MAX (ENAMETOOLONG) instead of answering False
    from tuner.core import inputs
    from tuner.core.errors import BadInput
    from tuner.spec.loader import load_sweep

    long_name = "1.1ms" * 60 + "x"
    assert not inputs.is_file(tmp_path / long_name) and not inputs.exists(tmp_path / long_name)
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"name: s\nworkload: {long_name}\nprofiles: [p.yaml]\n")
    with pytest.raises(BadInput, match="no such file"):
        load_sweep(spec)


@hypothesis.settings(max_examples=150, deadline=None)
@hypothesis.given(
    st.one_of(
        st.text(max_size=12),
        st.sampled_from(["1e400", "inf", "-inf", "nan", "\u0660.\u0665", "\u00b2", "1_0", "33554432"]),
    )
)
def test_driver_numbers_from_client_properties_take_the_one_grammar(value: str) -> None:
    """buffer.memory and delivery.timeout.ms as a user writes them: a heap within bounds or one
    BadInput line, a bounded drain; float() took "1e400", "inf" and Arabic-Indic digits."""
    from tuner.driver.java_plan import HEAP_MAX_MB, drain_s, heap_mb

    try:
        heap = heap_mb(2, {"buffer.memory": value})
    except BadInput as exc:
        assert "\n" not in str(exc) and "buffer.memory" in str(exc)
    else:
        assert value.strip().isascii() and 0 < heap <= HEAP_MAX_MB
    assert 5 <= drain_s({"delivery.timeout.ms": value}) <= 600
