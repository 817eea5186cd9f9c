"""Assemble a Recommendation: calibrate on run records, search per client kind, confirm with lab
runs when asked (`--live`) or with the records at hand, compare with the baseline profile."""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from tuner import __version__
from tuner.core.errors import KbtError, NoSolution
from tuner.core.redact import redact
from tuner.model.batchfill import floor_requests
from tuner.model.codecs import CodecTable, default_table
from tuner.model.comparison import reduction
from tuner.model.confirm import (
    MODEL_MISS,
    Confirmation,
    Trials,
    at_edge,
    busiest_requests,
    confirm,
    fewest_requests,
    runner_up,
)
from tuner.model.evidence import calibrate, measured_of, model_truth
from tuner.model.predict import ClientCalibration, IdleModel
from tuner.model.search import (
    LINGER_LIMIT_MS,
    MAX_LINGER_MS,
    Candidate,
    Searcher,
    SearchResult,
    describe_profile,
    families,
)
from tuner.model.traffic import Traffic, traffic_of
from tuner.model.uncertainty import ranking_doubt
from tuner.spec.clients import ClientProfile, kind_named, kind_of, profile_of, rules_of, same_kind
from tuner.spec.error_bands import ErrorBands
from tuner.spec.thresholds import THRESHOLDS
from tuner.spec.workload import WorkloadSpec
from tuner.store.recommendation import (
    ClientKind,
    ClientRecommendation,
    Floor,
    Measured,
    Prediction,
    Recommendation,
    SLOBounds,
    Status,
    Trial,
)
from tuner.store.record import RunRecord

CLOSE_TO_BEST = 0.05  # a measured setting this close to the model's best is recommended as is


@dataclass
class Request:
    workload: WorkloadSpec
    brokers: int
    slo: SLOBounds
    clients: Sequence[str]
    records: Sequence[RunRecord] = ()
    baselines: dict[str, ClientProfile] = field(default_factory=dict)
    baseline: ClientProfile | None = None  # the profile the reduction is measured against
    codecs: CodecTable | None = None
    trials: Trials | None = None  # live confirmation
    max_trials: int = 6
    results_dir: str = "results"
    sweeps: Sequence[str] = ()
    live_spec: str | None = None
    bands: ErrorBands | None = None  # the held-out error table (tuner/spec/error_bands.json)
    slo_margin: float = THRESHOLDS.slo_margin  # the share of the p99 SLO the search keeps free


def cost_model(records: Sequence[RunRecord]) -> IdleModel | None:
    """The broker cost model (tuner.model.cost) fitted from the records; None when they are too
    few to fit (idle ratios are then shown as measured only)."""
    from tuner.model.cost import fit_cost_model

    try:
        return fit_cost_model(list(records))
    except KbtError:
        return None


def _same_rules(a: ClientProfile, b: ClientProfile) -> bool:
    try:
        return (
            same_kind(a, b)
            and rules_of(a) == rules_of(b)
            and kind_of(a).durability(a) == kind_of(b).durability(b)
        )
    except ValueError:
        return False


def _newest(records: Sequence[RunRecord], profile: ClientProfile) -> RunRecord | None:
    found = [r for r in records if _same_rules(r.plan.profile, profile)]
    return max(found, key=lambda r: r.created_at, default=None)


