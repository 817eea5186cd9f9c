"""Classify a live cluster snapshot: why are the brokers' threads busy, and how bad is it.

Per broker, from what Prometheus measured over the window (tuner.measure.cluster_snapshot), the
thresholds (tuner.model.diagnosis_config, where the rule is written down) and, when given, the
fitted broker cost model (tuner.model.cost). Every finding carries its evidence as numbers and as
one sentence an operator can act on:

    network threads saturated by small produce requests: average produce request is 3.0 KB
    (1.9 records); batching to 16 KB requests can cut produce requests ~5x
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from tuner.core.errors import ExitStatus
from tuner.core.frozen import Frozen
from tuner.core.units import Count, Entries, PerRequest, Rate, Ratio, Size, Text
from tuner.model.clients import ClientEstimate, attribute_clients
from tuner.model.cost import BrokerCostModel, finite
from tuner.model.diagnosis_config import DiagnoseThresholds
from tuner.model.diagnosis_rules import RULES, BrokerFacts, broker_facts
from tuner.model.finding import CAUSE_LABEL, EXIT, RANK, Finding, Status, fmt, worst
from tuner.spec.thresholds import THRESHOLDS, too_few_scrapes
from tuner.store.snapshot import BrokerSnapshot, ClusterSnapshot


class BrokerDiagnosis(Frozen):
    broker: Text
    status: Status
    cause: Text  # "healthy" or the label of the leading finding
    findings: Annotated[list[Finding], Entries] = Field(default_factory=list)
    small_request_bytes: Size  # the size limit used for this broker
    requests_cut: PerRequest | None = None  # "batching can cut requests ~Nx": target bytes / 1 at most
    predicted_idle_after: tuple[Ratio, Ratio] | None = None  # cost model, after that cut


class TopicNote(Frozen):
    topic: Text
    partition_appends_per_s: Rate  # once per partition batch, not per request
    bytes_per_partition_append: Size | None
    small: bool


class ModelSummary(Frozen):
    network_r2: Ratio
    handler_r2: Ratio
    n: Count
    break_even_request_bytes: Size | None


class Diagnosis(Frozen):
    status: Status
    headline: Text
    brokers: Annotated[list[BrokerDiagnosis], Entries]
    topics: Annotated[list[TopicNote], Entries] = Field(default_factory=list)
    small_request_source: Literal["thresholds", "cost model", "default"]
    thresholds: DiagnoseThresholds
    cost_model: ModelSummary | None = None
    # the clients the per-client quota sensors saw, busiest first (tuner.model.clients)
    clients: Annotated[list[ClientEstimate], Entries] = Field(default_factory=list)
    snapshot: ClusterSnapshot

    @property
    def exit_status(self) -> ExitStatus:
        return EXIT[self.status]


def small_request_limit(
    thresholds: DiagnoseThresholds, model: BrokerCostModel | None
) -> tuple[float, Literal["thresholds", "cost model", "default"]]:
    """The average produce request size below which requests count as small, and where it came from."""
    if thresholds.small_request_bytes is not None:
        return thresholds.small_request_bytes, "thresholds"
    even = model.network.break_even_request_bytes if model is not None else None
    if even is not None:  # infinite when bytes cost nothing in the fit: every request is "small"
        low, cap = thresholds.small_request_bytes_floor, thresholds.small_request_bytes_cap
        return min(max(even, low), cap), "cost model"
    return thresholds.small_request_bytes_default, "default"


def diagnose_broker(facts: BrokerFacts) -> BrokerDiagnosis:
    """The broker's findings: each rule of tuner.model.diagnosis_rules applied in turn, the most
    severe first (a full request queue leading its severity)."""
    findings: list[Finding] = []
    for rule in RULES:
        finding = rule.apply(facts, findings)
        if finding is not None:
            findings.append(finding)
    status = worst(facts.net_status, facts.hnd_status, *(f.severity for f in findings))
    findings.sort(key=lambda f: (-RANK[f.severity], f.kind != "request_queue_full"))
    return BrokerDiagnosis(
        broker=facts.s.broker,
        status=status,
        cause=CAUSE_LABEL[findings[0].kind] if findings else "healthy",
        findings=findings,
        small_request_bytes=facts.limit,
        requests_cut=facts.cut,
        predicted_idle_after=facts.after,
    )


def unmeasured_broker(s: BrokerSnapshot, limit: float) -> BrokerDiagnosis:
    """A broker the window holds too little of (tuner.measure.cluster_snapshot marks it): its scrapes
    failed, or it was scraped without a network idle series. A warning that names which, never rates
    computed from the few samples left: no finding about its load can be made."""
    slowest = "" if s.scrape_duration_max_s is None else f", slowest scrape {s.scrape_duration_max_s:.1f} s"
    coverage = 0.0 if s.scrape_coverage is None else s.scrape_coverage
    answered = f"its exporter answered {fmt(s.scrape_samples, 0)} of {fmt(s.scrape_attempts, 0)} scrapes"
    summary = (
        f"unmeasured: {answered} in the window (up {coverage:.2f}{slowest}); no rate is reported from"
        " so few samples"
    )
    advice = "compare the exporter's scrape_duration_seconds with the scrape timeout; check `up`"
    if not too_few_scrapes(s.scrape_samples or 0.0, coverage):
        summary = (
            f"unmeasured: {answered}, but none held its network idle (NetworkProcessorAvgIdlePercent)"
            " under the names the other brokers' series have"
        )
        advice = "export this broker's metrics as the others' (the same exporter rules or reporter allowlist)"
    elif (s.scrape_attempts or 0) < THRESHOLDS.scrape_samples_min:  # the exporter is fine, the window short
        advice = (
            f"Prometheus attempted {fmt(s.scrape_attempts, 0)} scrape(s) of it in the window: widen"
            f" --window to at least {THRESHOLDS.scrape_samples_min} scrape intervals (or it is new in it)"
        )
    finding = Finding(
        kind="no_data",
        severity="warning",
        summary=summary,
        advice=advice,
        evidence={"scrape_coverage": coverage, "scrape_samples": s.scrape_samples or 0.0},
    )
    return BrokerDiagnosis(
        broker=s.broker, status="warning", cause="unmeasured", findings=[finding], small_request_bytes=limit
    )


def diagnose(
    snapshot: ClusterSnapshot, thresholds: DiagnoseThresholds, model: BrokerCostModel | None = None
) -> Diagnosis:
    limit, source = small_request_limit(thresholds, model)
    opened = snapshot.end - snapshot.window_s
    brokers = [
        diagnose_broker(broker_facts(b, thresholds, model, limit, opened))
        if b.measured
        else unmeasured_broker(b, limit)
        for b in snapshot.brokers
    ]
    status = worst("healthy", *(b.status for b in brokers))
    topics = [
        TopicNote(
            topic=t.topic,
            partition_appends_per_s=t.partition_appends_per_s,
            bytes_per_partition_append=t.bytes_per_partition_append,
            small=t.bytes_per_partition_append is not None and t.bytes_per_partition_append < limit,
        )
        for t in snapshot.topics
    ]
    summary = None
    if model is not None:
        summary = ModelSummary(
            network_r2=model.network.r2,
            handler_r2=model.handler.r2,
            n=model.n,
            # bytes that cost nothing in the fit give no finite break-even (JSON holds no infinity)
            break_even_request_bytes=finite(model.network.break_even_request_bytes),
        )
    return Diagnosis(
        status=status,
        headline=headline(status, brokers),
        brokers=brokers,
        topics=topics,
        small_request_source=source,
        thresholds=thresholds,
        cost_model=summary,
        clients=attribute_clients(snapshot, max(thresholds.target_request_bytes, limit)),
        snapshot=snapshot,
    )


def headline(status: Status, brokers: list[BrokerDiagnosis]) -> str:
    if not brokers:
        return "no brokers"
    if status == "healthy":
        noted = [b for b in brokers if b.findings]
        if not noted:
            return f"healthy: {len(brokers)} broker(s), no finding"
        return f"healthy: {len(brokers)} broker(s); broker {noted[0].broker}: {noted[0].findings[0].summary}"
    worst = max(brokers, key=lambda b: (RANK[b.status], b.requests_cut or 0))
    affected = [b.broker for b in brokers if b.status != "healthy"]
    what = worst.findings[0].summary if worst.findings else worst.cause
    return f"{status}: broker(s) {', '.join(affected)}: {what}"
