"""Load a Filebeat config fragment and check it: one line per problem, warnings for no-op settings.

Filebeat (go-ucfg) reads `a.b.c: 1` and `a: {b: {c: 1}}` alike, so keys are expanded on their dots
first, remembering the line each option came from:

    x.yml:7: output.kafka.bulk_max_sze: unknown option (did you mean "output.kafka.bulk_max_size"?)
"""

from __future__ import annotations

import functools
import os
import re
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from tuner.core.envref import is_pure_reference, parse_reference
from tuner.core.errors import BadInput, did_you_mean, field_message
from tuner.core.inputs import plain_data, shown_path
from tuner.core.redact import is_secret_name
from tuner.core.text import value as shown_value
from tuner.spec.filebeat import (
    KAFKA4_MIN_VERSION,
    LITERAL_SECRET,
    SECRET_OPTIONS,
    FilebeatConfig,
    version_tuple,
)
from tuner.spec.filebeat_lines import has_log_input
from tuner.spec.yaml_places import dotted_path, node_line

Path_ = tuple[str | int, ...]

# Filebeat settings outside output.kafka / queue.mem: allowed in a full filebeat.yml, not checked.
UNCHECKED_TOP_LEVEL = frozenset(
    {
        "filebeat", "processors", "logging", "monitoring", "http", "setup", "path", "name", "tags",
        "fields", "fields_under_root", "max_procs", "seccomp", "instrumentation", "features", "cloud",
        "keystore", "migration", "timestamp", "ilm", "xpack", "gc_percent",
    }
)  # fmt: skip
# Option values that are data, not options: their keys may contain dots.
_OPAQUE = frozenset({"mappings", "when", "codec"})


@dataclass(frozen=True)
class LoadedFilebeat:
    path: Path
    config: FilebeatConfig
    lines: dict[Path_, int] = field(default_factory=dict)

    def line_of(self, *option: str) -> int | None:
        return self.lines.get(tuple(option))

    def where(self, *option: str) -> str:
        return _at(shown_path(self.path), self.lines, option)


def load_filebeat(
    path: Path, filebeat_version: str | None = None, environ: Mapping[str, str] | None = None
) -> LoadedFilebeat:
    """Read, expand and validate one Filebeat YAML file; BadInput (one line) on any problem. What
    the file leaves unset is `filebeat_version`'s default (tuner/spec/filebeat_lines.py; None:
    the 7.17 build kbt runs). `${VAR}` references are read from `environ` (None: this process's
    environment) where kbt needs their value, as Filebeat would read them."""
    from tuner.spec.loader import read_yaml  # the loader reaches this module through the profile union

    path = Path(path)
    raw = read_yaml(path, "Filebeat configuration", go_yaml="v2")
    shown = shown_path(path)
    lines: dict[Path_, int] = {}
    try:
        data = _expand_into({}, raw, (), lines)
    except _ExpandError as exc:
        raise BadInput(f"{_at(shown, lines, exc.path)}: {dotted_path(exc.path)}: {exc}") from None
    whole = data
    env = os.environ if environ is None else environ
    _hosts_not_listed_references(whole, lines, shown, env)
    data = _select_sections(data, lines, shown)
    if filebeat_version is not None:
        _inputs_exist(whole, filebeat_version, lines, shown)
        data = {**data, "filebeat_version": filebeat_version}
    config = _validated(data, lines, shown, env)
    _no_literal_secrets(whole, (), lines, shown)  # after the schema, whose words are more precise
    return LoadedFilebeat(path=path, config=config, lines=lines)


def _validated(
    data: dict[str, Any], lines: dict[Path_, int], shown: str, environ: Mapping[str, str]
) -> FilebeatConfig:
    _resolve_references(data, FilebeatConfig, (), lines, shown, environ)
    try:
        return FilebeatConfig.model_validate(data)
    except ValidationError as exc:
        raise BadInput(describe_filebeat_error(exc, lines, shown)) from None


