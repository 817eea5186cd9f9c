"""A Filebeat or collector pod that exits at start-up is reported with the last lines of its own
output (its stderr, where a shipper says why it refuses its config before its logging is set up),
with its secrets redacted. The failure is real: each pod's connection names a CA file that does not
exist, whose path holds the pod's own secret value (so the shipper prints the secret). No broker is
reached: both exit while building their Kafka client. About 3 s each.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tuner.core.errors import KbtError
from tuner.driver.engine_process import stop
from tuner.driver.filebeat.builds import filebeat_binary, filebeat_builds
from tuner.driver.filebeat.real import _Pod
from tuner.driver.otelcol.build import collector_binary
from tuner.driver.otelcol.engine import Pod
from tuner.driver.tailed.pods import RestartsOnTakenPort, wait_started
from tuner.spec.clients import profile_of
from tuner.spec.clients.filebeat import FilebeatProfile
from tuner.spec.clients.otelcol import OtelcolProfile
from tuner.target.engine_security import SecureClient

pytestmark = pytest.mark.integration

SECRET = "kbt-s3cret-in-a-path"
BROKERS = "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3"  # nothing listens: the pods exit before dialling


def _failure_of(pod: RestartsOnTakenPort[Any]) -> str:
    try:
        with pytest.raises(KbtError) as err:
            wait_started([pod], "the shipper", 30.0)
    finally:
        stop([pod.proc] if pod.proc is not None else [], 10.0)
    return str(err.value)


@pytest.mark.skipif(not filebeat_builds(), reason="no real Filebeat build: run 'make install'")
def test_a_filebeat_pod_that_exits_at_start_says_why_without_its_secret(tmp_path: Path) -> None:
    secure = SecureClient(
        config={"ssl.certificate_authorities": [f"/nonexistent/{SECRET}/ca.pem"]}, env={"KBT_X": SECRET}
    )
    pod = _Pod(0, tmp_path, secure)
    profile = profile_of({"name": "p", "client": "filebeat"})
    assert isinstance(profile, FilebeatProfile)
    pod.start(filebeat_binary(None), profile, BROKERS, "t")
    message = _failure_of(pod)
    print(message)
    assert message.startswith("the shipper did not start: pod 0: ")
    assert "exit status" not in message and "no such file or directory" in message
    assert SECRET not in message and "[redacted]" in message


@pytest.mark.skipif(collector_binary() is None, reason="no OpenTelemetry Collector build: run 'make install'")
def test_a_collector_pod_that_exits_at_start_says_why_without_its_secret(tmp_path: Path) -> None:
    binary = collector_binary()
    assert binary is not None
    secure = SecureClient(config={"tls": {"ca_file": f"/nonexistent/{SECRET}/ca.pem"}}, env={"KBT_X": SECRET})
    pod = Pod(0, tmp_path, secure)
    profile = profile_of({"name": "p", "client": "otelcol"})
    assert isinstance(profile, OtelcolProfile)
    pod.start(binary, profile, BROKERS, "t")
    message = _failure_of(pod)
    print(message)
    assert message.startswith("the shipper did not start: pod 0: ")
    assert "exit status" not in message and "no such file or directory" in message
    assert SECRET not in message and "[redacted]" in message
