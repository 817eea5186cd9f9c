"""A package's public names, imported on first use (PEP 562).

A package's `__init__` that imported every module it re-exports made any import of one small
module in it (a constant, one model) pay for all of them: `kbt --help` spent seconds in pydantic
models and HTTP clients it never used. The names stay where they were; each module is imported
when one of its names is first read.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, home: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package` that imports `home[name]` (a module) for `name`."""

    def __getattr__(name: str) -> Any:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return __getattr__
