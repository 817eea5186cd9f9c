"""`kbt target check FILE`: can kbt reach the cluster a target file names, and what does its
Prometheus hold? Connects, sends no load, creates nothing."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import typer

from tuner.cli.json_out import json_option, to_stdout, write_json
from tuner.core.errors import KbtError, Unreachable

app = typer.Typer(no_args_is_help=True, help="Target files: clusters other than kbt's lab (docs/targets.md).")

ADMIN_TIMEOUT_S = 10.0


class _Captured(logging.Handler):
    """librdkafka log lines kept (the last failure explains an unreachable cluster), not printed."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.last = ""
        self.logger = logging.getLogger(f"kbt.target.check.{id(self)}")
        self.logger.propagate = False
        self.logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
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
    version = None
    if brokers:
        resource = ConfigResource(ConfigResource.Type.BROKER, str(brokers[0]["id"]))
        try:
            configs = admin.describe_configs([resource], request_timeout=ADMIN_TIMEOUT_S)[resource].result(
                timeout=ADMIN_TIMEOUT_S + 2
            )
            for key in ("inter.broker.protocol.version", "log.message.format.version"):
                if key in configs and configs[key].value:
                    version = str(configs[key].value)
                    break
        except (KafkaException, TimeoutError):  # not allowed to describe configs: say so, not fail
            version = None
    return {
        "cluster_id": described.cluster_id,
        "controller": described.controller.id if described.controller is not None else None,
        "brokers": brokers,
        "kafka_version": version,
    }


def metric_facts(target: Any) -> dict[str, Any]:
    """The dialect detected (or named) and which of kbt's series the target's Prometheus holds."""
    from tuner.measure.catalog import SERIES
    from tuner.measure.dialects import DIALECTS, MissingSeries, Source, detect, scope_matchers
    from tuner.measure.prometheus import Prometheus

    if target.prometheus is None:
        return {"prometheus": None}
    prom = Prometheus(target.prometheus)
    sel = target.selectors
    present = prom.series_names(scope_matchers(sel.job, sel.matchers))
    detected, scores = detect(present) if present else (None, {})
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
    return {
        "prometheus": prom.url,
        "dialect": chosen.name if chosen else None,
        "dialect_detected": detected.name if detected else None,
        "dialect_scores": scores,
        "broker_label_values": sorted(s.labels.get(sel.broker_label, "") for s in brokers),
        "series": series,
        "notes": notes,
    }


@app.command("check")
def check(
    file: Path = typer.Argument(..., help="The target file (YAML, docs/targets.md)."),
    json_path: Path | None = json_option("the report"),
) -> None:
    """Check that kbt can reach a target's cluster and Prometheus; sends no load.

    Connects to the target's brokers and Prometheus and reports brokers, Kafka version, controller,
    the metric dialect and which broker series are present. Sends no load, creates nothing.
    Exit 0 when both answer, 5 when the cluster or Prometheus cannot be reached, 2 for a bad file."""
    from tuner.core.redact import redact
    from tuner.target import resolve_target

    target = resolve_target(None, file)
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
    write_json(json_path, "target check", **report)
    if not to_stdout(json_path):
        _print(report)
    if "prometheus_error" in report:
        raise typer.Exit(int(Unreachable.status))


def _print(r: dict[str, Any]) -> None:
    out = typer.echo
    out(f"target {r['target']}: {r['bootstrap_servers']}" + ("" if r["loopback"] else " (not loopback)"))
    out(
        f"  cluster id {r['cluster_id']}, controller {r['controller']},"
        f" Kafka {r['kafka_version'] or 'version not readable'}"
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
    out(f"  brokers seen by Prometheus: {', '.join(r['broker_label_values']) or 'none'}")
    for name, state in r["series"].items():
        note = f" ({r['notes'][name]})" if name in r["notes"] else ""
        out(f"    {name}: {state}{note}")