def recommend(req: Request) -> Recommendation:
    records = list(req.records)
    calibration = calibrate(records)
    cost = cost_model(records)
    sizes = [r.client.bytes_acked / r.client.records_acked for r in records if r.client.records_acked]
    traffic = traffic_of(req.workload, req.brokers, statistics.median(sizes) if sizes else None)
    codecs = req.codecs or default_table()
    clients: list[ClientRecommendation] = []
    failures: list[str] = []
    live_records: list[RunRecord] = []  # written by confirmation runs in this call
    for kind in req.clients:
        searcher = Searcher(
            traffic, req.slo, calibration.of(kind), codecs, cost, margin=1 - req.slo_margin, bands=req.bands
        )
        base = req.baselines.get(kind)
        try:
            result = searcher.search(kind, base)
        except NoSolution as exc:
            failures.append(exc.message)
            continue
        live = req.trials is not None and kind_named(kind).engine in req.trials.engines
        rec = _recommend_kind(req, traffic, searcher, result, records, live_records, live)
        if rec is None:
            bound = f"p99 <= {req.slo.p99_ms:g} ms" if req.slo.p99_ms is not None else "the SLO"
            closest = describe_profile(result.best.profile)
            failures.append(f"no {kind} setting met {bound} on the lab; closest is {closest}")
            continue
        clients.append(rec)
    if not clients:
        raise NoSolution(failures[0] if failures else "no client kind to recommend for")
    notes = list(failures)
    if req.slo.p99_ms is None:  # a silent 5 s ceiling would surprise a team that forgot the flag
        notes.append(
            f"no p99 SLO given: lingers were searched up to {MAX_LINGER_MS:g} ms;"
            " bound them with --slo-p99 or the spec's slo.p99_ms"
        )
    return Recommendation(
        created_at=time.time(),
        kbt_version=__version__,
        results_dir=req.results_dir,
        sweeps=sorted(set(req.sweeps)),
        live_spec=req.live_spec,
        workload=req.workload,
        brokers=req.brokers,
        slo=req.slo,
        baseline=req.baseline or next(iter(req.baselines.values()), profile_of({"name": "client-defaults"})),
        slo_margin=req.slo_margin,
        clients=clients,
        model_truth=model_truth([*records, *live_records], calibration),
        error_bands_from=None if req.bands is None else len({r for b in req.bands.bands for r in b.runs}),
        notes=notes,
    )


def _recommend_kind(
    req: Request,
    traffic: Traffic,
    searcher: Searcher,
    result: SearchResult,
    records: list[RunRecord],
    live_records: list[RunRecord],
    live: bool,
) -> ClientRecommendation | None:
    slo = req.slo
    kind: ClientKind = result.best.profile.client
    base = req.baselines.get(kind) or req.baseline
    own = [r for r in records if kind_of(r.plan.profile).name == kind]
    best = result.best
    trials: list[Trial] = []
    notes: list[str] = []
    measured: Measured | None = None
    profile, predicted = best.profile, best.prediction
    status: Status = "predicted"
    evidence: list[str] = []
    own_base = base is not None and kind_of(base).name == kind
    doubt = ranking_doubt(result.ranked, slo)
    if live:
        assert req.trials is not None
        fams = families(kind, traffic, slo, req.baselines.get(kind))
        family = next(f for f in fams if f.name == best.family)
        codec = rules_of(best.profile).compression
        budget = _search_budget(req, base, own_base)
        done = confirm(searcher, family, codec, best, req.trials, budget)
        runner = runner_up(result.ranked, done.trials, {family.name})
        if runner is None and doubt is not None and doubt[0] is not None and doubt[0].family != family.name:
            runner = doubt[0], doubt[1]  # the bands could put the rival first: measure it too
        if runner is not None and len(done.trials) < budget:
            other, why = runner
            again = next(f for f in fams if f.name == other.family)
            other_codec = rules_of(other.profile).compression
            more = confirm(searcher, again, other_codec, other, req.trials, budget - len(done.trials), why)
            done = Confirmation(done.trials + more.trials, done.records + more.records)
        live_records.extend(done.records)
        trials = done.trials
        chosen = done.best
        if chosen is None:
            return None
        profile, predicted, measured, status = chosen.profile, chosen.predicted, chosen.measured, "confirmed"
        evidence = [t.measured.run_id for t in trials if t.measured is not None]
        safer_trials = [t for t in trials if t.measured is not None and t.profile != profile]
    else:
        safer_trials = []
        exact = _newest(own, best.profile)
        if exact is not None:
            measured = measured_of(exact, slo)
            status = "confirmed" if measured.meets_slo else "rejected"
            evidence = [exact.run_id]
        meeting = [(r, measured_of(r, slo)) for r in own if r.status == "ok"]
        meeting = [(r, m) for r, m in meeting if m.meets_slo]
        if status != "confirmed" and meeting:
            chosen_rm = fewest_requests(meeting, lambda rm: rm[1])
            assert chosen_rm is not None
            record, m = chosen_rm
            rate = busiest_requests(m)
            close = rate <= best.prediction.busiest_broker_requests_per_s * (1 + CLOSE_TO_BEST)
            if close or status == "rejected":
                profile, measured, status, evidence = record.plan.profile, m, "confirmed", [record.run_id]
                predicted = searcher.predict(profile)
            else:
                notes.append(
                    f"the best measured setting meeting the SLO ({record.run_id}) makes"
                    f" {rate:.1f} requests/s on the busiest broker; the model's choice predicts"
                    f" {best.prediction.busiest_broker_requests_per_s:.1f}: confirm it with --live"
                )
        elif status == "predicted":
            notes.append("no run of this setting yet: confirm it with --live")
        if doubt is not None:
            notes.append(f"{doubt[1]}: the ranking could change, confirm it with --live")
    base_pred = base_meas = None
    base_record: RunRecord | None = None
    if base is not None and own_base:
        base_pred = searcher.predict(base)
        base_record = _newest([*records, *live_records], base)
        if base_record is None and live and req.trials is not None:
            if len(trials) < req.max_trials:
                base_record = req.trials.run(base, "baseline")
                live_records.append(base_record)
            else:
                notes.append(
                    f"baseline {base.name} not run: the search used all {req.max_trials} lab runs"
                    " (--max-trials)"
                )
        if base_record is not None:
            base_meas = measured_of(base_record, slo)
    floor = None
    if slo.p99_ms is not None:
        allowed_ms = min(slo.p99_ms, LINGER_LIMIT_MS)  # no setting lingers past the search's limit
        both, one = floor_requests(traffic.producers, traffic.brokers, allowed_ms / 1000)
        floor = Floor(allowed_linger_ms=allowed_ms, producer_broker_rps=both, producer_rps=one)
    relief = busiest_relief(base_pred, predicted, base_meas, measured)
    cut = None
    if base is not None and own_base:
        name = base_record.name if base_record is not None else base.name
        engine = base_record.client.engine if base_record is not None else None
        cut = reduction(base, name, engine, base_meas, measured, base_pred, predicted)
    if searcher.calib.load_requests_per_s:
        notes.append(_load_note(searcher.calib))
    edge = measured is not None and status == "confirmed" and at_edge(measured, slo, searcher.margin)
    safer = None
    if edge:
        assert measured is not None
        safer = _safer(searcher, result, profile, measured, base, own, safer_trials)
        notes.append(_edge_note(slo, searcher.margin, measured, safer))
    return ClientRecommendation(
        client=kind,
        status=status,
        profile=profile,
        # the client's own settings, secrets redacted
        properties={k: str(v) for k, v in redact(kind_of(profile).client_settings(profile)).items()},
        predicted=predicted,
        measured=measured,
        baseline_predicted=base_pred,
        baseline_measured=base_meas,
        reduction_predicted=(
            base_pred.requests_per_s / predicted.requests_per_s
            if base_pred is not None and min(base_pred.requests_per_s, predicted.requests_per_s) > 0
            else None
        ),
        reduction_measured=cut.ratio if cut is not None and cut.basis == "measured" else None,
        reduction=cut,
        at_edge=edge,
        safer=safer,
        busiest_before=relief[0] if relief else None,
        busiest_after=relief[1] if relief else None,
        busiest_relief_on=relief[2] if relief else None,
        evidence=evidence,
        trials=trials,
        floor=floor,
        band_doubt=doubt[1] if doubt is not None else None,
        notes=notes,
        baseline=base if own_base else None,
    )


