"""Build a SweepRunner for a target (the lab by default): its cluster, its Prometheus, the engines."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tuner.core.errors import BadInput
from tuner.driver.engine import Placement
from tuner.driver.engines import drive
from tuner.driver.result import DriverResult
from tuner.measure.prometheus import QUERY_TIMEOUT_S, Prometheus
from tuner.runner.lifecycle import Measurer, Observer
from tuner.runner.series_store import SeriesStore
from tuner.runner.sweep import SweepRunner
from tuner.spec.references import expand_references
from tuner.spec.sweep import RunPlan
from tuner.target.base import Target, TargetSource
from tuner.target.registry import resolve_target


class DriverEngine:
    """The engine of the profile's client kind runs the load and verifies delivery."""

    def run(
        self,
        plan: RunPlan,
        topics: list[str],
        run_id: str,
        target: Target,
        hold: Callable[[], bool] | None = None,
    ) -> DriverResult:
        """`hold`: keep the load going past its duration while it returns True (kbt chaos)."""
        return drive(plan, placement(plan, target, run_id, topics), hold)


def placement(plan: RunPlan, target: Target, run_id: str, topics: list[str]) -> Placement:
    """Where a run goes: the target's bootstrap servers and client security, or its SASL_SSL
    listener when the profile asks for it, the profile's `${VAR}` overrides resolved, the run's
    topics and the target's client exporter ports."""
    from tuner.target.security import client_config

    security: dict[str, str] = client_config(target)  # a target file's client security
    bootstrap = target.bootstrap_servers
    if plan.profile.security == "sasl_ssl":
        lab = target.lab
        if lab is None or not lab.secure_bootstrap_servers:
            raise BadInput(
                f"profile {plan.profile.name} uses security sasl_ssl but the lab has no SASL_SSL"
                " listener (kbt lab up --security sasl_ssl)"
            )
        bootstrap = lab.secure_bootstrap_servers
        security.update(lab.secure_client_properties)
    security.update(expand_references(plan.profile.raw_properties, f"profile {plan.profile.name}"))
    ports = target.lab.client_exporter_ports if target.lab is not None else ()
    return Placement(run_id, tuple(topics), bootstrap, security, tuple(ports))


def measurer_of(target: Target) -> Measurer | None:
    """The broker measurement through the target's Prometheus (None: the target has none)."""
    if not target.prometheus_url:
        return None
    lab = target.lab
    # a target file's Prometheus with its auth and metric dialect; the lab's is read plain
    if target.translated_prometheus:
        prometheus = Prometheus.for_target(target, QUERY_TIMEOUT_S)
    else:
        prometheus = Prometheus(target.prometheus_url, timeout_s=QUERY_TIMEOUT_S)
    return Measurer(
        prometheus,
        target.scrape_interval_s,
        lab.request_queue_cap if lab is not None else None,
        lab.local_broker_pids if lab is not None else (),
    )


def sweep_runner(
    lab_dir: Path | None,
    results: Path,
    observer: Observer | None = None,
    target_file: TargetSource | None = None,
) -> SweepRunner:
    target = resolve_target(lab_dir, target_file)
    measurer = measurer_of(target)
    return SweepRunner(
        target=target,
        engine=DriverEngine(),
        measurer=measurer,
        store=SeriesStore(results, measurer.prometheus if measurer else None, target.scrape_interval_s),
        observer=observer or Observer(),
    )
