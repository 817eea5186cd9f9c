"""Recommendation: the JSON document `kbt recommend` writes, schema-versioned.

One document per recommendation: the workload and SLO it answers, the baseline (current/default)
profile, and per client kind the recommended settings with the model's prediction, the measured
run that confirms it (run ids point into the results store) and every confirmation trial. Reports
read it through `load_recommendation`; nothing in it is a secret (profiles carry no credentials, and
rendered client files use `${VAR}` references only).

Compatibility: a reader accepts exactly RECOMMENDATION_SCHEMA_VERSION; adding an optional field keeps
the version, anything else bumps it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from tuner.core.frozen import Frozen
from tuner.core.redact import redact
from tuner.core.units import (
    Brokers,
    ByteRate,
    Cores,
    Count,
    Entries,
    Epoch,
    Figure,
    Megabytes,
    Millis,
    PerRequest,
    Rate,
    Ratio,
    SizeInt,
    TallyInt,
    Text,
)
from tuner.core.writes import json_text
from tuner.spec.clients import ClientProfile, same_kind
from tuner.spec.slo import SLO
from tuner.spec.workload import WorkloadSpec
from tuner.store.document import read_document, validated
from tuner.store.record_upgrade import upgrade_profiles

RECOMMENDATION_SCHEMA_VERSION = 2  # 2: profiles in their client kind's own settings (version 1 read)
RECOMMENDATION_KIND: Literal["recommendation"] = "recommendation"

ClientKind = Text  # a name in tuner.spec.clients.KINDS
# confirmed: a lab run of exactly these settings met the SLO with 0 lost;
# predicted: the model's choice, not (yet) run; rejected: runs showed it misses the SLO.
Status = Literal["confirmed", "predicted", "rejected"]


class SLOBounds(SLO):
    """What a recommended setting must meet: the SLO and the cluster's limits."""

    max_message_bytes: SizeInt | None = Field(
        default=None, description="Largest record batch the topic accepts (max.message.bytes)."
    )
    max_request_bytes: SizeInt | None = Field(default=None, description="Client max.request.size, bytes.")
    codecs: Annotated[dict[Text, Annotated[list[Text], Entries]], Entries] = Field(
        default_factory=dict, description="Client kind -> codecs it may use (empty: all it supports)."
    )


# What the model predicts, and ratios of a prediction to a measurement, are held to the float's exact
# range (Figure) rather than a physical bound: a spec may ask for any workload within its own bounds
# (512 producers at 1e9 msgs/s each), and a recommendation must never fail on what the model says of
# it; nothing sizes an array or a loop by these. Measured figures keep their units' bounds.


class PredictionBand(Frozen):
    """What a prediction could measure, from the held-out error band of its client kind and regime
    (tuner/spec/error_bands.json): the measured value lies in [low, high] when this setting misses
    like the held-out runs did."""

    regime: Text = Field(description="The client kind's regime the prediction falls in.")
    basis: Text = Field(description="Whose held-out runs the band comes from (the regime's, or the kind's).")
    runs: Count = Field(description="Held-out runs behind the band.")
    requests_per_s: tuple[Figure, Figure] = Field(description="Produce requests/s, all brokers: low, high.")
    busiest_broker_requests_per_s: tuple[Figure, Figure] = Field(description="The busiest broker: low, high.")
    p99_ms: tuple[Millis, Millis] | None = Field(default=None, description="p99 delivery latency: low, high.")


class Prediction(Frozen):
    """What the model predicts for one setting on one workload."""

    requests_per_s: Figure = Field(description="Produce requests/s, all brokers.")
    busiest_broker_requests_per_s: Figure = Field(description="Produce requests/s on the busiest broker.")
    requests_per_s_by_broker: Annotated[dict[Text, Figure], Entries] = Field(default_factory=dict)
    records_per_request: PerRequest
    p50_ms: Millis = Field(description="Median delivery latency, ms.")
    p99_ms: Millis = Field(description="p99 delivery latency, ms.")
    producer_memory_mb: Megabytes | None = Field(default=None, description="Per producer, MB.")
    wire_bytes_per_s: Figure | None = Field(default=None, description="Compressed bytes/s on the wire.")
    codec_cpu_ms_per_s: Figure | None = Field(default=None, description="Client CPU ms/s spent compressing.")
    network_idle_ratio: Figure | None = Field(default=None, description="From the fitted broker cost model.")
    handler_idle_ratio: Figure | None = Field(default=None, description="From the fitted broker cost model.")
    regime: Text | None = Field(default=None, description="The client kind's regime (held-out bands).")
    band: PredictionBand | None = Field(
        default=None, description="The held-out error band applied (None: no held-out run of the kind)."
    )


