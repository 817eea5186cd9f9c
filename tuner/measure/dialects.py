"""Metric dialects: the names other exporters give the broker series kbt reads.

kbt's queries (tuner.measure.promql) are written once, in kbt's own names (exporters/jmx/
kafka-broker.yml). A dialect maps each of those series to the series another setup exports for
the same MBean attribute: Strimzi's `kafka-metrics.yaml`, the upstream jmx_exporter Kafka example
(`kafka-2_0_0.yml`), Confluent's jmx-monitoring-stacks (`kafka_broker.yml`), Strimzi's Metrics
Reporter (no jmx_exporter at all), and jmx_exporter run without rules (its default naming, which
is what MSK's open monitoring serves on port 11001). `translate` rewrites
an expression's selectors (name, label names and values, the target's job and matchers) so the
same query reads the same MBean values, hence the same figures, on any of them. A series a dialect
does not export is `Missing` with the reason; a query that needs it cannot be answered there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from tuner.core.errors import BadInput, EnvironmentProblem, did_you_mean
from tuner.measure.catalog import PERCENTILES, PHASES, QUANTILES, SERIES, Needs, Series
from tuner.measure.promql import label_matchers
from tuner.measure.series_names import NETWORK_IDLE_SERIES

if TYPE_CHECKING:
    from tuner.measure.prometheus import Prometheus
    from tuner.target.base import Target


# Labels that name a broker where no `broker` label does, in the order they are tried: the pod
# labels a Kubernetes Prometheus puts on a Strimzi cluster's brokers (`kubernetes_pod_name` from
# Strimzi's example PodMonitor, `pod` from most others, `strimzi_io_pod_name` from its pod labels),
# `node_name` (the Kubernetes node: one broker per node), then the scrape target itself
# (`instance`: MSK's brokers are b-N....:11001), which every scraped series carries.
BROKER_LABELS: tuple[str, ...] = (
    "broker",
    "kubernetes_pod_name",
    "pod",
    "strimzi_io_pod_name",
    "node_name",
    "instance",
)
# Labels that tell clusters apart where one Prometheus holds several: a scrape config's or an
# external `cluster` label (kbt's lab sets one), a Strimzi pod's `strimzi.io/cluster`, and the
# Kubernetes namespace (a Strimzi cluster's pods share one). Brokers of several under one selection
# would be diagnosed as one cluster, or, where their broker names collide, added up.
CLUSTER_LABELS: tuple[str, ...] = ("cluster", "strimzi_io_cluster", "namespace")
# A node's role, where its scrape labels say it: Strimzi's node pool pods carry strimzi.io/broker-role
# (its example PodMonitor maps the pod's strimzi.io labels onto every series). "false" is a KRaft
# controller alone: it has network threads of its own listener, but serves no client.
CONTROLLER_ONLY_LABELS: tuple[tuple[str, str], ...] = (("strimzi_io_broker_role", "false"),)


_SELECTOR = re.compile(r"\b((?:kafka|process)_[a-z0-9_]+)(?:\{([^}]*)\})?")
_MATCHER = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*,?')
_BY = re.compile(r"\b(by|without)\s*\(([^)]*)\)")
# jmx_exporter's Summary emulation writes "0.$N" from <N>thPercentile: 50th is "0.50".
_QUANTILES = {"quantile": {"0.5": "0.50"}}


@dataclass(frozen=True)
class Source:
    """Where a kbt series lives in a dialect."""

    names: tuple[str, ...]  # candidate names: the first one present is used (e.g. with and
    # without the `_total` a newer agent appends to counters)
    labels: Mapping[str, str] = field(default_factory=dict)  # kbt label -> dialect label
    values: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # kbt label -> value map
    extra: Mapping[str, str] = field(default_factory=dict)  # matchers the dialect series needs
    # A kbt label whose value picks the dialect series (RequestMetrics phases are separate MBeans).
    by_label: str | None = None
    by_value: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def all_names(self) -> set[str]:
        """Every name the series may have: its candidates and those picked by `by_label`."""
        return set(self.names) | {n for names in self.by_value.values() for n in names}


@dataclass(frozen=True)
class Missing:
    reason: str


@dataclass(frozen=True)
class Dialect:
    name: str
    title: str
    series: Mapping[str, Source | Missing]  # kbt series name -> source (absent: same name)

    def source(self, name: str) -> Source | Missing:
        return self.series.get(name) or Source((name,))


class MissingSeries(EnvironmentProblem):
    """A query needs a series the target's dialect does not export."""

    def __init__(self, series: str, dialect: str, reason: str) -> None:
        super().__init__(f"{series} is not exported with the {dialect} rules: {reason}")
        self.series, self.dialect, self.reason = series, dialect, reason


