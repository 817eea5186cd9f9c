#!/usr/bin/env python3
"""What kbt's Filebeat model predicts for a sweep's Filebeat profiles on each Filebeat version line.

    python -m bench.predict_filebeat_lines loadtests/filebeat-real-p1.yaml --versions 7.17.29 9.5.5

Each profile is predicted as written, once per version (its `filebeat_version` set to it: what it
leaves unset takes that line's queue defaults and, from 9.0, the filestream input). A prediction,
not a measurement: docs/benchmarks.md says which lines were measured. With `--brokers` the lab's
broker count; the physical floor is one request per pod per p99 budget (the sweep's slo.p99_ms).
"""

from __future__ import annotations

import sys
from pathlib import Path

from bench._common import arguments
from tuner.core.errors import BadInput
from tuner.model.predict import predict
from tuner.model.traffic import traffic_of
from tuner.spec.clients import ClientProfile, profile_of
from tuner.spec.clients.filebeat import config_of
from tuner.spec.loader import load_sweep

FEEDS = '"Filebeat version lines: 7.17 vs 8.13+ / 9.x (from the code, predicted)"'


def on_version(profile: ClientProfile, version: str) -> ClientProfile:
    """The profile's settings as written, for Filebeat `version`: what it left unset takes that
    version line's defaults (ValueError when a setting does not exist there, e.g. 9.x's log input)."""
    stated = config_of(profile).model_dump(mode="json", exclude_unset=True)
    return profile_of(
        {"name": profile.name, "client": "filebeat", "filebeat": {**stated, "filebeat_version": version}}
    )


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__, FEEDS)
    parser.add_argument("sweep", type=Path)
    parser.add_argument("--versions", nargs="+", default=["7.17.29", "9.5.5"])
    parser.add_argument("--brokers", type=int, default=3)
    args = parser.parse_args(argv)
    try:
        spec = load_sweep(args.sweep)
        seen: set[str] = set()
        budget_ms = spec.spec.slo.p99_ms
        print("| profile | Filebeat | events/request | produce req/s | p99 (write -> ack) |")
        print("|---|---|---:|---:|---:|")
        traffic = None
        for run in spec.runs:
            profile = run.profile
            if profile.client != "filebeat" or profile.name in seen:
                continue
            seen.add(profile.name)
            traffic = traffic_of(run.workload, args.brokers)
            for version in args.versions:
                p = predict(traffic, on_version(profile, version))
                print(
                    f"| {profile.name} | {version} | {p.records_per_request:.1f} | {p.requests_per_s:.1f}"
                    f" | {p.p99_ms / 1000:.2f} s |"
                )
        if traffic is not None and budget_ms:
            floor = traffic.producers / (budget_ms / 1000)
            print(
                f"\nphysical floor at p99 <= {budget_ms:g} ms: {floor:.1f} produce requests/s (one per pod)"
            )
    except (BadInput, ValueError) as exc:
        print(f"predict_filebeat_lines: {getattr(exc, 'message', exc)}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