def _resolve_references(
    node: dict[str, Any],
    model: type[BaseModel],
    path: Path_,
    lines: dict[Path_, int],
    shown: str,
    environ: Mapping[str, str],
) -> None:
    """A `${VAR}` where the option takes a number, a boolean, a duration or one of some words
    (`bulk_max_size: ${BULK:2048}`) is read as Filebeat reads it: from the environment, else the
    reference's default, typed as go-ucfg types it. Options that take text (hosts, topic,
    credentials, paths) keep the reference: their value is the deployment's."""
    for key, value in node.items():
        info = model.model_fields.get(key)
        if info is None:
            continue  # an unknown option: the schema names it
        here = (*path, key)
        if isinstance(value, dict):
            for sub in models_in(info.annotation):
                _resolve_references(value, sub, here, lines, shown, environ)
            continue
        ref = parse_reference(value)
        if ref is None or _is_secret(here) or _takes(model, key, value):
            continue
        found = environ.get(ref.name, ref.default)
        if found is None:
            why = f": {shown_value(ref.required_message, 120)}" if ref.required_message else ""
            raise BadInput(
                f"{_at(shown, lines, here)}: {dotted_path(here)}: ${{{ref.name}}} is not set{why} (kbt"
                f" checks the value Filebeat reads from the environment: set {ref.name}, or give a"
                f" default as ${{{ref.name}:value}})"
            )
        node[key] = _scalar(found)


def _takes(model: type[BaseModel], key: str, value: str) -> bool:
    """True when the option takes the reference's text as it is: its type and its validators (run
    as an assignment to an empty section, whose checks across options are not this option's)."""
    try:
        model.__pydantic_validator__.validate_assignment(model.model_construct(), key, value)
    except ValidationError as exc:
        return not any(_about(err, key) for err in exc.errors(include_url=False))
    except (AttributeError, KeyError, TypeError):  # a check across options met the empty section
        return True
    return True


def _about(err: Any, key: str) -> bool:
    """The error is the option's own: at its place, or a section-level check naming it first."""
    loc = tuple(err["loc"])
    return loc[:1] == (key,) or (
        not loc and str(err["msg"]).removeprefix("Value error, ").startswith(f"{key}:")
    )


# How go-ucfg types a variable's value: a whole number, a decimal one, true/false; else a string.
_INT = re.compile(r"[+-]?[0-9]+", re.ASCII)
_FLOAT = re.compile(r"[+-]?[0-9]+\.[0-9]+", re.ASCII)


def _scalar(text: str) -> Any:
    text = text.strip()
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    return {"true": True, "false": False}.get(text, text)


def _at(shown: str, lines: Mapping[Path_, int], *options: Path_) -> str:
    """`file:line` of the first of `options` the file gives a line for (the file alone for none)."""
    line = next((lines[option] for option in options if option in lines), None)
    return f"{shown}:{line}" if line else shown


def _hosts_not_listed_references(
    data: dict[str, Any], lines: dict[Path_, int], shown: str, environ: Mapping[str, str]
) -> None:
    """`hosts: ["${KAFKA_HOSTS}"]` checks fine with one broker in the variable, and stops Filebeat
    7.17 when it holds several: go-ucfg reads "h1:9092,h2:9092" as a list, which becomes a list
    inside the list ("can not convert 'object' into 'string' accessing 'output.kafka.hosts.0'").
    A list of several references (`["${BROKER_1}", "${BROKER_2}"]`) names one broker per variable:
    refused only where this environment gives one of them several."""
    output = data.get("output")
    kafka = output.get("kafka") if isinstance(output, dict) else None
    hosts = kafka.get("hosts") if isinstance(kafka, dict) else None
    listed = hosts if isinstance(hosts, list) else []
    for i, item in enumerate(listed):
        ref = parse_reference(item)
        if ref is None:
            continue
        where = _at(shown, lines, ("output", "kafka", "hosts", i), ("output", "kafka", "hosts"))
        if len(listed) == 1:
            raise BadInput(
                f"{where}: output.kafka.hosts: a ${{{ref.name}}} list element"
                " makes Filebeat exit when the variable holds several brokers (h1:9092,h2:9092): write"
                f' hosts: "${{{ref.name}}}" (the variable alone, not in a list)'
            )
        if "," in environ.get(ref.name, ref.default or ""):
            raise BadInput(
                f"{where}: output.kafka.hosts: ${{{ref.name}}} holds several brokers here, and as one"
                " element of the list it makes Filebeat exit: give each element one broker, or write"
                f' hosts: "${{{ref.name}}}" alone'
            )


