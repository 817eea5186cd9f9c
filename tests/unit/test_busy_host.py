"""The integration tiers' tolerance of a busy host: a driver behind its schedule only, never a
request-count disagreement, a failure or an unclean run with no reason given."""

from __future__ import annotations

from tests.integration.labhelp import busy_host_only

BEHIND = "client behind schedule: send lag p99 237 ms (limit 150 ms)"
MISMATCH = "client and broker produce request counts differ by 9.0% (100 vs 110)"


def test_ok_and_behind_schedule_pass() -> None:
    assert busy_host_only("ok", [])
    assert busy_host_only("unclean", [BEHIND, "p99 900 ms above the SLO 500 ms"])
    assert busy_host_only(
        "unclean", ["the driver offered 12% less than the schedule (88 of 100 records: driver stalled)"]
    )


def test_anything_else_fails() -> None:
    assert not busy_host_only("unclean", [BEHIND, MISMATCH])
    assert not busy_host_only("unclean", [MISMATCH])
    assert not busy_host_only("unclean", ["p99 900 ms above the SLO 500 ms"])
    assert not busy_host_only("failed", [BEHIND])
    assert not busy_host_only("unverified", [BEHIND])
