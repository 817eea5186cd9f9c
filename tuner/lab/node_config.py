"""Kafka node files and command lines: server.properties, log4j2, the java invocations."""

from __future__ import annotations

import os
from pathlib import Path

from tuner.core.paths import broker_plugin_jar, jmx_agent_jar, jmx_httpserver_jar, kafka_libs_dir, repo_root
from tuner.lab import security
from tuner.lab.config import CONTROLLER_NODE_ID, LOOPBACK, LabConfig
from tuner.lab.layout import COMPONENT_CONTROLLER, LabLayout, broker_component

LOCAL_TIERED_STORAGE = "org.apache.kafka.server.log.remote.storage.LocalTieredStorage"
# `kbt lab up --jmx-rules`: brokers exporting in another metric dialect's naming (dialect tests),
# by the rules file in exporters/jmx/.
JMX_DIALECT_RULES = {
    "kbt": "kafka-broker.yml",
    "strimzi": "strimzi-style.yml",
    "upstream": "upstream-example.yml",
    "confluent": "confluent-style.yml",
    # A rendition of Strimzi Metrics Reporter's naming (its jar is not at hand; the file says so).
    "strimzi-reporter": "strimzi-reporter-rendition.yml",
    "exporter-default": "exporter-default.yml",  # no rules
}
INTERNAL_LISTENER = "INTERNAL"  # replication listener of a lab behind Toxiproxy
EXTERNAL_LISTENER = "EXTERNAL"  # PLAINTEXT on the lab's listen address (load from other hosts)


def jmx_rules_file(dialect: str = "kbt") -> Path:
    """exporters/jmx/kafka-broker.yml (or a dialect's rules); KBT_JMX_RULES overrides it (used to
    capture raw MBean names)."""
    override = os.environ.get("KBT_JMX_RULES")
    return Path(override) if override else repo_root() / "exporters" / "jmx" / JMX_DIALECT_RULES[dialect]


def _common(cfg: LabConfig, layout: LabLayout, component: str) -> dict[str, str]:
    return {
        "controller.quorum.voters": f"{CONTROLLER_NODE_ID}@{LOOPBACK}:{cfg.controller_port}",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "log.dirs": str(layout.node_data_dir(component)),
        "num.recovery.threads.per.data.dir": "1",
    }


def controller_properties(cfg: LabConfig, layout: LabLayout) -> dict[str, str]:
    """The lab's single KRaft controller (node 0): metadata only, no client traffic."""
    props = {
        "process.roles": "controller",
        "node.id": str(CONTROLLER_NODE_ID),
        "listeners": f"CONTROLLER://{LOOPBACK}:{cfg.controller_port}",
        **_common(cfg, layout, COMPONENT_CONTROLLER),
        "num.network.threads": "1",
        "num.io.threads": "2",
        "background.threads": "2",
    }
    if cfg.tiered:
        # The controller validates topic configs: remote.storage.enable=true needs this flag here too.
        props["remote.log.storage.system.enable"] = "true"
    return props


# The lab's broker plugin: StandardAuthorizer plus a per-produce-request service time.
SERVICE_TIME_AUTHORIZER = "kbt.lab.ServiceTimeAuthorizer"


def broker_properties(cfg: LabConfig, layout: LabLayout, node_id: int) -> dict[str, str]:
    """server.properties of broker `node_id` (1..N)."""
    rf = str(cfg.replication_factor)
    min_isr = str(min(2, cfg.replication_factor))
    listener = f"PLAINTEXT://{LOOPBACK}:{cfg.broker_port(node_id)}"
    props: dict[str, str] = {
        "process.roles": "broker",
        "node.id": str(node_id),
        "listeners": listener,
        "advertised.listeners": listener,
        "inter.broker.listener.name": "PLAINTEXT",
        **_common(cfg, layout, broker_component(node_id)),
        # The network threads are what kbt measures: keep Kafka's default count. The rest is
        # trimmed for a 2-core machine running several brokers.
        "num.network.threads": str(cfg.network_threads),
        "num.io.threads": str(cfg.io_threads),
        "queued.max.requests": str(cfg.queued_max_requests),
        "background.threads": "4",
        "num.replica.fetchers": "1",
        "log.cleaner.threads": "1",
        "num.partitions": "1",
        # Internal topics replicated as far as the broker count allows.
        "offsets.topic.replication.factor": rf,
        "offsets.topic.num.partitions": "10",
        "transaction.state.log.replication.factor": rf,
        "transaction.state.log.min.isr": min_isr,
        "transaction.state.log.num.partitions": "5",
        "share.coordinator.state.topic.replication.factor": rf,
        "share.coordinator.state.topic.min.isr": min_isr,
        # A lab starts empty: no wait for late group members; quick retention checks for tests.
        "group.initial.rebalance.delay.ms": "0",
        "log.retention.check.interval.ms": "1000",
    }
    if cfg.flush_interval_messages is not None:
        props["log.flush.interval.messages"] = str(cfg.flush_interval_messages)
    if cfg.metrics_sample_window_ms is not None:
        props["metrics.sample.window.ms"] = str(cfg.metrics_sample_window_ms)
    if cfg.produce_service_time_us > 0:
        # Kafka's own authorizer, everything allowed, plus the service time (loadtests/broker-plugin)
        props["authorizer.class.name"] = SERVICE_TIME_AUTHORIZER
        props["allow.everyone.if.no.acl.found"] = "true"
        props["kbt.produce.service.time.us"] = str(cfg.produce_service_time_us)
    if cfg.tiered:
        props.update(tiered_properties(cfg, layout))
    if cfg.security == "sasl_ssl":
        _add_listener(props, security.LISTENER, f"{LOOPBACK}:{cfg.secure_port(node_id)}", "SASL_SSL")
        props.update(security.broker_listener_properties(security.SecurityFiles(layout.security_dir)))
    if cfg.listen_address is not None:
        # Clients that bootstrap here are told these addresses (Kafka answers metadata with the
        # listener a client came in on), so hosts that cannot reach loopback can produce.
        _add_listener(props, EXTERNAL_LISTENER, f"{cfg.listen_address}:{cfg.external_port(node_id)}")
    if cfg.via_toxiproxy:
        _behind_toxiproxy(cfg, node_id, props)
    return props