def _inputs_exist(data: dict[str, Any], version: str, lines: dict[Path_, int], shown: str) -> None:
    """A `log` input under filebeat.inputs stops Filebeat 9.x from starting: say so by line."""
    if has_log_input(version):
        return
    section = data.get("filebeat")
    inputs = section.get("inputs") if isinstance(section, dict) else None
    for entry in inputs if isinstance(inputs, list) else []:
        if isinstance(entry, dict) and entry.get("type", "log") == "log":
            raise BadInput(
                f"{_at(shown, lines, ('filebeat', 'inputs'))}: filebeat.inputs: a log input: Filebeat"
                f" {version} has none (disabled since 9.0); use type: filestream"
            )


def _no_literal_secrets(node: Any, path: Path_, lines: dict[Path_, int], shown: str) -> None:
    """Every secret-named setting anywhere in the file (output.kafka, monitoring.elasticsearch,
    setup.kibana, ...) is a pure ${VAR} reference: a literal, or ${VAR:literal-default}, is refused
    before any section is selected (kbt reads only some sections, but the file is the user's)."""
    if isinstance(node, dict):
        for key, value in node.items():
            _no_literal_secrets(value, (*path, str(key)), lines, shown)
        return
    if isinstance(node, list):
        for value in node:
            _no_literal_secrets(value, path, lines, shown)
        return
    secret = bool(path) and is_secret_name(".".join(map(str, path)))
    if secret and node not in (None, "") and not is_pure_reference(node):
        raise BadInput(f"{_at(shown, lines, path)}: {dotted_path(path)}: {LITERAL_SECRET}")


def filebeat_warnings(loaded: LoadedFilebeat, topic_max_message_bytes: int | None = None) -> list[str]:
    """Settings that are valid but do not do what they seem to (each a one-line message)."""
    cfg = loaded.config
    kafka, mem = cfg.kafka, cfg.mem

    def option(name: str) -> str:  # `file:line: output.kafka.<name>`
        return f"{loaded.where('output', 'kafka', *name.split('.'))}: output.kafka.{name}"

    out: list[str] = []
    if kafka.bulk_max_size > mem.max_get_events:
        unset = "" if loaded.line_of("output", "kafka", "bulk_max_size") else " (unset: the default)"
        out.append(
            f"{option('bulk_max_size')} {kafka.bulk_max_size}{unset} has no effect beyond"
            f" {mem.max_get_events}: the memory queue hands the output at most {mem.max_get_events}"
            " events per batch (raise queue.mem.flush.min_events and queue.mem.events with it)"
        )
    out += _line_warnings(loaded)
    if topic_max_message_bytes is not None and kafka.max_message_bytes > topic_max_message_bytes:
        out.append(
            f"{option('max_message_bytes')} {kafka.max_message_bytes} exceeds the topic's"
            f" max.message.bytes {topic_max_message_bytes}: the broker rejects larger batches and"
            " Filebeat drops their events"
        )
    if version_tuple(kafka.version) < KAFKA4_MIN_VERSION:
        out.append(
            f"{option('version')} {kafka.version} is too old for Kafka 4.x brokers (use 2.1.0 or newer)"
        )
    if kafka.compression != "gzip" and loaded.line_of("output", "kafka", "compression_level"):
        out.append(f"{option('compression_level')} only applies to gzip (compression is {kafka.compression})")
    if kafka.required_acks == 0:
        out.append(f"{option('required_acks')} 0: the broker never answers, so lost events go unnoticed")
    if not kafka.enabled:
        out.append(f"{option('enabled')} false: Filebeat sends nothing to Kafka with this file")
    if kafka.sasl.mechanism is not None and kafka.username is None:
        out.append(f"{option('sasl.mechanism')} has no effect without username and password")
    return out


