"""locust: Kafka producers from a kbt spec, one producer ("pod") per locust user.

    locust -f loadtests/locustfile.py --headless -u 8 -r 8 --run-time 60s \
        --kbt-spec loadtests/smoke.yaml [--kbt-run NAME] \
        [--kbt-lab-dir DIR | --kbt-bootstrap HOSTS | --kbt-target TARGET.yaml] [--kbt-out DIR]

A secured cluster: `--kbt-target` names a kbt target file (docs/targets.md) whose secrets are `${VAR}`
references; export the variables on the master and on every worker (never on a command line).

Distributed (scales past one machine; workers need kbt installed, not the spec):

    locust -f loadtests/locustfile.py --master --expect-workers 2 --headless -u 8 -r 8 \
        --run-time 60s --kbt-spec loadtests/smoke.yaml
    locust -f loadtests/locustfile.py --worker --master-host 127.0.0.1     # on each load machine

Each user offers the workload's `rate_per_producer` with the run's profile settings; requests are
named `<profile>/<topic>`, their response time counts from the intended send time. At the end every
process verifies delivery of its records and the master prints the verdict (and writes
`delivery.json` to --kbt-out); the topics are created fresh and deleted. See tuner/driver/locust/spec_user.py.
"""

from tuner.driver.locust.spec_user import KafkaProducerUser


class KafkaProducer(KafkaProducerUser):
    """One Kafka producer at the spec's per-producer rate."""


__all__ = ["KafkaProducer"]
