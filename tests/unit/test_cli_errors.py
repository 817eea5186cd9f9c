"""The CLI's error contract: one line on stderr, an ExitStatus code, no traceback."""

from __future__ import annotations

import pytest

from tuner.cli.app import main
from tuner.core.errors import ExitStatus, did_you_mean


def test_unknown_command_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["no-such-command"])
    assert exc.value.code == ExitStatus.BAD_INPUT
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("kbt: error:")
    assert "Traceback" not in err


def test_did_you_mean_suggests_closest() -> None:
    assert did_you_mean("lingr_ms", ["linger_ms", "batch_bytes"]) == ' (did you mean "linger_ms"?)'
    assert did_you_mean("zzz", ["linger_ms"]) == ""
