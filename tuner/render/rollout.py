"""A rollout: a team's own sweep (its clients: topics, producers, rates, records) with each profile's
settings replaced by a recommendation's for its client kind, under the profile's own name, so the
clients keep their ids and `kbt compare` finds each client group before and after. `make demo`
rolls out what it recommended from a capture with it (scripts/demo.sh, step 7).

    python -m tuner.render.rollout SPEC RECOMMENDATION.json [RECOMMENDATION.json ...] --out FILE

Durability is the recommendation's, which keeps the baseline's (acks, idempotence) unless told.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tuner.core import inputs
from tuner.core.errors import BadInput
from tuner.core.paths import resolved
from tuner.core.writes import atomic_write
from tuner.core.yaml_block import yaml_document
from tuner.render.script import run_script
from tuner.spec.clients import ClientProfile
from tuner.spec.loader import load_sweep
from tuner.store.recommendation import Recommendation, load_recommendation

USAGE = "python -m tuner.render.rollout SPEC RECOMMENDATION.json [RECOMMENDATION.json ...] --out FILE"


def rolled_out(spec_path: Path, recommendations: list[Recommendation]) -> dict[str, Any]:
    """The sweep document: the spec as written (its workload's files named from anywhere), each
    profile replaced by the recommended one of its kind. BadInput when a kind has none."""
    loaded = load_sweep(spec_path)  # validated as `kbt sweep` would (one line on a bad spec)
    raw = inputs.plain_data(inputs.read_yaml(spec_path))
    recommended: dict[str, ClientProfile] = {}
    for rec in recommendations:
        for client in rec.clients:
            kind = client.profile.client
            if kind in recommended and _settings(recommended[kind]) != _settings(client.profile):
                # which of the team's profiles takes which is not for kbt to guess
                raise BadInput(
                    f"two recommendations for {kind} differ: give one per client kind"
                    " (roll out each spec with its own group's)"
                )
            recommended[kind] = client.profile
    profiles: list[dict[str, Any]] = []
    for profile in loaded.spec.profiles:
        if profile.client not in recommended:
            kinds = ", ".join(sorted(recommended)) or "none"
            raise BadInput(
                f"profile {profile.name} is {profile.client}, and no recommendation given is"
                f" (they have: {kinds})"
            )
        new = recommended[profile.client]
        profiles.append(
            {
                **new.model_dump(mode="json", exclude_defaults=True),
                "name": profile.name,
                "client": new.client,
                "description": f"{new.name} rolled out (was: {profile.description or profile.name})",
            }
        )
    base = spec_path.parent.resolve()
    workload = raw["workload"]
    if isinstance(workload, str):
        workload = str(resolved(base / workload))
    elif isinstance(message := workload.get("message"), dict) and isinstance(message.get("path"), str):
        workload = {**workload, "message": {**message, "path": str(resolved(base / message["path"]))}}
    return {
        **{k: v for k, v in raw.items() if k not in ("profiles", "sweep", "name_format")},
        "name": f"{loaded.spec.name}-rollout",
        "description": f"{loaded.spec.name} with the recommended settings",
        "workload": workload,
        "profiles": profiles,
    }


def _settings(profile: ClientProfile) -> dict[str, Any]:
    return profile.model_dump(exclude={"name", "description"})


def main(argv: list[str]) -> int:
    def work() -> int:
        out = Path(argv[-1])
        spec, *recs = (Path(a) for a in argv[:-2])
        document = rolled_out(spec, [load_recommendation(p) for p in recs])
        atomic_write(
            out, yaml_document(document, [f"Written by kbt: {spec.name} rolled out"]), "rollout spec"
        )
        print(f"rollout: {out}")
        return 0

    fits = "--out" in argv and argv.index("--out") == len(argv) - 2 and len(argv) >= 4
    return run_script(fits, USAGE, work)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