def _line_warnings(loaded: LoadedFilebeat) -> list[str]:
    """Where the file's queue does something else than it seems on its Filebeat version line."""
    cfg = loaded.config
    mem, line = cfg.mem, cfg.line
    timeout = mem.effective_flush_timeout
    where = loaded.where("queue", "mem", "flush", "timeout")
    if timeout.seconds <= 0:
        return []
    if line.fill == "flush.min_events" and cfg.batch_events < cfg.fill_events:
        return [
            f"{loaded.where('output', 'kafka', 'bulk_max_size')}: on Filebeat {line.name} the queue waits"
            f" for flush.min_events ({cfg.fill_events}) events or flush.timeout ({timeout}) before it"
            f" hands over any batch of bulk_max_size ({cfg.batch_events}); only 8.13 and later wait for"
            " bulk_max_size alone"
        ]
    if line.fill == "batch" and timeout.seconds > 1:
        rate = cfg.fill_events / timeout.seconds
        return [
            f"{where}: queue.mem.flush.timeout {timeout} (Filebeat {line.name}'s default is"
            f" {line.queue_timeout}): a pod writing fewer than {rate:g} events/s holds each batch of"
            f" {cfg.fill_events} up to {timeout} before sending it; for low-rate pods set flush.timeout: 0s"
            " and let output.kafka.bulk_flush_frequency bound the wait"
        ]
    return []


# ---- dotted-key expansion -----------------------------------------------------------------------


class _ExpandError(ValueError):
    def __init__(self, message: str, path: Path_) -> None:
        super().__init__(message)
        self.path = path


def expand_dotted(node: Mapping[Any, Any]) -> dict[str, Any]:
    """Dotted keys as nested sections, as Filebeat reads them (ValueError for a setting set twice)."""
    try:
        return _expand_into({}, node, (), {})
    except _ExpandError as exc:
        raise ValueError(f'"{".".join(map(str, exc.path))}" {exc}') from None


def _expand_into(
    target: dict[str, Any], node: Mapping[Any, Any], prefix: Path_, lines: dict[Path_, int]
) -> dict[str, Any]:
    """`node`'s options into `target` (returned), their lines into `lines`."""
    for key, value in node.items():
        parts = (str(key),) if prefix and prefix[-1] in _OPAQUE else tuple(str(key).split("."))
        if any(not p for p in parts):
            raise _ExpandError(f'bad option name "{key}"', prefix)
        line = node_line(node, key)
        full = prefix + parts
        if line:
            lines[full] = line
        here = target
        # every part a section but the last, unless the value is a section too
        for i, part in enumerate(parts if isinstance(value, Mapping) else parts[:-1]):
            sub_path = prefix + parts[: i + 1]
            if line:
                lines.setdefault(sub_path, line)
            existing = here.setdefault(part, {})
            if not isinstance(existing, dict):
                raise _ExpandError("is set twice (as a value and as a section)", sub_path)
            here = existing
        if isinstance(value, Mapping):
            _expand_into(here, value, full, lines)
        elif parts[-1] in here:
            raise _ExpandError("is set twice", full)
        else:
            here[parts[-1]] = _expand_value(value, full, lines)
    return target


def _expand_value(value: Any, path: Path_, lines: dict[Path_, int]) -> Any:
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        items: list[Any] = []
        for i, item in enumerate(value):
            line = node_line(value, i)
            if line:
                lines[(*path, i)] = line
            items.append(
                _expand_into({}, item, (*path, i), lines) if isinstance(item, Mapping) else plain_data(item)
            )
        return items
    return plain_data(value)


