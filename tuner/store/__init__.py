"""store layer: one immutable JSON run record per run under a results directory."""

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
