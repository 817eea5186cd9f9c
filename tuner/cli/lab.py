"""`kbt lab up|down|status|logs`: the local tiered Kafka cluster with jmx_exporter and Prometheus."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tuner.cli.json_out import write_json
from tuner.cli.options import option
from tuner.core.errors import BadInput, ExitStatus
from tuner.core.text import value
from tuner.core.writes import is_stdout
from tuner.lab.config import MAX_BROKERS, LabConfig, default_base_port, default_lab_dir
from tuner.lab.security import USERNAME, SecurityFiles
from tuner.lab.state import LabState, load_state
from tuner.render.plain import show

app = typer.Typer(
    help="Run a local tiered Kafka cluster with jmx_exporter and Prometheus.", no_args_is_help=True
)


def _err() -> Console:
    return Console(stderr=True, highlight=False)


# `up` parameter -> the LabConfig field it sets, where the names differ.
_FIELD = {"scrape_interval": "scrape_interval_s", "client_exporters": "client_exporter_count"}
# `up` parameters that are not a setting a profile may give
_NOT_SETTINGS = ("base_port", "lab_dir", "timeout", "profile")


def _given(ctx: typer.Context, name: str) -> bool:
    """Was the flag `name` given on the command line (not left at its default)?"""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def _print_endpoints(state: LabState) -> None:
    typer.echo(f"bootstrap servers: {state.bootstrap_servers}")
    typer.echo(f"prometheus:        {state.prometheus_url}")
    if state.external_bootstrap_servers:
        typer.echo(f"also listening:    {state.external_bootstrap_servers} (PLAINTEXT)")
    if state.config.via_toxiproxy:
        typer.echo(f"toxiproxy API:     http://127.0.0.1:{state.config.toxiproxy_api_port}")
    if state.secure_bootstrap_servers:
        files = SecurityFiles(state.security_dir)
        typer.echo(f"SASL_SSL servers:  {state.secure_bootstrap_servers}")
        typer.echo(
            f"SASL_SSL login:    SCRAM-SHA-512 user {USERNAME!r}, password in {files.sasl_password_file},"
            f" CA {files.ca_cert}"
        )


_SECURITY = typer.Option(
    "plaintext",
    "--security",
    help="plaintext, or sasl_ssl for a SCRAM-over-TLS listener per broker. The listener is"
    " SCRAM-SHA-512 over TLS with a CA made per lab; the password comes from"
    " KBT_LAB_SASL_PASSWORD or is generated into the lab directory.",
)
_VIA_TOXIPROXY = typer.Option(
    False,
    "--via-toxiproxy",
    help="Clients reach each broker through its own Toxiproxy proxy (network faults for kbt chaos);"
    " replication stays direct.",
)
_JMX_RULES = typer.Option(
    "kbt",
    "--jmx-rules",
    help="The brokers' jmx_exporter rules: kbt, or strimzi / upstream / confluent to export in"
    " that metric dialect's naming (docs/targets.md); kbt's own commands then need a target"
    " file naming it.",
)
_KUBERNETES_JOB = typer.Option(
    False,
    "--kubernetes-job",
    help="Also scrape the brokers as job kafka, pod my-cluster-kafka-N (docs/targets.md).",
)
_LISTEN_ADDRESS = typer.Option(
    None,
    "--listen-address",
    help="Also listen on and advertise this IPv4 address of the machine (PLAINTEXT, base+61..)."
    " For load machines or network namespaces that cannot reach loopback; default loopback only.",
)


@app.command()
def up(
    ctx: typer.Context,
    brokers: int = typer.Option(3, "--brokers", min=1, max=MAX_BROKERS, help="Number of brokers (1..5)."),
    base_port: int | None = typer.Option(
        None, "--base-port", help="First loopback port (env KBT_LAB_BASE_PORT; default 19090)."
    ),
    lab_dir: Path | None = option("--lab-dir", "lab"),
    tiered: bool = typer.Option(
        True, "--tiered/--no-tiered", help="KIP-405 tiered storage (LocalTieredStorage)."
    ),
    scrape_interval: float = typer.Option(
        5.0, "--scrape-interval", help="Prometheus scrape interval, seconds."
    ),
    heap: str = typer.Option("512m", "--heap", help="Heap per broker (-Xms/-Xmx), e.g. 512m."),
    client_exporters: int = typer.Option(
        64, "--client-exporters", min=0, max=100, help="Client exporter ports scraped from base+100."
    ),
    timeout: float = option("--timeout", "up"),
    security: str = _SECURITY,
    via_toxiproxy: bool = _VIA_TOXIPROXY,
    jmx_rules: str = _JMX_RULES,
    kubernetes_job: bool = _KUBERNETES_JOB,
    listen_address: str | None = _LISTEN_ADDRESS,
    profile: str | None = option("--profile", "lab"),
) -> None:
    """Start the lab (or keep the running one) and wait until it is healthy."""
    settings = {  # with a profile: the profile's values, except where a flag was given
        _FIELD.get(name, name): value
        for name, value in ctx.params.items()
        if name not in _NOT_SETTINGS and (profile is None or _given(ctx, name))
    }
    config = LabConfig.parse(
        {
            **settings,
            "base_port": base_port if base_port is not None else default_base_port(),
            "lab_dir": lab_dir or default_lab_dir(),
            "profile": profile,
        }
    )
    console = _err()
    started, started_at = time.monotonic(), time.time()
    with console.status("starting the lab", spinner="dots") as status:
        from tuner.lab.lab import Lab  # its process control pulls in HTTP clients: only when used

        lab = Lab(config, progress=lambda msg: status.update(msg))
        state = lab.up(timeout_s=timeout)
    if state.started_at < started_at:
        console.print(f"lab already running and healthy ({config.lab_dir})")
    else:
        console.print(f"lab healthy in {time.monotonic() - started:.1f}s ({config.lab_dir})")
    _print_endpoints(state)


@app.command()
def down(
    lab_dir: Path | None = option("--lab-dir", "lab"),
    timeout: float = option("--timeout", "down"),
) -> None:
    """Stop the lab's processes (only the PIDs it recorded) and check that its ports are free."""
    root = lab_dir or default_lab_dir()
    console = _err()
    with console.status("stopping the lab", spinner="dots"):
        from tuner.lab.lab import Lab

        stopped = Lab.at(root).down(timeout_s=timeout)
    if stopped:
        console.print(f"stopped {', '.join(stopped)}")
    else:
        console.print(f"no lab running in {value(root, 400)}", markup=False, highlight=False)


