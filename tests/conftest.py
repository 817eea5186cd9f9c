"""Shared pytest configuration.

Hypothesis runs without its per-example deadline: a test asserts what a run did, never how fast
(speed is for the benchmarks), and on a busy 2-core machine (CI runs the unit tier beside the fault
matrix) the default 200 ms deadline fails examples that are merely slow. For the same reason its
`too_slow` health check is off: it times the generation of examples, and at nice 19 beside the
integration tier's labs (how CI runs the unit tier) a strategy starved of the CPU is not slow code.

SIGTERM (and SIGHUP) end a session as Ctrl-C does, as they end kbt: pytest then still runs its
session teardown, which stops the labs the session started. By default the signal killed pytest
outright and left their brokers, Prometheus and Toxiproxy running.
"""

import pytest
from hypothesis import HealthCheck, settings

from tuner.cli import signals

settings.register_profile("kbt", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("kbt")


def pytest_configure(config: pytest.Config) -> None:
    signals.install()
