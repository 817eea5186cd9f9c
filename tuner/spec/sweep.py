"""SweepSpec: a workload and named profiles whose `vary:` lists expand to named runs.

    vary:                       # cross product of every list (and of `profiles`)
      profile.linger_ms: [0, 50, 500]
      workload.producers: [24, 48]
    runs:                       # or: an explicit subset, one mapping per run
      - {profile: filebeat-like}
      - {profile: batched-zstd, profile.linger_ms: 500}
    name_format: "{profile}-linger{linger_ms}"

Keys are `profile` (a profile name) or dotted paths: `workload.<field>`, `profile.<knob>` (a
top-level knob such as linger_ms) or any setting of a kind by its path in the profile, e.g.
`profile.filebeat.output.kafka.bulk_max_size` (typed and validated like the profile; a dict of raw
properties takes the rest of the path as its key, `profile.overrides.queue.buffering.max.ms`).

A varied value is the value its run runs: it replaces whatever else in the profile or its team file
decides the same setting (the kind's `drop_rivals`: a knob's property in `overrides`, under any name
the client takes for it; Filebeat's `worker` and `workers`; another partition strategy), as a
property on kafka-producer-perf-test's `--producer-props` replaces its `--producer.config` file's.
Two varied keys of one run that decide one setting are refused in one line, and so is a varied
setting the rest of the profile turns off (the kind's `idle`), unless the run sets that switch too.

An axis whose steps set different settings is a plain name with labelled steps; the label is what
run names read:

    vary:
      wait:
        freq-200: {profile.filebeat.output.kafka.bulk_flush_frequency: 200ms}
        queue-200: {profile.filebeat.queue.mem.flush.timeout: 200ms}
      profile.filebeat.output.kafka.compression: [lz4, gzip]
    name_format: "{wait}-{compression}"
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import string
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, get_args, get_origin

from pydantic import BaseModel, Field, ValidationError, model_validator

from tuner.core.errors import did_you_mean, field_message
from tuner.core.units import Count
from tuner.spec.base import StrictModel, check_unique
from tuner.spec.clients import KINDS, PROFILE_FIELDS, ClientProfile, kind_of
from tuner.spec.limits import MAX_ITEMS, TOPIC_NAME_PATTERN
from tuner.spec.slo import SLO
from tuner.spec.workload import WorkloadSpec, dump_keeping_path

Scalar = str | int | float | bool | None
MAX_RUNS = 500
# The settings one run or one labelled step sets.
Settings = Annotated[dict[str, Scalar], Field(max_length=MAX_ITEMS)]
# An axis of `vary`: the values of one setting, or labelled steps that each set a few settings
# (no more of either than the runs a sweep may expand to).
Axis = (
    Annotated[list[Scalar], Field(max_length=MAX_RUNS)]
    | Annotated[dict[str, Settings], Field(max_length=MAX_RUNS)]
)
_VARIABLE_FIELDS = {
    "profile": set(PROFILE_FIELDS) - {"name", "description", "client"},
    "workload": set(WorkloadSpec.model_fields) - {"name", "description", "topics", "message", "keys"},
}


class RunPlan(StrictModel):
    """One fully resolved run of a sweep."""

    index: Count
    name: str
    sweep: str
    workload: WorkloadSpec
    profile: ClientProfile
    assignments: Settings = Field(default_factory=dict)
    slo: SLO = Field(default_factory=SLO)

    @property
    def spec_hash(self) -> str:
        """sha256 of the canonical JSON of what this run does (workload, profile, SLO)."""
        return spec_hash({"workload": self.workload, "profile": self.profile, "slo": self.slo})


def spec_hash(obj: Any) -> str:
    """sha256 of canonical JSON (sorted keys, no whitespace) of models / plain data."""
    text = json.dumps(
        obj,
        default=lambda model: model.model_dump(mode="json"),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(text.encode()).hexdigest()


class SweepSpec(StrictModel):
    name: str = Field(pattern=TOPIC_NAME_PATTERN)
    description: str = ""
    workload: WorkloadSpec
    profiles: list[ClientProfile] = Field(min_length=1, max_length=MAX_RUNS)
    vary: dict[str, Axis] = Field(default_factory=dict, max_length=MAX_ITEMS)
    runs: list[Settings] | None = Field(None, max_length=MAX_RUNS)
    name_format: str | None = None
    slo: SLO = Field(default_factory=SLO)

    @model_validator(mode="after")
    def _check(self) -> SweepSpec:
        names = [p.name for p in self.profiles]
        check_unique("profile", names)
        if self.runs is not None and self.vary:
            raise ValueError("give either vary (cross product) or runs (a listed subset), not both")
        # Counted before anything is built: a cross product of a few long lists is astronomically
        # large long before it exhausts memory.
        count = len(names) * math.prod(len(v) for v in self.vary.values())
        if self.runs is not None:
            count = len(self.runs)
        if count > MAX_RUNS:
            raise ValueError(f"the sweep expands to {count:,} runs (more than {MAX_RUNS})")
        if self.name_format is not None:
            _check_name_format(self.name_format)
        for key, values in self.vary.items():
            if key == "profile":
                raise ValueError('vary: list profiles under "profiles", not vary.profile')
            if isinstance(values, dict) and "." not in key:
                _check_axis(key, values)
                continue
            _check_key(key, where="vary")
            if isinstance(values, dict):
                raise ValueError(
                    f"vary.{key}: a setting takes a list of values (labelled steps go under a plain"
                    " axis name, e.g. vary.wait)"
                )
            if not values:
                raise ValueError(f"vary.{key}: needs at least one value")
        for i, run in enumerate(self.runs or []):
            for key in run:
                _check_key(key, where=f"runs[{i}]")
            if "profile" in run and run["profile"] not in names:
                wanted = str(run["profile"])
                hint = did_you_mean(wanted, names)
                raise ValueError(f'runs[{i}].profile: no profile named "{wanted}"{hint}')
            if "profile" not in run and len(names) > 1:
                raise ValueError(f"runs[{i}]: name a profile (one of {', '.join(names)})")
        for i, profile in enumerate(self.profiles):
            check_fits(self.workload, profile, where=f"profiles[{i}]")
        return self

    def assignments(self) -> list[dict[str, Scalar]]:
        """Each run's choices: the profile name plus one value per varied key."""
        names = [p.name for p in self.profiles]
        if self.runs is not None:
            return [{"profile": run.get("profile", names[0]), **run} for run in self.runs]
        keys = list(self.vary)
        steps = [list(v) if isinstance(v, dict) else v for v in (self.vary[k] for k in keys)]
        out = []
        for combo in itertools.product(names, *steps):
            choice: dict[str, Scalar] = {"profile": combo[0]}
            for key, value in zip(keys, combo[1:], strict=True):
                axis = self.vary[key]
                choice[key] = value
                if isinstance(axis, dict):
                    choice.update(axis[str(value)])  # the step's settings beside its label
            out.append(choice)
        return out

    def expand(self, base_dir: Path | None = None) -> list[RunPlan]:
        """The named runs, validated: raises ValueError naming the offending key and value."""
        choices = self.assignments()  # at most MAX_RUNS: counted when the spec was validated
        by_name = {p.name: p for p in self.profiles}
        plans: list[RunPlan] = []
        seen: dict[str, int] = {}
        for index, choice in enumerate(choices):
            profile = by_name[str(choice["profile"])]
            profile_over = {k.split(".", 1)[1]: v for k, v in choice.items() if k.startswith("profile.")}
            workload_over = {k.split(".", 1)[1]: v for k, v in choice.items() if k.startswith("workload.")}
            where = _describe(choice)
            profile = _varied(profile, profile_over, where, base_dir)
            workload = _revalidate(self.workload, workload_over, where, base_dir)
            check_fits(workload, profile, where)
            name = self.run_name(choice, workload, profile)
            if name in seen:
                raise ValueError(
                    f'runs {seen[name]} and {index} are both named "{name}" (make name_format include'
                    " every varied key)"
                )
            seen[name] = index
            plans.append(
                RunPlan(
                    index=index,
                    name=name,
                    sweep=self.name,
                    workload=workload,
                    profile=profile,
                    assignments=choice,
                    slo=self.slo,
                )
            )
        return plans

    def run_name(self, choice: dict[str, Scalar], workload: WorkloadSpec, profile: ClientProfile) -> str:
        """`name_format` filled with every scalar workload field and profile knob (absent knobs
        read "default"), the varied values, `profile`, `workload` and `sweep`."""
        fields: dict[str, str] = {}
        for model in (workload, profile):
            for key, value in model.model_dump(mode="json").items():
                if value is None or isinstance(value, str | int | float | bool):
                    fields[key] = "default" if value is None else _fmt(value)
        fields.update({k.split(".")[-1]: _fmt(v) for k, v in choice.items()})
        fields.update(profile=profile.name, workload=workload.name, sweep=self.name)
        if self.name_format is None:
            # An axis's step reads as its label; the settings it sets are not named again.
            named = [k for k in choice if k != "profile" and (self.runs is not None or k in self.vary)]
            parts = [str(choice["profile"])] + [
                _fmt(choice[k])
                if isinstance(self.vary.get(k), dict)
                else f"{k.split('.')[-1]}{_fmt(choice[k])}"
                for k in named
            ]
            raw = "-".join(parts)
        else:
            try:
                raw = self.name_format.format(**fields)
            except (KeyError, IndexError) as exc:
                raise ValueError(
                    f"name_format: unknown field {exc} (fields: {', '.join(sorted(fields))})"
                ) from None
            except ValueError:  # a format code the field's value has not ('%' of a text)
                raise ValueError(f"name_format: {_misfit(self.name_format, fields)}") from None
        return re.sub(r"[^A-Za-z0-9._-]+", "_", raw).strip("_") or "run"


