"""The physical floor of produce requests at a latency budget (the simulator, tuner.model.simulate,
is held against a truncated-Poisson closed form in tests/unit/test_model_requests.py)."""

from __future__ import annotations


def floor_requests(producers: int, brokers: int, allowed_linger_s: float) -> tuple[float, float]:
    """The physical floor at a latency budget: every producer must send at least one request per
    allowed linger to every broker it writes to. Returns (producers x brokers / linger, the floor
    when each producer writes to one broker at a time: producers / linger)."""
    if allowed_linger_s <= 0:
        raise ValueError("the allowed linger must be positive")
    return producers * brokers / allowed_linger_s, producers / allowed_linger_s