def _load_note(calib: ClientCalibration) -> str:
    """Why the predicted p99 can drop far below the baseline's: the queueing that follows requests."""
    share = f", {calib.load_share:.0%} of them this client's" if calib.load_share < 1 else ""
    return (
        f"service times measured on a busy broker ({calib.load_busy:.0%} busy at"
        f" {calib.load_requests_per_s:.0f} produce requests/s{share}): each setting's broker queueing"
        f" follows its own request rate (p99 beyond the client's wait {calib.service_p99_ms:.0f} ms"
        f" unloaded, {calib.loaded_p99_ms:.0f} ms at that load)"
    )


def _safer(
    searcher: Searcher,
    result: SearchResult,
    chosen: ClientProfile,
    measured: Measured,
    base: ClientProfile | None,
    records: Sequence[RunRecord],
    trials: Sequence[Trial],
) -> Trial | None:
    """The next setting that keeps the margin: the model's longest for the margin (corrected by the
    chosen setting's p99 error), or a measured one keeping it (trials, the kind's records; never the
    baseline) when that sends no more requests than the model's (within MODEL_MISS) and so is the
    better-known choice."""
    slo, aim = searcher.slo, searcher.margin
    pool: dict[str, tuple[ClientProfile, Measured, Prediction | None]] = {}
    for t in trials:
        if t.measured is not None and t.profile not in (chosen, base):
            pool.setdefault(t.profile.model_dump_json(), (t.profile, t.measured, t.predicted))
    for r in records:
        if r.status == "ok" and r.plan.profile not in (chosen, base):
            pool.setdefault(r.plan.profile.model_dump_json(), (r.plan.profile, measured_of(r, slo), None))
    keeping = [p for p in pool.values() if p[1].meets_slo and not at_edge(p[1], slo, aim)]
    found = fewest_requests(keeping, lambda p: p[1])
    model = _margin_setting(searcher, result, chosen, measured)
    if found is not None and (
        model is None
        or busiest_requests(found[1]) <= model.predicted.busiest_broker_requests_per_s * (1 + MODEL_MISS)
    ):
        profile, m, predicted = found
        why = "the measured setting with the fewest requests keeping the SLO margin"
        return Trial(
            profile=profile, predicted=predicted or searcher.predict(profile), measured=m, reason=why
        )
    return model


