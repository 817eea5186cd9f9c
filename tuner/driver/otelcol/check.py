"""The collector's own `validate` on a rendered fragment (the otelcol kind's checker).

A fragment holds only the batching options kbt recommends; the collector refuses a config without a
pipeline, so the fragment is validated merged over a stub base (a filelog receiver, the kafka
exporter to a placeholder broker, one logs pipeline) exactly as a user merges it
(`--config base.yaml --config fragment.yaml`). `${env:VAR}` references resolve as the collector run
here would resolve them, from this environment; an unset one, or one a secret-named key holds, to a
placeholder word (a complaint then names the unset ones: a numeric option needs its value).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from tuner.core.envref import collector_names, collector_reference
from tuner.core.errors import BadInput
from tuner.core.inputs import parse_yaml, plain_data, read_text, shown_path, type_name
from tuner.core.redact import is_secret_name
from tuner.driver.otelcol.build import require_collector, validate

STUB = {
    "receivers": {"file_log": {"include": ["/nonexistent/kbt-stub.log"]}},
    "exporters": {"kafka": {"brokers": ["127.0.0.1:9092"]}},
    "service": {
        "pipelines": {"logs": {"receivers": ["file_log"], "exporters": ["kafka"]}},
        "telemetry": {"metrics": {"level": "none"}},
    },
}


MAX_FRAGMENT_BYTES = 1 << 20  # a collector config is a few KB


def _settings(data: object) -> Iterator[tuple[str, str, object]]:
    """Every (dotted key, key, value) under `data`, a mapping's entries and a list's items alike."""
    stack: list[tuple[object, str]] = [(data, "")]
    while stack:
        node, at = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                name = f"{at}.{key}" if at else str(key)
                yield name, str(key), value
                stack.append((value, name))
        elif isinstance(node, list):
            stack.extend((v, f"{at}[{i}]") for i, v in enumerate(node))


def _literal_secret(data: object) -> str | None:
    """The dotted key of the first secret-named key holding a literal value (not `${env:VAR}`)."""
    for name, key, value in _settings(data):
        literal = isinstance(value, str | int | float) and value != ""
        ref = collector_reference(value)
        reference = ref is not None and ref.default is None
        if is_secret_name(key) and literal and not reference:
            return name
    return None


def check_fragment(path: Path) -> str | None:
    """None when the collector accepts `path` merged over the stub, else its one-line complaint.
    The file comes through the bounded reader and parser (BadInput: not a regular file, too large,
    not YAML), which also registers its secrets with the scrubber: the collector's complaint may
    quote a value. A secret written in it is refused before the collector runs, as `check filebeat`
    refuses one."""
    text = read_text(path, "collector config", MAX_FRAGMENT_BYTES)
    data = plain_data(parse_yaml(text, shown_path(path), go_yaml="v3"))
    if data is not None and not isinstance(data, dict):  # empty: the stub alone, as the collector merges it
        raise BadInput(
            f"{shown_path(path)}: expected a mapping of keys at the top level, not {type_name(data)}"
        )
    key = _literal_secret(data)
    if key is not None:
        raise BadInput(
            f'{shown_path(path)}: "{key}" must be an ${{env:VAR}} reference'
            " (credentials are never written in a file)"
        )
    listed = _listed_broker_reference(data, os.environ)
    if listed is not None:
        raise BadInput(f"{shown_path(path)}: {listed}")
    binary = require_collector()
    env = _substitutions(data, text)
    with tempfile.TemporaryDirectory(prefix="kbt-otelcheck-") as tmp:
        base = Path(tmp) / "base.yaml"
        base.write_text(json.dumps(STUB), encoding="utf-8")
        merged = Path(tmp) / "merged.yaml"
        merged.write_text(text, encoding="utf-8")
        problem = validate(binary, [base, merged], env)
    unset = sorted(name for name in env if name not in os.environ)
    if problem is not None and unset:
        problem += f" (not set here, given a placeholder: {', '.join(f'${{env:{n}}}' for n in unset)})"
    return problem


PLACEHOLDER = "kbt-placeholder"


def _listed_broker_reference(data: object, environ: Mapping[str, str]) -> str | None:
    """A kafka exporter's `brokers: ["${env:KAFKA_HOSTS}"]`: the collector reads the variable alone
    (`brokers: ${env:KAFKA_HOSTS}`) into a list of every broker, but as a list element it is one
    seed "h1:9092,h2:9092" that resolves nowhere, and the exporter drops every record while the
    collector runs on (checked with 0.165). A list of several references names one broker each:
    refused only where this environment gives one of them several."""
    exporters = data.get("exporters") if isinstance(data, dict) else None
    for name, exporter in exporters.items() if isinstance(exporters, dict) else ():
        brokers = exporter.get("brokers") if isinstance(exporter, dict) else None
        if str(name).split("/")[0] != "kafka" or not isinstance(brokers, list):
            continue
        for item in brokers:
            ref = collector_reference(item)
            if ref is None or ref.default is not None:
                continue
            var = ref.name
            at = f"exporters.{name}.brokers"
            if len(brokers) == 1:
                return (
                    f"{at}: a ${{env:{var}}} list element is one broker address to the collector: with"
                    f" several brokers in the variable every record is dropped; write brokers:"
                    f" ${{env:{var}}} (the variable alone, not in a list)"
                )
            if "," in environ.get(var, ""):
                return (
                    f"{at}: ${{env:{var}}} holds several brokers here, and as one element of the list"
                    f" the collector takes them for one address: give each element one broker, or write"
                    f" brokers: ${{env:{var}}} alone"
                )
    return None


def _substitutions(data: object, text: str) -> dict[str, str]:
    """A value for each `${env:VAR}` the file names: this environment's, else the placeholder; a
    variable a secret-named key holds always the placeholder (its value never reaches a message)."""
    secret = {
        name
        for _, key, value in _settings(data)
        if isinstance(value, str) and is_secret_name(key)
        for name, _ in collector_names(value)
    }
    # `${env:VAR:-default}` with VAR unset here: the collector takes the default, as it will where
    # the variable is unset there too; a placeholder would replace a good default with a bad value
    named = collector_names(text)
    defaulted = {n for n, fallback in named if fallback} - {n for n, fallback in named if not fallback}
    return {
        name: PLACEHOLDER if name in secret else os.environ.get(name, PLACEHOLDER)
        for name, _ in named
        if name in secret or name in os.environ or name not in defaulted
    }
