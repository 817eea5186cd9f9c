"""Print the ApiVersions answer of a running broker as tuner/measure/kafka_api_versions.py's
REFERENCE (each API key's highest version), read from librdkafka's debug log:

    python scripts/capture_api_versions.py --bootstrap 127.0.0.1:19091

Re-run against a lab after a Kafka upgrade and paste the result (with RELEASE) into that module.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tuner.measure.kafka_version import api_versions  # noqa: E402


def main() -> None:
    from confluent_kafka.admin import AdminClient

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bootstrap", required=True)
    args = parser.parse_args()
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    logger = logging.getLogger("capture-api-versions")
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    logger.addHandler(Keep())
    conf: dict[str, object] = {"bootstrap.servers": args.bootstrap, "debug": "feature", "logger": logger}
    admin = AdminClient(conf)  # type: ignore[arg-type]  # "logger" takes a Logger; the stubs omit it
    admin.describe_cluster(request_timeout=10).result(timeout=12)
    admin.poll(0.5)
    tables = api_versions(lines)
    if not tables:
        sys.exit("no ApiVersions answer was logged")
    first = next(iter(tables.values()))
    if any(t != first for t in tables.values()):
        sys.exit(f"the broker connections answered differently: {tables}")
    print("REFERENCE: dict[int, int] = {")
    for key in sorted(first):
        print(f"    {key}: {first[key]},")
    print("}")


if __name__ == "__main__":
    main()
