"""The lab's state file: what `up` started (PIDs, ports, directories), read by every other stage.

Written atomically after every process start, so a `kbt lab up` killed half-way still leaves the
PIDs it started on record for the next `up`/`down` to clean.
"""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, ValidationError

from tuner.core.errors import BadInput, EnvironmentProblem
from tuner.core.inputs import read_json
from tuner.core.units import BrokerId, Count, Entries, Epoch, Pid, Port, Text
from tuner.core.writes import atomic_write
from tuner.lab.config import LOOPBACK, LabConfig
from tuner.lab.layout import LabLayout

STATE_SCHEMA_VERSION = 1


class Phase(StrEnum):
    STARTING = "starting"  # `up` is (or was, if its owner died) starting processes
    UP = "up"  # every component was healthy when `up` finished
    STOPPED = "stopped"  # `down` stopped everything


class ProcessRecord(BaseModel):
    """A process the lab started. `marker` is a path in its command line (guards against PID reuse)."""

    model_config = ConfigDict(extra="forbid")

    component: Text
    pid: Pid
    marker: Text
    log_file: Path


class BrokerState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: BrokerId
    port: Port
    jmx_port: Port
    pid: Pid | None = None
    log_dir: Path  # the broker's data directory (log.dirs)
    log_file: Path  # its stdout/stderr
    # A lab behind Toxiproxy: the proxy clients connect to, and the direct replication listener.
    proxy_port: Port | None = None
    internal_port: Port | None = None

    @property
    def address(self) -> str:
        """Where clients connect: the broker's proxy when the lab runs behind Toxiproxy."""
        return f"{LOOPBACK}:{self.proxy_port or self.port}"

    @property
    def direct_address(self) -> str:
        """A listener no network fault touches (metadata lists the same listener's addresses)."""
        return f"{LOOPBACK}:{self.internal_port or self.port}"


class LabState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: Count = STATE_SCHEMA_VERSION
    lab_dir: Path
    config: LabConfig
    phase: Phase
    cluster_id: Text
    owner_pid: Pid
    started_at: Epoch
    brokers: Annotated[list[BrokerState], Entries]
    controller_port: Port
    prometheus_port: Port
    client_exporter_ports: Annotated[list[Port], Entries]
    remote_storage_dir: Path
    tiered: bool
    processes: Annotated[list[ProcessRecord], Entries] = []

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(b.address for b in self.brokers)

    @property
    def direct_bootstrap_servers(self) -> str:
        """Bootstrap servers that bypass Toxiproxy (the same as bootstrap_servers without it)."""
        return ",".join(b.direct_address for b in self.brokers)

    @property
    def secure_bootstrap_servers(self) -> str:
        """The SASL_SSL listeners ('' unless the lab runs with security sasl_ssl)."""
        if self.config.security != "sasl_ssl":
            return ""
        return ",".join(f"{LOOPBACK}:{self.config.secure_port(b.id)}" for b in self.brokers)

    @property
    def external_bootstrap_servers(self) -> str:
        """The PLAINTEXT listeners on the lab's listen address ('' without one)."""
        address = self.config.listen_address
        if address is None:
            return ""
        return ",".join(f"{address}:{self.config.external_port(b.id)}" for b in self.brokers)

    @property
    def security_dir(self) -> Path:
        return LabLayout(self.lab_dir).security_dir

    @property
    def prometheus_url(self) -> str:
        return f"http://{LOOPBACK}:{self.prometheus_port}"

    def process(self, component: str) -> ProcessRecord | None:
        return next((p for p in self.processes if p.component == component), None)

    def record(self, proc: ProcessRecord) -> None:
        self.processes = [p for p in self.processes if p.component != proc.component] + [proc]
        for broker in self.brokers:
            if proc.component == f"broker-{broker.id}":
                broker.pid = proc.pid


def new_state(cfg: LabConfig, cluster_id: str, started_at: float) -> LabState:
    layout = LabLayout(cfg.lab_dir)
    brokers = [
        BrokerState(
            id=node,
            port=cfg.broker_port(node),
            jmx_port=cfg.jmx_port(node),
            log_dir=layout.node_data_dir(f"broker-{node}"),
            log_file=layout.log_file(f"broker-{node}"),
            proxy_port=cfg.proxy_port(node) if cfg.via_toxiproxy else None,
            internal_port=cfg.internal_port(node) if cfg.via_toxiproxy else None,
        )
        for node in cfg.node_ids
    ]
    return LabState(
        lab_dir=cfg.lab_dir,
        config=cfg,
        phase=Phase.STARTING,
        cluster_id=cluster_id,
        owner_pid=os.getpid(),
        started_at=started_at,
        brokers=brokers,
        controller_port=cfg.controller_port,
        prometheus_port=cfg.prometheus_port,
        client_exporter_ports=cfg.client_exporter_ports,
        remote_storage_dir=layout.remote_storage_dir,
        tiered=cfg.tiered,
    )


def save_state(state: LabState) -> None:
    path = LabLayout(state.lab_dir).state_file
    atomic_write(path, state.model_dump_json(indent=2) + "\n", "lab state")


def read_state(lab_dir: Path) -> LabState | None:
    """The recorded state, or None when no lab was ever started there."""
    path = LabLayout(Path(lab_dir)).state_file
    if not path.exists():
        return None
    try:
        data = read_json(path, "lab state")
    except BadInput as exc:
        raise EnvironmentProblem(f"{exc.message}; remove the lab directory and run 'kbt lab up'") from None
    if not isinstance(data, dict):
        raise EnvironmentProblem(f"lab state {path} is not a JSON object; remove it and run 'kbt lab up'")
    try:
        if data.get("schema_version") != STATE_SCHEMA_VERSION:
            raise EnvironmentProblem(
                f"lab state {path} has schema {data.get('schema_version')}, expected"
                f" {STATE_SCHEMA_VERSION}; remove the lab directory and run 'kbt lab up'"
            )
        return LabState.model_validate(data)
    except ValidationError as exc:
        from tuner.spec.loader import field_message

        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])  # the field, and the bound it is past
        raise EnvironmentProblem(
            f"lab state {path} is unreadable ({where}: {field_message(first)});"
            " remove it and run 'kbt lab up'"
        ) from None
    except ValueError:
        raise EnvironmentProblem(f"lab state {path} is unreadable; remove it and run 'kbt lab up'") from None


def load_state(lab_dir: Path | str | None = None) -> LabState:
    """The state of a lab that `kbt lab up` brought up; EnvironmentProblem when there is none."""
    from tuner.lab.config import default_lab_dir

    root = Path(lab_dir) if lab_dir is not None else default_lab_dir()
    state = read_state(root)
    if state is None or state.phase != Phase.UP:
        raise EnvironmentProblem(f"no running lab in {root} (run 'kbt lab up')")
    return state
