"""The one frozen base of kbt's data models: immutable, and unknown fields are errors."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """Immutable pydantic model; unknown fields fail validation (records, figures, results)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
