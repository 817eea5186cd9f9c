"""A Filebeat file's plain scalars read as Filebeat's YAML reader (Go's yaml.v2 under go-ucfg) reads
them, not as YAML 1.2: `bulk_max_size: 04000` is 2048 to Filebeat, `on` is true, `1:30` is text. The
table's values are what `filebeat export config` (7.17) printed for them; the real-binary test
compares a few hundred generated scalars with what Filebeat exports."""

from __future__ import annotations

import json
import random
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tuner.core.errors import BadInput
from tuner.core.inputs import parse_yaml
from tuner.driver.filebeat.builds import filebeat_builds
from tuner.spec.filebeat_load import load_filebeat

_FILEBEAT = bool(filebeat_builds())

BASE = """\
filebeat.inputs:
- type: filestream
  id: app
  paths: [/var/log/app/*.log]
output.kafka:
  hosts: ["k1:9092", "k2:9092"]
  topic: logs
"""

# text -> the value Filebeat 7.17 exported for it (filebeat export config)
READ_AS = {
    "04000": 2048,  # Go's leading-zero octal
    "0o17": 15,
    "0x10": 16,
    "0X1F": 31,
    "0B101": 5,
    "-0b11": -3,
    "-0x10": -16,
    "2_048": 2048,
    "+7": 7,
    "09": 9.0,  # no octal: a float
    "1e6": 1e6,
    ".5": 0.5,
    "1_0.5": 10.5,
    "1:30": "1:30",  # no sexagesimal
    "2026-11-30": "2026-11-30",  # a timestamp stays text
    "0xFFFFFFFFFFFFFFFFFF": "0xFFFFFFFFFFFFFFFFFF",  # past 64 bits and no float: text
    "'04000'": "04000",
    "yes": True,
    "On": True,
    "y": True,
    "off": False,
    "N": False,
    "~": None,
}


@pytest.mark.parametrize("text", sorted(READ_AS))
def test_plain_scalars_read_as_filebeat_reads_them(text: str) -> None:
    got = parse_yaml(f"v: {text}\n", "f.yml", go_yaml="v2")["v"]
    want = READ_AS[text]
    assert got == want and type(got) is type(want), (text, got)


# text -> what the collector's reader (yaml.v3) made of it (`print-config` of 0.165)
READ_AS_V3 = {
    "0100": 64,
    "0o17": 15,
    "1_000": 1000,
    "0x10": 16,
    "09": 9.0,
    "yes": "yes",
    "on": "on",
    "true": True,
}


@pytest.mark.parametrize("text", sorted(READ_AS_V3))
def test_plain_scalars_read_as_the_collector_reads_them(text: str) -> None:
    got = parse_yaml(f"v: {text}\n", "c.yaml", go_yaml="v3")["v"]
    want = READ_AS_V3[text]
    assert got == want and type(got) is type(want), (text, got)


def test_kbt_files_stay_yaml_1_2() -> None:
    assert parse_yaml("a: 04000\nb: on\nc: 0o17\n", "spec.yml") == {"a": 4000, "b": "on", "c": 15}


def test_a_team_file_runs_the_batch_size_filebeat_reads(tmp_path: Path) -> None:
    path = tmp_path / "filebeat.yml"
    path.write_text(BASE + "  bulk_max_size: 04000\n  worker: 0x2\n")
    loaded = load_filebeat(path)
    assert (loaded.config.kafka.bulk_max_size, loaded.config.kafka.worker) == (2048, 2)


KEYS = [
    ("y", "true"),
    ("off", "false"),
    ("12", "the number 12"),
    ("~", "null"),
    ("? [a, b]\n  ", "a list"),
    ("? {a: 1}\n  ", "a mapping"),
    ("!!binary aGk=", "binary data"),
]  # a list key was "the number ('a', 'b')"


