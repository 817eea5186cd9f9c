"""The one place kbt builds confluent-kafka clients (AdminClient, Producer, Consumer).

Every client gets its own settings and then the bootstrap servers and client properties it connects
with, one `Connection` (a target's: `tuner.target.security.connection`, its security resolved; a
run's, from its Placement; the lab's own listeners): a client is never built with the bootstrap
servers alone when the cluster wants more. It sits in core so every layer that talks to Kafka (the
lab too) builds its clients here; confluent-kafka is imported when a client is built.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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


def admin_client(conn: Connection, settings: Mapping[str, Any] | None = None) -> AdminClient:
    from confluent_kafka.admin import AdminClient

    return AdminClient(conn.conf({"socket.timeout.ms": ADMIN_SOCKET_TIMEOUT_MS, **(settings or {})}))


def new_producer(conn: Connection, settings: Mapping[str, Any] | None = None) -> Producer:
    from confluent_kafka import Producer

    return Producer(conn.conf(settings))


def new_consumer(conn: Connection, settings: Mapping[str, Any] | None = None) -> Consumer:
    from confluent_kafka import Consumer

    return Consumer(conn.conf(settings))
