"""How long a unit test lets a subprocess (promtool, a JVM, `python -m tuner`) run before it gives up.

A safety cap, not an assertion: CI runs the unit tier at nice 19 beside the integration tier's labs,
where a JVM or a Python interpreter starved of the CPU can take a minute to start. pytest-timeout's
15 minutes stays the bound of a whole test."""

SUBPROCESS_CAP_S = 600
