"""The rollout of a recommendation onto a team's own sweep (tuner/render/rollout.py) and the clients'
before -> after lines (tuner/render/rollout_summary.py), as `make demo`'s pressure loop uses them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tuner.core.inputs import read_yaml
from tuner.core.paths import repo_root
from tuner.render import rollout, rollout_summary
from tuner.spec.loader import load_sweep
from tuner.store import ResultsStore
from tuner.store.recommendation import load_recommendation, recommendation_text

DATA = Path(__file__).parent / "data"
REC = DATA / "recommend" / "demo-loaded.json"  # librdkafka, filebeat, java
MIX = repo_root() / "loadtests" / "pressure-mix"


@pytest.mark.parametrize("spec", sorted(MIX.glob("*.yaml")), ids=lambda p: p.name)
def test_each_profile_takes_its_kinds_recommendation_under_its_own_name(spec: Path, tmp_path: Path) -> None:
    out = tmp_path / "rollout.yaml"
    assert rollout.main([str(spec), str(REC), "--out", str(out)]) == 0
    before, after = load_sweep(spec).spec, load_sweep(out).spec  # the rollout loads as `kbt sweep` loads it
    assert after.name == f"{before.name}-rollout"
    assert after.workload == before.workload  # the same clients: topics, producers, rates, records
    recommended = {c.profile.client: c.profile for c in load_recommendation(REC).clients}
    for old, new in zip(before.profiles, after.profiles, strict=True):
        assert new.name == old.name  # the client ids stay: kbt compare finds the group again
        want = recommended[old.client].model_dump(exclude={"name", "description"})
        assert new.model_dump(exclude={"name", "description"}) == want


def test_a_workload_file_and_its_log_file_are_found_from_anywhere(tmp_path: Path) -> None:
    spec_dir = tmp_path / "team"
    spec_dir.mkdir()
    shutil.copy(repo_root() / "loadtests" / "data" / "loghub" / "Apache_2k.log", spec_dir / "app.log")
    (spec_dir / "workload.yaml").write_text(
        "name: w\ntopics: [{name: t, partitions: 2}]\nproducers: 1\nprocesses: 1\nrate_per_producer: 10\n"
        "message: {kind: log_file, path: app.log}\nduration_s: 5\nwarmup_s: 1\n"
    )
    (spec_dir / "sweep.yaml").write_text(
        "name: team\nworkload: workload.yaml\nprofiles:\n  - {name: svc, client: librdkafka, linger_ms: 0}\n"
    )
    out = tmp_path / "elsewhere" / "rollout.yaml"
    assert rollout.main([str(spec_dir / "sweep.yaml"), str(REC), "--out", str(out)]) == 0
    assert Path(read_yaml(out)["workload"]).is_absolute()
    assert load_sweep(out).spec.profiles[0].name == "svc"


def test_a_kind_without_a_recommendation_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "sweep.yaml"
    spec.write_text(
        "name: s\nworkload: {name: w, topics: [{name: t, partitions: 1}], producers: 1, processes: 1,"
        " rate_per_producer: 1, message: {kind: generated, bytes: 10}, duration_s: 5, warmup_s: 1}\n"
        "profiles:\n  - {name: collector, client: otelcol}\n"
    )
    assert rollout.main([str(spec), str(REC), "--out", str(tmp_path / "r.yaml")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kbt: error: profile collector is otelcol") and err.count("\n") == 1
    assert not (tmp_path / "r.yaml").exists()


@settings(max_examples=40)
@given(st.lists(st.text(max_size=12), max_size=5))
def test_arguments_out_of_shape_get_the_usage(argv: list[str]) -> None:
    if "--out" in argv and argv.index("--out") == len(argv) - 2 and len(argv) >= 4:
        return  # a well-formed call: covered above
    assert rollout.main(argv) == 2


def test_the_clients_lines_name_settings_p99_and_delivery() -> None:
    records = ResultsStore(DATA / "demo-loaded").records()
    before = [r for r in records if r.name == "filebeat-like"]
    after = [r.model_copy(update={"name": "filebeat-like"}) for r in records if r.name == "batched-zstd"]
    lines = rollout_summary.summary_lines(before, after, 2000)
    assert lines[0] == "client filebeat-like (librdkafka), before -> after:"
    assert (
        lines[1].startswith("  settings       librdkafka linger 0 ms") and " -> librdkafka linger" in lines[1]
    )
    assert lines[2].startswith("  delivery p99   ") and lines[2].endswith("(SLO 2,000 ms)")
    assert "acked, lost 0 -> " in lines[3]


def test_results_that_share_no_client_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    results = str(DATA / "demo-loaded")
    assert rollout_summary.main([results, str(DATA / "recommend"), "--slo-p99", "x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kbt: error: --slo-p99") and err.count("\n") == 1, err
    records = ResultsStore(DATA / "demo-loaded").records()
    with pytest.raises(rollout_summary.BadInput, match="share no client"):
        rollout_summary.summary_lines(
            records[:1], [r.model_copy(update={"name": "other"}) for r in records], None
        )


def test_two_differing_recommendations_of_one_kind_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = load_recommendation(REC)
    # the same kinds, named otherwise and each with another linger
    changed = [
        c.model_copy(update={"profile": c.profile.model_copy(update={"name": "x", "linger_ms": 7.0})})
        for c in rec.clients
    ]
    other = rec.model_copy(update={"clients": changed})
    second = tmp_path / "other.json"
    second.write_text(recommendation_text(other))
    spec = MIX / "audit-java.yaml"
    assert rollout.main([str(spec), str(REC), str(second), "--out", str(tmp_path / "r.yaml")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kbt: error: two recommendations for ") and err.count("\n") == 1, err
    # the same recommendation given twice is one
    assert rollout.main([str(spec), str(REC), str(REC), "--out", str(tmp_path / "r.yaml")]) == 0


def test_the_clients_lines_fit_100_columns_whatever_the_settings() -> None:
    records = ResultsStore(DATA / "demo-loaded").records()
    for before in records:
        for after in records:
            renamed = after.model_copy(update={"name": before.name})
            lines = rollout_summary.summary_lines([before], [renamed], 2000)
            assert all(len(line) <= rollout_summary.WIDTH for line in lines), lines
