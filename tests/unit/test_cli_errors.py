"""The CLI's error contract: one line on stderr, an ExitStatus code, no traceback."""

from __future__ import annotations

import io
from contextlib import redirect_stderr
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


@given(st.text(min_size=1, max_size=60).filter(lambda s: s not in ("on", "off") and not s.startswith("-")))
@settings(max_examples=15, deadline=None)
def test_client_sensors_takes_on_or_off_only(state: str) -> None:
    """Anything but on/off is one clear line and exit 2, before any lab is looked at."""
    with pytest.raises(SystemExit) as exc, redirect_stderr(io.StringIO()) as err:
        main(["lab", "client-sensors", state, "--lab-dir", "/nonexistent-kbt-lab"])
    assert exc.value.code == ExitStatus.BAD_INPUT
    text = err.getvalue()
    assert text.count("\n") == 1 and text.startswith("kbt: error:") and "Traceback" not in text


def test_an_os_error_with_no_words_still_says_what_it_was() -> None:
    """A bare TimeoutError (a future's result past its wait) is an OSError with no text: the CLI
    said "kbt: error: " and nothing, exit 4. Now a wait that got no answer (exit 5); an OSError
    with words keeps them and its file."""
    from concurrent import futures

    from tuner.cli.app import os_error
    from tuner.core.errors import ExitStatus

    bare = futures.TimeoutError()  # what Future.result raises past its wait
    assert os_error(bare) == ("timed out waiting for an answer", ExitStatus.UNREACHABLE)
    assert os_error(TimeoutError("a socket waited too long")) == (
        "a socket waited too long",
        ExitStatus.ENVIRONMENT,
    )
    with pytest.raises(OSError) as missing:
        Path("/nonexistent-kbt-dir/f").read_text()
    assert os_error(missing.value) == (
        "No such file or directory: /nonexistent-kbt-dir/f",
        ExitStatus.ENVIRONMENT,
    )
    assert os_error(ConnectionResetError()) == ("ConnectionResetError", ExitStatus.ENVIRONMENT)
