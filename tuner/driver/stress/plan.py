"""What every process of one stress run follows: the timeline, topics, profile and rates.

`kbt stress` writes it as JSON for the locust master (which hands it to every worker, local or on
another machine, as the `--kbt-plan` option) and for its consumer processes. `t0` is an absolute
epoch time: stage i runs over [t0 + start_s, t0 + end_s), on every machine (clocks kept by NTP).
"""

from __future__ import annotations

from pydantic import Field

from tuner.core.frozen import Frozen
from tuner.spec.clients import ClientProfile
from tuner.spec.stress_spec import Shape, Stage, stage_at
from tuner.spec.workload import ConsumerGroupSpec, WorkloadSpec, with_message_path

# A worker started by `kbt stress-worker` writes its summary to the file this variable names.
WORKER_REPORT_ENV = "KBT_STRESS_WORKER_REPORT"
# In the plan's out_dir: the locust master's status, and the runner's request to end the ramp.
STATUS_FILE = "status.json"
ABORT_FILE = "abort"


class StressPlan(Frozen):
    run_id: str
    stress: str  # the spec's name
    profile_label: str  # e.g. current, recommended
    profile: ClientProfile
    workload: WorkloadSpec  # topic configs merged; producers = the baseline's producers
    topics: list[str]  # the run's real topic names (fresh per run)
    bootstrap_servers: str
    rate_per_producer: float  # msgs/s each producer offers
    stages: list[Stage]
    t0: float
    groups: list[ConsumerGroupSpec] = Field(default_factory=list)
    lagging_max_msgs_per_s: float | None = None
    # Client exporter ports (lab range): producer worker i uses producer_ports[i] when present.
    producer_ports: list[int] = Field(default_factory=list)
    consumer_ports: list[int] = Field(default_factory=list)
    # Where the locust master writes its status (on the master's machine).
    out_dir: str = ""
    # The log file the message source replays, resolved (JSON drops the model's resolved path).
    message_path: str | None = None
    # The target's client security in Kafka's properties format, `${VAR}` references unresolved:
    # every process resolves them from its own environment when it builds a client, so no
    # credential travels in the plan (to a file, or over locust's RPC to another machine).
    client_properties: dict[str, str] = Field(default_factory=dict)
    # Profiles of the same stress test still to run after this one (a remote worker waits for them).
    profiles_after: int = 0

    @property
    def end(self) -> float:
        return self.t0 + (self.stages[-1].end_s if self.stages else 0.0)

    @property
    def drain_s(self) -> float:
        """The last stage's length (the drain; the spec's default drain for a plan without stages):
        producers flush and the orchestrator stops within it."""
        return self.stages[-1].duration_s if self.stages else float(Shape.model_fields["drain_s"].default)

    def stage_at(self, epoch_s: float) -> Stage | None:
        return stage_at(self.stages, epoch_s - self.t0)

    def stage_index_at(self, epoch_s: float) -> int:
        """The stage index for a time; before t0 -> 0, after the end -> the last stage."""
        stage = self.stage_at(epoch_s)
        if stage is not None:
            return stage.index
        return 0 if epoch_s < self.t0 else len(self.stages) - 1

    def source_workload(self) -> WorkloadSpec:
        return with_message_path(self.workload, self.message_path)

    def security_config(self) -> dict[str, str]:
        """librdkafka properties for the plan's client security (empty for PLAINTEXT)."""
        from tuner.target.security import client_config

        return client_config(self, "stress plan")


def second_half(stage: Stage, t_in_stage: float) -> bool:
    return t_in_stage >= stage.duration_s / 2


def lagging_active(stage: Stage | None, t_in_stage: float) -> bool:
    """Whether the lagging groups read at this point of the stage."""
    if stage is None or stage.lagging == "off":
        return False
    if stage.lagging == "on":
        return True
    return second_half(stage, t_in_stage)
