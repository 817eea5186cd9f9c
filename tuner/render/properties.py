"""Client properties files (librdkafka, Java producer) for a recommended profile.

Only settings kbt chose are written; connection settings (bootstrap servers, security) stay the
deployment's. Values pass the redaction layer: a secret-named property shows as a `${VAR}`
reference or `[redacted]`, never its value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tuner.core.redact import redact

_FOOTER = (
    "# bootstrap.servers and security settings come from your deployment; give credentials only as",
    "# ${VAR} references resolved from the environment.",
)


def properties_text(properties: Mapping[str, str], header: Sequence[str]) -> str:
    """`key=value` lines under `#` comment lines, secrets redacted."""
    safe = redact(dict(properties))
    out = [f"# {line}" if line else "#" for line in header]
    out += list(_FOOTER)
    out += [f"{key}={_escape(str(value))}" for key, value in safe.items()]
    return "\n".join(out) + "\n"


def _escape(value: str) -> str:
    # java.util.Properties: backslash escapes; leading spaces would be dropped.
    text = value.replace("\\", "\\\\")
    return "\\" + text if text.startswith(" ") else text