class Measured(Frozen):
    """What one run record measured (the run id points into the results store)."""

    run_id: Text
    requests_per_s: Rate = Field(description="Client produce requests/s in the measured window.")
    busiest_broker_requests_per_s: Rate | None = None
    busiest_broker_measured_on: Literal["client", "brokers"] | None = Field(
        default=None,
        description="Whose count the busiest broker's rate is: the client's own per-broker split, or"
        " the brokers' per-request counters (a client with no per-broker count, e.g. real Filebeat).",
    )
    broker_requests_per_s: Rate | None = Field(default=None, description="Broker-side, the run's topics.")
    records_per_s: Rate
    records_per_request: PerRequest | None = None
    p50_ms: Millis | None = None
    p99_ms: Millis | None = None
    lost: TallyInt
    verified: bool
    network_idle_ratio: Ratio | None = None
    handler_idle_ratio: Ratio | None = None
    broker_cpu_cores: Cores | None = None
    producer_memory_mb: Megabytes | None = None
    wire_bytes_per_s: ByteRate | None = None
    meets_slo: bool
    requests_counted_by: Literal["client", "brokers"] | None = Field(
        default=None,
        description="Whose count requests_per_s is: the client's own, or the brokers' count of the run's"
        " requests standing in for a client that counts none (None: documents written before).",
    )


class Trial(Frozen):
    """One setting the search ran (or reused) to confirm the model."""

    profile: ClientProfile
    predicted: Prediction
    measured: Measured | None = None
    reason: Text = Field(default="", description="Why this setting was tried.")


class Floor(Frozen):
    """The physical floor of produce requests at the allowed linger (issue acceptance P1)."""

    allowed_linger_ms: Millis
    producer_broker_rps: Figure = Field(description="producers x brokers / allowed linger.")
    producer_rps: Figure = Field(
        description="producers / allowed linger (a keyless sticky producer needs only one broker at a time)."
    )


class Reduction(Frozen):
    """One comparison, the same figure wherever it is shown: the baseline as it ran (its run's name
    and what it is), its produce requests/s, the recommendation's, and the ratio, all from one count
    (tuner/model/comparison.py)."""

    baseline: Text = Field(description="The baseline's run name as it ran (its profile's name when not run).")
    baseline_is: Text = Field(description='What the baseline is, e.g. "real Filebeat 7.17 as shipped".')
    baseline_run_id: Text | None = Field(default=None, description="The baseline's run (None: predicted).")
    basis: Literal["measured", "predicted"]
    counted_by: Literal["client", "brokers", "model"] = Field(
        description="Whose count both rates are: the clients' own, the brokers', or the model's prediction."
    )
    before_requests_per_s: Figure
    after_requests_per_s: Figure
    ratio: Figure = Field(description="before / after.")

    def sentence(self) -> str:
        """The comparison in one sentence, as every surface prints it."""
        counted = {"client": "the clients' counts", "brokers": "the brokers' counts", "model": "the model"}
        return (
            f"{self.ratio:.1f}x fewer produce requests than {self.baseline} ({self.baseline_is}):"
            f" {self.before_requests_per_s:,.1f} -> {self.after_requests_per_s:,.1f} req/s,"
            f" {self.basis} ({counted[self.counted_by]})"
        )


