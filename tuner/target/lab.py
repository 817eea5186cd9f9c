"""Target kind `lab`: kbt's own embedded lab, read from its state file (the one place that does)."""

from __future__ import annotations

from pathlib import Path

from tuner.core.errors import BadInput
from tuner.core.paths import KAFKA_VERSION
from tuner.lab import LabState, load_state
from tuner.target.base import LabSide, PrometheusAccess, Target


def lab_target(lab_dir: Path | None = None) -> Target:
    """The running lab as a Target (EnvironmentProblem when no lab is up)."""
    state = load_state(lab_dir)
    secure: dict[str, str] = {}
    if state.secure_bootstrap_servers:
        from tuner.lab.security import SecurityFiles, client_properties

        secure = client_properties(SecurityFiles(state.security_dir))
    return Target(
        name=f"lab {state.lab_dir.name}",
        kind="lab",
        bootstrap_servers=state.bootstrap_servers,
        prometheus=PrometheusAccess(url=state.prometheus_url),
        kafka_version=KAFKA_VERSION,
        scrape_interval_s=state.config.scrape_interval_s,
        loopback=True,
        lab=LabSide(
            lab_dir=state.lab_dir,
            client_exporter_ports=tuple(state.client_exporter_ports),
            secure_bootstrap_servers=state.secure_bootstrap_servers,
            secure_client_properties=secure,
            local_port_base=state.config.base_port,
            request_queue_cap=state.config.queued_max_requests,
            local_broker_pids=tuple(b.pid for b in state.brokers if b.pid is not None),
        ),
    )


def lab_state(target: Target) -> LabState:
    """The lab behind a lab target, for what only kbt's own lab can do (faults, restarts)."""
    if target.lab is None:
        raise BadInput(f"{target.name} is not kbt's lab: faults can be injected only into the lab")
    return load_state(target.lab.lab_dir)
