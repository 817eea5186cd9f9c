"""store layer: one immutable JSON run record per run under a results directory.

The names are imported on first use (PEP 562): importing tuner.store builds none of the run record's
models.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tuner.store.environment import capture_environment
    from tuner.store.record import RunRecord
    from tuner.store.results import ResultsStore, make_run_id

__all__ = ["ResultsStore", "RunRecord", "capture_environment", "make_run_id"]


def __getattr__(name: str) -> Any:
    if name == "capture_environment":
        from tuner.store import environment

        return environment.capture_environment
    if name == "RunRecord":
        from tuner.store.record import RunRecord

        return RunRecord
    if name in ("ResultsStore", "make_run_id"):
        from tuner.store import results

        return getattr(results, name)
    raise AttributeError(f"module 'tuner.store' has no attribute {name!r}")
