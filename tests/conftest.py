"""Shared pytest configuration.

Hypothesis runs without its per-example deadline: a test asserts what a run did, never how fast
(speed is for the benchmarks), and on a busy 2-core machine (CI runs the unit tier beside the fault
matrix) the default 200 ms deadline fails examples that are merely slow. For the same reason its
`too_slow` health check is off: it times the generation of examples, and at nice 19 beside the
integration tier's labs (how CI runs the unit tier) a strategy starved of the CPU is not slow code.
"""

from hypothesis import HealthCheck, settings

settings.register_profile("kbt", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("kbt")
