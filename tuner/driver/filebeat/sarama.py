"""Client kind `filebeat`: run a profile through the Sarama engine, one OS process per workload
process, its producers as Filebeat "pods"; sum the processes into one ClientResult and verify every
acked record by reading the topic back.
"""

from __future__ import annotations

from typing import Any

from tuner.driver.delivery.ledger import event_key
from tuner.driver.engine import Capabilities, Engine, Placement
from tuner.driver.engine_process import finished_run, process_site, run_engines, summed_result
from tuner.driver.filebeat.plan import (
    RESULT_SCHEMA,
    START_SLACK_S,
    check_emulated,
    engine_binary,
    process_plans,
)
from tuner.driver.result import ClientResult, DriverResult
from tuner.spec.clients.filebeat import config_of
from tuner.spec.engine_id import EngineId
from tuner.spec.sweep import RunPlan

# Beyond duration + drain: producer close (20 s in the engine) and start-up.
_EXTRA_WAIT_S = 60.0


def run_filebeat_load(plan: RunPlan, placement: Placement) -> DriverResult:
    """Drive one run of a `client: filebeat` profile and verify its delivery."""
    config = config_of(plan.profile)
    check_emulated(config)
    workload = plan.workload
    binary = engine_binary()
    with process_site(plan, placement, "filebeat", START_SLACK_S) as site:
        plans = process_plans(workload, config, site)
        outcome = run_engines(
            [str(binary)],
            plans,
            START_SLACK_S + workload.duration_s + plans[0].plan["drain_s"] + _EXTRA_WAIT_S,
            "Filebeat engine",
            RESULT_SCHEMA,
        )
        return finished_run(
            site,
            plans,
            outcome,
            aggregate=lambda results: aggregate(results, workload.producers, workload.processes),
            failed=_failed,
            key_of=event_key,
        )


def _failed(result: dict[str, Any]) -> int:
    """Events a process gave up on: failed after retries, or dropped by the output."""
    return int(result["failed"]) + int(result["dropped"])


def aggregate(results: list[dict[str, Any]], producers: int, processes: int) -> ClientResult:
    """Sum the engine processes of one run (batch figures weighted by produce requests)."""

    def requests(r: dict[str, Any]) -> int:
        return sum(int(n) for n in r["total"]["produce_requests"].values())

    return summed_result(
        results,
        "filebeat",
        producers,
        processes,
        total_requests=sum(requests(r) for r in results),
        weight=requests,
        records_failed=sum(_failed(r) for r in results),
    )


# The Filebeat emulation: Sarama, the Kafka library inside Filebeat, driven as Filebeat's output and
# queue would drive it (loadtests/sarama-engine).
SARAMA_ENGINE = Engine(
    EngineId.SARAMA,
    Capabilities(secure=False, holds_load=False, live_trials=True, counts_requests=True, live_exporter=False),
    run_filebeat_load,
)

__all__ = ["SARAMA_ENGINE", "aggregate", "run_filebeat_load"]
