"""`kbt stress-worker --master HOST:PORT`: join a distributed `kbt stress` run from a load machine."""

from __future__ import annotations

import typer

from tuner.cli.signals import interruptible
from tuner.runner.stress.worker import MASTER_WAIT_S, MAX_MASTER_WAIT_S


def stress_worker(
    master: str = typer.Option(
        ...,
        "--master",
        help="The kbt stress master as HOST:PORT: its --master-host (reachable from here) and --master-port.",
    ),
    master_wait: float = typer.Option(
        MASTER_WAIT_S,
        "--master-wait",
        min=1.0,
        max=MAX_MASTER_WAIT_S,
        help="Seconds to wait for the master (each profile's) with nothing at its address before giving up"
        " in one line; kbt stress preparing a profile holds the address and is waited for.",
    ),
) -> None:
    """Produce for a distributed stress test run by 'kbt stress --remote-workers N' elsewhere.

    Produce for a 'kbt stress --remote-workers N' run on another machine: knows only the master's
    address, gets the plan (topics, rates, stages, the target's bootstrap servers and client
    security) from it, produces to the target directly and reports to the master, profile after
    profile, then exits. The target's brokers must be reachable from here; `${VAR}` credentials of
    the target's client properties are read from this machine's environment. It may start before
    the master: it waits --master-wait seconds for it (locust's own 300 by default), and as long as
    kbt stress says it is preparing the next profile (creating topics, reading the last one back)."""
    from tuner.runner.stress.worker import parse_master, serve

    host, port = parse_master(master)
    with interruptible():
        serve(host, port, lambda line: typer.echo(f"kbt stress-worker: {line}"), master_wait)
