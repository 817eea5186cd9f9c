"""How long a unit test lets a subprocess (promtool, a JVM, `python -m tuner`) run before it gives up,
and the mark of the tests that need promtool.

A safety cap, not an assertion: CI runs the unit tier at nice 19 beside the integration tier's labs,
where a JVM or a Python interpreter starved of the CPU can take a minute to start. pytest-timeout's
15 minutes stays the bound of a whole test."""

import shutil

import pytest

SUBPROCESS_CAP_S = 600
needs_promtool = pytest.mark.skipif(
    shutil.which("promtool") is None, reason="promtool not installed (make install: Debian prometheus)"
)
