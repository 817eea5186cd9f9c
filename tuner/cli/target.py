"""`kbt target check FILE`: can kbt reach the cluster a target file names, and what does its
Prometheus hold? Connects, sends no load, creates nothing."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import typer

from tuner.cli.cluster_flags import bootstrap_option, command_config_option, prometheus_option, target_source
from tuner.cli.json_out import json_option, to_stdout, write_json
from tuner.core.errors import BadInput, KbtError, Unreachable
from tuner.target import TargetSource

app = typer.Typer(no_args_is_help=True, help="Target files: clusters other than kbt's lab (docs/targets.md).")

ADMIN_TIMEOUT_S = 10.0


class _Captured(logging.Handler):
    """librdkafka log lines kept (the last failure explains an unreachable cluster), not printed."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.last = ""
        self.api_lines: list[str] = []  # the brokers' ApiVersions answers (debug "feature")
        self.logger = logging.getLogger(f"kbt.target.check.{id(self)}")
        self.logger.propagate = False
        self.logger.setLevel(logging.DEBUG)  # librdkafka's debug lines are DEBUG records
        self.logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if text.startswith("APIVERSION"):
            self.api_lines.append(text)
            return
        if record.levelno < logging.WARNING:  # other debug lines explain nothing
            return
        if "FAIL" in text or "error" in text.lower():
            # "...: sasl_ssl://h:p/bootstrap: SASL authentication error: ... (after 312ms ...)"
            self.last = text.rsplit("/bootstrap: ", 1)[-1].split(" (after ", 1)[0].strip()


