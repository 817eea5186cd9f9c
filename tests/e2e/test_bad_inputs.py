"""Every bad input in the catalog: exactly one line on stderr, the documented exit code, no
traceback, nothing written, no secret echoed; and docs/errors.md matches the catalog. Cases about
Prometheus talk to a real endpoint opened on 127.0.0.1 for them (refusing, or answering garbage)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.e2e.bad_inputs import CASES, DOC, Case, endpoint, render_doc
from tests.e2e.kbt_process import kbt, user_env

pytestmark = pytest.mark.e2e


def _run(case: Case, directory: Path, prom: str) -> subprocess.CompletedProcess[str]:
    case.materialise(directory)
    return kbt(*case.command(prom), cwd=directory, env=user_env(**case.env), module=case.module)


def test_catalog_is_large_and_ids_unique() -> None:
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids))
    assert len(CASES) >= 30


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_input_is_one_line(case: Case, tmp_path: Path) -> None:
    before = {p.relative_to(tmp_path) for p in tmp_path.rglob("*")}
    with endpoint(case.serve) as prom:
        proc = _run(case, tmp_path, prom)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip("\n").splitlines()
    assert lines == [case.expected(prom)], proc.stderr
    assert "hunter2" not in proc.stdout + proc.stderr, "a secret from the command line was printed"
    assert proc.returncode == int(case.status), proc.stderr
    after = {p.relative_to(tmp_path) for p in tmp_path.rglob("*")}
    given = {Path(name) for name in case.files}
    given |= {parent for name in given for parent in name.parents if parent != Path(".")}
    created = after - before - given
    assert not created, f"bad input left files behind: {sorted(map(str, created))}"


def test_errors_doc_is_current() -> None:
    assert DOC.read_text() == render_doc(), "docs/errors.md is stale: python -m tests.e2e.bad_inputs --write"
