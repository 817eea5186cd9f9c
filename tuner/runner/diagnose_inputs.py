"""What `kbt diagnose` and `kbt forecast` read before they classify: the thresholds file, and a
broker cost model (its JSON file, or fitted from run records).

The model (tuner.model.diagnosis_config) defines the thresholds and reads no file; they are loaded
here and passed in.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tuner.core.errors import BadInput
from tuner.core.inputs import check_directory, read_json
from tuner.model.diagnosis_config import DiagnoseThresholds
from tuner.spec.loader import load_model

if TYPE_CHECKING:  # the cost model brings numpy and scipy: imported when one is loaded or fitted
    from tuner.model.cost import BrokerCostModel
    from tuner.store.record import RunRecord


def load_thresholds(path: Path | None) -> DiagnoseThresholds:
    """The defaults, or a `--thresholds FILE` (only the keys it changes; unknown keys fail)."""
    if path is None:
        return DiagnoseThresholds()
    return load_model(DiagnoseThresholds, path, what="thresholds file")


def load_records(path: Path) -> list[RunRecord]:
    """Every run record under a results directory, or in one sweep's directory of it."""
    from tuner.store.results import ResultsStore

    check_directory(path, "results directory")
    records = ResultsStore(path).records() or ResultsStore(path.parent).records(path.name)
    if not records:
        raise BadInput(f"{path}: no run records (expected <sweep>/<run>.json files from kbt sweep)")
    return records


def load_cost_model(path: Path) -> BrokerCostModel:
    """A BrokerCostModel from its JSON file, or fitted from a results directory's run records."""
    from pydantic import ValidationError

    from tuner.model.cost import BrokerCostModel, fit_cost_model

    if path.is_dir():
        return fit_cost_model(load_records(path))
    data = read_json(path, "cost model")  # a regular file within the cap, finite numbers
    try:
        return BrokerCostModel.model_validate(data)
    except ValidationError as exc:
        from tuner.core.text import value
        from tuner.store.document import field_problem

        # kbt's words for the failed bound (pydantic's "Input should be ..." is not ours)
        raise BadInput(f"--cost-model {value(path)}: not a cost model: {field_problem(exc)}") from None
