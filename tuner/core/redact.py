"""The redaction layer: the one path by which a client configuration reaches a terminal, a log, a
run record, a report or a rendered profile.

Three rules, applied together:
- a property whose *name* says it holds a secret (`sasl.password`, `ssl.key.password`,
  `sasl.jaas.config`, `password`, `*token*`, ...) shows as `[redacted]`, unless its value is a
  `${VAR}` reference, which is not a secret;
- a password inside a URL (`http://user:password@host`) is replaced wherever it appears;
- every secret *value* kbt has handled in this process (registered with `register_secret`: read from
  an environment variable or a file) is replaced wherever it appears in text, so a secret that leaks
  into an error message from a library is scrubbed too.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from typing import Any

REDACTED = "[redacted]"
ENV_REFERENCE = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*(:[^}]*)?\}$")
# Property names (any client: librdkafka, Java, Sarama/Filebeat) whose values are secrets.
SECRET_NAME = re.compile(
    r"(^|[._-])(password|passwd|secret|token|credentials?|jaas\.config|private[._-]?key|api[._-]?key)"
    r"($|[._-])|^(ssl\.key\.password|ssl\.keystore\.key|sasl\.oauthbearer\.client\.secret)$",
    re.IGNORECASE,
)
# The password in a URL's user info (scheme://user:password@host), e.g. a --prometheus URL with basic
# auth: the URL works, but never shows its password.
URL_PASSWORD = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/@:]*):[^\s/@]+@")
_MIN_SECRET_LENGTH = 4  # shorter values would scrub ordinary words out of messages

_lock = threading.Lock()
_secrets: set[str] = set()


def is_secret_name(name: str) -> bool:
    return bool(SECRET_NAME.search(name))


def is_reference(value: object) -> bool:
    """`${VAR}` (optionally `${VAR:default}`) names a secret without holding it."""
    return isinstance(value, str) and bool(ENV_REFERENCE.match(value.strip()))


def register_secret(value: str) -> str:
    """Remember a secret value so `scrub` removes it from any text; returns the value."""
    if value and len(value) >= _MIN_SECRET_LENGTH:
        with _lock:
            _secrets.add(value)
    return value


def scrub(text: str) -> str:
    """`text` with every registered secret value, and every password in a URL, replaced by
    `[redacted]`."""
    text = URL_PASSWORD.sub(rf"\1:{REDACTED}@", text)
    with _lock:
        secrets = sorted(_secrets, key=len, reverse=True)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def redact_value(name: str, value: Any) -> Any:
    if is_secret_name(name) and not is_reference(value) and value not in (None, ""):
        return REDACTED
    if isinstance(value, str):
        return scrub(value)
    return redact(value)


def redact(value: Any) -> Any:
    """A copy of a configuration (mappings, lists, scalars) that is safe to show or store."""
    if isinstance(value, Mapping):
        return {k: redact_value(str(k), v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact(v) for v in value)
    if isinstance(value, str):
        return scrub(value)
    return value
