"""`make demo`'s pressure step, the loop on a team's own traffic (scripts/pressure_loop.sh), on the
pressure lab: a client mix kbt is not told about (librdkafka services at Filebeat's defaults and a
Java audit trail with linger 0) saturates the broker; `kbt capture` finds its two groups;
each is replayed and recommended within the p99 SLO; the recommendations are rolled out to the same
clients; `kbt compare` shows the broker and each group before -> after, and the clients' own records
show the SLO kept and every acked record read back. About four minutes.

CI runs this module alone, last (scripts/test_all.sh, step 4), not in the integration tier: its
pressure lab is its own, and its replays' p99 decides whether a setting meets the SLO, which other
labs on the 2-core host would push up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tuner.core.paths import repo_root
from tuner.lab import LabState
from tuner.spec.thresholds import THRESHOLDS
from tuner.store import ResultsStore

SLO_P99_MS = 2000


def test_capture_recommend_rollout_compare(pressure_lab: LabState, tmp_path: Path) -> None:
    out = tmp_path / "loop"
    env = {**os.environ, "PYTHON": sys.executable, "KBT_LOOP_SLO_P99": str(SLO_P99_MS)}
    done = subprocess.run(
        ["bash", str(repo_root() / "scripts" / "pressure_loop.sh"), str(pressure_lab.lab_dir), str(out)],
        cwd=repo_root(), env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    shown = done.stdout + done.stderr
    assert done.returncode == 0, shown[-4000:]

    # The capture found the mix from the cluster alone: two groups, their kinds and producer counts.
    captured = json.loads((out / "capture" / "capture.json").read_text())["plan"]["groups"]
    kinds = sorted((g["kind"], g["producers"]) for g in captured)
    assert kinds == [("java", 8), ("librdkafka", 16)], kinds

    # The broker, before -> after: saturated, then idle; fewer, larger requests from every group.
    comparison = json.loads((out / "compare.json").read_text())["comparison"]
    [broker] = comparison["brokers"]
    assert broker["before"]["network_idle"] <= 0.5 <= 0.9 <= broker["after"]["network_idle"], broker
    assert broker["after"]["request_queue"] < broker["before"]["request_queue"], broker
    groups = {g["name"].split()[0]: g for g in comparison["groups"]}
    assert set(groups) == {"kbt-services", "kbt-java"}, groups
    for group in groups.values():
        before, after = group["before"], group["after"]
        assert after["produce_requests_per_s"] < before["produce_requests_per_s"] / 3, group
        assert after["bytes_per_request"] > before["bytes_per_request"], group

    # The clients after the rollout: within the SLO, every acked record read back, durability kept.
    after = {r.name: r for r in ResultsStore(out / "after").records()}
    before = {r.name: r for r in ResultsStore(out / "before").records()}
    assert set(after) == set(before) == {"services", "audit"}
    for name, record in after.items():
        assert record.delivery.verified and record.delivery.lost == 0 and record.delivery.acked > 0, name
        p99 = record.client.delivery_latency_ms.p99
        assert p99 is not None and p99 <= SLO_P99_MS, (name, p99)
        assert record.plan.profile.acks == before[name].plan.profile.acks, name
        assert record.plan.profile.idempotence == before[name].plan.profile.idempotence, name
    assert (before["services"].broker.network_idle_ratio or 1) < THRESHOLDS.network_idle_warning
    # The closing lines, as `make demo` prints them.
    text = (out / "loop.txt").read_text()
    assert "network idle" in text and "client group kbt-java" in text and "client services" in text
    assert all(line in done.stdout.splitlines() for line in text.splitlines()), shown[-3000:]