def _mbean(s: Series) -> tuple[str, dict[str, str]]:
    """A catalog series' MBean: its domain, dots as underscores, and its keys (optional ones, in
    brackets, left out)."""
    domain, keys = s.mbean.split(":", 1)
    pairs = re.sub(r"\[[^]]*\]", "", keys).split(",")
    return domain.replace(".", "_"), dict(pair.split("=", 1) for pair in pairs)


def _phases(quantiles: Mapping[str, Mapping[str, str]] = _QUANTILES) -> Source:
    """RequestMetrics' phases, each its own MBean; `quantiles` maps kbt's quantile label values."""
    return Source(
        (),
        values=quantiles,
        by_label="phase",
        by_value={p: (f"kafka_network_requestmetrics_{bean.lower()}",) for p, bean in PHASES.items()},
    )


_NOT_JMX_DOMAIN = Missing("its MBean domain (kafka.log.remote / org.apache.kafka.storage) matches no rule")
_REMOTE_MISSING: dict[str, Source | Missing] = {
    s.name: _NOT_JMX_DOMAIN
    for s in SERIES
    if s.mbean.startswith(("kafka.log.remote", "org.apache.kafka.storage"))
}


# `kbt target check` finds a version label on any *version* / *info series itself (kafka_version).
_VERSION_NOT_MAPPED = Missing(
    "app-info's Version is a label, read as found (kbt target check), not translated"
)


def _network_sources(idle_percent: str, processor_label: str) -> dict[str, Source | Missing]:
    """The request channel's queues and the network processors' idle as the JMX exporters' rules
    name them: `idle_percent` is how the idle-percent attribute is spelled ("_percent" or
    "percent"), `processor_label` how the processor's label is."""
    return {
        "kafka_network_request_queue_size": Source(("kafka_network_requestchannel_requestqueuesize",)),
        "kafka_network_response_queue_size": Source(
            ("kafka_network_requestchannel_responsequeuesize",), extra={"processor": ""}
        ),
        "kafka_network_processor_avg_idle_ratio": Source(
            (f"kafka_network_socketserver_networkprocessoravgidle{idle_percent}",)
        ),
        "kafka_network_processor_idle_ratio": Source(
            (f"kafka_network_processor_idle{idle_percent}",), labels={"network_processor": processor_label}
        ),
    }


_NO_QUOTA_RULE = Missing("its rules have no pattern for the per-client quota sensors (type=Request, ..)")
_QUOTA_SERIES = tuple(s for s in SERIES if s.needs is Needs.QUOTA)
_CLIENT_SERIES = tuple(s.name for s in _QUOTA_SERIES)


def _quota_clients(spell: Callable[[str], str]) -> dict[str, Source | Missing]:
    """The quota sensors by a generic rule: kafka_server_<type>_<attribute>, the type spelled by
    `spell` (Confluent's rule lowercases it, the exporter's default naming keeps it), the key labels
    as they are (client-id sanitized to client_id); a series of several types picks one by `quota`."""
    out: dict[str, Source | Missing] = {}
    for s in _QUOTA_SERIES:
        types = _mbean(s)[1]["type"].split("|")
        names = {t: (f"kafka_server_{spell(t)}_{s.attribute.replace('-', '_')}",) for t in types}
        one = len(types) == 1
        out[s.name] = Source(names[types[0]]) if one else Source((), by_label="quota", by_value=names)
    return out


def _lowered(s: Series) -> str:
    """`<domain>_<type>_<name>` of a series' MBean, lower-cased: its name by the rule files' generic
    rules and by the Metrics Reporter, before their suffixes."""
    domain, keys = _mbean(s)
    return f"{domain}_{keys['type']}_{keys['name']}".lower()


