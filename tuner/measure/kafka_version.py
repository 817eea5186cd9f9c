"""The Kafka release a target's brokers run, read where the cluster tells it; never guessed.

Kafka's admin API does not report a release. Two places do:

1. the brokers' `kafka.server:type=app-info,id=N` MBean (attribute `Version`, a String), which
   kbt's jmx rules export as `kafka_server_app_version{version="4.1.1"} 1`; other rule files turn
   the same attribute into a label of a series named like `kafka_server_*version*` or
   `kafka_server_*info*` (any such series with a `version` label is read);
2. the broker config `inter.broker.protocol.version` (Kafka 3.x and older; removed in 4.0), which
   names the inter-broker protocol (e.g. `3.7-IV4`): its major.minor is the release line's.

3. an inference from the brokers' ApiVersions answer (logged by librdkafka, debug `feature`):
   only when it equals the answer captured from a Kafka 4.1.1 broker (kafka_api_versions.py), as
   "4.1.x (inferred ...)"; an answer that differs names no release.

Otherwise the version is "not readable", with the reasons.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from tuner.core.numbers import parse_int
from tuner.measure.kafka_api_versions import REFERENCE, RELEASE

# A version label on any broker series whose name says version or info (kbt's own, the app-info
# rules of other rule files, a build-info series a platform adds).
VERSION_SERIES = '{{__name__=~"kafka_server_.*(version|info).*",version!=""{scope}}}'
PROTOCOL_KEYS = ("inter.broker.protocol.version", "log.message.format.version")
_PROTOCOL = re.compile(r"^(\d+\.\d+)(?:\.\d+)?(?:-IV\d+)?$")
# librdkafka's log line for one API of a broker's ApiVersions answer, e.g.
# "APIVERSION [rdkafka#producer-1] [thrd:...]: 127.0.0.1:19091/1:   ApiKey Produce (0) Versions 3..13"
_API_LINE = re.compile(
    r"^APIVERSION \[[^\]]*\] \[[^\]]*\]: (?P<broker>\S+?):\s+ApiKey \S+ \((?P<key>\d+)\)"
    r" Versions (?P<min>\d+)\.\.(?P<max>\d+)"
)


@dataclass(frozen=True)
class KafkaVersion:
    version: str | None  # "4.1.1"; "4.1.1 (brokers 1, 2), 4.0.0 (broker 3)" when they differ
    source: str = ""  # where it was read
    why_not: str = ""  # when version is None


def version_query(scope: str) -> str:
    """PromQL for the version series within a broker scope (`job="kafka",cluster="x"`)."""
    return VERSION_SERIES.format(scope=f",{scope}" if scope else "")


def from_series(series: Iterable[Mapping[str, str]], broker_label: str) -> str | None:
    """The release from version-labelled series (label sets); brokers that differ are listed."""
    by_version: dict[str, set[str]] = {}
    for labels in series:
        version = labels.get("version", "").strip()
        if version:
            by_version.setdefault(version, set()).add(labels.get(broker_label, "") or "?")
    if not by_version:
        return None
    if len(by_version) == 1:
        return next(iter(by_version))

    def brokers(names: set[str]) -> str:
        ordered = sorted(names, key=lambda n: (len(n), n))
        return f"broker{'s' if len(ordered) > 1 else ''} {', '.join(ordered)}"

    ranked = sorted(by_version.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return ", ".join(f"{version} ({brokers(names)})" for version, names in ranked)


def from_configs(configs: Mapping[str, str | None]) -> str | None:
    """The release line from a pre-4.0 broker's protocol version config ("3.7-IV4" -> "3.7")."""
    for key in PROTOCOL_KEYS:
        value = (configs.get(key) or "").strip()
        match = _PROTOCOL.match(value)
        if match:
            return f"{match.group(1)}.x"
    return None


def api_versions(lines: Iterable[str]) -> dict[str, dict[int, int]]:
    """Per broker connection, each API key's highest version, from librdkafka's log lines."""
    tables: dict[str, dict[int, int]] = {}
    for line in lines:
        m = _API_LINE.match(line.strip())
        if m is not None:
            key, highest = parse_int(m.group("key"), "key"), parse_int(m.group("max"), "max")
            tables.setdefault(m.group("broker"), {})[key] = highest
    return tables


def infer_from_api_versions(
    tables: Mapping[str, Mapping[int, int]], reference: Mapping[int, int], release: str
) -> tuple[str | None, str]:
    """(`release`.x, "") when every broker's answer equals the reference release's; else (None,
    how it differs). Patch releases do not change the API versions, so a release line, no more."""
    if not tables:
        return None, "librdkafka logged no ApiVersions answer"
    ref_keys = set(reference)
    verdicts = set()
    for table in tables.values():
        keys = set(table)
        if dict(table) == dict(reference):
            verdicts.add("equal")
        elif keys >= ref_keys and all(table[k] >= v for k, v in reference.items()):
            verdicts.add("newer")
        elif keys <= ref_keys and all(reference[k] >= v for k, v in table.items()):
            verdicts.add("older")
        else:
            verdicts.add("mixed")
    if verdicts == {"equal"}:
        return f"{release}.x", ""
    return None, (
        f"the brokers' API versions differ from Kafka {release}'s ({', '.join(sorted(verdicts))});"
        " no release is inferred"
    )


def read_version(
    series: Iterable[Mapping[str, str]] | None,
    broker_label: str,
    configs: Mapping[str, str | None] | None,
    prometheus_problem: str | None = None,
    api_tables: Mapping[str, Mapping[int, int]] | None = None,
) -> KafkaVersion:
    """The best reading: app-info from Prometheus (exact), else the protocol version config (its
    release line), else why neither told it. `series` None: Prometheus was not asked."""
    exact = from_series(series or (), broker_label)
    if exact is not None:
        return KafkaVersion(exact, "the brokers' app-info Version in Prometheus")
    line = from_configs(configs or {})
    if line is not None:
        return KafkaVersion(line, "the broker config inter.broker.protocol.version")
    inferred, differs = None, ""
    if api_tables is not None:
        inferred, differs = infer_from_api_versions(api_tables, REFERENCE, RELEASE)
        if inferred is not None:
            return KafkaVersion(inferred, f"the brokers' ApiVersions, inferred: equal to Kafka {RELEASE}'s")
    reasons = [
        "the broker configs carry no inter.broker.protocol.version (removed in Kafka 4.0)"
        if configs is not None
        else "the broker configs could not be described",
    ]
    if prometheus_problem is not None:
        reasons.append(prometheus_problem)
    elif series is None:
        reasons.append("no Prometheus is named")
    else:
        reasons.append(
            "no broker series in Prometheus has a version label (kbt's jmx rules export it as"
            " kafka_server_app_version from kafka.server:type=app-info)"
        )
    if differs:
        reasons.append(differs)
    return KafkaVersion(None, why_not="; ".join(reasons))
