"""Between two profiles of a distributed stress run, the master's address says another is coming.

`kbt stress` runs one locust master per profile. Between two, kbt finishes the last profile
(consumers, every acked record read back, records, topics) and prepares the next (topics, the
brokers' meters settling): a gap as long as that work, minutes for a large run (the read-back alone
is bounded by thresholds.yml's read_back_max_s, an hour), with no master listening. A remote worker
(`kbt stress-worker`) waiting with its own `--master-wait` gave up in that gap.

So kbt holds the master's port for the gap, and before the first master too (its topics created
and the brokers' meters settled): every connection gets `GREETING` and is closed by the worker,
which then keeps waiting without counting the gap against `--master-wait`. The wait stays bounded
by kbt's own run (each step of the gap has its bound); when kbt stops (done, failed or interrupted)
the port is let go, the worker's connections are refused and its wait counts again (at least
worker.MASTER_START_S, the time a master takes to bind once the port is let go for it, just before
the next profile's master starts).
"""

from __future__ import annotations

import contextlib
import socket
import threading

from tuner.runner.stress.locust_processes import bind_address

GREETING = b"kbt stress: the next profile's master is coming\n"
ACCEPT_TICK_S = 0.2  # how soon the holder notices it is to let go
PEER_CLOSE_S = 2.0  # a worker closes first (the closing side keeps the TIME_WAIT, not the port)


class Intermission:
    """The master's address held between two profiles' masters; `hold` and `release` as often as
    profiles follow one another. A port that cannot be bound (taken by something else) is not held:
    the workers then wait their own `--master-wait`, as before."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self._server: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    @property
    def holding(self) -> bool:
        return self._server is not None

    def hold(self) -> None:
        if self._server is not None:
            return
        try:
            infos = socket.getaddrinfo(bind_address(self.host), self.port, type=socket.SOCK_STREAM)
            server = socket.create_server(infos[0][4][:2], family=infos[0][0])
        except OSError:
            return
        server.settimeout(ACCEPT_TICK_S)
        self._stop.clear()
        self._server = server
        self._thread = threading.Thread(
            target=self._serve, args=(server,), name="kbt-intermission", daemon=True
        )
        self._thread.start()

    def release(self) -> None:
        """Let the port go (returns once it is closed, so the next master can bind it)."""
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        self._stop.set()
        thread.join()
        server.close()
        self._server = self._thread = None

    def _serve(self, server: socket.socket) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn, contextlib.suppress(OSError):
                conn.settimeout(PEER_CLOSE_S)
                conn.sendall(GREETING)
                conn.recv(1)  # the worker's close (or the bound): its side keeps the TIME_WAIT


def told_next(conn: socket.socket, timeout_s: float) -> bool:
    """True when what answers on `conn` is kbt between profiles (its GREETING), False for anything
    else (a locust master speaks ZeroMQ, whose greeting starts with byte 0xff)."""
    conn.settimeout(timeout_s)
    got = b""
    with contextlib.suppress(OSError):
        while len(got) < len(GREETING) and GREETING.startswith(got):
            chunk = conn.recv(len(GREETING) - len(got))
            if not chunk:
                break
            got += chunk
    return got == GREETING