def _example_naming(s: Series) -> Source:
    """A series by the generic rules Strimzi's kafka-metrics.yaml and the upstream example share:
    a meter's Count by the PerSec rule (the name without PerSec, `_total`; BrokerTopicMetrics, and
    RequestsPerSec by its two-key rule: request, version), another Count by the Count rule
    (`_count`, `_count_total` from a newer agent), a Value as it is, a histogram's percentiles by
    the one-key percentile rule (request, quantile "0.<N>"). RequestMetrics are counted once per
    request, whatever the number of partitions the request carries (BrokerTopicMetrics counts once
    per partition)."""
    name = _lowered(s)
    if s.attribute == PERCENTILES:
        return Source((name,), values=_QUANTILES)
    if s.attribute != "Count":
        return Source((name,))
    if name.endswith("persec"):
        return Source((f"{name.removesuffix('persec')}_total",))
    return Source((f"{name}_count", f"{name}_count_total"))


def _example_series(idle_percent: str, no_rate: str) -> dict[str, Source | Missing]:
    """What Strimzi's rules and the upstream example export: their generic naming, and beyond it
    alike by hand; `idle_percent` is how the flavour spells the processors' idle-percent attribute
    ("_percent" or "percent"), `no_rate` why it has no handler meter rate. Their generic PerSec and
    percentile rules keep RequestMetrics; a copy whose rules exclude it leaves those absent: detection
    then names them missing, and BrokerTopicMetrics' per-partition counts never stand in for requests."""
    by_hand: dict[str, Source | Missing] = {
        **dict.fromkeys(_CLIENT_SERIES, _NO_QUOTA_RULE),
        **_REMOTE_MISSING,
        **_network_sources(idle_percent, "networkProcessor"),
        "kafka_server_request_handler_avg_idle_ratio": Missing(no_rate),
        "kafka_network_request_time_ms": _phases(),
    }
    return _by_naming(_example_naming, by_hand)


def _by_naming(
    naming: Callable[[Series], Source], by_hand: Mapping[str, Source | Missing]
) -> dict[str, Source | Missing]:
    """Every series the rules export, by `naming` from its MBean unless `by_hand` has it; app-info's
    Version, a label, is never translated."""
    by_hand = {"kafka_server_app_version": _VERSION_NOT_MAPPED, **by_hand}
    return {s.name: by_hand.get(s.name) or naming(s) for s in SERIES if s.from_rules}


STRIMZI = Dialect(
    "strimzi",
    "Strimzi kafka-metrics.yaml",
    _example_series(
        "_percent", "Strimzi exports the handler meter's MeanRate (a lifetime mean), not its OneMinuteRate"
    ),
)

UPSTREAM = Dialect(
    "upstream",
    "jmx_exporter example kafka-2_0_0.yml",
    _example_series("percent", "the example rules export only the handler meter's Count"),
)


def _confluent_naming(s: Series) -> Source:
    """A series by Confluent's generic rules: its name as it is (no suffix: a meter's Count by the
    generic two-key (Count|Value) rule, which comes before the RequestsPerSec rule of its own), a
    histogram's percentiles by quantile "0.<N>"."""
    return Source((_lowered(s),), values=_QUANTILES if s.attribute == PERCENTILES else {})


_CONFLUENT_BY_HAND: dict[str, Source | Missing] = {
    **_quota_clients(str.lower),
    **_REMOTE_MISSING,
    **_network_sources("percent", "networkprocessor"),
    # The handler meter's OneMinuteRate by its own rule: `_oneminuterate` in the current file,
    # `_total` (typed GAUGE) before 2025.
    "kafka_server_request_handler_avg_idle_ratio": Source(
        (
            "kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_oneminuterate",
            "kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_total",
        )
    ),
    "kafka_log_flush_total": Source(
        ("kafka_log_logflushstats_logflushrateandtimems",), extra={"quantile": ""}
    ),
    "kafka_network_request_time_ms": _phases(),
}

CONFLUENT = Dialect(
    "confluent",
    "Confluent jmx-monitoring-stacks kafka_broker.yml",
    _by_naming(_confluent_naming, _CONFLUENT_BY_HAND),
)

