"""Closed forms for the "N messages or linger T" batch: truncated-Poisson batch sizes, and the
physical floor of produce requests at a latency budget.

A partition receiving Poisson arrivals at `mu` msgs/s whose batch opens with a message and closes
after `linger_s` or at `cap` messages holds 1 + min(Poisson(mu * linger_s), cap - 1) messages. Every
message lands in exactly one batch, so the partition sends mu / E[size] batches per second. The
simulator (tuner.model.simulate) covers what these forms do not (sticky partitioning, periodic
arrivals, per-broker requests); the unit tests hold the two against each other.
"""

from __future__ import annotations

import math


def mean_batch_size(mu: float, linger_s: float, cap: int) -> float:
    """E[1 + min(Poisson(mu * linger_s), cap - 1)] = 1 + sum over k < cap - 1 of P(X > k)."""
    mean = mu * linger_s
    if cap <= 1 or mean <= 0:
        return 1.0
    if mean > 50 * cap:  # the cap always binds
        return float(cap)
    term = math.exp(-mean)
    cdf, total = term, 0.0
    for k in range(cap - 1):
        tail = 1.0 - cdf
        if tail < 1e-12 and k > mean:
            break
        total += tail
        term *= mean / (k + 1)
        cdf += term
    return 1.0 + total


def floor_requests(producers: int, brokers: int, allowed_linger_s: float) -> tuple[float, float]:
    """The physical floor at a latency budget: every producer must send at least one request per
    allowed linger to every broker it writes to. Returns (producers x brokers / linger, the floor
    when each producer writes to one broker at a time: producers / linger)."""
    if allowed_linger_s <= 0:
        raise ValueError("the allowed linger must be positive")
    return producers * brokers / allowed_linger_s, producers / allowed_linger_s
