"""The collector's own `validate` on a rendered fragment (the otelcol kind's checker).

A fragment holds only the batching options kbt recommends; the collector refuses a config without a
pipeline, so the fragment is validated merged over a stub base (a filelog receiver, the kafka
exporter to a placeholder broker, one logs pipeline) exactly as a user merges it
(`--config base.yaml --config fragment.yaml`). `${env:VAR}` references resolve to placeholders.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

from tuner.driver.otelcol.build import require_collector, validate

_ENV = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)")
STUB = {
    "receivers": {"file_log": {"include": ["/nonexistent/kbt-stub.log"]}},
    "exporters": {"kafka": {"brokers": ["127.0.0.1:9092"]}},
    "service": {
        "pipelines": {"logs": {"receivers": ["file_log"], "exporters": ["kafka"]}},
        "telemetry": {"metrics": {"level": "none"}},
    },
}


def check_fragment(path: Path) -> str | None:
    """None when the collector accepts `path` merged over the stub, else its one-line complaint."""
    binary = require_collector()
    text = path.read_text(encoding="utf-8", errors="replace")
    env = {name: "kbt-placeholder" for name in _ENV.findall(text)}
    with tempfile.TemporaryDirectory(prefix="kbt-otelcheck-") as tmp:
        base = Path(tmp) / "base.yaml"
        base.write_text(json.dumps(STUB), encoding="utf-8")
        merged = Path(tmp) / "merged.yaml"
        merged.write_text(text, encoding="utf-8")
        return validate(binary, [base, merged], env)
