"""Generated artifacts: produced by code, committed, and checked for staleness.

`python -m tuner.cli.generate write` rewrites them; `... check` exits 1 naming every stale file.
A generator returns its file's content or {repo-relative path: content}; add yours to GENERATORS.
"""

from __future__ import annotations

import importlib
import sys

from tuner.core.paths import repo_root

# (what, module, its function, the file it writes; None: the function returns {path: content})
GENERATORS: list[tuple[str, str, str, str | None]] = [
    ("CLI reference", "tuner.cli.reference", "cli_reference_markdown", "docs/cli.md"),
    ("metrics catalog", "tuner.render.metrics_doc", "metrics_markdown", "docs/metrics.md"),
    ("Filebeat profiles", "tuner.render.filebeat_profiles", "render_all", None),
    ("Grafana dashboards, provisioning and Prometheus rules", "tuner.render.dashboards", "render_all", None),
    (
        "compression probe record",
        "tuner.render.probe_schema_doc",
        "probe_record_markdown",
        "docs/probe-record.md",
    ),
    (
        "Java producer property names",
        "tuner.driver.java_plan",
        "config_names_json",
        "tuner/spec/java_producer_config.json",
    ),
    ("metric dialect recording rules", "tuner.render.dialect_rules", "render_all", None),
    ("held-out error bands of the model", "tuner.render.error_bands", "render_all", None),
]


def render_all() -> dict[str, str]:
    out: dict[str, str] = {}
    for _what, module, function, path in GENERATORS:  # imported only when generating
        made = getattr(importlib.import_module(module), function)()
        out.update(made if path is None else {path: made})
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
