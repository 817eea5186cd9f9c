"""store layer: one immutable JSON run record per run under a results directory.

The names are imported on first use (PEP 562): importing tuner.store builds none of the run record's
models.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tuner.store.environment import capture_environment
    from tuner.store.record import RunRecord
    from tuner.store.results import ResultsStore, make_run_id

__all__ = ["ResultsStore", "RunRecord", "capture_environment", "make_run_id"]
# Each name's module, imported when the name is first asked for.
_HOMES = {
    "capture_environment": "environment",
    "RunRecord": "record",
    "ResultsStore": "results",
    "make_run_id": "results",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'tuner.store' has no attribute {name!r}")
    return getattr(importlib.import_module(f"tuner.store.{_HOMES[name]}"), name)
