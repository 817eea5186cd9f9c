"""The redaction layer: the one path by which a client configuration reaches a terminal, a log, a
run record, a report or a rendered profile. docs/security.md states the policy; in short:

- by *name*: a key that holds a secret in librdkafka, the Java client, Filebeat or Prometheus
  (`sasl.password`, `ssl.key.pem`, `sasl.jaas.config`, `sasl.oauthbearer.config`,
  `basic.auth.user.info`, `bearer_token`, `*password*`, `*secret*`, `*token*`, ...; case, stray
  whitespace and `-`/`_`/`.` spellings ignored) shows as `[redacted]`, unless its value is a pure
  `${VAR}` reference or a config provider's `${env:VAR}` (a reference with a literal default shows
  its default redacted);
- by *value pattern*, wherever it appears in text: PEM blocks, `password=`/`secret=`/`token=`
  (and friends) inside strings, the user info of a URL (`scheme://user:pass@host`, even with `/` or
  `@` in it), `user:pass@host:port` without a scheme (Filebeat `hosts`), secret-named query
  parameters (`?token=...`);
- by *registration*: every secret value kbt has read in this process (`register_secret`: from an
  environment variable or a file) is replaced wherever it appears, so a secret that leaks into a
  library's error message is scrubbed too.
"""

from __future__ import annotations

import base64
import re
import threading
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from tuner.core.envref import is_reference, parse_reference, provider_reference

REDACTED = "[redacted]"

# Exact secret keys from the clients' own documentation (normalised: lower case, `_`/`-` -> `.`).
# librdkafka CONFIGURATION.md, Kafka client configs (Java), Filebeat output.kafka / ssl, Prometheus
# http_config and remote_write.
_SECRET_KEYS = {
    "sasl.password", "sasl.jaas.config", "sasl.oauthbearer.config", "sasl.oauthbearer.client.secret",
    "sasl.oauthbearer.client.credentials.client.secret", "sasl.oauthbearer.assertion.private.key.pem",
    "sasl.oauthbearer.assertion.private.key.passphrase", "ssl.key.password", "ssl.key.pem", "ssl.key",
    "ssl.keystore.password", "ssl.keystore.key", "ssl.truststore.password", "ssl.engine.callback.data",
    "basic.auth.user.info", "schema.registry.basic.auth.user.info", "key.passphrase",
    "ssl.key.passphrase", "cloud.auth", "api.key", "bearer.token", "authorization.credentials",
    "credentials", "client.secret", "proxy.authorization", "authorization", "cookie", "set.cookie",
    "x.api.key",
}  # fmt: skip
# Words that make any key a secret wherever they stand as a whole segment.
_SECRET_WORD = re.compile(
    r"(^|\.)(password|passwd|pwd|passphrase|secret|secrets|token|tokens|credential|credentials|apikey"
    r"|private\.key|key\.pem|jaas\.config|user\.info|userinfo|auth\.info|access\.key|secret\.key)(\.|$)"
)
# ... unless the key names where the secret is kept, not the secret (a file path or a switch).
_NOT_A_VALUE = re.compile(r"\.(file|location|path|type|endpoint\.url|url|mechanism|enable|enabled)$")

# `password=...`, `secret: "..."` inside a string (JAAS configs, connection strings, query-like
# text). A `${VAR}` reference or an already redacted value is left alone.
_ASSIGNMENT = re.compile(
    r"(?i)(\b(?:password|passwd|pwd|passphrase|secret|client_secret|token|access_token|refresh_token"
    r"|api_?key|credentials?)\b\s*=\s*)(?!\$\{|\[redacted\])(\"[^\"]*\"|'[^']*'|[^\s&;,\"')}]+)"
)
_PEM = re.compile(r"-----BEGIN [A-Z0-9 ]+-----.*?(-----END [A-Z0-9 ]+-----|$)", re.DOTALL)
# scheme://userinfo@host: userinfo runs to the *last* @ before the host, so `/` and `@` in a
# password do not end it early.
# Every repeat is bounded (user info of at most 512 characters): an unbounded one made scrub
# quadratic on hostile text (20,000 "?a=b&" took 97 s), and scrub runs on every message.
_URL_USERINFO = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]{0,30}://)([^\s\"'<>]{0,512})@(?=[^\s@/?#\"'<>])")
# user:password@host:port without a scheme (Filebeat / Sarama `hosts` entries).
_HOST_USERINFO = re.compile(
    r"(?<![\w/:@.-])([^\s\"'/:@\[\],]{1,256}):(?!//)([^\s\"'\[\],]{1,256})@(?=[A-Za-z0-9.\-\[\]:]{1,300}:\d)"
)
_QUERY_PARAM = re.compile(r"([?&;])([^=&#\s\"']{1,256})=([^&#\s\"']*)")
_MIN_SECRET_LENGTH = 4  # shorter values would scrub ordinary words out of messages

