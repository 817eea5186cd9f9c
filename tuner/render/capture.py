"""A capture written out: per client group a workload, a profile and a one-run sweep `kbt sweep`
runs (`<out>/<group>/`), `capture.json` (what was read and how it was shaped), and the lines
`kbt capture` prints."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tuner.core.errors import BadInput
from tuner.core.inputs import read_json, shown_path
from tuner.core.text import or_dash
from tuner.core.writes import json_text
from tuner.core.yaml_block import yaml_document
from tuner.model.capture import RECORD_FILE, CapturedGroup, CapturePlan
from tuner.store.capture import CaptureRecord
from tuner.store.document import validated


def capture_files(out: Path, record: CaptureRecord, plan: CapturePlan) -> dict[Path, str]:
    """Every file of the capture, by path."""
    files: dict[Path, str] = {out / RECORD_FILE: capture_text(record, plan)}
    for group in plan.groups:
        head = _header(group, plan)
        folder = out / group.name
        files[folder / "workload.yaml"] = yaml_document(group.workload, head)
        files[folder / "profile.yaml"] = yaml_document(group.profile, head)
        files[folder / "sweep.yaml"] = yaml_document(_sweep(group), head)
    return files


def capture_text(record: CaptureRecord, plan: CapturePlan) -> str:
    """capture.json: {"record": ..., "plan": ...}, indented, each client row on one line of its own.
    The rows are dumped one at a time: their request times (arrays, 8 bytes a time) are never all
    Python floats at once, nor every time a line of Python's indenting encoder (a capture's 1,000
    rows took 374 MiB to write so, 10,000 rows gigabytes)."""
    rows = ",\n".join(
        "    " + json_text(row.model_dump(mode="json"), indent=None).rstrip() for row in record.clients
    )
    fields = json_text(record.model_dump(mode="json", exclude={"clients"})).rstrip()
    body = fields.removesuffix("}").rstrip() + f',\n  "clients": [\n{rows}\n  ]\n}}'
    plan_text = json_text(plan.model_dump(mode="json")).rstrip()
    return f'{{\n  "record": {_nested(body)},\n  "plan": {_nested(plan_text)}\n}}\n'


def _nested(text: str) -> str:
    """A JSON object's indented text, one level deeper (no string of it holds a raw line break)."""
    return text.replace("\n", "\n  ")


def read_capture(folder: Path) -> tuple[CaptureRecord, CapturePlan]:
    """The record and the plan of a capture written by `capture_files` (BadInput: not one)."""
    path = folder / RECORD_FILE
    document = read_json(path, "capture")
    if not (isinstance(document, dict) and isinstance(document.get("record"), dict) and "plan" in document):
        raise BadInput(f"{shown_path(path)}: not a capture kbt wrote")
    return validated(CaptureRecord, document["record"], path, "capture"), validated(
        CapturePlan, document["plan"], path, "capture plan"
    )


def _sweep(group: CapturedGroup) -> dict[str, Any]:
    return {
        "name": f"captured-{group.name}",
        "description": f"replay of client group {group.name} as captured",
        "workload": "workload.yaml",
        "profiles": ["profile.yaml"],
    }


def _header(group: CapturedGroup, plan: CapturePlan) -> list[str]:
    return [
        f"Written by `kbt capture`: client group {group.name} ({group.software or 'software not named'},"
        f" client ids {', '.join(group.client_ids[:3])}{', ...' if len(group.client_ids) > 3 else ''}).",
        f"Source: {group.producers} producers, {group.records_per_s:.4g} records/s,"
        f" {group.requests_per_s:.4g} produce requests/s, {group.bytes_per_request:.0f} B per request.",
        f"Lab: {group.lab_producers} producers (scale {plan.scale:.4g}: broker load x {plan.scale:.4g}),"
        " each producer as on the source.",
    ]


def summary_lines(out: Path, record: CaptureRecord, plan: CapturePlan) -> list[str]:
    """What the capture found, group by group, and the commands that replay and recommend it."""
    lines = [
        f"captured {record.window_s:.0f} s: {len(plan.groups)} client group(s), {plan.producers} producers;"
        f" lab scale {plan.scale:.4g} ({plan.lab_producers} producers in the lab, each as on the source)"
    ]
    for b in record.brokers_snapshot.brokers if record.brokers_snapshot else []:
        idle, per = or_dash(b.network_idle_ratio, "{:.2f}"), or_dash(b.bytes_per_produce_request)
        lines.append(
            f"  broker {b.broker}: network idle {idle},"
            f" {b.produce_requests_per_s or 0:.4g} produce requests/s of {per} B"
        )
    for g in plan.groups:
        linger = or_dash(g.linger_ms, "{:g} ms")
        keys = f"keyed ({g.key_cardinality} keys)" if g.key_cardinality else "keyless"
        lines.append(
            f"  {g.name}: {g.kind}, {g.producers} producers x {g.records_per_s / g.producers:.4g} records/s"
            f" of ~{g.record_bytes:.0f} B, {keys}, acks {g.acks}, linger {linger};"
            f" {g.requests_per_s:.4g} requests/s, {g.bytes_per_request:.0f} B and"
            f" {g.partitions_per_request:.2f} partitions per request"
        )
    if plan.worst_offender is not None:
        lines.append(
            f"busiest broker {plan.busiest_broker}: its worst offender is group {plan.worst_offender}"
        )
    lines.append(f"written: {out}/<group>/workload.yaml, profile.yaml, sweep.yaml and {out / RECORD_FILE}")
    for g in plan.groups:
        lines.append(
            f"replay: kbt sweep {out / g.name / 'sweep.yaml'} --results {out / 'results'};"
            f" then kbt recommend --results {out / 'results'} --sweep captured-{g.name} --client {g.kind}"
            f" --out {out / g.name / 'recommend'}"
        )
    return lines
