"""The "one way in" rules, checked on the source: code that goes around a home in tuner/core fails
here, naming the file and line.

- numbers: no `isdigit()`/`isdecimal()`/`isnumeric()` (true for "\u0661\u0662"), and no `int()`/`float()` of
  text (a regex group, a stripped or split string, a value out of a parsed document) outside
  tuner/core/numbers.py: Python reads Unicode digits, "1_000", "inf" and "nan" as numbers;
- regexes: no unbounded-and-ambiguous Go-duration pattern (`[0-9]*\\.?[0-9]+` splits a run of
  digits two ways: "11s"*40+"x" backtracked for minutes);
- files: no `read_text()`/`read_bytes()`/`open()` of a path outside tuner/core/inputs.py (the
  bounded reader: regular files only, size cap, streamed limits) except the reviewed list below;
- HTTP: no urllib / requests call outside the client homes;
- PromQL: no label value put into a matcher by an f-string outside the builder
  (tuner/measure/promql.py `label_string`/`label_matchers`), which escapes it.

tuner/driver and tuner/runner read what kbt's own child processes write (their JSON lines, plans
kbt wrote itself), which is not user input; they are scanned for the file and HTTP rules only, and
each of their raw reads is on the reviewed list (a user's file there goes through the bounded
reader like anywhere else). Opening a file to write or append is not a read.
"""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "tuner"
_TEXTY = {
    "strip", "lstrip", "rstrip", "group", "groups", "split", "rsplit", "partition", "rpartition",
    "decode", "read", "readline", "removeprefix", "removesuffix", "replace", "getenv", "read_text",
    "lower", "upper", "get",
}  # fmt: skip
_INTERNAL = ("driver", "runner")  # kbt's own child-process protocols (see module doc)

# Reviewed uses: (file, source of the call) -> why it is not user input.
NUMBER_ALLOWED = {
    ("measure/cluster_snapshot.py", "int(row.get('network_threads', 0))"): "a count kbt itself set",
    ("model/cost.py", "float(coef[0])"): "numpy fit result",
    ("model/cost.py", "float(coef[1])"): "numpy fit result",
    ("model/cost.py", "float(coef[2])"): "numpy fit result",
    ("render/dashboards/targets.py", "float(s['value'])"): "kbt's own committed dashboard file",
    ("spec/yaml_places.py", "int(pos[0])"): "ruamel line number",
    ("spec/stress_load.py", "float(b[DIAGNOSE_RATE_KEY])"): "checked to be a JSON number just before",
    ("target/ledger.py", "int(owner.get('pid', 0))"): "kbt's own ledger, pid checked by the OS call",
    ("measure/threads.py", "int(match.group(1))"): "a thread id in jcmd's dump of the lab's own broker",
    ("core/properties.py", "int(value[i + 2:i + 6], 16)"): "four hex digits a fullmatch checked first",
    ("model/queueing.py", "float(probs[-1])"): "numpy result",
    ("core/go_yaml.py", "float(text.replace('_', ''))"): "a scalar the resolver matched to Go's float syntax",
    ("model/queueing.py", "float(x[0])"): "scipy fit result",
    ("model/queueing.py", "float(x[1])"): "scipy fit result",
    ("model/queueing.py", "float(x[2])"): "scipy fit result",
    ("model/queueing.py", "float(x[3])"): "scipy fit result",
    ("model/queueing.py", "float(x[4])"): "scipy fit result",
}
# Reviewed raw reads: file -> why the path is not a user's.
READ_ALLOWED = {
    "core/inputs.py": "the bounded reader itself",
    "core/writes.py": "the writer (opens its own temp file)",
    "spec/package_data.py": "package data (the clients' generated tables)",
    "driver/rdkafka_config.py": "the table librdkafka printed into its own temporary file",
    "spec/thresholds.py": "package data",
    "spec/error_bands.py": "package data (the generated error bands)",
    "cli/components.py": "the checkout's go.mod",
    "cli/generate.py": "generated files of the checkout",
    "lab/processes.py": "/proc and the lab's own pid files",
    "measure/threads.py": "/proc files of the lab's own broker threads and the host",
    "lab/lab.py": "the lab's own lock and log files",
    "lab/security.py": "secrets the lab generated itself (mode 0600)",
    "render/dashboards/targets.py": "kbt's own committed dashboard file",
    "driver/delivery/ledger.py": "the acked and ranges files kbt's own engines wrote",
    "driver/filebeat/real.py": "the log and corpus of the Filebeat run kbt started",
    "driver/otelcol/engine.py": "the log and corpus of the collector run kbt started",
    "driver/tailed/writer.py": "the plan kbt wrote for its own log writer",
    "lab/node_config.py": "kbt's own committed jmx_exporter rules files (exporters/)",
    "driver/locust/stress_user.py": "the stress plan kbt wrote for its own workers",
    "runner/stress/locust_processes.py": "the logs of the locust processes kbt started",
    "runner/stress/worker.py": "the plan kbt wrote for its own worker",
    "runner/simulation_cache.py": "kbt's own source files (a hash of the code a result came from)",
    "driver/tailed/pods.py": "the output file of the shipper process kbt started",
    "core/client_log.py": "the librdkafka log file kbt's own clients appended to (a run's or a command's)",
}
HTTP_HOMES = {
    "core/net.py": "the bounded client",
    "measure/prometheus.py": "Prometheus, through core/net.get_bounded",
    "lab/health.py": "the lab's own Prometheus on 127.0.0.1",
    "lab/toxiproxy.py": "the lab's own Toxiproxy API on 127.0.0.1",
    "driver/filebeat/real.py": "the stats port of the Filebeat kbt started",
    "driver/otelcol/engine.py": "the telemetry port of the collector kbt started (core/net.get_bounded)",
}


