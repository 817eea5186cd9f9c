"""`${VAR}` references: how a secret reaches a client without being written in a spec or profile.

A raw client override such as `sasl.password: ${KAFKA_PASSWORD}` is stored, hashed and shown as the
reference; only the connection a driver opens gets the value, read from the environment when the
run starts and registered with the redaction layer.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from tuner.core.envref import parse_reference
from tuner.core.errors import BadInput
from tuner.core.redact import is_secret_name, register_secret


def expand_references(properties: Mapping[str, str], where: str) -> dict[str, str]:
    """The properties whose values are `${VAR}` references, resolved from the environment
    (`${VAR:default}` falls back to the default). An unset variable is a one-line BadInput."""
    resolved: dict[str, str] = {}
    for key, value in properties.items():
        ref = parse_reference(value)
        if ref is None:
            continue
        name, default = ref.name, ref.default
        env = os.environ.get(name)
        if env is None and default is None:
            why = f" ({ref.required_message})" if ref.required_message else ""
            raise BadInput(
                f'{where}: "{key}" refers to ${{{name}}}, which is not set in the environment{why}'
            )
        text = env if env is not None else str(default)
        resolved[key] = register_secret(text) if is_secret_name(key) else text
    return resolved
