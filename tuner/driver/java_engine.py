"""Client kind `java`: run a profile through the Java engine (Kafka's own Java producer,
loadtests/java-engine), one JVM per workload process with its producers as pods; sum the processes
into one ClientResult and verify every acked record by reading the topic back.

Produce requests are counted exactly from the producer's own sensors (Sender: one request per
broker carrying the ready batch of every partition it leads); per broker from the produce
responses, so the per-broker split is empty with acks=0.

Process i serves the kbt_client_* series on the target's i-th client exporter port (the engine's
ClientExporter.java); a taken port leaves the run going, unexported, with a note on stderr.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tuner.core.errors import BadInput, EnvironmentProblem, KbtError
from tuner.core.properties import parse_properties
from tuner.driver.delivery.ledger import tail_key
from tuner.driver.engine import Capabilities, Engine, Placement
from tuner.driver.engine_process import finished_run, process_site, run_engines, summed_result
from tuner.driver.file_check import unlike
from tuner.driver.java_plan import (
    RESULT_SCHEMA,
    START_SLACK_S,
    check_properties_file,
    engine_command,
    exporter_notes,
    heap_mb,
    process_plans,
)
from tuner.driver.key_shares import KeyTable, partitioner
from tuner.driver.latency_hist import merged_ms
from tuner.driver.payload import key_tables
from tuner.driver.result import ArtifactRef, ClientResult, DriverResult
from tuner.spec.clients import kind_of
from tuner.spec.clients.java import KIND, JavaProfile
from tuner.spec.engine_id import EngineId
from tuner.spec.profile import ProfileBase
from tuner.spec.sweep import RunPlan
from tuner.spec.workload import WorkloadSpec
from tuner.target.engine_security import (
    SecretEnv,
    java_security,
    java_system_properties,
    librdkafka_security,
    split_security,
)

# Beyond duration + drain: JVM start, producer close (20 s in the engine).
_EXTRA_WAIT_S = 60.0
# JVM start, producers created, the topic's metadata fetched.
READY_TIMEOUT_S = 120.0


def run_java_load(plan: RunPlan, placement: Placement) -> DriverResult:
    """Drive one run of a `client: java` profile and verify its delivery. `placement.security`: the
    connection's client security (librdkafka terms, tuner/target/engine_security.py) and a
    profile's resolved `${VAR}` overrides (Java names), applied last; every secret among them
    reaches the JVM as a `${env:NAME}` reference, its value in the engine's environment only."""
    connection, overrides = split_security(placement.security)
    secrets = SecretEnv()
    try:
        extra = java_security(connection, overrides, secrets)
    except BadInput as exc:
        raise BadInput(f"profile {plan.profile.name}: {exc}") from None
    # The producers load the file a user receives; the environment (the connection's security and
    # the profile's resolved secrets, as Java names kbt wrote) is layered on top of it.
    artifact = kind_of(plan.profile).artifact(plan.profile)
    file_props = parse_properties(artifact.text, artifact.filename)
    properties = {**file_props, **extra}
    workload = plan.workload
    pods = -(-workload.producers // workload.processes)  # the most pods one process runs
    command = engine_command(heap_mb(pods, properties))
    command[1:1] = java_system_properties(properties)
    keys = _key_table(workload, properties)
    with process_site(plan, placement, "java", None, keys) as site:  # start together once connected
        try:
            plans = process_plans(workload, artifact.text, site, extra, artifact.filename)
        except BadInput as exc:
            raise BadInput(f"profile {plan.profile.name}: {exc}") from None
        budget = (
            READY_TIMEOUT_S + START_SLACK_S + workload.duration_s + plans[0].plan["drain_s"] + _EXTRA_WAIT_S
        )
        outcome = run_engines(
            command,
            plans,
            budget,
            "Java engine",
            RESULT_SCHEMA,
            ready_timeout_s=READY_TIMEOUT_S,
            env=secrets.values,
        )
        for note in exporter_notes(outcome[0]):
            sys.stderr.write(f"kbt: note: {note}\n")
        # The producers took the file's settings as it states them (but what the environment layer
        # sets: its security, and the per-producer suffix the engine puts on a client.id).
        stated = {k: v for k, v in file_props.items() if k not in extra and k != "client.id"}
        for result in outcome[0]:
            differ = unlike(stated, result.get("producer_config") or {})
            if differ:
                raise KbtError(f"the Java producer did not run {artifact.filename} as written: {differ[0]}")
        ref = ArtifactRef(filename=artifact.filename, sha256=artifact.sha256)
        # The verifying consumer reads back through the same listener, as librdkafka.
        return finished_run(
            site,
            plans,
            outcome,
            aggregate=lambda results: aggregate(results, workload.producers, workload.processes).model_copy(
                update={"artifact": ref}
            ),
            failed=lambda result: int(result["failed"]),
            key_of=tail_key,
            security=librdkafka_security(placement.security),
        )


def _key_table(workload: WorkloadSpec, properties: Mapping[str, str]) -> KeyTable | None:
    """The topic's key_shares table under the Java producer's keyed default (murmur2), its keys
    named as the engine names random keys; None with a partitioner.class of the profile's own."""
    if "partitioner.class" in properties:
        return None
    tables = key_tables(workload, partitioner("murmur2"), lambda i: b"key-%d" % i)
    return tables[0] if tables else None


def aggregate(results: list[dict[str, Any]], producers: int, processes: int) -> ClientResult:
    """Sum the engine processes of one run (batch figures weighted by batches)."""
    return summed_result(
        results,
        "java",
        producers,
        processes,
        total_requests=sum(int(r["total"]["requests"]) for r in results),
        weight=lambda r: int(r["total"]["batches"]),
        records_failed=sum(r["failed"] for r in results),
        produce_requests=sum(int(r["window"]["requests"]) for r in results),
        client_metrics=merge_client_metrics([r.get("client_metrics") or {} for r in results]) or None,
        # Open loop: how late send() began against the schedule (the verdict's send-lag check).
        send_lag_ms=merged_ms(r.get("send_lag_histogram") for r in results)
        if any(r.get("send_lag_histogram") for r in results)
        else None,
    )


def merge_client_metrics(per_process: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Rates, totals and byte counts add up over processes; maxima take the largest; averages the
    mean of the processes' averages."""
    names = sorted({name for m in per_process for name in m})
    out: dict[str, float] = {}
    for name in names:
        values = [float(m[name]) for m in per_process if name in m]
        if name.endswith(("-rate", "-total", "-bytes")):
            out[name] = sum(values)
        elif name.endswith("-max"):
            out[name] = max(values)
        else:
            out[name] = sum(values) / len(values)
    return out


# Kafka's own Java producer (loadtests/java-engine).
def check_java(profile: ProfileBase, own_file: Path | None) -> str | None:
    """The Java producer's own reading (ProducerConfig, as `kbt check java` reads a file), when the
    engine is built, of the team's properties file the profile stands for (`own_file`), else of the
    file a run of a profile with overrides starts from (its artifact; kbt's own knobs are typed): a
    value it refuses (compression.type=lz5) is one line before anything runs, not producers that
    fail to start."""
    if not isinstance(profile, JavaProfile) or (own_file is None and not profile.overrides):
        return None
    try:
        engine_command()
    except EnvironmentProblem:  # not built: the run says so
        return None
    with tempfile.TemporaryDirectory(prefix="kbt-javacheck-") as tmp:
        checked = own_file or Path(tmp) / "java.properties"
        if own_file is None:
            checked.write_text(KIND.artifact(profile).text, encoding="utf-8")
        try:
            check_properties_file(checked)
        except BadInput as exc:
            if own_file is not None:
                return exc.message
            return f"profile {profile.name}: the java.properties it runs: {exc.message.split(': ', 1)[-1]}"
    return None


JAVA_ENGINE = Engine(
    EngineId.JAVA,
    Capabilities(secure=True, holds_load=False, live_trials=True, counts_requests=True, live_exporter=True),
    run_java_load,
    check_java,
)

__all__ = ["JAVA_ENGINE", "aggregate", "merge_client_metrics", "run_java_load"]