def _sources() -> list[tuple[str, ast.Module]]:
    return [(str(p.relative_to(ROOT)), ast.parse(p.read_text(), str(p))) for p in sorted(ROOT.rglob("*.py"))]


def _texty(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value not in ("inf", "-inf", "nan")
    if isinstance(node, ast.Subscript):
        return True
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in _TEXTY:
            return True
        if isinstance(sub, ast.Attribute) and sub.attr == "environ":
            return True
    return False


def number_violations(sources: list[tuple[str, ast.Module]]) -> list[str]:
    found = []
    for name, tree in sources:
        if name == "core/numbers.py" or name.split("/")[0] in _INTERNAL:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if (isinstance(func, ast.Attribute) and func.attr in ("isdigit", "isdecimal", "isnumeric")) or (
                isinstance(func, ast.Name)
                and func.id in ("int", "float")
                and node.args
                and _texty(node.args[0])
                and (name, ast.unparse(node)) not in NUMBER_ALLOWED
            ):
                found.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
    return found


def read_violations(sources: list[tuple[str, ast.Module]]) -> list[str]:
    found = []
    for name, tree in sources:
        if name in READ_ALLOWED:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            # the mode: open(path, mode) takes it second, Path.open(mode) first
            at = 1 if isinstance(node.func, ast.Name) else 0
            mode = node.args[at] if len(node.args) > at else None
            mode = next((k.value for k in node.keywords if k.arg == "mode"), mode)
            if isinstance(mode, ast.Constant) and isinstance(mode.value, str) and mode.value[:1] in "wax":
                continue  # a write
            func = node.func
            raw_read = isinstance(func, ast.Attribute) and func.attr in ("read_text", "read_bytes")
            raw_open = isinstance(func, ast.Name) and func.id == "open"
            path_open = (
                isinstance(func, ast.Attribute)
                and func.attr == "open"
                and not (
                    isinstance(func.value, ast.Name)
                    and func.value.id in ("os", "tarfile", "zipfile", "webbrowser")
                )
            )
            if raw_read or raw_open or path_open:
                found.append(f"{name}:{node.lineno}: {ast.unparse(node)[:100]}")
    return found


def http_violations(sources: list[tuple[str, ast.Module]]) -> list[str]:
    found = []
    for name, tree in sources:
        if name in HTTP_HOMES:
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "requests"
                and node.attr in ("get", "post", "Session", "request")
            ):
                found.append(f"{name}:{node.lineno}: requests.{node.attr}")
            if isinstance(node, ast.Attribute) and node.attr == "urlopen":
                found.append(f"{name}:{node.lineno}: urlopen")
    return found


