"""`kbt lab up|down|status|logs`: the local tiered Kafka cluster with exporters and Prometheus."""

from __future__ import annotations

import typer

app = typer.Typer(help="Run a local tiered Kafka cluster with jmx_exporter and Prometheus.", no_args_is_help=True)