def _add_listener(props: dict[str, str], name: str, address: str, protocol: str = "PLAINTEXT") -> None:
    """A listener `name` on `address`, advertised as it is."""
    props["listeners"] += f",{name}://{address}"
    props["advertised.listeners"] += f",{name}://{address}"
    props["listener.security.protocol.map"] += f",{name}:{protocol}"


def _behind_toxiproxy(cfg: LabConfig, node_id: int, props: dict[str, str]) -> None:
    """Clients learn the proxy's address for PLAINTEXT; replication and the tiered-storage metadata
    clients use a direct INTERNAL listener, so a network fault hits the producers only."""
    direct = f"PLAINTEXT://{LOOPBACK}:{cfg.broker_port(node_id)}"
    proxied = f"PLAINTEXT://{LOOPBACK}:{cfg.proxy_port(node_id)}"
    _add_listener(props, INTERNAL_LISTENER, f"{LOOPBACK}:{cfg.internal_port(node_id)}")
    props["advertised.listeners"] = props["advertised.listeners"].replace(direct, proxied)
    props["inter.broker.listener.name"] = INTERNAL_LISTENER
    if "remote.log.metadata.manager.listener.name" in props:
        props["remote.log.metadata.manager.listener.name"] = INTERNAL_LISTENER


def tiered_properties(cfg: LabConfig, layout: LabLayout) -> dict[str, str]:
    """KIP-405 with LocalTieredStorage (kafka-storage test jar): the remote tier is a lab directory."""
    return {
        "remote.log.storage.system.enable": "true",
        "remote.log.storage.manager.class.name": LOCAL_TIERED_STORAGE,
        "remote.log.storage.manager.impl.prefix": "rsm.config.",
        "remote.log.metadata.manager.impl.prefix": "rlmm.config.",
        "rsm.config.dir": str(layout.remote_storage_dir),
        "remote.log.metadata.manager.listener.name": "PLAINTEXT",
        "rlmm.config.remote.log.metadata.topic.replication.factor": str(cfg.replication_factor),
        "rlmm.config.remote.log.metadata.topic.num.partitions": "5",
        # Copy finished segments about a second after they roll; small pools for 2 cores.
        "remote.log.manager.task.interval.ms": "1000",
        "remote.log.manager.copier.thread.pool.size": "2",
        "remote.log.manager.expiration.thread.pool.size": "2",
        "remote.log.manager.follower.thread.pool.size": "2",
        "remote.log.reader.threads": "2",
    }


def render_properties(props: dict[str, str]) -> str:
    lines = ["# Written by kbt lab up on every fresh start."]
    lines += [f"{k}={v}" for k, v in props.items()]
    return "\n".join(lines) + "\n"


# Kafka's per-request logger, quiet unless `kbt lab request-log on` raises it (tuner.lab.request_log).
REQUEST_LOGGER = "kafka.request.logger"
REQUEST_LOGGER_LEVEL = "WARN"


