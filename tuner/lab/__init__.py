"""lab layer: a local tiered Kafka cluster (KRaft) with jmx_exporter agents and Prometheus.

Public API used by the other stages::

    from tuner.lab import Lab, LabConfig, load_state
    state = load_state()            # the running lab (default dir: KBT_LAB_DIR or ~/.local/state/kbt/lab)
    state.bootstrap_servers         # "127.0.0.1:19091,127.0.0.1:19092,127.0.0.1:19093"
    state.prometheus_url            # "http://127.0.0.1:19090"

The names are imported on first use (PEP 562): `Lab` brings process control and HTTP clients that
reading the lab's config, or a command's --help, does not need.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tuner.lab.config import LabConfig, default_lab_dir
    from tuner.lab.lab import Lab
    from tuner.lab.state import BrokerState, LabState, load_state

__all__ = ["BrokerState", "Lab", "LabConfig", "LabState", "default_lab_dir", "load_state"]


def __getattr__(name: str) -> Any:
    if name == "Lab":
        from tuner.lab import lab

        return lab.Lab
    if name in ("LabConfig", "default_lab_dir"):
        from tuner.lab import config

        return getattr(config, name)
    if name in ("BrokerState", "LabState", "load_state"):
        from tuner.lab import state

        return getattr(state, name)
    raise AttributeError(f"module 'tuner.lab' has no attribute {name!r}")
