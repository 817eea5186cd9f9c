"""Real Filebeat, offline: the input-side settings, the pod's side file beside the rendered
filebeat.yml, the engine choice, the log line format and its read-back parsing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tuner.core.errors import BadInput
from tuner.driver.filebeat.plan import check_emulated
from tuner.driver.filebeat.yml import pod_side
from tuner.driver.tailed.pods import deployment_env
from tuner.driver.tailed.readback import Tally
from tuner.driver.tailed.writer import line_text
from tuner.spec.clients import ClientProfile, profile_of
from tuner.spec.clients.filebeat import KIND, config_of
from tuner.spec.filebeat_input import FilebeatInput


def _profile(**settings: Any) -> ClientProfile:
    return profile_of({"name": "p", "client": "filebeat", "filebeat": settings})


def _config(**settings: Any) -> Any:
    return config_of(_profile(**settings))


def _yml(config: Any, **extra: Any) -> dict[str, Any]:
    return pod_side(
        config,
        pod=3,
        log_file=Path("/tmp/x/pod.log"),
        http_port=5066,
        workdir=Path("/tmp/x"),
        **extra,
    )


def test_the_pod_side_file_holds_only_the_labs_part() -> None:
    doc = _yml(_config())
    # The output and queue are the artifact's: the side file adds no output.kafka option.
    assert "output.kafka" not in doc and "queue.mem" not in doc
    assert doc["filebeat.inputs"] == [{"type": "log", "paths": ["/tmp/x/pod.log"]}]
    assert doc["http"] == {"enabled": True, "host": "127.0.0.1", "port": 5066}
    secure = _yml(_config(), output_security={"username": "u", "password": "${KBT_P}"})
    assert secure["output.kafka"] == {"username": "u", "password": "${KBT_P}"}
    assert deployment_env("h1:1,h2:2,h3:3", "t1") == {"KAFKA_HOSTS": "h1:1,h2:2,h3:3", "KAFKA_TOPIC": "t1"}


def test_profile_settings_reach_the_artifact_and_the_input() -> None:
    settings = {
        "queue.mem.flush.timeout": "250ms",
        "queue.mem.events": 8192,
        "output.kafka.bulk_flush_frequency": "500ms",
        "output.kafka.partition.random.group_events": 64,
        "input.backoff": "100ms",
        "input.check_interval": "1s",
        "input.close_eof": "true",
    }
    text = KIND.artifact(_profile(**settings)).text
    assert "  bulk_flush_frequency: 500ms\n" in text
    assert "  partition.random:\n    group_events: 64\n" in text
    assert "queue.mem:\n" in text and "  events: 8192\n" in text and "  flush.timeout: 250ms\n" in text
    assert "  flush.min_events:" not in text  # unset: Filebeat's default
    doc = _yml(_config(**settings))
    [inp] = doc["filebeat.inputs"]
    assert inp == {
        "type": "log",
        "paths": ["/tmp/x/pod.log"],
        "backoff": "100ms",
        "scan_frequency": "1s",
        "close_eof": True,
    }


def test_filestream_names_and_id() -> None:
    doc = _yml(_config(**{"input.type": "filestream", "input.backoff": "1s", "input.max_backoff": "2s"}))
    [inp] = doc["filebeat.inputs"]
    assert inp["id"] == "kbt-pod-3"
    assert inp["backoff.init"] == "1s" and inp["backoff.max"] == "2s"
    assert "backoff" not in inp


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"input.type": "filestream", "input.backoff_factor": 3}, "filestream input has no backoff factor"),
        ({"input.backoff": "20s"}, "must not exceed max_backoff (10s)"),
        ({"input.type": "journald"}, "'log' or 'filestream'"),
        ({"input.backof": "1s"}, 'unknown key "backof" (did you mean "backoff"?)'),
        ({"input.engine": "fake"}, "'auto', 'real' or 'emulated'"),
        ({"input.check_interval": "0s"}, "check_interval: must be greater than 0 (got 0s)"),
    ],
)
def test_bad_input_settings(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as err:
        _config(**overrides)
    assert message in str(err.value)


def test_input_settings_round_trip_as_overrides() -> None:
    profile = _profile(**{"input.type": "filestream", "input.check_interval": "2s"})
    assert KIND.client_settings(profile) == {"input.type": "filestream", "input.check_interval": "2s"}


def test_the_emulation_refuses_input_settings() -> None:
    check_emulated(_config(**{"input.engine": "emulated"}))
    with pytest.raises(BadInput, match=r"input\.\*"):
        check_emulated(_config(**{"input.backoff": "100ms"}))


@given(backoff=st.integers(1, 30_000), max_backoff=st.integers(1, 30_000))
def test_backoff_bounds(backoff: int, max_backoff: int) -> None:
    data = {"backoff": f"{backoff}ms", "max_backoff": f"{max_backoff}ms"}
    if backoff <= max_backoff:
        assert FilebeatInput.model_validate(data).effective("backoff") == pytest.approx(backoff / 1000)
    else:
        with pytest.raises(ValueError, match="must not exceed max_backoff"):
            FilebeatInput.model_validate(data)


def test_a_written_line_is_read_back_from_the_event() -> None:
    line = line_text(1_700_000_001_500_000, 2, 17, 'GET /x "quoted"').rstrip("\n")
    value = (
        b'{"@timestamp":"2023-11-14T22:13:21.600Z","message":"'
        + line.replace('"', '\\"').encode()
        + b'","input":{"type":"log"}}'
    )
    tally = Tally(window=(1_700_000_000.0, 1_700_000_010.0))
    tally.add(4, value, (2, 1_700_000_001_600))
    tally.add(4, value, (2, 1_700_000_001_600))  # a duplicate
    assert tally.marks.seen[2][17] == 2
    assert tally.events_in_window == 1
    assert tally.ack_us.get_max_value() == pytest.approx(100_000, rel=0.01)
    tally.add(4, value.replace(b" 2-17 ", b" 2-9 "), (2, 1_700_000_001_600))
    assert tally.marks.out_of_order == 1
    tally.add(4, b'{"message":"no id"}', (2, 0))
    assert tally.marks.foreign == 1
