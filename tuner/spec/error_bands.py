"""The model's held-out error bands: how far its predictions missed on shapes it was never fitted on,
per client kind and regime (tuner/model/uncertainty.py names the regimes).

The table is generated, never typed: `make generate` predicts every committed held-out run record
(`loadtests/truth/records/`, made by `make bench-truth`) with a calibration fitted on the fitting set
and writes the signed errors' range per kind and regime (over held-out shapes, each the median of
its passes) to `error_bands.json` here; `make check-generated` fails when a model change leaves it
stale. The model receives the table as input
(`tuner.model.predict.predict_rules(..., bands=...)`) and stays free of files.
"""

from __future__ import annotations

from functools import cache

from pydantic import Field, model_validator

from tuner.spec.base import StrictModel
from tuner.spec.package_data import package_json

ERROR_BANDS_FILE = "error_bands.json"
ALL_REGIMES = "*"  # a kind's band over all its held-out runs, used for a regime without runs


class P99Shape(StrictModel):
    """One held-out shape's p99: what the model predicted for it and its passes' median error."""

    shape: str = Field(description="The held-out shape (sweep/name).")
    predicted_ms: float = Field(gt=0, description="The model's p99 for the shape, ms.")
    error: float = Field(gt=-1, description="The median of its passes' p99 errors.")


class ErrorBand(StrictModel):
    """The range of signed errors (predicted / measured - 1) of one kind and regime's held-out shapes,
    each shape's error the median of its passes (tuner/model/uncertainty.py, bands_from)."""

    kind: str
    regime: str = Field(description=f"The regime, or {ALL_REGIMES!r}: every held-out run of the kind.")
    runs: list[str] = Field(min_length=1, description="The held-out runs (run ids) it comes from.")
    requests_error: tuple[float, float] = Field(description="Produce requests/s: lowest, highest error.")
    p99_error: tuple[float, float] | None = Field(default=None, description="p99: lowest, highest error.")
    p99_shapes: list[P99Shape] = Field(
        default_factory=list,
        description="Each held-out shape's p99 (a prediction's band takes those near it).",
    )

    @model_validator(mode="after")
    def _check(self) -> ErrorBand:
        for name, pair in (("requests_error", self.requests_error), ("p99_error", self.p99_error)):
            if pair is not None and not -1 < pair[0] <= pair[1]:
                raise ValueError(f"{name} {list(pair)}: needs -1 < lowest <= highest")
        return self


class ErrorBands(StrictModel):
    """Every band, with what it was generated from."""

    fitting_set: list[str] = Field(description="Run records the calibration was fitted on (run ids).")
    bands: list[ErrorBand] = Field(default_factory=list)

    def of(self, kind: str, regime: str) -> ErrorBand | None:
        """The band of `kind` in `regime`, else the kind's band over all regimes, else None."""
        found = {(b.kind, b.regime): b for b in self.bands}
        return found.get((kind, regime)) or found.get((kind, ALL_REGIMES))


@cache
def load_error_bands() -> ErrorBands:
    """The committed, generated table (tuner/spec/error_bands.json)."""
    return ErrorBands.model_validate(package_json(ERROR_BANDS_FILE))