@pytest.mark.parametrize(("key", "read"), KEYS)
def test_a_key_filebeat_reads_as_no_text_is_one_line(tmp_path: Path, key: str, read: str) -> None:
    path = tmp_path / "filebeat.yml"
    path.write_text(BASE + f"  {key}: 1\n")
    with pytest.raises(BadInput) as err:
        load_filebeat(path)
    read += _WORDS.get(read, "")
    assert (
        err.value.message == f"{path}:8: a key Filebeat reads as {read}, not text, which it refuses: quote it"
    )


_WORDS = {"true": " (an unquoted y, yes or on)", "false": " (an unquoted n, no or off)"}

_TOKEN = st.text(alphabet="0123456789abcdefxXoObBeE_+-.:yYnN~", min_size=1, max_size=12)


@given(_TOKEN)
def test_any_plain_scalar_reads_or_is_one_line(token: str) -> None:
    try:
        parse_yaml(f"v: {token}\n", "f.yml", go_yaml="v2")
    except BadInput as exc:
        assert "\n" not in exc.message and exc.message.startswith("f.yml")


# ---- against the real binary ------------------------------------------------------------------------

_SIGNS, _PREFIXES = ("", "", "+", "-"), ("", "", "0", "00", "0x", "0X", "0o", "0O", "0b", "0B", ".")
_SUFFIXES = ("", "", "", "e5", "e-2", ".5", ".", ":30", ":7:05", "_", "_1")
_CANONICAL = re.compile(r"-?[0-9]+(\.[0-9]+)?(e[-+][0-9]+)?")


def _tokens(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out = {t.strip("'") for t in READ_AS if not t.startswith("0xFFFF")}
    while len(out) < n:
        digits = "".join(rng.choice("0123456789_abcfABF") for _ in range(rng.randint(1, 5)))
        out.add(rng.choice(_SIGNS) + rng.choice(_PREFIXES) + digits + rng.choice(_SUFFIXES))
    return sorted(out)


def _exported(text: str) -> Any:
    """A value as yaml.v2 printed it: quoted text is text; unquoted, a canonical number, bool or
    null is one (it quotes any other text that would read as one), anything else is text."""
    if text.startswith('"'):
        return json.loads(text)
    if text in ("true", "false"):
        return text == "true"
    if text == "null":
        return None
    return float(text) if _CANONICAL.fullmatch(text) else text


@pytest.mark.skipif(not _FILEBEAT, reason="no real Filebeat build: run make install")
def test_generated_scalars_read_as_real_filebeat_exports_them(tmp_path: Path) -> None:
    tokens = _tokens(300)
    body = "".join(f"  k{i}: {t}\n" for i, t in enumerate(tokens))
    path = tmp_path / "filebeat.yml"
    path.write_text(BASE + "kbt_probe:\n" + body)
    ours = parse_yaml(path.read_text(), "f.yml", go_yaml="v2")["kbt_probe"]
    binary = next(iter(filebeat_builds().values()))
    done = subprocess.run(
        [str(binary), "export", "config", "-c", str(path), "--path.home", str(tmp_path),
         "--path.data", str(tmp_path), "--path.logs", str(tmp_path), "--strict.perms=false"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-500:]
    block = done.stdout.split("kbt_probe:\n", 1)[1]
    theirs = {}
    for line in block.splitlines():
        if not line.startswith("  k"):
            break
        key, _, text = line.strip().partition(": ")
        theirs[key] = _exported(text)
    assert set(theirs) == set(ours) == {f"k{i}" for i in range(len(tokens))}
    for i, token in enumerate(tokens):
        got, want = ours[f"k{i}"], theirs[f"k{i}"]
        if isinstance(want, float):  # yaml.v2 prints 9.0 as 9: a number either way
            assert not isinstance(got, (bool, str)), (token, got, want)
            assert got == pytest.approx(want, rel=1e-12), (token, got, want)
        else:
            assert got == want and type(got) is type(want), (token, got, want)
