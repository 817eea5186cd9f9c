"""`${VAR}` references: how a secret reaches a client without being written in a spec or profile.

A raw client override such as `sasl.password: ${KAFKA_PASSWORD}` is stored, hashed and shown as the
reference; only the connection a driver opens gets the value, read from the environment when the
run starts and registered with the redaction layer.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from tuner.core.errors import BadInput
from tuner.core.redact import is_reference, is_secret_name, register_secret

_REFERENCE = re.compile(r"^\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(:(?P<default>[^}]*))?\}$")


def expand_references(properties: Mapping[str, str], where: str) -> dict[str, str]:
    """The properties whose values are `${VAR}` references, resolved from the environment
    (`${VAR:default}` falls back to the default). An unset variable is a one-line BadInput."""
    resolved: dict[str, str] = {}
    for key, value in properties.items():
        if not is_reference(value):
            continue
        match = _REFERENCE.match(value.strip())
        assert match is not None
        name, default = match.group("name"), match.group("default")
        env = os.environ.get(name)
        if env is None and default is None:
            raise BadInput(f'{where}: "{key}" refers to ${{{name}}}, which is not set in the environment')
        text = env if env is not None else str(default)
        resolved[key] = register_secret(text) if is_secret_name(key) else text
    return resolved