MAX_NAME_WIDTH = 64
_FORMAT_SPEC = re.compile(
    r"(?:[^{}]?[<>=^])?[+\- ]?0?(?P<width>[0-9]{1,9})?(?:\.(?P<precision>[0-9]{1,9}))?[bcdeEfFgGnosxX%]?",
    re.ASCII,
)


def _misfit(text: str, fields: dict[str, str]) -> str:
    """Which field of `text` its format does not fit (a format code its value has not)."""
    for _, field, spec, _ in string.Formatter().parse(text):
        if field is not None and spec:
            try:
                format(fields[field], spec)
            except ValueError:
                return f"format {spec!r} of {{{field}}} does not fit its value {fields[field]!r}"
    return "a format does not fit its field's value"


def _check_name_format(text: str) -> None:
    """Plain `{field}` or `{field:spec}` with a small width: no attribute or index access
    (`{profile.__class__}`, `{x[0]}`), no nested fields, no width that builds a huge string."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError:  # Python's "Single '{' encountered in format string"
        raise ValueError(
            f"name_format: {text!r} has a brace that is not closed or not doubled"
            " (write {{ for a literal brace)"
        ) from None
    for _, field, spec, conversion in parsed:
        if field is None:
            continue
        if conversion not in (None, "s", "r", "a"):
            raise ValueError(f"name_format: {{{field}!{conversion}}}: a conversion is !s, !r or !a")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", field):
            raise ValueError(
                f"name_format: {{{field}}} is not a plain field name (no attribute or index access)"
            )
        if not spec:
            continue
        # str.format reads widths in any script's digits ("\u0669" is 9): the spec must be written
        # in the ASCII grammar [[fill]align][sign][0][width][.precision][type], widths small.
        shape = _FORMAT_SPEC.fullmatch(spec)
        if shape is None:
            raise ValueError(
                f"name_format: format {spec!r} of {{{field}}} is not [[fill]align][width][.precision][type]"
                " in ASCII digits"
            )
        if any(w and int(w) > MAX_NAME_WIDTH for w in shape.group("width", "precision")):
            raise ValueError(
                f"name_format: format {spec!r} of {{{field}}} is too wide (at most {MAX_NAME_WIDTH})"
            )


def _check_key(key: str, where: str) -> None:
    if key == "profile":
        return
    head, _, field = key.partition(".")
    if head not in _VARIABLE_FIELDS or not field:
        raise ValueError(
            f'{where}: unknown key "{key}" (use profile, profile.<knob> or workload.<field>)'
            f"{did_you_mean(key, _all_keys())}"
        )
    if head == "profile" and "." in field:
        found = [_path_in(kind.model, field) for kind in KINDS.values()]
        if any(isinstance(f, list) for f in found):
            return
        # The kind that got furthest along the path says what is wrong there.
        depth, why = max((f for f in found if isinstance(f, tuple)), key=lambda f: f[0])
        if depth == 0:
            first = "profile." + field.split(".")[0]
            why = f'unknown key "{key}"{did_you_mean(first, _all_keys())}'
        raise ValueError(f"{where}: {why}")
    if field not in _VARIABLE_FIELDS[head]:
        raise ValueError(f'{where}: unknown key "{key}"{did_you_mean(key, _all_keys())}')


def _check_axis(name: str, steps: dict[str, dict[str, Scalar]]) -> None:
    """A named axis: labelled steps, each setting dotted paths (no profile choice, no nesting)."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError(f'vary: axis name "{name}" must be a plain name (letters, digits, _)')
    if not steps:
        raise ValueError(f"vary.{name}: needs at least one step")
    for label, settings in steps.items():
        if not label or not re.fullmatch(r"[A-Za-z0-9._-]+", label):
            raise ValueError(f'vary.{name}: step label "{label}" must be letters, digits, ".", "_" or "-"')
        if not settings:
            raise ValueError(f"vary.{name}.{label}: sets nothing")
        for key in settings:
            if key == "profile" or "." not in key:
                raise ValueError(
                    f'vary.{name}.{label}: "{key}" is not a setting (use profile.<path> or workload.<field>)'
                )
            _check_key(key, where=f"vary.{name}.{label}")


