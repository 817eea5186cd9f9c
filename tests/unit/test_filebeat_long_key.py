"""A file that is not a Filebeat configuration (a line of it parses as one long key, as
`/etc/shadow`'s do) is refused in one line that does not echo the line whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from tuner.core.errors import BadInput
from tuner.spec.filebeat_load import load_filebeat


def test_a_long_unknown_key_is_cut(tmp_path: Path) -> None:
    path = tmp_path / "filebeat.yml"
    secret_tail = "x" * 200 + "TAIL"
    path.write_text(f"root:$6$salt${secret_tail}:20228:0:99999:7:::\n")
    with pytest.raises(BadInput) as info:
        load_filebeat(path)
    message = info.value.message
    assert "filebeat.yml:1: root:$6$salt$" in message and message.endswith("unknown option"), message
    assert "TAIL" not in message and len(message) - len(str(path)) < 150, message


def test_a_short_unknown_key_is_named_whole(tmp_path: Path) -> None:
    path = tmp_path / "filebeat.yml"
    path.write_text('output.kafka:\n  hosts: ["a:1"]\n  bulk_max_sise: 5\n')
    with pytest.raises(BadInput, match=r"filebeat.yml:3: output.kafka.bulk_max_sise: unknown option"):
        load_filebeat(path)
