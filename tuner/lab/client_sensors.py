"""Kafka's per-client quota sensors on a lab (`kbt lab client-sensors on|off`).

Kafka records per user / client-id thread time (type=Request request-time) and produce bytes
(type=Produce byte-rate) only while a client quota of that kind is set (ClientQuotaManager keeps no
sensors without one). `on` sets default client quotas no client can reach (ten million threads'
worth of request time, a petabyte per second of produce bytes), so the sensors exist and nobody is
throttled; `off` deletes exactly those two defaults. Kafka never clears its "quotas enabled" flag:
after `off` the sensors keep recording (unthrottled) until the broker restarts. Kafka's own
ConfigCommand from the lab's jars does it (confluent-kafka has no AlterClientQuotas). Against a
cluster of your own, docs/diagnose.md gives the same kafka-configs lines; kbt changes no quota there.
"""

from __future__ import annotations

from tuner.lab.config_command import run_config_command

# Values no client can reach: request_percentage is percent of one thread per quota window.
SENSOR_QUOTAS = {"request_percentage": "1000000000", "producer_byte_rate": "1000000000000000"}


def set_client_sensors(bootstrap: str, on: bool) -> None:
    """Set (on) or delete (off) the lab's default client quotas; EnvironmentProblem when Kafka refuses."""
    change = (
        ["--add-config", ",".join(f"{k}={v}" for k, v in SENSOR_QUOTAS.items())]
        if on
        else ["--delete-config", ",".join(SENSOR_QUOTAS)]
    )
    run_config_command(bootstrap, "--entity-type", "clients", "--entity-default", *change)
