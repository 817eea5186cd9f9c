"""Where each lab file lives inside the lab directory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

COMPONENT_PROMETHEUS = "prometheus"
COMPONENT_CONTROLLER = "controller"


def broker_component(node_id: int) -> str:
    return f"broker-{node_id}"


@dataclass(frozen=True)
class LabLayout:
    root: Path

    @property
    def state_file(self) -> Path:
        return self.root / "state.json"

    @property
    def lock_file(self) -> Path:
        return self.root / ".lock"

    @property
    def logs_dir(self) -> Path:
        return self.root / "logs"

    @property
    def remote_storage_dir(self) -> Path:
        return self.root / "remote-storage"

    # A Kafka node (the controller or a broker) is named by its component name.
    def node_dir(self, component: str) -> Path:
        return self.root / component

    def node_properties(self, component: str) -> Path:
        return self.node_dir(component) / "server.properties"

    def node_log4j(self, component: str) -> Path:
        return self.node_dir(component) / "log4j2.properties"

    def node_data_dir(self, component: str) -> Path:
        return self.node_dir(component) / "data"

    @property
    def prometheus_dir(self) -> Path:
        return self.root / COMPONENT_PROMETHEUS

    @property
    def prometheus_config(self) -> Path:
        return self.prometheus_dir / "prometheus.yml"

    @property
    def prometheus_data_dir(self) -> Path:
        return self.prometheus_dir / "data"

    @property
    def security_dir(self) -> Path:
        return self.root / "security"

    def log_file(self, component: str) -> Path:
        return self.logs_dir / f"{component}.log"

    def generated_dirs(self) -> list[Path]:
        """Directories a fresh `up` recreates (everything except state and logs)."""
        dirs = [self.remote_storage_dir, self.prometheus_dir, self.node_dir(COMPONENT_CONTROLLER)]
        return [*dirs, self.security_dir, *sorted(p for p in self.root.glob("broker-*") if p.is_dir())]
