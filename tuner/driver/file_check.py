"""How a client reads a rendered properties file, in its own words, and where that differs from it.

The Java producer reports its parsed values through the engine (`java-engine --check-config`, and
each run's `producer_config`: tuner/driver/java_plan.py); librdkafka logs every property it was given,
under its own canonical names, when built with `debug=conf` (`librdkafka_reading`). `unlike` names
the settings a client took otherwise than the file says. A client that refuses the file (a bad value,
idempotence with acks 1) says why in one line (BadInput).
"""

from __future__ import annotations

import logging
import logging.handlers
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path

from tuner.core.certs import placeholder_pems
from tuner.core.errors import BadInput
from tuner.core.kafka_clients import Connection, new_producer
from tuner.core.properties import parse_properties
from tuner.driver.java_plan import UNRESOLVED
from tuner.spec.clients.librdkafka import CANONICAL as LIBRDKAFKA_CANONICAL
from tuner.spec.clients.producer import same_value

HIDDEN = ("[hidden]", "[redacted]", UNRESOLVED)  # a secret: never compared
_CONF_LINE = re.compile(r"^CONF \[[^\]]*\] \[[^\]]*\]:\s{2,}(\S+) = (.*)$")


def unlike(
    file: Mapping[str, str], reported: Mapping[str, str], canonical: Mapping[str, str] | None = None
) -> list[str]:
    """Each setting of `file` the client reports otherwise (`name: file X, client Y`); a setting it
    does not report (a config provider's own) or a secret is not compared. `canonical` maps the
    file's names to the client's."""
    out = []
    names = canonical or {}
    for key, value in sorted(file.items()):
        name = names.get(key, key)
        if name not in reported or reported[name] in HIDDEN:
            continue
        if not same_value(key, value, reported[name]):
            out.append(f"{key}: file {value}, client {reported[name]}")
    return out


def librdkafka_reading(file: Mapping[str, str], connection: Connection) -> dict[str, str]:
    """librdkafka's own account of a producer built from `file` with `connection` (the brokers and
    security a deployment adds) on top: every property it was given, by its canonical name, secrets
    as `[redacted]`. Nothing is sent; BadInput with librdkafka's reason when it refuses the file."""
    kept = logging.handlers.BufferingHandler(capacity=1 << 62)  # every record librdkafka logs
    logger = logging.getLogger(f"kbt.librdkafka-reading.{id(kept)}")
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    logger.addHandler(kept)
    try:
        debug = ",".join(d for d in (file.get("debug"), "conf") if d)  # the file's contexts validated too
        producer = new_producer(connection, {**file, "debug": debug, "logger": logger})
    except BadInput as exc:  # librdkafka's reason, in core's one line
        reason = exc.message.split(": ", 1)[-1]
        for alias, canonical in LIBRDKAFKA_CANONICAL.items():  # the name the file used, beside librdkafka's
            if alias in file and f'"{canonical}"' in reason:
                reason = reason.replace(f'"{canonical}"', f'"{canonical}" ({alias} in the file)')
        raise BadInput(f"librdkafka refuses the file: {reason}") from None
    producer.poll(0.2)  # the configuration's log lines are served by poll
    producer.flush(0)
    matches = (_CONF_LINE.match(record.getMessage()) for record in kept.buffer)
    return {match.group(1): match.group(2) for match in matches if match is not None}


# Brokers a file is checked against when nothing connects: several, as a deployment names them.
PLACEHOLDER_BROKERS = "kbt-check-1:9092,kbt-check-2:9092,kbt-check-3:9092"
DURABILITY = ("acks", "enable.idempotence", "retries", "max.in.flight.requests.per.connection")


# The PEM files librdkafka opens when a producer is built (a directory, or `probe`, is left to it).
_PEM_LOCATIONS = {"ssl.ca.location": "ca", "ssl.certificate.location": "cert", "ssl.key.location": "key"}


def _absent_pems(
    file: Mapping[str, str], directory: Path, where: str, notes: list[str] | None
) -> dict[str, str]:
    """Placeholder PEMs for the file's TLS locations that are not on this machine (the pod's
    paths), each said in `notes`."""
    out: dict[str, str] = {}
    for key, which in _PEM_LOCATIONS.items():
        value = file.get(key, "").strip()
        if not value or value == "probe" or Path(value).exists():
            continue
        out[key] = str(getattr(placeholder_pems(directory), which))
        if notes is not None:
            notes.append(
                f"{where}: {key}: {value} is not on this machine: checked with a placeholder file"
                " (it must exist where the client runs)"
            )
    return out


def check_librdkafka_file(text: str, where: str, notes: list[str] | None = None) -> dict[str, str]:
    """A librdkafka.properties file as librdkafka takes it, with three placeholder brokers (nothing
    connects) and, beside a sasl.username, the password the application adds: BadInput naming the
    first setting it refuses or takes otherwise; else the durability it runs with (a setting the
    file leaves out: `default`)."""
    file = parse_properties(text, where)
    file = {k: v for k, v in file.items() if k not in ("bootstrap.servers", "metadata.broker.list")}
    if "sasl.username" in file and "sasl.password" not in file:
        # librdkafka expands no variables: the application adds the password it reads from its
        # secret store (what the rendered file tells it to), here a placeholder
        file = {**file, "sasl.password": "kbt-placeholder"}
    with tempfile.TemporaryDirectory(prefix="kbt-check-") as tmp:
        built = {**file, **_absent_pems(file, Path(tmp), where, notes)}
        try:
            reported = librdkafka_reading(built, Connection(PLACEHOLDER_BROKERS))
        except BadInput as exc:
            raise BadInput(f"{where}: {exc.message}") from None
    reported = {k: file[k] if k in _PEM_LOCATIONS and k in file else v for k, v in reported.items()}
    # debug: the reading sets its own (conf) to hear librdkafka; the file's was checked all the same
    differ = unlike({k: v for k, v in file.items() if k != "debug"}, reported, LIBRDKAFKA_CANONICAL)
    if differ:
        raise BadInput(f"{where}: librdkafka takes it otherwise: {differ[0]}")
    return {k: reported.get(LIBRDKAFKA_CANONICAL.get(k, k), "default") for k in DURABILITY}
