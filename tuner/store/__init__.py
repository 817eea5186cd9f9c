"""store layer: one immutable JSON run record per run under a results directory.

The names are imported on first use (tuner/core/lazy.py): a constant such as DEFAULT_RESULTS_DIR
does not build the run record's models.
"""

from typing import TYPE_CHECKING

from tuner.core.lazy import lazy_exports

if TYPE_CHECKING:
    from tuner.store.environment import capture_environment
    from tuner.store.record import SCHEMA_VERSION, Environment, RunRecord
    from tuner.store.results import DEFAULT_RESULTS_DIR, ResultsStore, make_run_id

__all__ = [
    "DEFAULT_RESULTS_DIR",
    "SCHEMA_VERSION",
    "Environment",
    "ResultsStore",
    "RunRecord",
    "capture_environment",
    "make_run_id",
]

__getattr__ = lazy_exports(
    __name__,
    {
        "capture_environment": "tuner.store.environment",
        "SCHEMA_VERSION": "tuner.store.record",
        "Environment": "tuner.store.record",
        "RunRecord": "tuner.store.record",
        "DEFAULT_RESULTS_DIR": "tuner.store.results",
        "ResultsStore": "tuner.store.results",
        "make_run_id": "tuner.store.results",
    },
)