# ---- Strimzi's Metrics Reporter (metricsConfig.type: strimziMetricsReporter) ----
# Its Yammer collector names a metric lower-cased `<group>_<type>_<name>` and labels it only with the
# MBean's scope keys (request, version, topic, networkProcessor: never type or name). A Meter is a
# counter of its Count (`_total`), a Gauge a gauge, a Histogram or Timer a summary (quantiles
# 0.5 .. 0.999 as written, `_count`, `_sum`). So RequestHandlerAvgIdlePercent is a counter of the
# nanoseconds idle per handler thread (its rate / 1e9 is the idle ratio) and no meter rate exists.
# KIP-1207 (Kafka 4.2+): the broker's own handler pool has a meter of its own; the older aggregate
# also counts a combined-mode node's controller pool (it read ~2 there before the fix). The first
# name present is read.
_REPORTER_HANDLER = (
    "kafka_server_kafkarequesthandlerpool_brokerrequesthandleravgidlepercent_total",
    "kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_total",
)


def _reporter_naming(s: Series) -> Source:
    """A series by the reporter's naming (above), from its MBean (the group's dots become
    underscores): a Meter's Count (the PerSec beans) `_total`, a Timer's `_count`, a Gauge's value
    or a Timer's percentiles under the name itself."""
    name = _lowered(s)
    if s.attribute == "Count":
        name += "_total" if name.endswith("persec") else "_count"
    return Source((name,))


_REPORTER_BY_HAND: dict[str, Source | Missing] = {
    **dict.fromkeys(
        _CLIENT_SERIES,
        Missing("the quota sensors' names under the reporter's Kafka-metrics collector are not known"),
    ),
    # Not in Strimzi's default allowlist: `allowlist_advice` names the entry to add.
    **_network_sources("percent", "networkProcessor"),
    "kafka_server_request_handler_idle_ns_total": Source(_REPORTER_HANDLER),
    "kafka_server_request_handler_avg_idle_ratio": Missing(
        "the reporter exports a meter's Count alone (no one-minute rate)"
    ),
    "kafka_network_request_time_ms": _phases({}),  # quantiles as written
}


STRIMZI_REPORTER = Dialect(
    "strimzi-reporter", "Strimzi Metrics Reporter", _by_naming(_reporter_naming, _REPORTER_BY_HAND)
)


# ---- jmx_exporter without rules: its default naming (MSK open monitoring serves this) ----
# `<domain>_<type>_<attribute>`, case kept; every other key of the ObjectName is a label (`name`
# among them); percentiles are separate names (`..._99thPercentile`), not a quantile label. Checked
# by running the real agent without rules on the lab (tests/integration/test_targets.py).
def _percentile_attribute(quantile: str) -> str:
    digits = quantile.removeprefix("0.")
    return f"{digits}0thPercentile" if len(digits) == 1 else f"{digits}thPercentile"


def _by_quantile(prefix: str) -> dict[str, tuple[str, ...]]:
    return {q: (f"{prefix}_{_percentile_attribute(q)}",) for q in QUANTILES}


def _default_naming(s: Series) -> Source:
    """A series by the exporter's default naming (above), from its MBean: the attribute in the
    name, the MBean's `name` a label, each percentile a name of its own. The handler meter is the
    aggregate one (KIP-1207's per-pool one shares its name, `name` tells them apart): on Kafka 4.2+
    it averages every pool of the node, the broker's alone on a broker-only node."""
    domain, keys = _mbean(s)
    prefix, extra = f"{domain}_{keys['type']}", {"name": keys["name"]}
    if s.attribute == PERCENTILES:
        return Source((), extra=extra, by_label="quantile", by_value=_by_quantile(prefix))
    return Source((f"{prefix}_{s.attribute}",), extra=extra)


_DEFAULT_BY_HAND: dict[str, Source | Missing] = {
    **_quota_clients(str),
    "kafka_network_response_queue_size": Source(
        ("kafka_network_RequestChannel_Value",), extra={"name": "ResponseQueueSize", "processor": ""}
    ),
    "kafka_network_processor_idle_ratio": Source(
        ("kafka_network_Processor_Value",),
        labels={"network_processor": "networkProcessor"},
        extra={"name": "IdlePercent"},
    ),
    # The phase is the `name` label (TotalTimeMs, ..); the quantile picks the attribute's name.
    "kafka_network_request_time_ms": Source(
        (),
        labels={"phase": "name"},
        values={"phase": dict(PHASES)},
        by_label="quantile",
        by_value=_by_quantile("kafka_network_RequestMetrics"),
    ),
}

