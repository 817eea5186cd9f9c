"""lab layer: a local tiered Kafka cluster (KRaft) with jmx_exporter agents and Prometheus.

Public API used by the other stages::

    from tuner.lab import Lab, LabConfig, load_state
    state = load_state()            # the running lab (default dir: KBT_LAB_DIR or ~/.local/state/kbt/lab)
    state.bootstrap_servers         # "127.0.0.1:19091,127.0.0.1:19092,127.0.0.1:19093"
    state.prometheus_url            # "http://127.0.0.1:19090"

The names are imported on first use (tuner/core/lazy.py): `Lab` brings process control and HTTP
clients that reading the lab's config does not need.
"""

from typing import TYPE_CHECKING

from tuner.core.lazy import lazy_exports

if TYPE_CHECKING:
    from tuner.lab.config import LabConfig, default_lab_dir
    from tuner.lab.lab import Lab
    from tuner.lab.state import BrokerState, LabState, load_state

__all__ = ["BrokerState", "Lab", "LabConfig", "LabState", "default_lab_dir", "load_state"]

__getattr__ = lazy_exports(
    __name__,
    {
        "BrokerState": "tuner.lab.state",
        "Lab": "tuner.lab.lab",
        "LabConfig": "tuner.lab.config",
        "LabState": "tuner.lab.state",
        "default_lab_dir": "tuner.lab.config",
        "load_state": "tuner.lab.state",
    },
)
