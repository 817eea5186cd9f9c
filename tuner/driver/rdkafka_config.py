"""librdkafka's own table of configuration properties, for the generated
`tuner/spec/librdkafka_config.json` (tuner/spec/librdkafka_client.py reads it).

The table is the one librdkafka prints as its CONFIGURATION.md (`rd_kafka_conf_properties_show`),
asked of the very library confluent-kafka loads: each property's name, whether a producer, a
consumer or both read it, its type (`integer`, `float`, `boolean`, `enum value`, `string`, ...: a
value kbt reads as a number is judged by it) and the canonical property an alias stands for. The
Python binding offers no call that lists them, so the library is called directly (ctypes); only
`make generate` does.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import re
import tempfile
from pathlib import Path
from typing import Any

_ROW = re.compile(r"^(\S+)\s*\|\s*([*PC])\s*\|.*\|\s*(?:\*\*DEPRECATED\*\*\s*)?(?:Alias for `([^`]+)`)?")
_TYPE = re.compile(r"<br>\*Type: ([^*]+)\*\s*$")


def _library() -> ctypes.CDLL:
    """The librdkafka confluent-kafka loaded: its wheel's own copy, else the system's; its version
    must be the one confluent-kafka reports."""
    import confluent_kafka

    bundled = sorted(
        Path(confluent_kafka.__file__).parent.parent.glob("confluent_kafka.libs/librdkafka*.so*")
    )
    found = str(bundled[0]) if bundled else ctypes.util.find_library("rdkafka")
    if found is None:
        raise RuntimeError("no librdkafka library found beside confluent-kafka")
    lib = ctypes.CDLL(found)
    lib.rd_kafka_version_str.restype = ctypes.c_char_p
    version = lib.rd_kafka_version_str().decode()
    if version != confluent_kafka.libversion()[0]:
        raise RuntimeError(
            f"{found} is librdkafka {version}, not confluent-kafka's {confluent_kafka.libversion()[0]}"
        )
    return lib


def properties_table() -> tuple[str, str]:
    """(librdkafka's version, its properties table as its CONFIGURATION.md shows it)."""
    lib = _library()
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.fopen.restype = ctypes.c_void_p
    libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    libc.fclose.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_conf_properties_show.argtypes = [ctypes.c_void_p]
    with tempfile.TemporaryDirectory(prefix="kbt-rdkafka-") as tmp:
        path = Path(tmp) / "properties.md"
        handle = libc.fopen(str(path).encode(), b"w")
        if not handle:
            raise RuntimeError(f"cannot write {path}")
        lib.rd_kafka_conf_properties_show(handle)
        libc.fclose(handle)
        text = path.read_text()
    lib.rd_kafka_version_str.restype = ctypes.c_char_p
    return lib.rd_kafka_version_str().decode(), text


def parse_table(text: str) -> dict[str, Any]:
    """Every property of the table: its scope (`*` both, `P` producer, `C` consumer), its type and,
    for an alias, the property it stands for. A name in both the global and the topic section is
    one (of one type)."""
    scopes: dict[str, str] = {}
    types: dict[str, str] = {}
    aliases: dict[str, str] = {}
    for line in text.splitlines():
        match = _ROW.match(line)
        if match is None or match.group(1) in ("Property", "-" * len(match.group(1))):
            continue
        name, scope, alias_of = match.groups()
        if alias_of and name not in scopes:  # a global property's topic alias of the same name is not one
            aliases[name] = alias_of
        scopes[name] = "*" if scopes.get(name, scope) != scope else scope
        typed = _TYPE.search(line)
        if typed is not None:
            types.setdefault(name, typed.group(1).strip())
    return {
        "scopes": dict(sorted(scopes.items())),
        "types": dict(sorted(types.items())),
        "aliases": dict(sorted(aliases.items())),
    }


def config_names_json() -> str:
    """The generated `tuner/spec/librdkafka_config.json`."""
    version, text = properties_table()
    doc = {
        "generated_by": "librdkafka's rd_kafka_conf_properties_show, of the library confluent-kafka loads"
        " (make generate)",
        "librdkafka": version,
        **parse_table(text),
    }
    return json.dumps(doc, indent=1) + "\n"
