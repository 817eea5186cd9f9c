"""The Java producer's settings as Logstash `kafka` output options (logstash-integration-kafka).

Logstash's Kafka output is the Java producer behind a fixed set of options: it sets `linger_ms` 0,
`batch_size` 16384, `acks` "1" and `compression_type` "none" explicitly, so Kafka 4.0's 5 ms linger
default never applies: the caller passes every batching setting the measured run used, defaults
included, so the same behaviour carries over; its durability too (`acks`, `retries`: the Java kind
states them always). A Java property with no output option (a compression level,
`enable.idempotence`, `max.in.flight.requests.per.connection`) cannot be set from Logstash; the
rendered file lists those as comments with the measured run's value, and for idempotence what the
client derives from the options written (the caller's `notes`). This is the one mapping from Java
producer properties to the output's options.

Security the profile sets (`security.protocol`, `sasl.*`, `ssl.*` overrides) becomes the output's
own security options; a secret there is a `${VAR}` reference (the profile refuses any other form)
and is written as that reference, which Logstash resolves from its keystore or environment. The
header comments hold no `${` (Logstash expands references in comments of a config string too).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

# Java property -> the output option that sets it. Options are numbers unless in STRING_OPTIONS.
OPTIONS: Mapping[str, str] = MappingProxyType(
    {
        "acks": "acks",
        "batch.size": "batch_size",
        "buffer.memory": "buffer_memory",
        "client.id": "client_id",
        "compression.type": "compression_type",
        "linger.ms": "linger_ms",
        "max.request.size": "max_request_size",
        "receive.buffer.bytes": "receive_buffer_bytes",
        "reconnect.backoff.ms": "reconnect_backoff_ms",
        "retries": "retries",
        "retry.backoff.ms": "retry_backoff_ms",
        "send.buffer.bytes": "send_buffer_bytes",
        # security (logstash-integration-kafka's output options)
        "security.protocol": "security_protocol",
        "sasl.mechanism": "sasl_mechanism",
        "sasl.jaas.config": "sasl_jaas_config",
        "ssl.endpoint.identification.algorithm": "ssl_endpoint_identification_algorithm",
        "ssl.key.password": "ssl_key_password",
        "ssl.keystore.location": "ssl_keystore_location",
        "ssl.keystore.password": "ssl_keystore_password",
        "ssl.keystore.type": "ssl_keystore_type",
        "ssl.truststore.location": "ssl_truststore_location",
        "ssl.truststore.password": "ssl_truststore_password",
        "ssl.truststore.type": "ssl_truststore_type",
    }
)
STRING_OPTIONS = frozenset(
    {"acks", "client_id", "compression_type", "partitioner"}
    | {option for key, option in OPTIONS.items() if key.startswith(("security.", "sasl.", "ssl."))}
)
# The output's own names for the partitioners it knows; any other class is given by its name.
_PARTITIONERS: Mapping[str, str] = MappingProxyType(
    {"org.apache.kafka.clients.producer.RoundRobinPartitioner": "round_robin"}
)
FILENAME = "logstash-kafka-output.conf"


def _value(option: str, value: str) -> str:
    if option in STRING_OPTIONS:
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return value


def logstash_output(settings: Mapping[str, str], header: Sequence[str], notes: Sequence[str] = ()) -> str:
    """A Logstash pipeline `output { kafka { ... } }` block for these Java producer properties; `notes`
    are comments about settings the output cannot carry."""
    lines = [f"# {line}" if line else "#" for line in header]
    lines += [
        "# The recommended Java producer settings as Logstash kafka output options (bootstrap_servers",
        "# and topic_id come from your deployment; security options the profile sets keep their",
        "# variable references, which Logstash resolves from its keystore or environment).",
    ]
    options: list[tuple[str, str]] = []
    unmapped: list[str] = []
    for key in sorted(settings):
        value = settings[key]
        if key == "partitioner.class":
            options.append(("partitioner", _PARTITIONERS.get(value, value)))
        elif key in OPTIONS:
            options.append((OPTIONS[key], value))
        else:
            unmapped.append(key)
    explained = {note.split(":", 1)[0] for note in notes}
    lines += [f"# {note}" for note in notes]
    for key in unmapped:
        if key not in explained:
            lines.append(
                f"# {key}: no kafka output option; the client default applies under Logstash"
                f" (the measured run: {settings[key]})"
            )
    body = [f"    {name} => {_value(name, value)}" for name, value in options]
    return "\n".join([*lines, "output {", "  kafka {", *body, "  }", "}"]) + "\n"
