"""store layer: one immutable JSON run record per run under a results directory.

The names are imported on first use (PEP 562): a constant such as DEFAULT_RESULTS_DIR does not
build the run record's models.
"""

from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    if name == "capture_environment":
        from tuner.store import environment

        return environment.capture_environment
    if name in ("SCHEMA_VERSION", "Environment", "RunRecord"):
        from tuner.store import record

        return getattr(record, name)
    if name in ("DEFAULT_RESULTS_DIR", "ResultsStore", "make_run_id"):
        from tuner.store import results

        return getattr(results, name)
    raise AttributeError(f"module 'tuner.store' has no attribute {name!r}")