EXPORTER_DEFAULT = Dialect(
    "exporter-default",
    "jmx_exporter without rules (its default naming; MSK open monitoring)",
    _by_naming(_default_naming, _DEFAULT_BY_HAND),
)
# MSK's open monitoring: its JMX Exporter on port 11001 runs without rules, so its names are the
# exporter's default naming (docs/targets.md says where that was established). The same table
# under the name users know; detection reports exporter-default, which it cannot tell apart.
MSK = Dialect(
    "msk", "Amazon MSK open monitoring (jmx_exporter default naming, port 11001)", EXPORTER_DEFAULT.series
)

KBT = Dialect("kbt", "kbt exporters/jmx/kafka-broker.yml", {})
# Detection weighs them in this order on a tie (msk last: it is exporter-default under another name).
DIALECTS: dict[str, Dialect] = {
    d.name: d for d in (KBT, STRIMZI, UPSTREAM, CONFLUENT, STRIMZI_REPORTER, EXPORTER_DEFAULT, MSK)
}


def dialect(name: str) -> Dialect:
    try:
        return DIALECTS[name]
    except KeyError:
        raise BadInput(f"unknown metric dialect {name!r}{did_you_mean(name, DIALECTS)}") from None


def dialect_names(d: Dialect) -> set[str]:
    """Every series name the dialect may export for kbt's series (all candidates)."""
    return {n for s in SERIES for n in _candidates(d, s.name)}


def _parse(matchers: str) -> list[tuple[str, str, str]]:
    out, pos = [], 0
    while pos < len(matchers):
        m = _MATCHER.match(matchers, pos)
        if m is None:
            if matchers[pos:].strip():
                raise BadInput(f"cannot translate the matchers {{{matchers}}}")
            break
        out.append((m.group(1), m.group(2), m.group(3)))
        pos = m.end()
    return out


def _selector(name: str, matchers: list[tuple[str, str, str]]) -> str:
    body = ",".join(f'{k}{op}"{v}"' for k, op, v in matchers)
    return f"{name}{{{body}}}" if body else name


@dataclass(frozen=True)
class Translator:
    """Rewrites kbt's PromQL for one target: its dialect, job, extra matchers and broker label.
    `present`: the series names the target's Prometheus holds (picks among candidate names)."""

    dialect: Dialect
    job: str = "kafka-broker"
    matchers: Mapping[str, str] = field(default_factory=dict)
    broker_label: str = "broker"
    present: frozenset[str] = frozenset()
    detection: Detection | None = None  # how the dialect was chosen (`dialect: auto`) or checked

    @property
    def identity(self) -> bool:
        return (
            self.dialect.name == "kbt"
            and self.job == "kafka-broker"
            and not self.matchers
            and self.broker_label == "broker"
        )

    def _pick(self, names: tuple[str, ...]) -> str:
        """The first of `names` present, else the first."""
        return next((name for name in names if name in self.present), names[0])

    def _one(self, name: str, inner: str) -> str:
        src = self.dialect.source(name)
        if isinstance(src, Missing):
            raise MissingSeries(name, self.dialect.name, src.reason)
        parsed = [m for m in _parse(inner or "") if m[0] != "job"]
        scope = [("job", "=", self.job), *((k, "=", v) for k, v in self.matchers.items())]
        rest: list[tuple[str, str, str]] = []
        choice: list[tuple[str, str]] = []  # (dialect name, kbt value of by_label)
        for key, op, value in parsed:
            if src.by_label == key:
                wanted = [value] if op == "=" else value.split("|") if op == "=~" else None
                if wanted is None:
                    raise BadInput(f"cannot translate {key}{op}{value!r} for {name}")
                for v in wanted:
                    if v not in src.by_value:
                        raise MissingSeries(name, self.dialect.name, f'no series for {key}="{v}"')
                    choice.append((self._pick(src.by_value[v]), v))
                continue
            mapping = src.values.get(key, {})
            if op == "=":
                value = mapping.get(value, value)
            elif op == "=~" and mapping:
                value = "|".join(mapping.get(v, v) for v in value.split("|"))
            rest.append((src.labels.get(key, key), op, value))
        rest += [(k, "=", v) for k, v in src.extra.items()]
        if src.by_label is None:
            return _selector(self._pick(src.names), scope + rest)
        if not choice:
            raise MissingSeries(name, self.dialect.name, f"a {src.by_label} must be named")
        if len(choice) == 1 and next(m for m in parsed if m[0] == src.by_label)[1] == "=":
            return _selector(choice[0][0], scope + rest)
        parts = [
            f'label_replace({_selector(n, scope + rest)}, "{src.by_label}", "{v}", "", "")' for n, v in choice
        ]
        return "(" + " or ".join(parts) + ")"

    def translate(self, expr: str) -> str:
        """`expr` in the target's names (MissingSeries when it needs a series the dialect lacks)."""
        if self.identity:
            return expr
        out = _SELECTOR.sub(lambda m: self._one(m.group(1), m.group(2) or ""), expr)
        if self.broker_label == "broker":
            return out

        def by(m: re.Match[str]) -> str:
            labels = (t.strip() for t in m.group(2).split(","))
            return f"{m.group(1)} ({', '.join(self.broker_label if t == 'broker' else t for t in labels)})"

        return _BY.sub(by, out)

    def labels(self, labels: dict[str, str]) -> dict[str, str]:
        """A result's labels in kbt's names (the broker label as `broker`)."""
        if self.identity:
            return labels
        out = dict(labels)
        if self.broker_label != "broker" and self.broker_label in out:
            out["broker"] = out[self.broker_label]
        for src in self.dialect.series.values():
            if isinstance(src, Source):
                for kbt_label, theirs in src.labels.items():
                    if theirs not in out or kbt_label in out:
                        continue
                    mapping = src.values.get(kbt_label)
                    if mapping is None:
                        out[kbt_label] = out[theirs]
                    else:  # a label whose values are renamed too (`name` TotalTimeMs -> phase total)
                        back = {v: k for k, v in mapping.items()}
                        if out[theirs] in back:
                            out[kbt_label] = back[out[theirs]]
        if out.get("quantile") == "0.50":
            out["quantile"] = "0.5"
        return out


