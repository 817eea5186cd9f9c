"""What `kbt diagnose` and `kbt forecast` read before they classify: the thresholds file.

The model (tuner.model.diagnosis_config) defines the thresholds and reads no file; they are loaded
here and passed in.
"""

from __future__ import annotations

from pathlib import Path

from tuner.model.diagnosis_config import DiagnoseThresholds
from tuner.spec.loader import load_model


def load_thresholds(path: Path | None) -> DiagnoseThresholds:
    """The defaults, or a `--thresholds FILE` (only the keys it changes; unknown keys fail)."""
    return DiagnoseThresholds() if path is None else load_model(DiagnoseThresholds, path)
