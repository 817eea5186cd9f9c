"""Shared pytest configuration.

Hypothesis runs without its per-example deadline: a test asserts what a run did, never how fast
(speed is for the benchmarks), and on a busy 2-core machine (CI runs the unit tier beside the fault
matrix) the default 200 ms deadline fails examples that are merely slow.
"""

from hypothesis import settings

settings.register_profile("kbt", deadline=None)
settings.load_profile("kbt")