def _section(annotation: Any) -> type[BaseModel] | type[dict[str, Any]] | None:
    """The settings model (or raw-property dict) a field holds, unwrapping Optional and Annotated;
    None for a plain value."""
    if get_origin(annotation) is Annotated:
        return _section(get_args(annotation)[0])
    if get_origin(annotation) is dict:
        return dict
    if get_origin(annotation) in (list, tuple, set, frozenset):
        return None  # a list is one value: its items have no path
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _section(arg)
        if found is not None:
            return found
    return None


def _path_in(model: type[BaseModel], path: str) -> list[str] | tuple[int, str]:
    """The keys `path` sets in a `model` dump, or how deep it got and why it names no setting."""
    parts = path.split(".")
    done: list[str] = []
    node = model
    for i, part in enumerate(parts):
        fields = {k: f for k, f in node.model_fields.items() if k not in ("name", "description", "client")}
        here = ".".join(["profile", *done])
        if part not in fields:
            choices = [f"{here}.{f}" for f in fields]
            return i, f'unknown key "profile.{path}"{did_you_mean(f"{here}.{part}", choices)}'
        done.append(part)
        inner = _section(fields[part].annotation)
        rest = parts[i + 1 :]
        if inner is dict:
            if not rest:
                return i + 1, f'"profile.{path}" is a set of properties: name one, profile.{path}.<property>'
            return [*done, ".".join(rest)]  # a raw property's name keeps its dots
        if inner is None:
            if rest:
                where = ".".join(done)
                return i + 1, f'unknown key "profile.{path}": profile.{where} is a setting, not a section'
            return done
        assert issubclass(inner, BaseModel)
        if not rest:
            first = f" (e.g. profile.{path}.{next(iter(inner.model_fields))})" if inner.model_fields else ""
            return i + 1, f'"profile.{path}" is a section: name a setting in it{first}'
        node = inner
    return done


