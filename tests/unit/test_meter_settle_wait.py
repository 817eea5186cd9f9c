"""A run on brokers that started moments ago waits until its measured window opens past the
start-up padding of their idle meters (tuner.measure.meter_warmup.wait_until_settled, which the
sweep and stress runners call); a settled or unknown cluster does not wait."""

from __future__ import annotations

import time

import pytest

from tuner.measure.meter_warmup import wait_until_settled

pytestmark = pytest.mark.wall_clock  # asserts a wall-clock bound: CI runs it at normal priority

WARMUP_S = 2.0


def test_waits_until_the_window_opens_past_the_padding() -> None:
    said: list[str] = []
    began = time.monotonic()
    slept = wait_until_settled(time.time() + WARMUP_S + 1.2, WARMUP_S, said.append)
    waited = time.monotonic() - began
    assert 1.0 <= slept <= 1.2 and 1.0 <= waited < 3.0, (slept, waited)
    assert len(said) == 1 and "idle meters to settle" in said[0]


@pytest.mark.parametrize("settled", [None, "past", "within warm-up"])
def test_no_wait_when_settled_or_unknown(settled: str | None) -> None:
    at = {None: None, "past": time.time() - 100, "within warm-up": time.time() + WARMUP_S / 2}
    said: list[str] = []
    began = time.monotonic()
    assert wait_until_settled(at[settled], WARMUP_S, said.append) == 0.0
    assert time.monotonic() - began < 0.5
    assert said == []