PROMQL_ALLOWED = {
    "measure/promql_views.py": "kbt's own request names and quantiles (module constants' values)",
    "measure/dialects.py": "a message naming a matcher, not a query",
    "render/dialect_rules.py": "a dialect's own label values from kbt's dialect tables, not input",
    "render/report.py": "HTML attributes, escaped by the report's esc()",
    "target/security.py": "a JAAS option rewritten with its resolved value, not PromQL",
    "target/engine_security.py": "a JAAS line for the Java producer (a password reference), not PromQL",
}


def promql_violations(sources: list[tuple[str, ast.Module]]) -> list[str]:
    """f-strings that put a value into a PromQL label matcher (`k="{v}"`) outside the builder in
    tuner/measure/promql.py; kbt's own constants (ALL_CAPS names) and regexes built by
    topic_regex are fine."""
    found = []
    for name, tree in sources:
        if name == "measure/promql.py" or name in PROMQL_ALLOWED:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.JoinedStr):
                continue
            parts = node.values
            for before, value in itertools.pairwise(parts):
                if not (isinstance(before, ast.Constant) and isinstance(before.value, str)):
                    continue
                if not before.value.endswith(('="', '=~"', '!="', '!~"')):
                    continue
                inner = value.value if isinstance(value, ast.FormattedValue) else None
                constant = isinstance(inner, ast.Name) and inner.id.isupper()
                built = isinstance(inner, ast.Call) and ast.unparse(inner.func) in (
                    "topic_regex",
                    "label_string",
                )
                if inner is not None and not constant and not built:
                    found.append(f"{name}:{node.lineno}: {ast.unparse(node)[:100]}")
    return found


def duration_pattern_violations(sources: list[tuple[str, ast.Module]]) -> list[str]:
    bad = r"[0-9]*\.?[0-9]+"
    return [
        f"{name}:{node.lineno}"
        for name, tree in sources
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and bad in node.value
    ]


@pytest.fixture(scope="module")
def sources() -> list[tuple[str, ast.Module]]:
    return _sources()


def test_numbers_only_through_the_grammar(sources: list[tuple[str, ast.Module]]) -> None:
    assert number_violations(sources) == []


def test_user_files_only_through_the_bounded_reader(sources: list[tuple[str, ast.Module]]) -> None:
    assert read_violations(sources) == []


def test_http_only_through_the_client_homes(sources: list[tuple[str, ast.Module]]) -> None:
    assert http_violations(sources) == []


def test_promql_label_values_only_through_the_builder(sources: list[tuple[str, ast.Module]]) -> None:
    assert promql_violations(sources) == []


def test_no_ambiguous_duration_pattern(sources: list[tuple[str, ast.Module]]) -> None:
    assert duration_pattern_violations(sources) == []


def test_the_scan_catches_what_it_forbids() -> None:
    """The rules fail on code that goes around the homes (so an empty list above means something)."""
    code = ast.parse(
        "int(m.group(1))\nfloat(text.strip())\nx.isdigit()\nPath(p).read_text()\nopen(p)\n"
        "requests.get(u)\nurllib.request.urlopen(u)\nre.compile(r'([0-9]*\\.?[0-9]+)s')\n"
        "q = f'up{{cluster=\"{cluster}\"}}'\n"
    )
    fake = [("spec/new.py", code)]
    assert len(number_violations(fake)) == 3
    assert len(read_violations(fake)) == 2
    assert len(http_violations(fake)) == 2
    assert len(duration_pattern_violations(fake)) == 1
    assert len(promql_violations(fake)) == 1
