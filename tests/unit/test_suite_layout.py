"""The test tiers have no __init__.py, so pytest imports each module by its basename: two tiers
with the same file name make the whole run fail at collection. Keep every basename unique."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_test_module_names_are_unique_across_tiers() -> None:
    names = Counter(p.name for p in TESTS.glob("*/test_*.py"))
    assert len(names) > 50
    assert [n for n, count in names.items() if count > 1] == []