def _varied(profile: ClientProfile, updates: dict[str, Scalar], where: str, base_dir: Path | None) -> Any:
    """`profile` with a run's settings, each in place of whatever else in the profile decides the
    same (its kind's `drop_rivals`: a knob, the property under another name, its file's setting): a
    run runs the values its sweep names. Two of them that decide one setting: one line."""
    kind = kind_of(profile)
    paths = {path: _keys(profile, path, where) for path in updates}
    for path, keys in paths.items():
        for other in [p for p in paths if p != path]:
            probe = _nested({other: None}, paths)  # would `path` take `other` away?
            kind.drop_rivals(probe, keys)
            if not _holds(probe, paths[other]):
                raise ValueError(
                    f"run ({where}): profile.{path} and profile.{other} decide one {kind.title} setting:"
                    " name one of them"
                )

    def clear(data: dict[str, Any]) -> None:
        for keys in paths.values():
            kind.drop_rivals(data, keys)

    varied = _revalidate(profile, _nested(updates, paths), where, base_dir, clear)
    for path, keys in paths.items():
        idle = kind.idle(varied, keys)
        if idle is not None and idle[0] not in paths:  # a run that names the switch too runs as named
            raise ValueError(
                f"run ({where}): profile.{path} would not run: {idle[1]} (set profile.{idle[0]} in the"
                " run too)"
            )
    return varied


