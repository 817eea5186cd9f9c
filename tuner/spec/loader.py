"""Load YAML specs; turn every problem into ONE line naming the file, line and key.

    loadtests/x.yaml:7: profiles[0]: unknown key "lingr_ms" (did you mean "linger_ms"?)

A sweep may reference its workload and profiles by file (paths relative to the sweep file); log
file paths in a message source are relative to the file that names them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from tuner.core import inputs
from tuner.core.errors import BadInput, did_you_mean, field_message
from tuner.spec.clients import KINDS, ClientProfile, profile_of
from tuner.spec.sweep import RunPlan, SweepSpec
from tuner.spec.workload import WorkloadSpec, dump_keeping_path
from tuner.spec.yaml_places import dotted_path, located, node_at

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


@dataclass(frozen=True)
class LoadedSweep:
    path: Path
    spec: SweepSpec
    runs: list[RunPlan]
    # A client's own config file a profile was read from, by the profile's name (its client's own
    # checker reads the file before anything runs: tuner/runner/preflight.py).
    own_files: Mapping[str, Path] = field(default_factory=dict)


def read_yaml(path: Path, what: str = "spec file", go_yaml: inputs.GoYaml | None = None) -> Any:
    """Parse YAML keeping line numbers (ruamel round-trip) through the input boundary (regular
    file, size, depth and alias limits, finite numbers); one-line BadInput on any problem. `what`
    is how a message calls the file ("no such Filebeat configuration"); `go_yaml`: a file a
    client written in Go reads, typed as its reader types it."""
    data = inputs.read_yaml(path, what, go_yaml=go_yaml)
    if not isinstance(data, Mapping):
        raise BadInput(f"{inputs.shown_path(path)}: expected a mapping of keys at the top level")
    return data


def validated(validate: Callable[..., T], data: Any, raw: Any, path: Path) -> T:
    """`data` read from `path` (`raw`: its YAML, which keeps the lines) through `validate`, with
    the file's directory as the base of relative paths; one BadInput line on any problem."""
    try:
        return validate(data, context={"base_dir": path.parent})
    except ValidationError as exc:
        raise BadInput(describe_error(exc, raw, inputs.shown_path(path))) from None


def load_model(model: type[M], path: Path, raw: Any | None = None, what: str = "spec file") -> M:
    """Validate one YAML file (or its already-read mapping) against `model`."""
    raw = read_yaml(path, what) if raw is None else raw
    return validated(model.model_validate, inputs.plain_data(raw), raw, path)


def load_workload(path: Path) -> WorkloadSpec:
    return load_model(WorkloadSpec, path)


def load_profile(
    path: Path, client: str | None = None, own_files: dict[str, Path] | None = None
) -> ClientProfile:
    """A profile file, or a client's own config file as the profile it stands for
    (ClientKind.own_file_profile): a team's filebeat.yml, or any client's file named with its kind
    (`client`: `java:producer.properties`); such a file is kept in `own_files` by the profile's name."""
    if client is not None:
        own = KINDS[client].own_file_profile(path, None)
        if own is None:
            raise BadInput(f"{inputs.shown_path(path)}: kbt does not read {client}'s own files as profiles")
        return _own(validated(profile_of, own, own, path), path, own_files)  # a refusal names its key
    raw = read_yaml(path)
    data = inputs.plain_data(raw)
    for kind in KINDS.values():
        own = kind.own_file_profile(path, data)
        if own is not None:
            return _own(validated(profile_of, own, own, path), path, own_files)
    return validated(profile_of, data, raw, path)


def _own(profile: ClientProfile, path: Path, own_files: dict[str, Path] | None) -> ClientProfile:
    if own_files is not None:
        own_files[profile.name] = path
    return profile


def read_references(data: dict[str, Any], raw: Any, path: Path, profiles: type[Any]) -> dict[str, Path]:
    """Read in, each validated against its own file, the workload and the profiles (a `profiles`
    list or mapping) that the spec at `path` names by file (relative to it); the clients' own
    files among them, by profile name."""
    own_files: dict[str, Path] = {}
    if isinstance(data.get("workload"), str):
        workload = load_workload(referenced_file(data["workload"], path, raw, ("workload",)))
        data["workload"] = dump_keeping_path(workload)
    items = data.get("profiles")
    if isinstance(items, profiles):
        for key in items if isinstance(items, dict) else range(len(items)):
            if isinstance(items[key], str):
                kind, ref = _own_file_kind(items[key], path, raw, ("profiles", key))
                profile = load_profile(referenced_file(ref, path, raw, ("profiles", key)), kind, own_files)
                items[key] = dump_keeping_path(profile)
    return own_files


