"""`kbt target check FILE`: can kbt reach the cluster a target file names, and what does its
Prometheus hold? Connects, sends no load, creates nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from tuner.cli.cluster_flags import target_source
from tuner.cli.json_out import write_json
from tuner.cli.options import option
from tuner.core.errors import BadInput, ExitStatus, KbtError, Unreachable
from tuner.core.redact import redact
from tuner.core.text import value
from tuner.core.writes import is_stdout
from tuner.runner.target_facts import cluster_facts, metric_facts
from tuner.target.base import Target
from tuner.target.registry import resolve_target

app = typer.Typer(no_args_is_help=True, help="Target files: clusters other than kbt's lab (docs/targets.md).")


@app.command("check")
def check(
    file: Path | None = typer.Argument(None, help="The target file (YAML, docs/targets.md)."),
    bootstrap: str | None = option("--bootstrap-server"),
    command_config: Path | None = option("--command-config"),
    prom_flag: str | None = option("--prometheus"),
    json_path: Path | None = option("--json", what="the report"),
) -> None:
    """Check that kbt can reach a target's cluster and Prometheus; sends no load.

    Connects to the target's brokers and Prometheus and reports brokers, Kafka version, controller,
    the metric dialect and which broker series are present. Sends no load, creates nothing.
    Exit 0 when both answer, 5 when the cluster or Prometheus cannot be reached, 2 for a bad file."""
    from tuner.measure.kafka_version import read_version

    target = _target(file, bootstrap, command_config, prom_flag)
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
    if not is_stdout(json_path):
        _print(report)
    if "prometheus_error" in report:
        raise typer.Exit(int(Unreachable.status))


def _target(file: Path | None, bootstrap: str | None, config: Path | None, prom: str | None) -> Target:
    source = target_source(file, bootstrap, config, prom)
    if source is None:
        raise BadInput(
            "give a target FILE or --bootstrap-server HOST:PORT (with --command-config, --prometheus)"
        )
    return resolve_target(None, source)


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
    labels = ", ".join(value(v, 80) for v in r["broker_label_values"])  # labels can hold anything
    out(f"  brokers seen by Prometheus: {labels or 'none'}")
    for name, state in r["series"].items():
        out(f"    {name}: {state}")


@app.command("health")
def health(
    file: Path | None = typer.Argument(None, help="The target file (YAML, docs/targets.md)."),
    bootstrap: str | None = option("--bootstrap-server"),
    command_config: Path | None = option("--command-config"),
    prom_flag: str | None = option("--prometheus"),
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
    json_path: Path | None = option("--json", what="the checks and the verdict"),
) -> None:
    """Go/no-go of a target's cluster: replication, consumer lag, disk headroom.

    Go/no-go before and after load: under-replicated or offline partitions, consumer lag of the
    named groups, disk headroom (from node_exporter series in the target's Prometheus; said plainly
    when it cannot be measured). Read-only. Exit 0 go, 1 no-go, 5 unreachable, 2 bad file."""
    from dataclasses import asdict

    from tuner.core.kafka_clients import reached_admin
    from tuner.measure.prometheus import QUERY_TIMEOUT_S, Prometheus
    from tuner.target.health import TIMEOUT_S, consumer_lag, disk_headroom, under_replicated
    from tuner.target.security import connection

    target = _target(file, bootstrap, command_config, prom_flag)
    cluster_facts(target)  # reachable, credentials accepted: one line (exit 5) otherwise
    admin = reached_admin(connection(target), TIMEOUT_S)  # not asked again; its lines off the terminal
    checks = [under_replicated(admin), *consumer_lag(admin, group, max_lag)]
    selector = disk_selector
    if selector is None:
        from tuner.measure.promql import label_matchers

        selector = label_matchers(dict(sorted(target.selectors.matchers.items())))
    prom = Prometheus(target.prometheus, timeout_s=QUERY_TIMEOUT_S) if target.prometheus is not None else None
    try:
        checks.append(disk_headroom(prom, selector, min_disk_free))
    except KbtError as exc:
        raise Unreachable(exc.message) from None
    go = all(c.ok is not False for c in checks)
    write_json(json_path, "target health", target=target.name, go=go, checks=[asdict(c) for c in checks])
    if not is_stdout(json_path):
        for c in checks:
            verdict = {True: "ok", False: "NO-GO", None: "not measured"}[c.ok]
            typer.echo(f"{verdict:12} {c.name}: {c.reason}")
            for line in c.details[:10]:
                typer.echo(f"             {line}")
        typer.echo(f"{target.name}: {'go' if go else 'no-go'}")
    if not go:
        raise typer.Exit(int(ExitStatus.FAILURE))
