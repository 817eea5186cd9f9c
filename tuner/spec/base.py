"""The base of every spec model: frozen, unknown keys rejected with a "did you mean" hint."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, model_validator

from tuner.core.errors import did_you_mean
from tuner.core.frozen import Frozen


class StrictModel(Frozen):
    """A frozen pydantic model whose unknown keys fail with `unknown key "x" (did you mean "y"?)`."""

    # Every number a user writes is finite: pydantic would read "nan"/"inf" into a float field.
    model_config = ConfigDict(allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _reject_unknown_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            known = set(cls.model_fields)
            for key in data:
                if key not in known:
                    raise ValueError(f'unknown key "{key}"{did_you_mean(str(key), sorted(known))}')
        return data
