"""locust file for `kbt stress`: one Kafka producer ("pod") per locust user and the stress load shape.

`kbt stress SPEC` starts locust with it (master and workers, headless by default) and hands every
process the run's plan (`--kbt-plan`). To add load machines, run on each of them (kbt installed):

    locust -f - --worker --master-host <the kbt stress host> --master-port <its --master-port>

The producer, the shape and the per-stage accounting live in tuner/driver/stress_user.py.
"""

from tuner.driver.stress_user import StressProducer, StressShape

__all__ = ["StressProducer", "StressShape"]
