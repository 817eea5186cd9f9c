"""Recommend's busiest broker: the partitioner's imbalance (tuner.model.predict.busiest_share) and
the relief it states for that broker (tuner.model.recommend.busiest_relief)."""

from __future__ import annotations

import random
from typing import Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.test_recommend_margin import FILEBEAT_LIKE
from tuner.model.comparison import reduction
from tuner.model.predict import busiest_share, predict_rules
from tuner.model.recommend import busiest_relief
from tuner.model.traffic import Traffic
from tuner.spec.clients import rules_of
from tuner.spec.clients.librdkafka import LibrdkafkaProfile
from tuner.store.recommendation import Measured, Prediction


def _monte_carlo(led: list[int], picks: int, draws: int = 1500) -> float:
    """Mean busiest share of `picks` uniform partition choices over the brokers (fixed seed)."""
    rng = random.Random(7)
    owners = [b for b, n in enumerate(led) for _ in range(n)]
    total = 0.0
    for _ in range(draws):
        counts = [0] * len(led)
        for _ in range(picks):
            counts[rng.choice(owners)] += 1
        total += max(counts) / picks
    return total / draws


@settings(deadline=None, max_examples=8)
@given(st.lists(st.integers(1, 4), min_size=2, max_size=5), st.integers(20, 200))
def test_the_busiest_share_follows_random_partition_choices(led: list[int], picks: int) -> None:
    got = busiest_share(led, picks)
    mean_share = max(led) / sum(led)
    assert mean_share <= got <= 1.0
    # the normal approximation against the sampled multinomial: within 4 points of share
    assert got == pytest.approx(_monte_carlo(led, picks), abs=0.04)
    # more choices in the window, a more even split (equal when one broker leads every partition
    # the others do not share: the sums then differ in their last bits)
    assert busiest_share(led, picks * 4) <= got + 1e-9


def test_without_random_choices_each_broker_takes_its_partitions_share() -> None:
    assert busiest_share([2, 1, 1], None) == pytest.approx(0.5)
    assert busiest_share([0, 0], 10) == 0.0


def _traffic(window_s: float | None, producers: int = 1) -> Traffic:
    return Traffic(
        producers=producers, rate=200.0, message_bytes=500.0, partitions=(3,), brokers=3, window_s=window_s
    )


def test_a_sticky_producer_with_a_long_linger_loads_one_broker_more_in_a_short_window() -> None:
    rules = rules_of(LibrdkafkaProfile(name="slow", linger_ms=1000, batch_bytes=1_000_000))
    mean = predict_rules(_traffic(None), rules)
    short = predict_rules(_traffic(30.0), rules)
    long = predict_rules(_traffic(3600.0), rules)
    assert mean.busiest_broker_requests_per_s == pytest.approx(mean.requests_per_s / 3, rel=1e-6)
    assert (
        short.busiest_broker_requests_per_s
        > long.busiest_broker_requests_per_s
        > mean.busiest_broker_requests_per_s
    )
    # librdkafka keeps a partition for 2 x linger.ms: about 15 choices over 3 brokers in 30 s
    share = short.busiest_broker_requests_per_s / short.requests_per_s
    assert share == pytest.approx(busiest_share([1, 1, 1], 15), rel=0.1)


def _pred(total: float, busiest: float) -> Prediction:
    return Prediction(
        requests_per_s=total,
        busiest_broker_requests_per_s=busiest,
        records_per_request=1.0,
        p50_ms=1,
        p99_ms=2,
    )


_RUN = {"run_id": "r", "records_per_s": 1.0, "lost": 0, "verified": True, "meets_slo": True}


def _meas(total: float, busiest: float | None, on: Literal["client", "brokers"] | None) -> Measured:
    counted = {"busiest_broker_requests_per_s": busiest, "busiest_broker_measured_on": on}
    return Measured.model_validate({**_RUN, "requests_per_s": total, **counted})


def test_the_relief_is_measured_where_both_runs_counted_per_broker_alike() -> None:
    # the live trial: 15.8 req/s in total (the baseline's busiest 17.8 of 49), 6.13 of 9.9
    # on the busiest broker after: the total's cut says 5.0x, the busiest broker got 2.9x
    before, after = _meas(49.0, 17.8, "brokers"), _meas(9.9, 6.13, "brokers")
    got = busiest_relief(_pred(60, 20), _pred(10, 3.4), before, after)
    assert got is not None and got[2] == "measured" and got[0] / got[1] == pytest.approx(2.9, abs=0.05)
    # counted differently (client split vs brokers' counters): the prediction speaks instead
    mixed = busiest_relief(_pred(60, 20), _pred(10, 4), _meas(49, 17.8, "client"), after)
    assert mixed == (20, 4, "predicted")
    assert busiest_relief(None, _pred(10, 4), None, None) is None


def test_a_side_with_no_requests_is_no_relief_and_no_reduction() -> None:
    # a baseline run that sent nothing (0 requests/s measured) beside a confirmed setting: no
    # "0.0x fewer"; the model's figures for both speak, and none when the model's are 0 as well
    idle, after = _meas(0.0, 0.0, "client"), _meas(9.9, 3.3, "client")
    assert busiest_relief(_pred(60, 20), _pred(10, 4), idle, after) == (20, 4, "predicted")
    assert busiest_relief(_pred(0, 0), _pred(10, 4), idle, after) is None
    cut = reduction(FILEBEAT_LIKE, "base", "librdkafka", idle, after, _pred(60, 20), _pred(10, 4))
    assert cut is not None and cut.basis == "predicted" and cut.ratio == pytest.approx(6.0)
    assert reduction(FILEBEAT_LIKE, "base", "librdkafka", idle, after, _pred(0, 0), _pred(10, 4)) is None