def cluster_facts(target: Any) -> dict[str, Any]:
    """Brokers, controller and Kafka version through the admin API (no topic is created)."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, ConfigResource

    from tuner.target.security import librdkafka_config, resolve

    security = librdkafka_config(resolve(target.client_properties, f"{target.name}: client"), target.name)
    errors: list[str] = []
    logs = _Captured()
    conf: dict[str, Any] = {
        "bootstrap.servers": target.bootstrap_servers,
        "socket.timeout.ms": int(ADMIN_TIMEOUT_S * 1000),
        "logger": logs.logger,  # librdkafka's log lines feed the one-line error, not stderr
        "debug": "feature",  # and the brokers' ApiVersions answers (the version when nothing says it)
        "error_cb": lambda err: errors.append(str(err.str())),
        **security,
    }
    admin = AdminClient(conf)
    try:
        described = admin.describe_cluster(request_timeout=ADMIN_TIMEOUT_S).result(
            timeout=ADMIN_TIMEOUT_S + 2
        )
    except (KafkaException, TimeoutError) as exc:
        admin.poll(0.2)  # a Python logger gets librdkafka's queued log lines on poll
        detail = logs.last or (errors[-1] if errors else str(exc.args[0] if exc.args else exc))
        raise Unreachable(f"{target.name}: cannot reach {target.bootstrap_servers} ({detail})") from None
    brokers = sorted(
        ({"id": n.id, "host": n.host, "port": n.port} for n in described.nodes), key=lambda b: b["id"]
    )
    from tuner.measure.kafka_version import PROTOCOL_KEYS, api_versions

    protocol: dict[str, str | None] | None = None  # None: the configs could not be described
    if brokers:
        resource = ConfigResource(ConfigResource.Type.BROKER, str(brokers[0]["id"]))
        try:
            configs = admin.describe_configs([resource], request_timeout=ADMIN_TIMEOUT_S)[resource].result(
                timeout=ADMIN_TIMEOUT_S + 2
            )
            protocol = {k: configs[k].value for k in PROTOCOL_KEYS if k in configs}
        except (KafkaException, TimeoutError):  # not allowed to describe configs: say so, not fail
            protocol = None
    admin.poll(0.2)  # the queued log lines (the ApiVersions answers) reach the logger on poll
    return {
        "cluster_id": described.cluster_id,
        "controller": described.controller.id if described.controller is not None else None,
        "brokers": brokers,
        "protocol_configs": protocol,
        "api_versions": api_versions(logs.api_lines),
    }


def metric_facts(target: Any) -> dict[str, Any]:
    """The dialect detected (or named) and which of kbt's series the target's Prometheus holds."""
    from tuner.measure.catalog import SERIES
    from tuner.measure.dialects import DIALECTS, MissingSeries, Source, assess, detect, scope_matchers
    from tuner.measure.kafka_version import version_query
    from tuner.measure.prometheus import Prometheus

    if target.prometheus is None:
        return {"prometheus": None}
    prom = Prometheus(target.prometheus)
    sel = target.selectors
    present = prom.series_names(scope_matchers(sel.job, sel.matchers))
    detection = detect(present) if present else None
    detected = detection.dialect if detection else None
    chosen = DIALECTS[target.dialect] if target.dialect != "auto" else detected
    series: dict[str, str] = {}
    notes: dict[str, str] = {}
    if chosen is not None:
        for s in SERIES:
            src = chosen.source(s.name)
            if not isinstance(src, Source):
                series[s.name] = f"not exported: {src.reason}"
                continue
            names = set(src.names) | {n for ns in src.by_value.values() for n in ns}
            series[s.name] = "present" if names & present else "absent"
            if src.note:
                notes[s.name] = src.note
    brokers = prom.instant(f"count by ({sel.broker_label})({{{scope_matchers(sel.job, sel.matchers)}}})")
    _ = MissingSeries  # the same reasons diagnose gives
    versions = prom.instant(version_query(scope_matchers(sel.job, sel.matchers)))
    return {
        "version_series": [dict(s.labels) for s in versions],
        "prometheus": prom.url,
        "dialect": chosen.name if chosen else None,
        "dialect_detected": detected.name if detected else None,
        "dialect_scores": dict(detection.scores) if detection else {},
        "dialect_statement": assess(chosen, present).statement() if chosen else None,
        "broker_label_values": sorted(s.labels.get(sel.broker_label, "") for s in brokers),
        "series": series,
        "notes": notes,
    }


@app.command("check")
def check(
    file: Path | None = typer.Argument(None, help="The target file (YAML, docs/targets.md)."),
    bootstrap: str | None = bootstrap_option(),
    command_config: Path | None = command_config_option(),
    prom_flag: str | None = prometheus_option(),
    json_path: Path | None = json_option("the report"),
) -> None:
    """Check that kbt can reach a target's cluster and Prometheus; sends no load.

    Connects to the target's brokers and Prometheus and reports brokers, Kafka version, controller,
    the metric dialect and which broker series are present. Sends no load, creates nothing.
    Exit 0 when both answer, 5 when the cluster or Prometheus cannot be reached, 2 for a bad file."""
    from tuner.core.redact import redact
    from tuner.measure.kafka_version import read_version
    from tuner.target import resolve_target

    target = resolve_target(None, _source(file, bootstrap, command_config, prom_flag))
    report: dict[str, Any] = {
        "target": target.name,
        "bootstrap_servers": target.bootstrap_servers,
        "loopback": target.loopback,
        "topic_prefix": target.topic_prefix,
        "limits": {
            "max_msgs_per_s": target.limits.max_msgs_per_s,
            "max_bytes_per_s": target.limits.max_bytes_per_s,
        },
        "client_properties": redact(dict(target.client_properties)),
        **cluster_facts(target),
    }
    try:
        report.update(metric_facts(target))
    except KbtError as exc:
        report["prometheus_error"] = exc.message
    version = read_version(
        report.pop("version_series", None),
        target.selectors.broker_label,
        report.pop("protocol_configs"),
        f"Prometheus: {report['prometheus_error']}" if "prometheus_error" in report else None,
        report.pop("api_versions"),
    )
    report["kafka_version"] = version.version
    report["kafka_version_source"] = version.source or None
    report["kafka_version_note"] = version.why_not or None
    write_json(json_path, "target check", **report)
    if not to_stdout(json_path):
        _print(report)
    if "prometheus_error" in report:
        raise typer.Exit(int(Unreachable.status))


def _source(file: Path | None, bootstrap: str | None, config: Path | None, prom: str | None) -> TargetSource:
    source = target_source(file, bootstrap, config, prom)
    if source is None:
        raise BadInput(
            "give a target FILE or --bootstrap-server HOST:PORT (with --command-config, --prometheus)"
        )
    return source


def _print(r: dict[str, Any]) -> None:
    out = typer.echo
    out(f"target {r['target']}: {r['bootstrap_servers']}" + ("" if r["loopback"] else " (not loopback)"))
    out(
        f"  cluster id {r['cluster_id']}, controller {r['controller']}, Kafka "
        + (
            f"{r['kafka_version']} (from {r['kafka_version_source']})"
            if r["kafka_version"]
            else f"version not readable ({r['kafka_version_note']})"
        )
    )
    for b in r["brokers"]:
        out(f"  broker {b['id']}: {b['host']}:{b['port']}")
    out(f"  topics: kbt writes only {r['topic_prefix']}* topics it creates")
    if "prometheus_error" in r:
        out(f"  prometheus: {r['prometheus_error']}")
        return
    if r.get("prometheus") is None:
        out("  prometheus: none named (sweeps record no broker figures; diagnose cannot run)")
        return
    out(f"  prometheus {r['prometheus']}: dialect {r['dialect']} (detected {r['dialect_detected']})")
    if r.get("dialect_statement"):
        out(f"  {r['dialect_statement']}")
    out(f"  brokers seen by Prometheus: {', '.join(r['broker_label_values']) or 'none'}")
    for name, state in r["series"].items():
        note = f" ({r['notes'][name]})" if name in r["notes"] else ""
        out(f"    {name}: {state}{note}")


@app.command("health")
def health(
    file: Path | None = typer.Argument(None, help="The target file (YAML, docs/targets.md)."),
    bootstrap: str | None = bootstrap_option(),
    command_config: Path | None = command_config_option(),
    prom_flag: str | None = prometheus_option(),
    group: list[str] = typer.Option([], "--group", help="A consumer group whose lag to check (repeat)."),
    max_lag: int = typer.Option(10000, "--max-lag", min=0, help="Most records a group may be behind."),
    min_disk_free: float = typer.Option(
        0.2, "--min-disk-free", min=0.0, max=1.0, help="Least free fraction of the brokers' disks."
    ),
    disk_selector: str | None = typer.Option(
        None,
        "--disk-selector",
        help="PromQL label matchers of the brokers' node_exporter series (default: brokers.matchers).",
    ),
    json_path: Path | None = json_option("the checks and the verdict"),
) -> None:
    """Go/no-go of a target's cluster: replication, consumer lag, disk headroom.

    Go/no-go before and after load: under-replicated or offline partitions, consumer lag of the
    named groups, disk headroom (from node_exporter series in the target's Prometheus; said plainly
    when it cannot be measured). Read-only. Exit 0 go, 1 no-go, 5 unreachable, 2 bad file."""
    from confluent_kafka.admin import AdminClient

    from tuner.core.errors import ExitStatus
    from tuner.measure.prometheus import Prometheus
    from tuner.target import resolve_target
    from tuner.target.health import as_dicts, consumer_lag, disk_headroom, under_replicated
    from tuner.target.security import client_config

    target = resolve_target(None, _source(file, bootstrap, command_config, prom_flag))
    cluster_facts(target)  # reachable, credentials accepted: one line (exit 5) otherwise
    admin = AdminClient(
        {**client_config(target), "bootstrap.servers": target.bootstrap_servers, "socket.timeout.ms": 10000}
    )
    checks = [under_replicated(admin), *consumer_lag(admin, group, max_lag)]
    selector = disk_selector
    if selector is None:
        from tuner.measure.promql import label_matchers

        selector = label_matchers(dict(sorted(target.selectors.matchers.items())))
    prom = Prometheus(target.prometheus, timeout_s=30) if target.prometheus is not None else None
    try:
        checks.append(disk_headroom(prom, selector, min_disk_free))
    except KbtError as exc:
        raise Unreachable(exc.message) from None
    go = all(c.ok is not False for c in checks)
    write_json(json_path, "target health", target=target.name, go=go, checks=as_dicts(checks))
    if not to_stdout(json_path):
        for c in checks:
            verdict = {True: "ok", False: "NO-GO", None: "not measured"}[c.ok]
            typer.echo(f"{verdict:12} {c.name}: {c.reason}")
            for line in c.details[:10]:
                typer.echo(f"             {line}")
        typer.echo(f"{target.name}: {'go' if go else 'no-go'}")
    if not go:
        raise typer.Exit(int(ExitStatus.FAILURE))