def _keys(profile: ClientProfile, path: str, where: str) -> list[str]:
    """The keys of the profile's own dump `path` sets: a top-level knob as is, a dotted path as
    nested keys (checked against this profile's kind)."""
    if "." not in path:
        return [path]
    keys = _path_in(kind_of(profile).model, path)
    if isinstance(keys, tuple):
        raise ValueError(f"run ({where}): {keys[1]} (not a {profile.client} setting)")
    return keys


def _holds(data: dict[str, Any], keys: list[str]) -> bool:
    node: Any = data
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


def _nested(updates: dict[str, Scalar], paths: dict[str, list[str]]) -> dict[str, Any]:
    """`updates` as nested keys of a dump, each at its path's keys."""
    out: dict[str, Any] = {}
    for path, value in updates.items():
        node = out
        keys = paths[path]
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = value
    return out


def _all_keys() -> list[str]:
    return ["profile"] + [f"{h}.{f}" for h, fs in _VARIABLE_FIELDS.items() for f in sorted(fs)]


def _fmt(value: Scalar) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _describe(choice: dict[str, Scalar]) -> str:
    return ", ".join(f"{k}={_fmt(v)}" for k, v in choice.items())


def _revalidate(
    model: Any,
    updates: dict[str, Any],
    where: str,
    base_dir: Path | None,
    clear: Callable[[dict[str, Any]], None] = lambda data: None,
) -> Any:
    if not updates:
        return model
    data = dump_keeping_path(model)  # the spec file's base kept
    clear(data)
    _merge_into(data, updates)
    try:
        return type(model).model_validate(data, context={"base_dir": base_dir})
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise ValueError(f"run ({where}): {loc + ': ' if loc else ''}{field_message(err)}") from None


def _merge_into(data: dict[str, Any], updates: dict[str, Any]) -> None:
    """Nested updates over a dump: a section the dump leaves out (or null) is started empty."""
    for key, value in updates.items():
        if isinstance(value, dict):
            if not isinstance(data.get(key), dict):
                data[key] = {}
            _merge_into(data[key], value)
        else:
            data[key] = value


def check_fits(workload: WorkloadSpec, profile: ClientProfile, where: str = "") -> None:
    """Cross-checks between a workload and a profile (the broker's record batch limit), by the
    profile's kind."""
    prefix = f"{where}." if where.startswith("profiles[") else f"run ({where}): " if where else ""
    try:
        kind_of(profile).check_fits(profile, workload.max_message_bytes, workload.message.nominal_bytes)
    except ValueError as exc:
        raise ValueError(f"{prefix}{exc}") from None
