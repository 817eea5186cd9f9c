"""A sweep spec naming one team file where its profile goes, for the own-file profile tests."""

from __future__ import annotations

from pathlib import Path

SPEC = """\
name: own
workload:
  name: own
  topics: [{name: own, partitions: 3}]
  producers: 2
  rate_per_producer: 10
  message: {kind: generated, bytes: 100}
  duration_s: 5
  warmup_s: 1
profiles:
  - PROFILE
"""


def sweep_naming(tmp_path: Path, ref: str, files: dict[str, str]) -> Path:
    """`files` written under `tmp_path` and a spec whose one profile is `ref`; the spec's path."""
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.replace("PROFILE", ref))
    return spec
