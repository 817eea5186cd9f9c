"""locust file for `kbt stress`: one Kafka producer ("pod") per locust user and the stress load shape.

`kbt stress SPEC` starts locust with it (master and workers, headless by default) and hands every
process the run's plan (`--kbt-plan`). To add load machines (`kbt stress --remote-workers N`), run
on each of them (kbt installed, the target's brokers reachable):

    kbt stress-worker --master <the kbt stress --master-host>:<its --master-port>

which runs a locust worker that fetches this file and the plan from the master (docs/targets.md).

The producer, the shape and the per-stage accounting live in tuner/driver/locust/stress_user.py.
"""

from tuner.driver.locust.stress_user import StressProducer, StressShape

__all__ = ["StressProducer", "StressShape"]
