"""Kafka producers as locust users. Everything that imports locust lives here, and only `*_user`
modules do (importing locust monkey-patches the process for gevent): import them only inside
locust processes.

- `producer`: what every locust producer shares (the process's share, producer numbering, the
  open-loop schedule, request events timed from the intended send time, the bounded drain);
- `stress_user`: `kbt stress` (stage timeline, per-stage tally, status file);
- `spec_user`, `spec_load`: `loadtests/locustfile.py`, a plain locust run of a kbt spec with
  per-process delivery verification.
"""
