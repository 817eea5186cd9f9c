"""The load exporters serve exactly the series tuner.measure.catalog CLIENT_SERIES defines (their one
definition): names, types and labels of the librdkafka and consumer exporters (read from their
registries), the Java engine's delivery buckets, and every kbt_client_* / kbt_consumer_* name a
named query or the live figures read. The delivery histogram's buckets are checked on any input."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tuner.core.client_figures import DELIVERY_BUCKETS_S
from tuner.driver.client_exporter import ClientExporter, histogram_buckets
from tuner.driver.rdkafka_stats import Emission
from tuner.driver.stress.consumer_exporter import ConsumerExporter
from tuner.measure import live
from tuner.measure.catalog import CLIENT_SERIES, ClientKind
from tuner.measure.promql import ALL_QUERIES

ROOT = Path(__file__).resolve().parents[2]
JAVA = ROOT / "loadtests/java-engine/src/main/java/io/github/kbt/javaengine/ClientExporter.java"
_KIND = {"counter": ClientKind.COUNTER, "gauge": ClientKind.GAUGE, "histogram": ClientKind.HISTOGRAM}


def _served(registry: object) -> dict[str, tuple[ClientKind, frozenset[str]]]:
    """{scraped name: (kind, label names)} of every family the registry serves."""
    out = {}
    for family in registry.collect():  # type: ignore[attr-defined]
        if not family.samples:
            continue
        name = family.name + ("_total" if family.type == "counter" else "")
        labels = frozenset(k for s in family.samples for k in s.labels if k != "le")
        out[name] = (_KIND[family.type], labels)
    return out


def _contract(engine: str) -> dict[str, tuple[ClientKind, frozenset[str]]]:
    return {s.name: (s.kind, frozenset(s.labels)) for s in CLIENT_SERIES if engine in s.engines}


def _stats() -> Emission:
    broker = {
        "nodeid": 1,
        "req": {"Produce": 3},
        "int_latency": {"cnt": 2, "p50": 1000, "p99": 2000},
        "rtt": {"cnt": 2, "p50": 500, "p99": 900},
        "throttle": {"cnt": 1, "max": 5},
    }
    topics = {"t": {"batchcnt": {"cnt": 1, "sum": 4}, "batchsize": {"sum": 400}}}
    return Emission.parse(json.dumps({"brokers": {"b1": broker}, "topics": topics}))


def test_the_librdkafka_exporter_serves_the_contract() -> None:
    exporter = ClientExporter("r", "librdkafka")
    exporter.on_stats("p0", _stats())
    exporter.on_delivery("p0", acked=4, acked_bytes=400, failed=1, offered=5)
    exporter.on_latency("process-0", [(800, 3), (40_000, 1)])
    assert _served(exporter.registry) == _contract("librdkafka")


def test_the_consumer_exporter_serves_the_contract() -> None:
    exporter = ConsumerExporter("r", "g", "realtime")
    exporter.consumed("c0", 3, 300)
    exporter.set_lag("c0", 7)
    exporter.set_e2e(12.0, 80.0)
    exporter.set_age(3.0)
    exporter.set_active(True)
    exporter.rewound()
    served = _served(exporter.registry)
    assert served == _contract("stress consumers")
    assert exporter.registry.get_sample_value(
        "kbt_consumer_e2e_latency_seconds", {"run": "r", "group": "g", "mode": "realtime", "quantile": "0.99"}
    ) == 0.08  # fmt: skip


def test_every_engine_serves_the_same_delivery_buckets() -> None:
    array = re.search(r"DELIVERY_BUCKETS_S = \{([^}]*)\}", JAVA.read_text())
    assert array is not None, "ClientExporter.java declares DELIVERY_BUCKETS_S"
    java = tuple(float(v) for v in array.group(1).replace("\n", " ").split(",") if v.strip())
    assert java == DELIVERY_BUCKETS_S


def test_every_client_series_a_query_reads_is_in_the_contract() -> None:
    names = {s.name for s in CLIENT_SERIES}
    names |= {s.name + suffix for s in CLIENT_SERIES if s.kind is ClientKind.HISTOGRAM
              for suffix in ("_bucket", "_sum", "_count")}  # fmt: skip
    exprs = [q.expr for q in ALL_QUERIES] + list(live._queries(30.0).values())
    used = {m for e in exprs for m in re.findall(r"\bkbt_(?:client|consumer)_[a-z0-9_]+", e)}
    assert used and used <= names, sorted(used - names)


@given(st.lists(st.tuples(st.integers(1, 3_600_000_000), st.integers(1, 10**6)), max_size=40))
def test_delivery_buckets_are_cumulative_counts_of_the_histogram(pairs: list[tuple[int, int]]) -> None:
    buckets, total_s = histogram_buckets(pairs)
    assert [le for le, _ in buckets] == [repr(b) for b in DELIVERY_BUCKETS_S] + ["+Inf"]
    counts = [c for _, c in buckets]
    assert counts == sorted(counts)  # cumulative
    assert counts[-1] == sum(c for _, c in pairs)
    for (le, count), bound in zip(buckets, DELIVERY_BUCKETS_S, strict=False):
        assert count == sum(c for us, c in pairs if us <= bound * 1e6), le
    assert abs(total_s - sum(us * c for us, c in pairs) / 1e6) <= 1e-9 * max(1.0, total_s)
