"""Kafka's request log on a lab's brokers (`kbt lab request-log on|off`): the logger
kafka.request.logger at DEBUG writes a line per completed request with its client-id, which
`kbt diagnose --request-log` counts per client (tuner.measure.request_log).

A broker logger is a dynamic broker setting (kafka-configs --entity-type broker-loggers): no
restart, and `off` sets the level back to the lab's WARN. The lab's brokers write it to their own
log files (LabState brokers' log_file). Against a cluster of your own, docs/diagnose.md gives the
same kafka-configs lines; kbt changes no logger there.
"""

from __future__ import annotations

from tuner.lab.config_command import run_config_command
from tuner.lab.node_config import REQUEST_LOGGER, REQUEST_LOGGER_LEVEL

LEVELS = {True: "DEBUG", False: REQUEST_LOGGER_LEVEL}  # off: the level of the lab's log4j2 file


def _answering(bootstrap: str) -> None:
    """Unreachable unless some broker of `bootstrap` takes a connection within a second: a lab whose
    state says up but whose brokers are gone is said so at once (kafka-configs would wait a minute)."""
    import socket

    from tuner.core.errors import Unreachable

    for server in bootstrap.split(","):
        host, _, port = server.strip().rpartition(":")
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=1.0):
                return
        except (OSError, ValueError):
            continue
    raise Unreachable(f"no broker of the lab answers at {bootstrap}: is it up? (kbt lab status)")


def set_request_log(bootstrap: str, brokers: list[int], on: bool) -> None:
    """Turn every listed broker's request log on or off; EnvironmentProblem when the lab has no
    brokers or Kafka refuses, Unreachable when none answers."""
    from tuner.core.errors import EnvironmentProblem

    if not brokers:
        raise EnvironmentProblem("the lab's state names no brokers: bring it up again (kbt lab up)")
    _answering(bootstrap)
    for broker in brokers:  # DEBUG (on) or WARN (off), one broker's logger at a time
        change = ["--entity-name", str(broker), "--add-config", f"{REQUEST_LOGGER}={LEVELS[on]}"]
        run_config_command(bootstrap, "--entity-type", "broker-loggers", *change)
