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


def logger_command(bootstrap: str, broker: int, on: bool) -> list[str]:
    """kafka-configs' arguments that set one broker's request logger on (DEBUG) or off (WARN)."""
    return [
        "--bootstrap-server",
        bootstrap,
        "--alter",
        "--entity-type",
        "broker-loggers",
        "--entity-name",
        str(broker),
        "--add-config",
        f"{REQUEST_LOGGER}={LEVELS[on]}",
    ]


def set_request_log(bootstrap: str, brokers: list[int], on: bool) -> None:
    """Turn every listed broker's request log on or off; EnvironmentProblem when Kafka refuses."""
    for broker in brokers:
        run_config_command(logger_command(bootstrap, broker, on))
