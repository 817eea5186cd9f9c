"""The one comparison behind every "Nx fewer produce requests than B": which baseline (as it ran,
and what it is), which count both rates come from, and the ratio. The CLI, the rendered files'
headers, the report and the README all print `Reduction.sentence()` of what this returns, so a
figure never differs between them.

Both rates come from one count: the clients' own when both runs counted their requests, else the
brokers' count of each run's requests (real Filebeat and the collector count none); a ratio of a
client count over a broker count compares different things and is never formed.
"""

from __future__ import annotations

from typing import Literal

from tuner.spec.clients import ClientProfile, kind_of, profile_of, rules_of
from tuner.spec.clients.filebeat import REAL_ENGINE_NAME, config_of
from tuner.spec.engine_id import EngineId
from tuner.store.recommendation import ClientRecommendation, Measured, Prediction, Recommendation, Reduction

Counted = Literal["client", "brokers"]


def comparable_rates(
    before_client: float | None,
    before_brokers: float | None,
    after_client: float | None,
    after_brokers: float | None,
) -> tuple[float, float, Counted] | None:
    """Two produce request rates from one count: the clients' when both counted, else the
    brokers'; None when no count covers both runs."""
    if before_client is not None and after_client is not None:
        return before_client, after_client, "client"
    if before_brokers is not None and after_brokers is not None:
        return before_brokers, after_brokers, "brokers"
    return None


def _client_count(m: Measured) -> float | None:
    # Documents written before `requests_counted_by` existed: the client's count, as they said.
    return m.requests_per_s if m.requests_counted_by in ("client", None) else None


def ran_as(profile: ClientProfile, engine: str | None) -> str:
    """What a baseline is, as it ran: the client (real, or kbt's emulation of it) and its settings
    (as shipped when they are the client's defaults), e.g. "real Filebeat 7.17 as shipped"."""
    kind = kind_of(profile)
    client = kind.title
    if engine == REAL_ENGINE_NAME:
        client = f"real {kind.title} {config_of(profile).line.name}"
    elif engine == EngineId.SARAMA:
        client = f"kbt's Sarama emulation of {kind.title}"
    try:
        shipped = rules_of(profile) == rules_of(profile_of({"name": "defaults", "client": profile.client}))
    except ValueError:
        shipped = False
    if shipped:
        return f"{client} as shipped"
    if profile.description:
        # The profile's own words, to their first parenthesis: what it stands for, not its list.
        return f"{client} set to {profile.description.split(' (')[0]}"
    return kind.describe(profile)


def reduction(
    baseline: ClientProfile,
    baseline_name: str,
    baseline_engine: str | None,
    base_measured: Measured | None,
    measured: Measured | None,
    base_predicted: Prediction | None,
    predicted: Prediction,
) -> Reduction | None:
    """The comparison: measured when both the baseline and the recommendation ran (from one count),
    else predicted by the model for both; None when neither is possible. A side with no requests
    (a run that sent nothing) is no comparison: "0.0x fewer" would say the setting made it worse."""
    what = ran_as(baseline, baseline_engine)
    rates, run_id = None, None
    if base_measured is not None and measured is not None:
        rates = comparable_rates(
            _client_count(base_measured),
            base_measured.broker_requests_per_s,
            _client_count(measured),
            measured.broker_requests_per_s,
        )
        run_id = base_measured.run_id
    counted: Counted | Literal["model"]
    if rates is not None and rates[0] > 0 and rates[1] > 0:
        before, after, counted = rates
    elif base_predicted is not None and base_predicted.requests_per_s > 0 and predicted.requests_per_s > 0:
        before, after, counted = base_predicted.requests_per_s, predicted.requests_per_s, "model"
        run_id = None
    else:
        return None
    return Reduction(
        baseline=baseline_name,
        baseline_is=what,
        baseline_run_id=run_id,
        basis="predicted" if counted == "model" else "measured",
        counted_by=counted,
        before_requests_per_s=before,
        after_requests_per_s=after,
        ratio=before / after,
    )


def reduction_of(rec: Recommendation, c: ClientRecommendation) -> Reduction | None:
    """The client's comparison: as the document holds it, or, for a document written before it held
    one, computed the same way from its stored figures against its baseline (same kind only)."""
    if c.reduction is not None:
        return c.reduction
    if (base := rec.baseline_of(c)) is None:
        return None
    return reduction(
        base,
        base.name,
        None,
        c.baseline_measured,
        c.measured,
        c.baseline_predicted,
        c.predicted,
    )