_lock = threading.Lock()
_secrets: set[str] = set()


def _normalise(name: str) -> str:
    return re.sub(r"[\s_\-.]+", ".", name.strip().lower()).strip(".")


def is_secret_name(name: str) -> bool:
    """True when a key of this name holds a secret in any client kbt knows (see module doc)."""
    key = _normalise(str(name))
    if key in _SECRET_KEYS or any(key.endswith("." + k) for k in _SECRET_KEYS):
        return True
    return bool(_SECRET_WORD.search(key)) and not _NOT_A_VALUE.search(key)


def register_secret(value: str) -> str:
    """Remember a secret value so `scrub` removes it from any text; returns the value."""
    if value and len(value) >= _MIN_SECRET_LENGTH:
        with _lock:
            _secrets.add(value)
    return value


def register_basic_auth(user: str, password: str) -> None:
    """A basic-auth credential in every form it travels in: the password, and `user:password` as
    the base64 an Authorization header carries (a server that echoes the header back must not get
    it printed)."""
    register_secret(password)
    if password:
        pair = f"{user}:{password}".encode("utf-8", errors="replace")
        register_secret(base64.b64encode(pair).decode("ascii"))


def register_url_secrets(url: str) -> str:
    """Register, where a URL enters kbt, every credential it carries: the user info's password (and
    its basic-auth form) and the value of every secret-named query parameter. Returns `url`."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if "@" in parts.netloc:
        info = parts.netloc.rsplit("@", 1)[0]
        user, _, password = info.partition(":")
        for raw_user, raw_password in ((user, password), (unquote(user), unquote(password))):
            register_basic_auth(raw_user, raw_password)
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if is_secret_name(name):
            register_secret(value)
    return url


# A `key: value`, `key=value` or `"key": "value"` pair of YAML, JSON or a .properties text, found
# without parsing it (a text that does not parse is the one whose error may quote it). A key starts
# where no key character precedes it and its repeats are possessive: the scan stays linear.
_PAIR = re.compile(
    r"""(?<![A-Za-z0-9_.\-])(?:"[ \t]*([A-Za-z0-9_.\-]{1,120}+)[ \t]*"|'([A-Za-z0-9_.\-]{1,120}+)'"""
    r"""|([A-Za-z0-9_][A-Za-z0-9_.\-]{0,120}+))[ \t]*[:=][ \t]*"""
    r"""("(?:[^"\\\r\n]|\\.){1,2048}+"|'[^'\r\n]{1,2048}+'|[^\s,#{}\[\]"'][^\r\n,#{}\[\]]{0,2048}+)"""
)
# Words one of which every secret-named key holds (see is_secret_name), looked for with str.find
# on the lower-cased text: a regex alternation scanned 5 MB in 2 s, find in milliseconds.
_HINTS = ("pass", "pwd", "secret", "token", "credential", "key", "private", "pem", "jaas", "info",
          "auth", "cookie")  # fmt: skip
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]{0,30}+://[^\s\"'<>]{1,2048}+")
MAX_INPUT_SECRETS = 1000  # registered per text: scrub's cost grows with their number
_MAX_LINE = 16384  # characters of a line looked at