def log4j2_properties() -> str:
    """Node logging: INFO to stdout (the supervisor sends stdout to logs/<component>.log)."""
    return "\n".join(
        [
            "status = warn",
            "appender.console.type = Console",
            "appender.console.name = STDOUT",
            "appender.console.layout.type = PatternLayout",
            "appender.console.layout.pattern = [%d] %p %m (%c)%n",
            "rootLogger.level = INFO",
            "rootLogger.appenderRef.stdout.ref = STDOUT",
            # Loggers that print per request or dump whole configs.
            "logger.state.name = state.change.logger",
            "logger.state.level = WARN",
            f"logger.request.name = {REQUEST_LOGGER}",
            f"logger.request.level = {REQUEST_LOGGER_LEVEL}",
            "logger.config.name = org.apache.kafka.common.config.AbstractConfig",
            "logger.config.level = WARN",
            "",
        ]
    )


def _node_command(java: str, heap: str, layout: LabLayout, component: str, agents: list[str]) -> list[str]:
    """A Kafka node's java invocation: its heap, the JVM settings every node shares, `agents`."""
    return [
        java,
        f"-Xms{heap}",
        f"-Xmx{heap}",
        "-XX:+UseG1GC",
        "-XX:MaxGCPauseMillis=20",
        "-XX:InitiatingHeapOccupancyPercent=35",
        "-XX:ParallelGCThreads=2",
        "-XX:ConcGCThreads=1",
        "-XX:CICompilerCount=2",
        "-XX:+ExitOnOutOfMemoryError",
        "-Djava.awt.headless=true",
        f"-Dlog4j2.configurationFile={layout.node_log4j(component)}",
        f"-Dkafka.logs.dir={layout.logs_dir}",
        *agents,
        "-cp",
        classpath(),
        "kafka.Kafka",
        str(layout.node_properties(component)),
    ]


def classpath() -> str:
    # The broker plugin's jar is on every node's classpath; only a broker given the service time uses it.
    return f"{kafka_libs_dir()}/*:{broker_plugin_jar()}"


def broker_command(cfg: LabConfig, layout: LabLayout, node_id: int, java: str = "java") -> list[str]:
    agent = f"-javaagent:{jmx_agent_jar()}={LOOPBACK}:{cfg.jmx_port(node_id)}:{jmx_rules_file(cfg.jmx_rules)}"
    return _node_command(
        java, cfg.heap, layout, broker_component(node_id), [agent, *_jmx_remote(cfg, node_id)]
    )


def _jmx_remote(cfg: LabConfig, node_id: int) -> list[str]:
    """The broker's JMX on loopback (registry and RMI on one port, no auth: loopback only), for
    the extra dialects' standalone exporters."""
    if not cfg.extra_dialects:
        return []
    port = cfg.jmx_remote_port(node_id)
    return [
        f"-Dcom.sun.management.jmxremote.port={port}",
        f"-Dcom.sun.management.jmxremote.rmi.port={port}",
        f"-Dcom.sun.management.jmxremote.host={LOOPBACK}",
        f"-Djava.rmi.server.hostname={LOOPBACK}",
        "-Dcom.sun.management.jmxremote.authenticate=false",
        "-Dcom.sun.management.jmxremote.ssl=false",
        "-Dcom.sun.management.jmxremote.local.only=true",
    ]


def dialect_exporter_file(layout: LabLayout, dialect: str, node_id: int) -> Path:
    return layout.node_dir(broker_component(node_id)) / f"jmx-{dialect}.yml"


def dialect_exporter_config(cfg: LabConfig, dialect: str, node_id: int) -> str:
    """The dialect's rules file with the broker's JMX port to read (the standalone exporter's)."""
    rules = jmx_rules_file(dialect).read_text()
    return f"hostPort: {LOOPBACK}:{cfg.jmx_remote_port(node_id)}\n{rules}"


def dialect_exporter_command(
    cfg: LabConfig, layout: LabLayout, dialect: str, node_id: int, java: str = "java"
) -> list[str]:
    return [
        java,
        "-Xmx96m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-XX:CICompilerCount=1",
        "-jar",
        str(jmx_httpserver_jar()),
        f"{LOOPBACK}:{cfg.dialect_exporter_port(dialect, node_id)}",
        str(dialect_exporter_file(layout, dialect, node_id)),
    ]


def controller_command(cfg: LabConfig, layout: LabLayout, java: str = "java") -> list[str]:
    return _node_command(java, cfg.controller_heap, layout, COMPONENT_CONTROLLER, [])


def format_command(layout: LabLayout, component: str, cluster_id: str, java: str = "java") -> list[str]:
    """StorageTool format with the static quorum from server.properties (no --standalone)."""
    return [
        java,
        "-Xmx256m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        f"-Dlog4j2.configurationFile={layout.node_log4j(component)}",
        "-cp",
        classpath(),
        "kafka.tools.StorageTool",
        "format",
        "-t",
        cluster_id,
        "-c",
        str(layout.node_properties(component)),
    ]
