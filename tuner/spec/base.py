"""The base of every spec model: frozen, unknown keys rejected with a "did you mean" hint."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, ConfigDict, Field, model_validator

from tuner.core.errors import did_you_mean
from tuner.core.frozen import Frozen
from tuner.core.numbers import NumberType, check_config_value, cut_text, kafka_number_type
from tuner.spec.limits import MAX_ITEMS, MAX_TEXT_CHARS

MAX_KEYS_LISTED = 12  # an unknown key's message lists a section's keys when there are this few


class StrictModel(Frozen):
    """A frozen pydantic model whose unknown keys fail with `unknown key "x" (did you mean "y"?)`."""

    # Every number a user writes is finite: pydantic would read "nan"/"inf" into a float field.
    # Every string, a dict key too, has a bound (no field of a spec needs a mebibyte).
    model_config = ConfigDict(allow_inf_nan=False, str_max_length=MAX_TEXT_CHARS)

    @model_validator(mode="before")
    @classmethod
    def _reject_unknown_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            known = set(cls.model_fields)
            for key in data:
                if key not in known:
                    # no close spelling: the few keys there are, so the next try needs no manual
                    listed = len(known) <= MAX_KEYS_LISTED
                    few = f" (known keys: {', '.join(sorted(known))})" if listed else ""
                    hint = did_you_mean(str(key), sorted(known)) or few
                    raise ValueError(f'unknown key "{cut_text(str(key))}"{hint}')
        return data


def check_unique(what: str, names: list[str]) -> None:
    """A spec's names of one kind (topics, profiles, consumer groups) each given once."""
    if len(set(names)) != len(names):
        raise ValueError(f"{what} names must be unique (got {names})")


def config_string(value: Any) -> str:
    """A config value as Kafka and Filebeat spell it: YAML's true/false as "true"/"false"."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def flat_settings(node: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """A client's nested settings as option paths (`prefix` + dotted keys) and their text: a list or
    an empty section (`partition.random: {}` switches a strategy on) as JSON, which YAML reads back
    as it was (a Python repr of a list is not YAML: its strings may be read otherwise)."""
    out: dict[str, str] = {}
    for key, value in node.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            out.update(flat_settings(value, f"{path}."))
        else:
            out[path] = json.dumps(value) if isinstance(value, Mapping | list) else config_string(value)
    return out


def config_strings(number_type: Callable[[str], NumberType]) -> BeforeValidator:
    """The before-check of a client's (or a topic's) raw configs, numbers judged by `number_type`:
    the type that client reads each key as. YAML may write `true` or `10000`, the wire takes strings."""

    def _config_strings(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                str(k): check_config_value(str(k), config_string(v), number_type(str(k)))
                for k, v in value.items()
            }
        return value  # not a mapping: left for pydantic to reject

    return BeforeValidator(_config_strings)


# Kafka's own configs: the Java client's properties and a topic's configs (the broker's).
ConfigMap = Annotated[dict[str, str], config_strings(kafka_number_type), Field(max_length=MAX_ITEMS)]


# A producer's acks as kbt spells it (Filebeat's required_acks is its own integer: spec/filebeat.py).
Acks = Literal["0", "1", "all"]


def normal_acks(value: Any) -> Any:
    """A model's before-validator for an `Acks | None` field: -1 (Kafka's own spelling of all) and
    any case of all as "all"; what is not 0, 1 or all is left for the Literal to refuse."""
    if value is None:
        return None
    text = str(value).strip().lower()
    return "all" if text == "-1" else text
