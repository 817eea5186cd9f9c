"""Generated artifacts: produced by code, committed, and checked for staleness.

`python -m tuner.cli.generate write` rewrites them; `... check` exits 1 naming every stale file.
Each generator gives {repo-relative path: content}; add yours to render_all.
"""

from __future__ import annotations

import sys

from tuner.cli.reference import cli_reference_markdown
from tuner.core.paths import repo_root
from tuner.driver import rdkafka_config
from tuner.driver.java_plan import config_names_json
from tuner.render import dashboards, dialect_rules, error_bands, filebeat_profiles
from tuner.render.metrics_doc import metrics_markdown
from tuner.render.probe_schema_doc import probe_record_markdown


def render_all() -> dict[str, str]:
    """Every generated file: the CLI reference, the metrics catalog, the Filebeat profiles, the
    Grafana dashboards (their provisioning and Prometheus rules), the compression probe record, the
    Java producer's and librdkafka's property names, the metric dialects' recording rules and the
    model's held-out error bands."""
    return {
        "docs/cli.md": cli_reference_markdown(),
        "docs/metrics.md": metrics_markdown(),
        **filebeat_profiles.render_all(),
        **dashboards.render_all(),
        "docs/probe-record.md": probe_record_markdown(),
        "tuner/spec/java_producer_config.json": config_names_json(),
        "tuner/spec/librdkafka_config.json": rdkafka_config.config_names_json(),
        **dialect_rules.render_all(),
        **error_bands.render_all(),
    }


def main(argv: list[str]) -> int:
    mode = argv[0] if argv else "check"
    root = repo_root()
    stale = {
        rel: content
        for rel, content in sorted(render_all().items())
        if not (root / rel).exists() or (root / rel).read_text() != content
    }
    for rel, content in stale.items():
        if mode == "write":
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(content)
            print(f"wrote {rel}")
        else:
            sys.stderr.write(f"stale generated file: {rel} (run 'make generate' and commit)\n")
    if mode != "write" and not stale:
        print("generated files are up to date")
    return 1 if mode != "write" and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
