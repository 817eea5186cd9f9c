"""Knees of compression curves and the probe's one-sentence advice.

The plateau is the highest median ratio measured; the knee is the smallest batch size whose median
ratio reaches 90% of it; below the "half" batch size more than half of the plateau is lost. When the
largest batch still gained 5% or more over every smaller one, the curve had not flattened within the sizes
measured and the knee is a lower bound (said so in the record and the advice).
"""

from __future__ import annotations

from collections.abc import Sequence

from tuner.spec.clients import KINDS
from tuner.spec.probe import CLIENT_CODECS, CODECS
from tuner.store.probe_record import Knee, ProbeCurve, ProbePoint, ProbeRecord, ProbeSample

KNEE_FRACTION = 0.9
HALF_FRACTION = 0.5
FLAT_GAIN = 0.05


def find_knee(points: Sequence[ProbePoint]) -> Knee | None:
    """The knee of one curve (None without points)."""
    if not points:
        return None
    ordered = sorted(points, key=lambda p: p.batch_messages)
    best = max(ordered, key=lambda p: p.ratio.p50)
    plateau = best.ratio.p50

    def first_reaching(share: float) -> int:
        return next(p.batch_messages for p in ordered if p.ratio.p50 >= share * plateau)

    # How much the largest batch still gained over every smaller one.
    before = max((p.ratio.p50 for p in ordered[:-1]), default=None)
    gain = ordered[-1].ratio.p50 / before - 1 if before else None
    return Knee(
        plateau_ratio=plateau,
        plateau_batch_messages=best.batch_messages,
        knee_batch_messages=first_reaching(KNEE_FRACTION),
        knee_fraction=KNEE_FRACTION,
        half_batch_messages=first_reaching(HALF_FRACTION),
        last_step_gain=gain,
        plateau_reached=gain is not None and gain < FLAT_GAIN,
    )


def _best(curves: Sequence[ProbeCurve]) -> ProbeCurve | None:
    usable = [c for c in curves if c.knee is not None]
    return max(usable, key=lambda c: c.knee.plateau_ratio if c.knee else 0.0, default=None)


def _reach(curve: ProbeCurve) -> str:
    knee = curve.knee
    assert knee is not None
    text = (
        f"{curve.label} reaches 90% of its {knee.plateau_ratio:.1f}x ratio"
        f" at {knee.knee_batch_messages} msgs/batch"
    )
    if not knee.plateau_reached:
        text += " or more (still rising at the largest batch measured)"
    if knee.half_batch_messages > 1:
        text += f" and below {knee.half_batch_messages} msgs/batch you lose more than half"
    return text


def _codec_list(codecs: Sequence[str]) -> str:
    return "all four" if len(CODECS) == 4 and set(codecs) == set(CODECS) else ", ".join(codecs)


def clients_summary() -> str:
    """`Filebeat: gzip, lz4, snappy; librdkafka/Java: all four`, from CLIENT_CODECS."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for client, codecs in CLIENT_CODECS.items():
        groups.setdefault(tuple(codecs), []).append(KINDS[client].title)
    return "; ".join(f"{'/'.join(names)}: {_codec_list(codecs)}" for codecs, names in groups.items())


def _able(curve: ProbeCurve) -> list[str]:
    """The client kinds that can send the curve's codec, by today's registry (a stored record's own
    list is as old as the record: a kind added since is not in it)."""
    return [c for c, codecs in CLIENT_CODECS.items() if curve.codec in codecs]


def _clients_phrase(curve: ProbeCurve) -> str:
    able = _able(curve)
    missing = [c for c in CLIENT_CODECS if c not in able]
    if not missing:
        return f"every client can send {curve.codec} ({clients_summary()})"
    names = "/".join(KINDS[c].title for c in able)
    cannot = "/".join(KINDS[c].title for c in missing)
    return f"{names} can send {curve.codec}, {cannot} cannot ({clients_summary()})"


def advice(sample: ProbeSample) -> str:
    """One sentence: the best codec's knee and which clients can use it, plus the best codec each
    other client offers when the best one is not among its codecs."""
    best = _best(sample.curves)
    if best is None:
        return f"{sample.name}: nothing measured."
    sentence = f"{sample.name}: {_reach(best)}; {_clients_phrase(best)}"
    for client in (c for c in CLIENT_CODECS if c not in _able(best)):
        own = _best([c for c in sample.curves if client in _able(c)])
        if own is not None:
            sentence += f"; for {KINDS[client].title}, {_reach(own)}"
    return sentence + "."


def analyse(record: ProbeRecord) -> ProbeRecord:
    """The record with every curve's knee and every sample's advice filled in."""
    samples = []
    for sample in record.samples:
        curves = [c.model_copy(update={"knee": find_knee(c.points)}) for c in sample.curves]
        with_knees = sample.model_copy(update={"curves": curves})
        samples.append(with_knees.model_copy(update={"advice": advice(with_knees)}))
    return record.model_copy(update={"samples": samples})