def _margin_setting(
    searcher: Searcher, result: SearchResult, chosen: ClientProfile, measured: Measured
) -> Trial | None:
    """The model's longest setting of the searched families under the margin, the budget lowered by
    how far the chosen setting's measured p99 overshot its prediction."""
    slo, aim = searcher.slo, searcher.margin
    if slo.p99_ms is None or measured.p99_ms is None:
        return None
    error = measured.p99_ms - searcher.predict(chosen).p99_ms
    budget = slo.p99_ms * aim - max(error, 0.0)
    if budget <= 0:
        return None
    searched = {c.family for c in result.ranked}
    codec = rules_of(chosen).compression
    candidates: list[Candidate] = []
    for family in families(chosen.client, searcher.traffic, slo, None):
        if family.name in searched:
            found = searcher.longest(family, codec, p99_budget=budget)
            if found is not None and found.profile != chosen:
                candidates.append(found)
    if not candidates:
        return None
    best = min(candidates, key=lambda c: c.prediction.busiest_broker_requests_per_s)
    why = f"the model's setting for the margin, corrected by the measured p99 error ({error:+.0f} ms)"
    return Trial(profile=best.profile, predicted=best.prediction, reason=why)


def _edge_note(slo: SLOBounds, aim: float, measured: Measured, safer: Trial | None) -> str:
    assert slo.p99_ms is not None and measured.p99_ms is not None
    text = (
        f"at the edge: measured p99 {measured.p99_ms:.0f} ms is within the {1 - aim:.0%} margin below the"
        f" {slo.p99_ms:g} ms SLO (aim {slo.p99_ms * aim:.0f} ms): a busier day can break it"
    )
    if safer is None:
        return text + "; no safer setting found"
    p99 = safer.measured.p99_ms if safer.measured is not None else safer.predicted.p99_ms
    rps = safer.measured.requests_per_s if safer.measured is not None else safer.predicted.requests_per_s
    which = "measured" if safer.measured is not None else "predicted"
    return f"{text}; safer: {describe_profile(safer.profile)} ({which} p99 {p99:.0f} ms, {rps:.1f} req/s)"


def busiest_relief(
    base_pred: Prediction | None,
    predicted: Prediction,
    base_meas: Measured | None,
    measured: Measured | None,
) -> tuple[float, float, Literal["measured", "predicted"]] | None:
    """The busiest broker's produce requests/s before and after: measured when both runs counted
    per broker the same way (the client's own split, or the brokers' counters), else predicted; a
    side with no requests there is no relief to state (its ratio would read 0x)."""
    if (
        base_meas is not None
        and measured is not None
        and base_meas.busiest_broker_requests_per_s
        and measured.busiest_broker_requests_per_s
        and base_meas.busiest_broker_measured_on == measured.busiest_broker_measured_on
    ):
        return base_meas.busiest_broker_requests_per_s, measured.busiest_broker_requests_per_s, "measured"
    if (
        base_pred is not None
        and min(base_pred.busiest_broker_requests_per_s, predicted.busiest_broker_requests_per_s) > 0
    ):
        return base_pred.busiest_broker_requests_per_s, predicted.busiest_broker_requests_per_s, "predicted"
    return None


def _search_budget(req: Request, base: ClientProfile | None, own_base: bool) -> int:
    """Confirmation trials for the search: --max-trials counts every lab run of a client kind, so
    one is kept for the baseline when it has no record yet (unless that would leave none)."""
    if base is None or not own_base or req.max_trials < 2 or _newest(req.records, base) is not None:
        return req.max_trials
    return req.max_trials - 1
