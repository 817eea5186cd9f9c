"""`make install-light` on a clean clone (tests/e2e/light_install.py): the venv test_light_install.py
diagnoses a cluster from. No lab and no clock: CI runs it beside the integration tier, into
KBT_TEST_LIGHT_DIR, and the diagnosis in step 3 takes the venv it built."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.light_install import build_light_venv, built_venv, light_dir

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_make_install_light_on_a_clean_clone(tmp_path: Path) -> None:
    root = light_dir() or tmp_path
    venv = build_light_venv(root)
    assert built_venv(root) == venv
    assert (venv / "bin" / "kbt").is_file() and (venv / "bin" / "python").exists()
