"""The one frozen base of kbt's data models: immutable, and unknown fields are errors."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from tuner.core.numbers import model_number


class Frozen(BaseModel):
    """Immutable pydantic model; unknown fields fail validation (records, figures, results).

    Every field that holds a number reads it through the one number grammar (core.numbers): a
    boolean is not 1, "1_000" or "\u0661" in a string is not a number, NaN and Inf are refused."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _one_number_grammar(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        checked = None
        for name, field in cls.model_fields.items():
            if name not in data:
                continue
            try:
                value = model_number(data[name], field.annotation)
            except ValueError as exc:
                raise ValueError(f"{name}: {exc}") from None
            if value is not data[name]:
                checked = checked if checked is not None else dict(data)
                checked[name] = value
        return data if checked is None else checked
