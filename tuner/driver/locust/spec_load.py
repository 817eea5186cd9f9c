"""The resolved load of a locust Kafka run and its master-side chores (no locust import here).

`LocustLoad` is what the master (or the single local process) resolves from a kbt spec and hands
to every worker as JSON: the run (workload + profile), the fresh topic names, the bootstrap servers
and, from a target file (`--kbt-target`), the target's client security with its `${VAR}` references
unresolved, as `kbt stress` hands a stress plan's to its workers: every process resolves them from
its own environment, so no credential travels over locust's messages or lands in a file.
`summarize` folds the per-process delivery reports into one verdict.
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import Any

from pydantic import Field

from tuner.core.errors import BadInput, did_you_mean
from tuner.core.frozen import Frozen
from tuner.core.kafka_clients import Connection, admin_client, reached_admin
from tuner.spec.clients import profile_of
from tuner.spec.loader import load_sweep, load_workload, read_yaml
from tuner.spec.sweep import RunPlan
from tuner.spec.workload import WorkloadSpec, with_message_path
from tuner.target.registry import resolve_target

TOTALS = (
    "producers", "sent", "acked", "consumed", "lost", "duplicates", "out_of_order", "failed", "indeterminate",
)  # fmt: skip


class LocustLoad(Frozen):
    run_id: str
    plan: RunPlan
    topics: list[str]  # real topic names, one per workload topic
    bootstrap_servers: str
    # Epoch seconds the producers' schedules start from (all processes share it; users spawned
    # later start when they start), set by the master at test start.
    t0: float = 0.0
    t_end: float | None = None  # when the schedules end (None: when locust stops the users)
    # The log file the message source replays, resolved (JSON drops the model's resolved path).
    message_path: str | None = None
    # The target's client security in Kafka's properties format, `${VAR}` references unresolved.
    client_properties: dict[str, str] = Field(default_factory=dict)

    def source_workload(self) -> WorkloadSpec:
        return with_message_path(self.plan.workload, self.message_path)

    def connection(self) -> Connection:
        """How this process's clients reach the cluster: its brokers, and the target's security
        resolved from this process's environment (an unset variable is one line)."""
        from tuner.target.security import client_config

        return Connection(self.bootstrap_servers, client_config(self, "--kbt-target"))


def load_from_spec(
    spec: str, run: str = "", bootstrap: str = "", lab_dir: str = "", target: str = "", users: int = 0
) -> LocustLoad:
    """The load of `spec` (a sweep spec: its run named `run`, else the first; or a workload spec,
    with the client's defaults) toward `bootstrap`, or the cluster of the `target` file with its
    client security (its caps checked against `users` producers), default the lab's brokers."""
    if not spec:
        raise BadInput("no spec: pass --kbt-spec (or set KBT_LOCUST_SPEC) to a sweep or workload spec")
    path = Path(spec)
    raw = read_yaml(path)
    if isinstance(raw, dict) and "profiles" in raw:
        runs = load_sweep(path).runs
        plan = runs[0]
        if run:
            named = {r.name: r for r in runs}
            if run not in named:
                raise BadInput(f'{spec}: no run "{run}"{did_you_mean(run, named)}')
            plan = named[run]
    else:
        workload = load_workload(path)
        plan = RunPlan(
            index=0, name=workload.name, sweep=workload.name, workload=workload,
            profile=profile_of({"name": "client-defaults"}),
        )  # fmt: skip
    servers, security = _cluster(plan, bootstrap, lab_dir, target, users)
    run_id = f"{time.strftime('%Y%m%d%H%M%S')}{secrets.token_hex(2)}"
    message = plan.workload.message
    resolved = getattr(message, "resolved_path", None)
    return LocustLoad(
        run_id=run_id,
        plan=plan,
        topics=[f"{t.name}-locust-{run_id}"[:249] for t in plan.workload.topics],
        bootstrap_servers=servers,
        message_path=str(resolved) if resolved is not None and resolved.is_file() else None,
        client_properties=security,
    )


def _cluster(
    plan: RunPlan, bootstrap: str, lab_dir: str, target: str, users: int
) -> tuple[str, dict[str, str]]:
    """The brokers and the client security (unresolved) the load goes to."""
    if not target:
        return bootstrap or resolve_target(Path(lab_dir) if lab_dir else None).bootstrap_servers, {}
    if bootstrap:
        raise BadInput("--kbt-target and --kbt-bootstrap both name the brokers: give one of them")
    from tuner.target.safety import check_caps, offered
    from tuner.target.security import client_config

    found = resolve_target(None, Path(target))
    client_config(found)  # an unset ${VAR} is one line here, before any topic is made
    if users > 0:  # each locust user is one producer at the workload's rate
        workload = plan.workload.model_copy(update={"producers": users})
        check_caps(found, f"{users} locust users of {plan.name}", offered(workload))
    return found.bootstrap_servers, dict(found.client_properties)


def create_load_topics(load: LocustLoad) -> None:
    """Create the load's topics (pinned leaders too) and wait until every partition has a leader."""
    from tuner.target.topics import ADMIN_TIMEOUT_S, create_topics

    conn = load.connection()
    # a cluster that is not there: said at once, not after the topics' wait
    create_topics(reached_admin(conn, ADMIN_TIMEOUT_S), load.plan.workload.topics, load.topics)


def delete_load_topics(load: LocustLoad, names: list[str]) -> list[str]:
    """Delete topics; the problems, if any (cleanup reports, never raises)."""
    from tuner.target.topics import delete_topics

    return delete_topics(admin_client(load.connection()), names)


def summarize(reports: dict[str, dict[str, Any]], expected: set[str], topics: list[str]) -> dict[str, Any]:
    """One verdict from the processes' delivery reports: ok when every expected process reported,
    each verified its records, and none was lost."""
    totals = {key: sum(int(r.get(key, 0)) for r in reports.values()) for key in TOTALS}
    missing = sorted(expected - set(reports))
    errors = [f"{node}: {r['error']}" for node, r in sorted(reports.items()) if r.get("error")]
    verified = bool(reports) and all(r.get("verified") for r in reports.values())
    ok = verified and not missing and totals["lost"] == 0
    line = (
        f"delivery {'verified' if verified else 'NOT verified'} over {len(reports)} process(es):"
        f" sent {totals['sent']}, acked {totals['acked']}, lost {totals['lost']},"
        f" duplicates {totals['duplicates']}, failed {totals['failed']}"
        + (f"; no report from {', '.join(missing)}" if missing else "")
        + (f"; {'; '.join(errors)}" if errors else "")
    )
    return {
        **totals, "processes": len(reports), "verified": verified, "ok": ok, "missing": missing,
        "errors": errors, "topics": topics, "line": line,
        "by_process": {node: reports[node] for node in sorted(reports)},
    }  # fmt: skip
