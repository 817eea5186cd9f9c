"""Generated artifacts: produced by code, committed, and checked for staleness.

`python -m tuner.cli.generate write` rewrites them; `... check` exits 1 naming every stale file.
Each generator returns {repo-relative path: content}; add yours to GENERATORS.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from tuner.core.paths import repo_root

Generator = Callable[[], dict[str, str]]


def _cli_reference() -> dict[str, str]:
    from tuner.cli.reference import cli_reference_markdown

    return {"docs/cli.md": cli_reference_markdown()}


def _metrics_catalog() -> dict[str, str]:
    from tuner.render.metrics_doc import metrics_markdown

    return {"docs/metrics.md": metrics_markdown()}


def _filebeat_profiles() -> dict[str, str]:
    from tuner.render.filebeat_profiles import render_all

    return render_all()


def _probe_record_doc() -> dict[str, str]:
    from tuner.render.probe_schema_doc import probe_record_markdown

    return {"docs/probe-record.md": probe_record_markdown()}


def _dashboards() -> dict[str, str]:
    from tuner.render.dashboards import render_all

    return render_all()


def _java_producer_config() -> dict[str, str]:
    from tuner.driver.java_plan import config_names_json

    return {"tuner/spec/java_producer_config.json": config_names_json()}


def _dialect_rules() -> dict[str, str]:
    from tuner.render.dialect_rules import render_all

    return render_all()


def _error_bands() -> dict[str, str]:
    from tuner.render.error_bands import render_all

    return render_all()


GENERATORS: list[tuple[str, Generator]] = [
    ("CLI reference", _cli_reference),
    ("metrics catalog", _metrics_catalog),
    ("Filebeat profiles", _filebeat_profiles),
    ("Grafana dashboards, provisioning and Prometheus rules", _dashboards),
    ("compression probe record", _probe_record_doc),
    ("Java producer property names", _java_producer_config),
    ("metric dialect recording rules", _dialect_rules),
    ("held-out error bands of the model", _error_bands),
]


def render_all() -> dict[str, str]:
    out: dict[str, str] = {}
    for _name, gen in GENERATORS:
        out.update(gen())
    return out


def main(argv: list[str]) -> int:
    mode = argv[0] if argv else "check"
    root = repo_root()
    stale: list[str] = []
    for rel, content in sorted(render_all().items()):
        path = root / rel
        if mode == "write":
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists() or path.read_text() != content:
                path.write_text(content)
                print(f"wrote {rel}")
        elif not path.exists() or path.read_text() != content:
            stale.append(rel)
    if mode != "write" and stale:
        for rel in stale:
            sys.stderr.write(f"stale generated file: {rel} (run 'make generate' and commit)\n")
        return 1
    if mode != "write":
        print("generated files are up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
