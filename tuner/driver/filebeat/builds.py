"""The real Filebeat builds in kbt's cache (scripts/build_filebeat.sh puts each pinned version at
`<cache>/filebeat/<version>/filebeat`)."""

from __future__ import annotations

import os
from pathlib import Path

from tuner.core.errors import BadInput, EnvironmentProblem
from tuner.core.paths import cache_dir


def _version_key(version: str) -> tuple[int, ...]:
    # ASCII digits only: "²".isdigit() is true and int("²") raises
    return tuple(int(p) if p.isascii() and p.isdigit() else -1 for p in version.replace("-", ".").split("."))


def filebeat_builds() -> dict[str, Path]:
    """Installed builds, oldest version first."""
    root = cache_dir() / "filebeat"
    if not root.is_dir():
        return {}
    found = {
        d.name: d / "filebeat"
        for d in root.iterdir()
        if (d / "filebeat").is_file() and os.access(d / "filebeat", os.X_OK)
    }
    return dict(sorted(found.items(), key=lambda item: _version_key(item[0])))


def filebeat_binary(version: str | None = None) -> Path:
    """The binary of `version` (None: the newest installed build)."""
    builds = filebeat_builds()
    if not builds:
        raise EnvironmentProblem(
            f"no real Filebeat build in {cache_dir() / 'filebeat'}: run 'make install'"
            " (or scripts/build_filebeat.sh)"
        )
    if version is None:
        return builds[list(builds)[-1]]
    if version not in builds:
        raise BadInput(f"Filebeat {version} is not built (available: {', '.join(builds)})")
    return builds[version]


def build_for(version: str) -> Path:
    """The build a profile's `filebeat_version` runs on: that exact build, else the newest build of
    that release ("9.5" -> 9.5.x). Never another version line: its queue would not be the modelled one."""
    builds = filebeat_builds()
    if version in builds:
        return builds[version]
    matching = [v for v in builds if v.startswith(f"{version}.")]
    if not matching:
        raise BadInput(
            f"filebeat_version {version}: no such real Filebeat build (built: {', '.join(builds) or 'none'};"
            " scripts/filebeat/pins lists what make install builds)"
        )
    return builds[matching[-1]]


def build_version(binary: Path) -> str:
    """The version a cached build was made for (its directory name)."""
    return binary.parent.name