def _own_file_kind(ref: str, path: Path, raw: Any, loc: tuple[str | int, ...]) -> tuple[str | None, str]:
    """`java:producer.properties` -> ("java", "producer.properties"); a plain file name -> (None,
    the name). A prefix naming no kind, on a file that is not there, is one line with a hint."""
    client, named, rest = ref.partition(":")
    if named and client in KINDS:
        return client, rest
    line = located(raw, loc)[1]
    where = f"{inputs.shown_path(path)}:{line}" if line else inputs.shown_path(path)
    if named and re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", client) and not inputs.is_file(path.parent / ref):
        hint = did_you_mean(client.lower(), KINDS) or f" (one of: {', '.join(KINDS)})"
        raise BadInput(f"{where}: {dotted_path(loc)}: unknown client {client!r}{hint}")
    suffix = Path(ref).suffix.lower()
    readers = [f"{k}:{ref}" for k, kind in KINDS.items() if suffix in kind.own_file_suffixes]
    if readers:
        raise BadInput(f"{where}: {dotted_path(loc)}: {ref} says no client: name it {' or '.join(readers)}")
    return None, ref


def load_sweep(path: Path) -> LoadedSweep:
    """Load a sweep spec, resolve referenced workload/profile files, and expand its runs."""
    path = Path(path)
    raw = read_yaml(path)
    data = inputs.plain_data(raw)
    own_files = read_references(data, raw, path, list)
    spec = validated(SweepSpec.model_validate, data, raw, path)
    try:
        runs = spec.expand(base_dir=path.parent)
    except ValueError as exc:
        raise BadInput(f"{inputs.shown_path(path)}: {exc}") from None
    return LoadedSweep(path=path, spec=spec, runs=runs, own_files=own_files)


def select_runs(loaded: LoadedSweep, names: str) -> LoadedSweep:
    """The sweep cut to the runs named (comma-separated), in the spec's order; one line for a name
    the spec does not have. A run keeps its plan, so `--resume` over the whole spec later finds it."""
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    if not wanted:
        raise BadInput("--only: name at least one run (comma-separated)")
    known = [plan.name for plan in loaded.runs]
    for name in wanted:
        if name not in known:
            raise BadInput(
                f'--only: {inputs.shown_path(loaded.path)} has no run "{name}"{did_you_mean(name, known)}'
                f" (its runs: {', '.join(known)})"
            )
    kept = [plan for plan in loaded.runs if plan.name in wanted]
    return LoadedSweep(loaded.path, loaded.spec, kept, loaded.own_files)


def referenced_file(ref: str, path: Path, raw: Any, loc: tuple[str | int, ...]) -> Path:
    """The file the spec at `path` names at `loc` (relative to the spec); one line naming the key
    when it is absent or not a file (a directory, a FIFO, a device)."""
    target = path.parent / ref
    if not inputs.is_file(target):  # before resolve(), which raises on a NUL in the name
        line = located(raw, loc)[1]
        where = f":{line}" if line else ""
        key = dotted_path(loc)
        raise BadInput(f"{inputs.shown_path(path)}{where}: {key}: {_not_a_file(target, ref)}")
    return target.resolve()


def _not_a_file(target: Path, ref: str) -> str:
    """Why `target` is no file to read: absent, or what is there instead (a directory, a FIFO or
    /dev/zero named as a profile was "no such file")."""
    kind = inputs.not_a_file(target)
    return f'"{ref}" is {kind}, not a file' if kind else f'no such file "{ref}"'


# ---- error formatting -------------------------------------------------------------------------


def _override_line(raw: Any, loc: tuple[Any, ...], text: str) -> int | None:
    """The line of the client property a profile's refusal names (a key of its `overrides`,
    quoted or as the property refused), else None."""
    overrides = node_at(raw, (*loc, "overrides"))
    if not isinstance(overrides, Mapping):
        return None
    for key in overrides:
        if isinstance(key, str) and any(f in text for f in (f'"{key}"', f"`{key}`", f" {key}:")):
            return located(raw, (*loc, "overrides", key))[1]
    return None


def describe_error(exc: ValidationError, raw: Any, shown: str) -> str:
    """The first validation error as `file:line: key.path: message` (+ a count of the others)."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    loc, line = located(raw, tuple(first["loc"]), keep_last=first["type"] == "missing")
    text = field_message(first)
    # point at the offending key's own line: an unknown key, or another client kind's setting
    unknown = re.match(r'unknown key "([^"]+)"|([a-z_]+): not a [\w.-]+ setting', text)
    if unknown:
        line = located(raw, (*loc, unknown.group(1) or unknown.group(2)))[1] or line
    line = _override_line(raw, loc, text) or line
    where = f"{shown}:{line}" if line else shown
    key = dotted_path(loc)
    more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
    return f"{where}: {key + ': ' if key else ''}{text}{more}"
