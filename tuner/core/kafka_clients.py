"""The one place kbt builds confluent-kafka clients (AdminClient, Producer, Consumer).

Every client gets its own settings and then the bootstrap servers and client properties it connects
with, one `Connection` (a target's: `tuner.target.security.connection`, its security resolved; a
run's, from its Placement; the lab's own listeners): a client is never built with the bootstrap
servers alone when the cluster wants more. It sits in core so every layer that talks to Kafka (the
lab too) builds its clients here; confluent-kafka is imported when a client is built.

Producers and consumers log through `tuner.core.client_log` unless their settings name a logger: a
run's librdkafka lines go to a file and one summary line, not the terminal. An admin client keeps
librdkafka's own stderr: a logger's lines are served only by poll(), which admin calls do not need,
so they would wait there unseen.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from tuner.core.client_log import client_logger
from tuner.core.errors import BadInput

if TYPE_CHECKING:
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient

ADMIN_SOCKET_TIMEOUT_MS = 10_000


@dataclass(frozen=True)
class Connection:
    """How a client reaches a cluster: its bootstrap servers and client properties (librdkafka
    names, `${VAR}` references already resolved)."""

    bootstrap_servers: str
    properties: Mapping[str, str] = field(default_factory=dict)

    def conf(self, settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The client configuration: the client's own settings, then the connection's properties
        (a profile's settings never replace how the cluster is reached), then the bootstrap servers."""
        return {**(settings or {}), **self.properties, "bootstrap.servers": self.bootstrap_servers}


def _built(factory: Any, conn: Connection, own: dict[str, Any], settings: Mapping[str, Any] | None) -> Any:
    """`factory` on its `own` settings, the caller's over them, the connection's over both; one
    BadInput line when librdkafka refuses the configuration while building the client (a truststore
    of another type than named, a key it does not know): its KafkaException was a traceback."""
    from confluent_kafka import KafkaException

    try:
        return factory(conn.conf({**own, **(settings or {})}))
    except (KafkaException, ValueError, TypeError) as exc:
        raise BadInput(f"the Kafka client refused its configuration: {_reason(exc)}") from None


def _reason(exc: Exception) -> str:
    """The client's own words for a refused configuration, on one line."""
    error = exc.args[0] if exc.args else exc
    reason = error.str() if hasattr(error, "str") else str(error)
    # OpenSSL's source file and error code say nothing to a user and change between versions
    return re.sub(r"[\w/.-]+\.c:\d+:\S*\s*|error:[0-9A-Fa-f]{8}:", "", reason).strip()


@lru_cache(maxsize=256)
def _producer_refusal(settings: tuple[tuple[str, str], ...]) -> str | None:
    from confluent_kafka import KafkaException, Producer

    quiet = logging.getLogger("kbt.librdkafka-settings-check")
    quiet.propagate = False  # its notes on a producer without brokers say nothing to the user
    if not quiet.handlers:
        quiet.addHandler(logging.NullHandler())
    try:
        Producer({**dict(settings), "logger": quiet})
    except (KafkaException, ValueError, TypeError) as exc:
        return _reason(exc)
    return None


def producer_refusal(settings: Mapping[str, str]) -> str | None:
    """librdkafka's own words when it refuses to build a producer from `settings` (a property it
    does not know, a bad value, a conflict), None when it takes them. Built without bootstrap
    servers, the producer opens no socket; it is dropped at once, and each set of settings asked once."""
    return _producer_refusal(tuple(sorted(settings.items())))


def admin_client(conn: Connection, settings: Mapping[str, Any] | None = None) -> AdminClient:
    from confluent_kafka.admin import AdminClient

    return _built(AdminClient, conn, {"socket.timeout.ms": ADMIN_SOCKET_TIMEOUT_MS}, settings)


def new_producer(conn: Connection, settings: Mapping[str, Any] | None = None) -> Producer:
    from confluent_kafka import Producer

    return _built(Producer, conn, {"logger": client_logger()}, settings)


def new_consumer(conn: Connection, settings: Mapping[str, Any] | None = None) -> Consumer:
    from confluent_kafka import Consumer

    return _built(Consumer, conn, {"logger": client_logger()}, settings)
