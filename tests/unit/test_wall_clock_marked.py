"""Every unit test module that asserts a wall-clock bound carries the `wall_clock` mark: CI runs the
rest of the unit tier at the lowest CPU priority beside the integration tier (scripts/test_all.sh),
where such a bound would measure the other jobs, not the code."""

from __future__ import annotations

import re
from pathlib import Path

# An assertion on elapsed time: `time.monotonic() - started < 2`, `assert took < 20`, `0.75 < took`.
WALL_CLOCK = re.compile(r"assert [^\n]*(time\.(monotonic|time|perf_counter)\(\) - |\btook\b|_took_)")
MARK = "pytestmark = pytest.mark.wall_clock"


def test_each_module_asserting_elapsed_time_is_marked() -> None:
    here = Path(__file__).parent
    unmarked = [
        p.name
        for p in sorted(here.glob("test_*.py"))
        if p.name != Path(__file__).name and WALL_CLOCK.search(p.read_text(encoding="utf-8"))
        and MARK not in p.read_text(encoding="utf-8")
    ]  # fmt: skip
    assert unmarked == [], f"mark these modules with `{MARK}`: {unmarked}"


def test_the_pattern_finds_an_elapsed_time_assertion() -> None:
    assert WALL_CLOCK.search("    assert time.monotonic() - started < 2\n")
    assert WALL_CLOCK.search("    assert took < 20, took\n")
    assert not WALL_CLOCK.search("    assert record.took_ms is None\n")