def _lines_with(text: str, words: tuple[str, ...], limit: int) -> list[str]:
    """The lines (each cut to _MAX_LINE) of `text` holding one of `words` (any case), at most `limit`."""
    lower = text.lower()
    if len(lower) != len(text):  # a character whose lower case is longer: positions would shift
        lower = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    starts: set[int] = set()
    for word in words:
        pos = lower.find(word)
        while pos >= 0 and len(starts) < limit:
            start = text.rfind("\n", 0, pos) + 1
            starts.add(start)
            end = text.find("\n", pos)
            if end < 0:
                break
            pos = lower.find(word, end)
    return [text[start : start + _MAX_LINE].split("\n", 1)[0] for start in sorted(starts)]


def register_input_secrets(text: str) -> None:
    """Register the secrets an input text holds, read off its lines before anything parses it: the
    value of every secret-named key (a header's too: `Authorization: Bearer x` registers the whole
    value and the token), and URL credentials. A parser's or a child's message that quotes the
    input (a duplicate key, a value a validator names) is then scrubbed of them, whichever of them
    it quotes."""
    found = looked = 0
    for line in _lines_with(text, _HINTS, MAX_INPUT_SECRETS):
        pos = 0
        while found < MAX_INPUT_SECRETS and looked < 2 * MAX_INPUT_SECRETS:
            match = _PAIR.search(line, pos)
            if match is None:
                break
            looked += 1
            # the value may hold pairs of its own (`props: sasl.jaas.config=... password="x"`)
            pos = match.start(4)
            key = next(k for k in match.groups()[:3] if k is not None)
            raw = match.group(4).strip()
            if not is_secret_name(key):
                continue
            if len(raw) >= 2 and raw[0] in "\"'" and raw[-1] == raw[0]:
                raw = raw[1:-1]
            ref = provider_reference(raw) or parse_reference(raw)  # ${env:NAME}: a name, not a default
            if ref is not None and not ref.holds_literal:
                continue
            for secret in (ref.default or "",) if ref is not None else (raw, raw.replace('\\"', '"')):
                register_secret(secret)
                scheme, _, token = secret.partition(" ")
                if token and scheme.isalpha():
                    register_secret(token.strip())  # `Bearer x`, `Basic x`
            found += 1
    for line in _lines_with(text, ("@",), max(0, MAX_INPUT_SECRETS - found)):
        for url in _URL.findall(line):
            if "@" in url:
                register_url_secrets(url)


def _userinfo(match: re.Match[str]) -> str:
    scheme, info = match.group(1), match.group(2)
    if ":" not in info and "@" not in info:
        return match.group(0)  # a user name alone is not a secret
    user = info.split(":", 1)[0] if ":" in info else ""
    if "/" in user or "@" in user:
        user = ""
    return f"{scheme}{user}:{REDACTED}@" if user else f"{scheme}{REDACTED}@"


def _query(match: re.Match[str]) -> str:
    sep, name, value = match.groups()
    if value and is_secret_name(name) and value != REDACTED and not is_reference(value):
        return f"{sep}{name}={REDACTED}"
    return match.group(0)


def scrub(text: str) -> str:
    """`text` with every secret the value patterns find, and every registered secret value,
    replaced by `[redacted]`."""
    if not text:
        return text
    with _lock:
        secrets = sorted(_secrets, key=len, reverse=True)
    for secret in secrets:  # first, so a pattern does not cut a registered value in two
        if secret in text:
            text = text.replace(secret, REDACTED)
    text = _PEM.sub(REDACTED, text)
    text = _URL_USERINFO.sub(_userinfo, text)
    text = _HOST_USERINFO.sub(lambda m: f"{m.group(1)}:{REDACTED}@", text)
    text = _QUERY_PARAM.sub(_query, text)
    text = _ASSIGNMENT.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    return text


def redact_value(name: str, value: Any) -> Any:
    if is_secret_name(name) and value not in (None, ""):
        # ${env:NAME} (a config provider's form) names its variable: the name is shown, as ${NAME}'s is
        provided = provider_reference(value)
        ref = provided or parse_reference(value)
        if ref is None:
            return REDACTED
        if ref.holds_literal:  # ${VAR:literal-secret}, ${env:VAR:-literal-secret}
            return f"${{env:{ref.name}:-{REDACTED}}}" if provided else f"${{{ref.name}:{REDACTED}}}"
        return value
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