# The series `kbt diagnose` reads for its verdict (network idle, produce requests, handler idle, bytes
# per request, the request queue and its wait): detection weighs a dialect by which of these it finds.
DIAGNOSE_NEEDS: tuple[str, ...] = (
    "kafka_network_processor_avg_idle_ratio",
    "kafka_network_processor_idle_ratio",
    "kafka_network_requests_total",
    "kafka_server_request_handler_idle_ns_total",
    "kafka_server_bytes_in_total",
    "kafka_server_messages_in_total",
    "kafka_network_request_queue_size",
    "kafka_network_request_time_ms",
    "kafka_network_request_bytes",
)


def _candidates(d: Dialect, series: str) -> set[str]:
    src = d.source(series)
    return src.all_names if isinstance(src, Source) else set()


@dataclass(frozen=True)
class Detection:
    """The dialect picked for a target and why: which of the series diagnose needs it finds."""

    dialect: Dialect
    found: tuple[str, ...]  # kbt names of DIAGNOSE_NEEDS present under the dialect
    missing: tuple[str, ...]  # kbt names of DIAGNOSE_NEEDS absent (or not exported) under it
    scores: Mapping[str, int]  # dialect -> how many of DIAGNOSE_NEEDS it finds

    def statement(self) -> str:
        need = len(DIAGNOSE_NEEDS)
        name, found = self.dialect.name, len(self.found)
        line = f"metric dialect {name}: {found} of the {need} series diagnose reads present"
        if self.missing:
            line += "; missing: " + ", ".join(self.missing)
        return line


def assess(d: Dialect, present: set[str] | frozenset[str]) -> Detection:
    """Which of the series diagnose needs `d`'s names find among `present`."""
    found = tuple(s for s in DIAGNOSE_NEEDS if _candidates(d, s) & present)
    missing = tuple(s for s in DIAGNOSE_NEEDS if s not in found)
    return Detection(d, found, missing, {})


