"""Simulations kept on disk (tuner/runner/simulation_cache.py) come back exactly as simulated, a
damaged or foreign file is a miss (never an error, never a wrong result), and the model consults
the store it is given before simulating."""

from __future__ import annotations

from pathlib import Path

import pytest

from tuner.model import predict
from tuner.model.simulate import SimResult, simulate
from tuner.model.traffic import Traffic
from tuner.runner.simulation_cache import DiskSimulations
from tuner.spec.clients import KINDS, profile_of, rules_of

TRAFFIC = Traffic(producers=2, rate=20, message_bytes=500, partitions=(3,), brokers=3)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_kept_simulation_is_the_simulation(kind: str, tmp_path: Path) -> None:
    rules = rules_of(profile_of({"name": f"{kind}-defaults", "client": kind}))
    result = simulate(TRAFFIC, rules)
    assert result.waits_s  # the doubles the file encodes
    store = DiskSimulations(tmp_path)
    store.put("k", result)
    back = DiskSimulations(tmp_path).get("k")
    assert back == result  # every field, every wait to the bit
    assert back is not None and back.wait_quantile(0.99) == result.wait_quantile(0.99)


def test_a_damaged_or_foreign_file_is_a_miss(tmp_path: Path) -> None:
    rules = rules_of(profile_of({"name": "librdkafka-defaults", "client": "librdkafka"}))
    store = DiskSimulations(tmp_path)
    store.put("k", simulate(TRAFFIC, rules))
    path = store._path("k")
    text = path.read_text()
    path.write_text(text[: len(text) // 2])  # torn
    assert store.get("k") is None
    path.write_text(text.replace('"key": "k"', '"key": "other"'))  # another key's file at this name
    assert store.get("k") is None
    path.write_text(text.replace('"waits_s": "', '"waits_s": "!'))  # not base64
    assert store.get("k") is None
    assert store.get("never kept") is None


def test_the_model_uses_the_store_it_is_given(tmp_path: Path) -> None:
    class Counting(DiskSimulations):
        gets = puts = 0

        def get(self, key: str) -> SimResult | None:
            Counting.gets += 1
            return super().get(key)

        def put(self, key: str, result: SimResult) -> None:
            Counting.puts += 1
            super().put(key, result)

    rules = rules_of(profile_of({"name": "java-defaults", "client": "java"}))
    traffic = Traffic(producers=2, rate=30, message_bytes=700, partitions=(3,), brokers=3)
    predict._simulated.cache_clear()
    predict.keep_simulations(Counting(tmp_path))
    try:
        first = predict.simulated(traffic, rules)
        predict._simulated.cache_clear()  # a new process: only the disk remembers
        second = predict.simulated(traffic, rules)
    finally:
        predict.keep_simulations(None)
        predict._simulated.cache_clear()
    assert (Counting.gets, Counting.puts) == (2, 1)  # the second came from disk
    assert second == first
