"""CI runs the e2e modules at nice 19 beside the integration tier, all but those scripts/test_all.sh
lists for step 3 (`lane_e2e`): a module run beside must not start a lab or bound a wall-clock time,
which the integration tier's busy labs would make fail (or be disturbed by)."""

from __future__ import annotations

import re

from tuner.core.paths import repo_root

ROOT = repo_root()
# A lab started or used, a wait on the clock, a bound on elapsed time.
NEEDS_STEP_3 = re.compile(
    r"runbook_lab_dir|\"lab\",\s*\"up\"|\bTIME_CAP|time\.sleep\(|assert [^\n]*(monotonic|perf_counter)\(\) -"
)


def _lane_e2e() -> set[str]:
    script = (ROOT / "scripts" / "test_all.sh").read_text(encoding="utf-8")
    found = re.search(r"^lane_e2e=\((.*?)\)", script, re.S | re.M)
    assert found is not None, "scripts/test_all.sh no longer lists lane_e2e"
    return set(found.group(1).split())


def test_every_e2e_module_run_beside_the_integration_tier_needs_no_lab_and_no_clock() -> None:
    lane = _lane_e2e()
    assert all((ROOT / m).is_file() for m in lane), lane
    beside = [
        p for p in sorted((ROOT / "tests" / "e2e").glob("test_*.py")) if str(p.relative_to(ROOT)) not in lane
    ]
    assert beside, "no e2e module runs beside the integration tier"
    offending = [
        str(p.relative_to(ROOT)) for p in beside if NEEDS_STEP_3.search(p.read_text(encoding="utf-8"))
    ]
    assert offending == [], f"add these to lane_e2e in scripts/test_all.sh (a lab or a clock): {offending}"


def test_the_pattern_sees_a_lab_and_a_clock() -> None:
    for text in (
        '["lab", "up"]',
        "def t(runbook_lab_dir)",
        "time.sleep(3)",
        "as" + "sert time.monotonic() - t0 < 5",  # in two pieces: the wall-clock marker check reads source
    ):
        assert NEEDS_STEP_3.search(text), text
    assert not NEEDS_STEP_3.search("subprocess.run(args, timeout=SUBPROCESS_CAP_S)")