def detect(present: set[str] | frozenset[str]) -> Detection:
    """The dialect under which the most of the series diagnose needs are present (ties: the one whose
    names match more series overall, then kbt's own). A dialect is chosen for what diagnose can read
    under it, not for how many names happen to match: Strimzi and the upstream example share most
    names and differ in the network idle series. EnvironmentProblem when none of them is present."""
    scores = {name: len(assess(d, present).found) for name, d in DIALECTS.items()}
    overall = {name: len(dialect_names(d) & present) for name, d in DIALECTS.items() if name != "kbt"}
    overall["kbt"] = len({s.name for s in SERIES if s.from_rules} & present)
    best = max(DIALECTS, key=lambda n: (scores[n], overall[n], n == "kbt"))
    if scores[best] == 0:
        raise EnvironmentProblem(
            f"no broker series of any known dialect ({', '.join(DIALECTS)}) under the"
            " target's job and matchers"
        )
    return replace(assess(DIALECTS[best], present), scores=scores)


def scope_matchers(job: str, matchers: Mapping[str, str]) -> str:
    return label_matchers({"job": job, **matchers})


def resolve_translator(
    prom: Prometheus, target: Target, window: tuple[float, float] | None = None
) -> Translator:
    """The translator for a target: its dialect (`auto`: detected from the series present under
    its job and matchers), its selectors, and the names present (to pick among candidates). With
    `window` (start, end), the series of that window are read, not those present now: a window
    before a rollout or an upgrade may have had other names, labels or brokers."""
    sel = target.selectors
    scope = scope_matchers(sel.job, sel.matchers)
    present = prom.series_names(scope, window)
    found = detect(present) if target.dialect == "auto" else assess(dialect(target.dialect), present)
    broker_label = sel.broker_label
    if broker_label == "broker":  # the default: a pod label names brokers where `broker` does not
        # Read off the network idle series, which make the brokers: another series of the job may
        # carry a label they lack (kbt's dialect recording rules add `broker` beside the raw series).
        idle = found.dialect.source(NETWORK_IDLE_SERIES)
        names = "|".join(sorted(idle.all_names)) if isinstance(idle, Source) else ""
        idle_scope = f'{scope},__name__=~"{names}"' if names else scope
        broker_label = pick_broker_label(prom.labels_present(idle_scope, BROKER_LABELS, window))
    return Translator(found.dialect, sel.job, dict(sel.matchers), broker_label, frozenset(present), found)


def with_broker_label(expr: str) -> str:
    """`expr` with a `broker` label on every series: its own, else the first of the pod labels
    (BROKER_LABELS) it carries, so rules grouping by broker never average a cluster's pods
    together. (label_join puts them side by side; the regex takes the first non-empty one.)"""
    sources = ", ".join(f'"{label}"' for label in BROKER_LABELS)
    joined = f'label_join({expr}, "kbt_broker", ";", {sources})'
    picked = f'label_replace({joined}, "broker", "$1", "kbt_broker", ";*([^;]+).*")'
    return f'label_replace({picked}, "kbt_broker", "", "", "")'


def pick_broker_label(labels: set[str]) -> str:
    """The first of BROKER_LABELS the series carry (`broker` when none does)."""
    return next((label for label in BROKER_LABELS if label in labels), "broker")


# The reporter's allowlist (prometheus.metrics.reporter.allowlist; Strimzi: metricsConfig.values.
# allowList) is a list of regexes each matched against a whole series name; Strimzi's default one
# leaves out the request queue and the per-thread network idle.
def allowlist_advice(detection: Detection) -> list[str]:
    """For each series diagnose needs that the target lacks, the exact change to its setup that
    exports it (Strimzi Metrics Reporter: the allowlist entry; jmx_exporter dialects: the MBean)."""
    d = detection.dialect
    out = []
    for series in detection.missing:
        src = d.source(series)
        if isinstance(src, Missing):
            continue
        names = sorted(src.all_names)
        name = src.names[-1] if src.names else names[0]
        if d.name == "strimzi-reporter":
            out.append(
                f'{series} is not exported: add "{name}" to the Strimzi Metrics Reporter\'s allowlist'
                f" (Strimzi: spec.kafka.metricsConfig.values.allowList; a broker property:"
                f" prometheus.metrics.reporter.allowlist)"
            )
        elif d.name != "kbt":
            mbean = next(s.mbean for s in SERIES if s.name == series)
            out.append(
                f"{series} is not exported ({' / '.join(names)}): the exporter must read the MBean"
                f" {mbean} (its includeObjectNames / whitelistObjectNames and rules)"
            )
    return out