def _switched_lab(command: str, state: str, lab_dir: Path | None) -> LabState:
    """The lab whose `command` is turned `state` (on or off)."""
    if state not in ("on", "off"):
        raise BadInput(f"{command}: expected on or off, got {state[:40]!r}")
    return load_state(lab_dir or default_lab_dir())


@app.command("client-sensors")
def client_sensors(
    state: str = typer.Argument(..., help="on: set the harmless default client quotas; off: delete them."),
    lab_dir: Path | None = option("--lab-dir", "lab"),
) -> None:
    """Turn Kafka's per-client sensors (which clients send the small requests) on or off on the lab:
    default client quotas no client can reach (docs/diagnose.md). Off deletes them; Kafka keeps
    recording until the broker restarts."""
    from tuner.lab.client_sensors import set_client_sensors

    lab = _switched_lab("client-sensors", state, lab_dir)
    set_client_sensors(lab.bootstrap_servers, state == "on")
    _err().print(f"client sensors {state} ({lab.bootstrap_servers})")


@app.command("request-log")
def request_log(
    state: str = typer.Argument(..., help="on: the brokers log every request (DEBUG); off: back to WARN."),
    lab_dir: Path | None = option("--lab-dir", "lab"),
) -> None:
    """Turn Kafka's request log (each client's requests counted) on or off on the lab's brokers.

    Prints the `kbt diagnose --request-log` arguments that read the brokers' log files
    (docs/diagnose.md, which clients)."""
    from tuner.lab.request_log import set_request_log

    lab = _switched_lab("request-log", state, lab_dir)
    set_request_log(lab.bootstrap_servers, [b.id for b in lab.brokers], state == "on")
    _err().print(f"request log {state} ({lab.bootstrap_servers})", markup=False, highlight=False)
    if state == "on":
        # flags to paste: quoted for a shell, and on one line whatever the lab directory holds
        typer.echo(" ".join(f"--request-log {shlex.quote(value(b.log_file, 4096))}" for b in lab.brokers))


@app.command()
def status(
    lab_dir: Path | None = option("--lab-dir", "lab"),
    json_path: Path | None = option("--json", what="each component's health and the endpoints"),
) -> None:
    """Show each component healthy or not, the bootstrap servers and the Prometheus URL."""
    root = lab_dir or default_lab_dir()
    from tuner.lab.lab import Lab

    state, health = Lab.at(root).status()
    if state is None or not health:
        write_json(json_path, "lab status", lab_dir=root, running=False, healthy=False, components=[])
        msg = f"no lab running in {value(root, 400)} (run 'kbt lab up')"  # a path on one line
        typer.echo(msg, err=is_stdout(json_path))
        raise typer.Exit(int(ExitStatus.FAILURE))
    healthy = all(h.healthy for h in health)
    write_json(
        json_path,
        "lab status",
        lab_dir=root,
        running=True,
        healthy=healthy,
        components=health,
        bootstrap_servers=state.bootstrap_servers,
        prometheus_url=state.prometheus_url,
        secure_bootstrap_servers=state.secure_bootstrap_servers or None,
        external_bootstrap_servers=state.external_bootstrap_servers or None,
        toxiproxy_api=(
            f"http://127.0.0.1:{state.config.toxiproxy_api_port}" if state.config.via_toxiproxy else None
        ),
    )
    if not is_stdout(json_path):
        table = Table(title=Text(f"kbt lab ({value(root, 400)})"))
        for column in ("component", "state", "detail"):
            table.add_column(column)
        for h in health:
            table.add_row(h.component, "[green]healthy[/]" if h.healthy else "[red]unhealthy[/]", h.detail)
        show(Console(highlight=False), table)
        _print_endpoints(state)
    if not healthy:
        raise typer.Exit(int(ExitStatus.FAILURE))


@app.command()
def logs(
    component: str = typer.Argument(..., help="controller, broker-N or prometheus."),
    lines: int = typer.Option(50, "--lines", "-n", min=1, help="How many lines from the end."),
    lab_dir: Path | None = option("--lab-dir", "lab"),
) -> None:
    """Print the tail of a component's log."""
    from tuner.lab.lab import Lab

    text = Lab.at(lab_dir or default_lab_dir()).logs(component, lines)
    sys.stdout.write(text + ("\n" if text else ""))
