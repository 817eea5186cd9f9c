"""A team's own collector config named where a profile goes: the settings of the kafka exporter and
the filelog receiver of its logs pipeline that kbt runs (`OtelcolConfig`), as the collector reads
them (`${env:VAR}` and `${env:VAR:-default}` from the environment).

Where the exporter sends and how it connects (brokers, topic, auth, TLS, client id) is the lab's or
the target's. An exporter option kbt does not run (a retry policy, a timeout) is named as not
carried. A pipeline that batches in the batch processor is refused: kbt runs the exporter's own
batching (`sending_queue.batch`), and a profile that ran other batching than the file's would not be
the file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from tuner.core.envref import collector_reference
from tuner.spec.filebeat_load import models_in
from tuner.spec.otelcol import Filelog, Kafka

DEPLOYMENT = frozenset(
    {"brokers", "topic", "topic_from_attribute", "auth", "tls", "client_id", "protocol_version",
     "resolve_canonical_bootstrap_servers_only", "metadata", "include_metadata_keys"}
)  # fmt: skip
_TOPIC_KEYS = frozenset({"topic", "topic_from_metadata_key"})


def _section(node: Any, key: str) -> Mapping[str, Any]:
    """`node[key]` when both are mappings, else empty (the collector's own check names a bad shape)."""
    found = node.get(key) if isinstance(node, Mapping) else None
    return found if isinstance(found, Mapping) else {}


def _names(pipeline: Mapping[str, Any], key: str) -> list[str]:
    found = pipeline.get(key)
    return [str(n) for n in found] if isinstance(found, list) else []


def _logs_pipeline(data: Mapping[str, Any], shown: str) -> tuple[list[str], list[str], list[str]]:
    """(receivers, processors, exporters) of the one logs pipeline that exports to Kafka."""
    pipelines = _section(_section(data, "service"), "pipelines")
    found = [
        p for name, p in pipelines.items()
        if str(name).split("/")[0] == "logs" and isinstance(p, Mapping)
        and any(e.split("/")[0] == "kafka" for e in _names(p, "exporters"))
    ]  # fmt: skip
    if len(found) != 1:
        what = "no logs pipeline exports" if not found else f"{len(found)} logs pipelines export"
        raise ValueError(f"{shown}: {what} to a kafka exporter (kbt runs one)")
    return _names(found[0], "receivers"), _names(found[0], "processors"), _names(found[0], "exporters")


def _resolved(value: Any, at: str, environ: Mapping[str, str]) -> Any:
    """A whole-value `${env:VAR}` as the collector reads it; nested mappings and lists walked."""
    if isinstance(value, Mapping):
        return {k: _resolved(v, f"{at}.{k}", environ) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolved(v, at, environ) for v in value]
    ref = collector_reference(value)
    if ref is None:
        return value
    name, default = ref.name, ref.default
    if name in environ:
        return environ[name]
    if default is None:
        raise ValueError(f"{at}: ${{env:{name}}} is not set (kbt runs the value the collector reads)")
    return default


def team_collector(
    data: Mapping[str, Any], shown: str, environ: Mapping[str, str] | None = None
) -> tuple[dict[str, Any], list[str], list[str]]:
    """The `otelcol:` settings a team's collector config stands for, the exporter options left to
    the lab or the target, and those not carried. ValueError (one line) when it cannot be run as
    written."""
    environ = os.environ if environ is None else environ
    receivers, processors, exporters = _logs_pipeline(data, shown)
    batching = [p for p in processors if p.split("/")[0] == "batch"]
    if batching:
        raise ValueError(
            f"{shown}: processors.{batching[0]}: kbt runs the exporter's own batching, not the batch"
            " processor: move it to the kafka exporter's sending_queue.batch (min_size: send_batch_size,"
            " flush_timeout: timeout) to run this file"
        )
    kafkas = [e for e in exporters if e.split("/")[0] == "kafka"]
    if len(kafkas) != 1:
        raise ValueError(
            f"{shown}: the logs pipeline exports to {', '.join(kafkas)}: kbt runs one kafka exporter"
        )
    exporter = _section(_section(data, "exporters"), kafkas[0])
    left = sorted(k for k in exporter if k in DEPLOYMENT)
    logs = exporter.get("logs")
    if isinstance(logs, Mapping):
        left += [f"logs.{k}" for k in logs if k in _TOPIC_KEYS]
        exporter = {**exporter, "logs": {k: v for k, v in logs.items() if k not in _TOPIC_KEYS}}
    run = {k: v for k, v in exporter.items() if k not in DEPLOYMENT}  # only what runs is read
    kafka, not_carried = _carried(_resolved(run, f"{shown}: exporters.{kafkas[0]}", environ), Kafka, "")
    out: dict[str, Any] = {"kafka": kafka} if kafka else {}
    for name in receivers:
        if name.split("/")[0] in ("filelog", "file_log"):
            receiver = _section(_section(data, "receivers"), name)
            carried, _ = _carried(receiver, Filelog, "")  # the receiver's paths and parsing are the lab's
            carried = _resolved(carried, f"{shown}: receivers.{name}", environ)
            if carried:
                out["filelog"] = carried
    return out, sorted(left), sorted(not_carried)


def _carried(
    section: Mapping[str, Any], model: type[BaseModel], prefix: str
) -> tuple[dict[str, Any], list[str]]:
    """The options of `section` that `model` runs (nested models walked), and the dotted names of
    the others."""
    kept: dict[str, Any] = {}
    dropped: list[str] = []
    for key, value in section.items():
        field = model.model_fields.get(str(key))
        if field is None:
            dropped.append(f"{prefix}{key}")
            continue
        sub = models_in(field.annotation)
        if sub and isinstance(value, Mapping):
            value, more = _carried(value, sub[0], f"{prefix}{key}.")
            dropped += more
        kept[str(key)] = value
    return kept, dropped
