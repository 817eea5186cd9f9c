"""RunRecord: one immutable JSON document per run, with a schema version and the spec's hash."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from tuner.core.frozen import Frozen
from tuner.core.units import Brokers, CoresInt, Count, Entries, Epoch, Seconds, Text
from tuner.spec.sweep import RunPlan
from tuner.store.fault import FaultRun
from tuner.store.figures import Attribution, BrokerWindow, ClientResult, DeliveryResult
from tuner.store.record_upgrade import SCHEMA_VERSION
from tuner.store.stress_section import StressStep

# "unclean": delivered, but not a clean measurement (runner/verdict.py): kept, shown, never used to
# calibrate the model or back a recommendation. "unverified": nothing found lost, but the read-back
# ended before it reached every acked record (DeliveryResult.unread); used for nothing either.
Status = Literal["ok", "unclean", "unverified", "failed"]


class Environment(Frozen):
    """Where the run happened: versions and sizes that change what the figures mean."""

    kbt_version: Text
    python: Text
    platform: Text
    cpu_count: CoresInt
    confluent_kafka: Text | None = None
    librdkafka: Text | None = None
    kafka_version: Text | None = None
    broker_count: Brokers | None = None
    prometheus_scrape_interval_s: Seconds | None = None


class RunRecord(Frozen):
    schema_version: Count = SCHEMA_VERSION
    run_id: Text  # <sweep>/<name>-<utc timestamp>: unique, sortable
    name: Text
    sweep: Text
    index: Count
    spec_hash: Text
    plan: RunPlan
    environment: Environment
    created_at: Epoch  # epoch s when the record was written
    topics: Annotated[list[Text], Entries] = Field(default_factory=list)
    client: ClientResult
    delivery: DeliveryResult
    broker: BrokerWindow | None = None
    status: Status
    # why the run failed / what is missing
    problems: Annotated[list[Text], Entries] = Field(default_factory=list)
    stress: StressStep | None = None  # `kbt stress`: the stage, its gates, consumers, remote tier
    # The cluster could not take every write during the run (sends failed or timed out, partitions
    # under min.insync.replicas): the figures describe an outage, never a tuning result.
    degraded: bool = False
    fault: FaultRun | None = None  # set on `kbt chaos` runs: what was injected and the verdict
    # A local broker (kbt's lab): where its network threads' busy time went and why (queue, host, ...)
    attribution: Attribution | None = None

    @property
    def tuning_result(self) -> bool:
        """May a recommendation or report use this run's figures? Only healthy, fault-free runs."""
        return self.status == "ok" and not self.degraded and self.fault is None

    @property
    def window_s(self) -> float:
        return self.client.window_s
