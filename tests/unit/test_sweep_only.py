"""`kbt sweep --only`: a sweep cut to some of its runs keeps their plans (so `--resume` over the
whole spec later skips them), and any other value is one line naming what the spec has."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tuner.core.errors import BadInput
from tuner.core.paths import repo_root
from tuner.spec.loader import load_sweep, select_runs

SPEC = repo_root() / "loadtests" / "qunar-logs-short.yaml"
LOADED = load_sweep(SPEC)
NAMES = [plan.name for plan in LOADED.runs]


def test_the_runs_named_keep_their_plans_in_the_specs_order() -> None:
    cut = select_runs(LOADED, f" {NAMES[1]},{NAMES[0]} ")
    assert [p.name for p in cut.runs] == NAMES[:2]
    assert [p.spec_hash for p in cut.runs] == [p.spec_hash for p in LOADED.runs[:2]]
    assert cut.spec is LOADED.spec and cut.path == LOADED.path


def test_an_unknown_run_is_one_line_with_the_closest_name() -> None:
    with pytest.raises(BadInput) as err:
        select_runs(LOADED, "filebeat-lik")
    text = str(err.value)
    assert "\n" not in text and 'did you mean "filebeat-like"' in text and ", ".join(NAMES) in text


@given(st.lists(st.sampled_from([*NAMES, "", " ", "nope", "x" * 300, "a\nb"]), max_size=5).map(",".join))
def test_any_value_is_a_subset_or_one_line(value: str) -> None:
    try:
        cut = select_runs(LOADED, value)
    except BadInput as exc:
        assert "\n" not in exc.message  # a line break in a name is escaped
        return
    assert cut.runs and {p.name for p in cut.runs} <= set(NAMES)