def _select_sections(data: dict[str, Any], lines: dict[Path_, int], shown: str) -> dict[str, Any]:
    """Keep output.kafka and queue.mem; other Filebeat namespaces pass unchecked, typos fail."""
    checked = {"output": "kafka", "queue": "mem"}  # each namespace: the one section kbt reads
    for key in data:
        if key not in checked and key not in UNCHECKED_TOP_LEVEL:
            raise BadInput(_unknown_message(shown, (), key, lines))
    for section, only in checked.items():
        value = data.get(section)
        if isinstance(value, dict):
            # Filebeat takes one output and one queue, and skips those set `enabled: false`
            for key in (k for k, v in value.items() if k != only and not _disabled(v)):
                if did_you_mean(key, [only]):
                    raise BadInput(_unknown_message(shown, (section,), key, lines))
                where = _at(shown, lines, (section, key))
                raise BadInput(f"{where}: {section}.{key}: only {section}.{only} is supported")
    if "output" not in data:
        raise BadInput(f"{shown}: output.kafka: missing (the profile must configure the Kafka output)")
    return {
        k: {n: sub for n, sub in v.items() if n == checked[k] or not _disabled(sub)}
        if isinstance(v, dict)
        else v
        for k, v in data.items()
        if k in checked
    }


# `enabled` values Filebeat reads as false: a string Go's strconv.ParseBool reads as false (an
# unquoted no or off is already false: the file is read as Filebeat's YAML reader reads it).
_FALSE = frozenset({"0", "f", "F", "false", "FALSE", "False"})


def _disabled(section: Any) -> bool:
    """A section whose `enabled` Filebeat reads as false (anything else leaves it enabled)."""
    enabled = section.get("enabled") if isinstance(section, dict) else None
    return enabled is False or enabled in _FALSE


# ---- error messages -----------------------------------------------------------------------------


@functools.cache
def known_options(model: type[BaseModel] = FilebeatConfig, prefix: str = "") -> tuple[str, ...]:
    """Every option path the schema knows, e.g. "output.kafka.partition.round_robin.group_events"."""
    out: list[str] = []
    for name, info in model.model_fields.items():
        path = f"{prefix}{name}"
        out.append(path)
        for sub in models_in(info.annotation):
            out += known_options(sub, path + ".")
    return tuple(out)


def models_in(annotation: Any) -> list[type[BaseModel]]:
    """The settings models a field holds, through Optional, unions and Annotated (not in a list)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType) or origin is typing.Annotated:
        return [m for arg in typing.get_args(annotation) for m in models_in(arg)]
    return []


def _unknown_message(shown: str, parent: Path_, key: str, lines: dict[Path_, int]) -> str:
    full = dotted_path((*parent, key))
    hint = did_you_mean(full, known_options())
    # cut: a file that is not a Filebeat config (a line of it parsed as a key) is not echoed whole
    return f"{_at(shown, lines, (*parent, key), parent)}: {shown_value(full, 80)}: unknown option{hint}"


def describe_filebeat_error(exc: ValidationError, lines: dict[Path_, int], shown: str) -> str:
    """The first validation error as `file:line: option.path: message`."""
    err = exc.errors(include_url=False)[0]
    loc: Path_ = tuple(p for p in err["loc"] if not (isinstance(p, str) and "[" in p))
    kind, msg = err["type"], str(err["msg"]).removeprefix("Value error, ")
    unknown = re.match(r'unknown key "([^"]+)"', msg)
    if unknown:
        return _unknown_message(shown, loc, unknown.group(1), lines)
    named = re.match(r"^([a-z_][a-z0-9_.]*): (.*)$", msg)
    if kind == "value_error" and named and f"{dotted_path(loc)}.{named.group(1)}" in known_options():
        loc = (*loc, *named.group(1).split("."))
        msg = named.group(2)
    where = _at(shown, lines, *(loc[:i] for i in range(len(loc), -1, -1)))
    text = field_message({**err, "msg": msg}, noun="option", secret=_is_secret(loc))
    return f"{where}: {dotted_path(loc) or 'config'}: {text}"


def _is_secret(loc: Path_) -> bool:
    return any(str(p) in SECRET_OPTIONS for p in loc)
