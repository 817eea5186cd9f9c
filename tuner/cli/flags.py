"""Numeric flags are finite ASCII numbers, and path flags are not empty, for every command at once.

typer reads a float option with pydantic, which takes "nan", "inf" and "1e308" (and Python's own
int()/float() take digits of any script, "١٢"); a bound like `--slo-p99 nan` then compares false
with everything. The check wraps typer's value coercion once, so no command can forget it, and
says "is not a number" ("is not a whole number" for an int option, given '2.5') where the library
would say "unable to parse string as a number".
A value that is no finite ASCII number is said so before any bound is checked: pydantic compares
"nan" and "inf" with a flag's min/max first and said "must be less than or equal to 86400 (got nan)".
An empty path ('') would be read as the working directory ('.'): `--out ''` wrote into it.
"""

from __future__ import annotations

import math
import typing
from functools import cache
from pathlib import PurePath
from typing import Any

from tuner.core.errors import reworded
from tuner.core.numbers import MAX_MAGNITUDE, cut_text, cut_value, parse_number


def _bad(value: Any, result: Any) -> str | None:
    items = result if isinstance(result, list | tuple) else [result]
    raws = value if isinstance(value, list | tuple) else [value]
    for raw, item in zip(raws, items, strict=False):
        if isinstance(item, PurePath) and raw == "":
            return "an empty path; give a path ('.' is the working directory)"
        if isinstance(item, bool) or not isinstance(item, int | float):
            continue
        if isinstance(item, float) and not math.isfinite(item):
            return f"{cut_value(str(raw))} is not a finite number"
        if abs(item) > MAX_MAGNITUDE:
            return f"{cut_value(str(raw))} is too large"
        if isinstance(raw, str):
            try:
                parse_number(raw, "")
            except ValueError:
                return f"{cut_value(str(raw))} is not a number written in ASCII digits"
    return None


def _not_finite(raw: Any) -> str | None:
    """A typed value that reads as NaN or an infinity (None otherwise): said before a flag's
    bounds, which "nan" and "inf" would otherwise meet."""
    if not isinstance(raw, str):
        return None
    try:
        value = float(raw)
    except ValueError:
        return None  # not a number at all: the type's own check says so
    return None if math.isfinite(value) else f"{cut_value(raw)} is not a finite number"


@cache  # once: a second wrapper would wrap the first
def install() -> None:
    try:
        from typer._coercion import AdapterRuntimeParam
        from typer._typing import is_number_type
    except ImportError:  # pragma: no cover - a typer without pydantic coercion
        return
    original = AdapterRuntimeParam._coerce_value

    def coerce(self: Any, value: Any, param: Any, ctx: Any) -> Any:
        from typer._click.exceptions import BadParameter

        if ctx is not None and isinstance(value, str) and param is not None:
            # as typed: a Path drops a trailing '/', which the outputs check must see (tuner/cli/outputs.py)
            ctx.meta.setdefault("kbt_raw", {})[param.name] = value
        try:
            result = original(self, value, param, ctx)
        except BadParameter as exc:
            annotation = getattr(self, "annotation", None)
            unparsed = any(w in str(exc) for w in ("unable to parse", "valid integer", "valid number"))
            number = annotation is not None and _is_number(annotation, is_number_type)
            if unparsed and number:
                kind = "a whole number" if _whole(annotation) else "a number"  # '2.5' is a number
                raise BadParameter(f"{cut_value(str(value))} is not {kind}", ctx=ctx, param=param) from None
            raws = value if isinstance(value, list | tuple) else [value]
            unbounded = next((u for u in map(_not_finite, raws) if u is not None), None) if number else None
            if unbounded is not None:  # "nan" met the bound first: "must be less than or equal to 1"
                raise BadParameter(unbounded, ctx=ctx, param=param) from None
            if "Input should be" in exc.message:  # pydantic's words for a bound, in kbt's
                worded = f"{reworded(exc.message)} (got {cut_text(str(value))})"
                raise BadParameter(worded, ctx=ctx, param=param) from None
            raise
        problem = _bad(value, result)
        if problem is not None:
            raise BadParameter(problem, ctx=ctx, param=param)
        return result

    AdapterRuntimeParam._coerce_value = coerce  # type: ignore[method-assign]


def _whole(annotation: Any) -> bool:
    """An int option (or an optional or a list of ints)."""
    return annotation is int or any(_whole(a) for a in typing.get_args(annotation))


def _is_number(annotation: Any, is_number_type: Any) -> bool:
    try:
        return bool(is_number_type(annotation))
    except Exception:  # an annotation the helper does not know
        return False