class ClientRecommendation(Frozen):
    client: ClientKind
    status: Status
    profile: ClientProfile
    properties: Annotated[dict[Text, Text], Entries] = Field(
        description="The client's own settings (librdkafka/Java"
        " properties, Filebeat option paths); no secrets."
    )
    predicted: Prediction
    measured: Measured | None = None
    baseline_predicted: Prediction | None = None
    baseline_measured: Measured | None = None
    reduction_predicted: Figure | None = Field(default=None, description="Baseline / recommended requests/s.")
    reduction_measured: Figure | None = None
    reduction: Reduction | None = Field(
        default=None,
        description="The comparison every surface shows: measured when both runs were, else predicted.",
    )
    at_edge: bool = Field(
        default=False,
        description="Confirmed, but its measured p99 lies within the SLO margin (slo_margin): a busier day"
        " can break it.",
    )
    safer: Trial | None = Field(
        default=None,
        description="With at_edge: the next setting whose p99 keeps the margin (measured if it ran).",
    )
    # The relief the busiest broker gets (baseline / recommended produce requests/s there): measured
    # where both runs counted per broker, else predicted. A total's cut can overstate it.
    busiest_before: Figure | None = Field(default=None, description="Baseline req/s, busiest broker.")
    busiest_after: Figure | None = Field(default=None, description="Recommended req/s, busiest broker.")
    busiest_relief_on: Literal["measured", "predicted"] | None = None
    evidence: Annotated[list[Text], Entries] = Field(
        default_factory=list, description="Run ids that prove it."
    )
    trials: Annotated[list[Trial], Entries] = Field(default_factory=list)
    floor: Floor | None = None
    band_doubt: Text | None = Field(
        default=None,
        description="Why the held-out error bands could change the ranking (then confirmed live), else None.",
    )
    notes: Annotated[list[Text], Entries] = Field(default_factory=list)
    baseline: ClientProfile | None = Field(
        default=None,
        description="This kind's baseline (the document's baseline may be another kind's in a results"
        " directory of several): its durability kept, its row compared. None: none of this kind.",
    )

    @property
    def busiest_relief(self) -> float | None:
        """Baseline / recommended produce requests/s on the busiest broker."""
        if self.busiest_before is None or not self.busiest_after:
            return None
        return self.busiest_before / self.busiest_after


class ModelTruth(Frozen):
    """Predicted vs measured produce requests/s over run records of one client kind."""

    client: ClientKind
    runs: Count
    median_abs_error: Figure = Field(description="Median of |predicted - measured| / measured.")
    max_abs_error: Figure
    off_schedule: Count = Field(
        default=0, description="Ok runs left out: their client fell behind its schedule (they test nothing)."
    )


class Recommendation(Frozen):
    schema_version: Count = RECOMMENDATION_SCHEMA_VERSION
    kind: Literal["recommendation"] = RECOMMENDATION_KIND
    created_at: Epoch
    kbt_version: Text
    results_dir: Text = Field(description="Where the run records live (as given on the command line).")
    sweeps: Annotated[list[Text], Entries] = Field(
        default_factory=list, description="Sweeps whose records were read."
    )
    live_spec: Text | None = Field(default=None, description="The --live spec when the search ran runs.")
    workload: WorkloadSpec
    brokers: Brokers
    slo: SLOBounds
    objective: Text = "busiest broker produce requests/s"
    baseline: ClientProfile = Field(description="The current/default profile compared against.")
    slo_margin: Ratio | None = Field(
        default=None,
        description="Share of the p99 SLO the search keeps free (aims at p99 <= (1 - margin) x SLO);"
        " None: documents written before.",
    )
    clients: Annotated[list[ClientRecommendation], Entries]
    model_truth: Annotated[list[ModelTruth], Entries] = Field(default_factory=list)
    error_bands_from: Count | None = Field(
        default=None, description="Held-out runs behind the predictions' error bands (None: no bands)."
    )
    notes: Annotated[list[Text], Entries] = Field(default_factory=list)

    def baseline_of(self, c: ClientRecommendation) -> ClientProfile | None:
        """The baseline of `c`'s kind: its own, else the document's when of the same kind (a document
        written before a client held its own), else None: no baseline of its kind to compare with."""
        if c.baseline is not None:
            return c.baseline
        return self.baseline if same_kind(self.baseline, c.profile) else None


def recommendation_text(record: Recommendation) -> str:
    """The record as written: JSON, through the redaction layer (a secret given by mistake in an
    override is never copied verbatim)."""
    return json_text(redact(record.model_dump(mode="json")))


def load_recommendation(path: Path) -> Recommendation:
    """Read a recommendation; one-line BadInput when missing, of another version or invalid."""
    versions = (1, RECOMMENDATION_SCHEMA_VERSION)
    data = read_document(path, "recommendation", RECOMMENDATION_KIND, "a recommendation record", versions)
    upgraded = {**upgrade_profiles(data), "schema_version": RECOMMENDATION_SCHEMA_VERSION}
    return validated(Recommendation, upgraded, path, "recommendation")
