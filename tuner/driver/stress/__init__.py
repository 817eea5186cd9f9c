"""`kbt stress` below the runner: the `plan` every process follows, the producers' per-stage
`tally`, the consumer groups (`consumer`, `consumer_pool`, `consumer_tally`, `consumer_exporter`)
and the delivery check (`verify`). The locust side is in `tuner.driver.locust.stress_user`."""
