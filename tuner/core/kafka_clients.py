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

A run's one admin client is `reached_admin`'s: its first call is the start's reach check (skipped
when a check in this process already had the cluster's answer: a target's preflight), after which
its `Reach` fails nothing and passes librdkafka's lines on to the run's file (client_log). Its calls
go through `metadata` and `outcome`: librdkafka's KafkaException (a connection dropped mid-call, no
broker by the call's timeout, the cluster's refusal) is one line, a metadata wait asks again within
its deadline, so a broker restarting mid-run is ridden out, and what the client queued meanwhile
(lines, errors) is served there, not left to grow.

A one-shot call (a check, a listing, a capture's first look) waits on a `Reach`: librdkafka says on
its error callback when every broker it knows is down, so a cluster that refuses every bootstrap
address, does not resolve or closes the connection unanswered (a TLS listener spoken to in
plaintext) is one line at once, not a wait to the call's timeout. A run's clients have none: a
broker restarting mid-run is waited for, as librdkafka waits.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from tuner.core.client_log import client_logger
from tuner.core.errors import BadInput, Unreachable

if TYPE_CHECKING:
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient

ADMIN_SOCKET_TIMEOUT_MS = 10_000
METADATA_RETRY_S = 0.5  # a run's metadata wait asks again this often while no broker answers
REACH_POLL_S = 0.05  # how often a one-shot call serves librdkafka's error callback while it waits
# librdkafka's own errors for a call no broker answered (the rest are the cluster's answers)
_NO_CONNECTION = ("_TRANSPORT", "_TIMED_OUT", "_ALL_BROKERS_DOWN", "_RESOLVE", "_SSL", "_AUTHENTICATION")
# "FAIL [rdkafka#producer-1] [thrd:...]: ssl://h:9093/bootstrap: Connect to ipv4#h:9093 failed: Connection
# refused (after 0ms in state CONNECT)": the broker's address, what happened and the state it was in
_FAILURE = re.compile(
    r"(?:^|\]: )(?:\w+://)?(?P<addr>[^\s/]+)/\w+: (?P<why>.+?)(?: \(after \d+ms in state (?P<state>\w+)\))?$"
)


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
    return _openssl_plain(error.str() if hasattr(error, "str") else str(error)).strip()


def _openssl_plain(text: str) -> str:
    """librdkafka's text without OpenSSL's source file and error code: they say nothing to a user
    and change between versions."""
    return re.sub(r"[\w/.-]+\.c:\d+:\S*\s*|error:[0-9A-Fa-f]{8}:", "", text)


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


class Reach(logging.Handler):
    """How one admin client's connections went, from librdkafka's error callback and log lines:
    `all_down` once every broker it knows is down (`_ALL_BROKERS_DOWN`), and the last failure each
    broker address gave. Built into the client by `settings()`; read by `answer`."""

    def __init__(self, conn: Connection) -> None:
        super().__init__(logging.DEBUG)
        self.conn = conn
        self.all_down = False
        self.kept = False  # a run's client past its check: its lines and errors to the run's file
        self.failures: dict[str, str] = {}  # broker address -> what its last connection attempt said
        # its own logger, not one of logging's registry (which keeps every logger it names for good:
        # a wait that looks every half second would grow it, and a reused name its handlers)
        self.logger = logging.Logger("kbt.reach", logging.DEBUG)  # librdkafka's debug lines are DEBUG
        self.logger.addHandler(self)

    def settings(self) -> dict[str, Any]:
        """The client settings that feed this watch (librdkafka's lines come here, not stderr)."""
        return {"logger": self.logger, "error_cb": self.error}

    def error(self, err: Any) -> None:
        from confluent_kafka import KafkaError

        if self.kept:  # as librdkafka logs an error no callback takes
            client_logger().error("%s [%s] %s", "ERROR", "kbt-admin", str(err.str()))
        elif err.code() == KafkaError._ALL_BROKERS_DOWN:
            self.all_down = True
        else:
            self._failed(str(err.str()))

    def emit(self, record: logging.LogRecord) -> None:
        if self.kept:
            client_logger().handle(record)
            return
        text = record.getMessage()
        if text.startswith("FAIL") or record.levelno >= logging.WARNING:
            self._failed(text)

    def _failed(self, text: str) -> None:
        found = _FAILURE.search(text)
        if found is None:
            return
        why = _openssl_plain(re.sub(r"^Connect to \S+ failed: ", "", found["why"]))
        plaintext = self.conn.properties.get("security.protocol", "PLAINTEXT").upper() in (
            "PLAINTEXT",
            "SASL_PLAINTEXT",
        )
        if found["state"] == "APIVERSION_QUERY" and plaintext and "security.protocol" not in why:
            why += "; closed before it answered, as a TLS listener spoken to in plaintext does"
            why += " (set security.protocol)"
        self.failures[found["addr"]] = why

    def sentence(self, silent: str = "every broker is down") -> str:
        """`cannot reach ADDRESSES (what each said)`: the one line for a cluster that never answered
        (`silent`: what to say when no address said why)."""
        tried = [a.strip() for a in self.conn.bootstrap_servers.split(",") if a.strip()]
        said = self.failures
        if len(set(said.values())) == 1:
            detail = next(iter(said.values()))
        else:
            detail = "; ".join(f"{addr}: {why}" for addr, why in said.items())
        return f"cannot reach {', '.join(tried)} ({detail or silent})"


def answer(admin: Any, reach: Reach, future: Any, timeout_s: float) -> Any:
    """The admin future's result, serving librdkafka's callbacks while it waits: Unreachable at once
    when every broker is down (`reach.sentence()`), TimeoutError after `timeout_s`, the future's
    own KafkaException when the cluster answered with an error."""
    deadline = time.monotonic() + timeout_s
    while not future.done():
        admin.poll(REACH_POLL_S)  # the error callback and the logger are served here
        if reach.all_down:
            admin.poll(0)  # the failures queued beside the callback, for the sentence
            raise Unreachable(reach.sentence())
        if time.monotonic() > deadline:
            raise TimeoutError
    result = future.result()
    _ANSWERED.add(_key(reach.conn))
    return result


# The connections a broker answered a check on in this process (hashed: never their secrets kept):
# a run's start after a preflight's check does not ask again.
_ANSWERED: set[int] = set()


def _key(conn: Connection) -> int:
    return hash((conn.bootstrap_servers, tuple(sorted(conn.properties.items()))))


def check_reach(conn: Connection, timeout_s: float) -> None:
    """Return once a broker answers (its cluster description, or an error it answered with);
    Unreachable in one line at once when every bootstrap address fails, or after `timeout_s` when
    none answers (the wait the caller's own admin call would have had). For a one-shot command's
    start; a run's is `reached_admin`."""
    reach = Reach(conn)
    _checked(admin_client(conn, reach.settings()), reach, timeout_s)


def reached_admin(conn: Connection, timeout_s: float) -> AdminClient:
    """A run's one admin client, its first call the start's check (as `check_reach`'s), unless a
    check in this process already had the cluster's answer on the same connection (a target's
    preflight: not asked twice). Past it the client's `Reach` fails nothing (a broker restarting
    mid-run is waited for, as librdkafka waits) and hands librdkafka's lines to the run's file."""
    reach = Reach(conn)
    admin = admin_client(conn, reach.settings())
    if _key(conn) not in _ANSWERED:
        _checked(admin, reach, timeout_s)
    reach.kept = True
    return admin


def _checked(admin: Any, reach: Reach, timeout_s: float) -> None:
    from confluent_kafka import KafkaException

    try:
        answer(admin, reach, admin.describe_cluster(request_timeout=timeout_s), timeout_s + 2)
        return
    except TimeoutError:
        pass
    except KafkaException as exc:  # an answer, unless it is the client's own account of no connection
        if not _no_connection(exc):
            _ANSWERED.add(_key(reach.conn))
            return
    admin.poll(0)  # the failures queued beside the answer, for the sentence
    raise Unreachable(reach.sentence(f"no answer in {timeout_s:g} s"))


def _no_connection(exc: Exception) -> bool:
    """The KafkaException is librdkafka's own account of no broker answering, not the cluster's."""
    from confluent_kafka import KafkaError

    error = exc.args[0] if exc.args else None
    return getattr(error, "code", lambda: None)() in {getattr(KafkaError, n) for n in _NO_CONNECTION}


def metadata(admin: Any, timeout_s: float, topic: str | None = None) -> Any:
    """The cluster's metadata (`topic`'s alone when named) for a call a run waits on: asked again
    while no broker gives it, until `timeout_s` (a broker restarting mid-run, or the connection the
    call was on dropped, is waited for); Unreachable in one line, librdkafka's words, once the
    time is up. list_topics raises librdkafka's KafkaException: uncaught, it was a traceback."""
    from confluent_kafka import KafkaException

    served(admin)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return admin.list_topics(topic, timeout=max(deadline - time.monotonic(), REACH_POLL_S))
        except KafkaException as exc:
            if time.monotonic() + METADATA_RETRY_S > deadline:
                why = _reason(exc).removeprefix("Failed to get metadata: ")
                raise Unreachable(
                    f"cannot read the cluster's metadata in {timeout_s:.0f} s ({why})"
                ) from None
        time.sleep(METADATA_RETRY_S)


def outcome(future: Any, timeout_s: float, what: str) -> Any:
    """An admin future's result for a call a run makes (`what`: "create topic t"): Unreachable in
    one line when no broker answered (librdkafka's own account, or nothing in `timeout_s`),
    BadInput with the cluster's words when it refused (a topic's config, an ACL)."""
    from confluent_kafka import KafkaException

    try:
        return future.result(timeout=timeout_s)
    except KafkaException as exc:
        if _no_connection(exc):
            raise Unreachable(f"cannot {what}: {_reason(exc)}") from None
        raise BadInput(f"cannot {what}: {_reason(exc)}") from None
    except TimeoutError:  # the future's own timeout (concurrent.futures.TimeoutError)
        raise Unreachable(f"cannot {what}: no answer in {timeout_s:g} s") from None


def served(admin: Any) -> None:
    """What a run's admin client queued since it was last served (librdkafka's lines and errors,
    handed over only on poll) goes to its logger now: a client that is never polled grows its queue
    for as long as a broker stays down."""
    admin.poll(0)
