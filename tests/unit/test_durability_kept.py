"""Durability is the user's (issue 39): a recommendation changes batching, linger, compression and
partitioning, never acks, idempotence, retries or requests in flight. The demo's sweep
(loadtests/qunar-logs-short.yaml, baseline filebeat-like: acks 1, no idempotence) recommended on a
stand-in lab: every rendered file states the durability of the runs that confirmed it, and a kind
whose baseline is another client's states its own client's defaults."""

from __future__ import annotations

from typing import Any, cast

from hypothesis import given
from hypothesis import strategies as st

from tests.unit.test_recommend_vs_grid import BROKERS, StandInLab
from tuner.core.paths import repo_root
from tuner.core.properties import parse_properties
from tuner.model.confirm import Trials
from tuner.model.recommend import Request, recommend
from tuner.render.recommendation import render_files
from tuner.spec.clients import ClientProfile, kind_named, kind_of, profile_of
from tuner.spec.clients.base import SearchContext
from tuner.spec.clients.filebeat import config_of
from tuner.spec.clients.java import JavaProfile
from tuner.spec.clients.librdkafka import LibrdkafkaProfile
from tuner.spec.clients.producer import ProducerKind
from tuner.spec.engine_id import EngineId
from tuner.spec.loader import load_sweep
from tuner.spec.sweep import RunPlan, SweepSpec
from tuner.store import RunRecord
from tuner.store.recommendation import SLOBounds

DEMO = load_sweep(repo_root() / "loadtests" / "qunar-logs-short.yaml")
# One codec per kind: the durability does not depend on it, and each codec is a search of its own.
SLO = SLOBounds(p99_ms=1000.0, codecs={"librdkafka": ["zstd"], "java": ["zstd"]})
DURABLE = ("acks", "enable.idempotence", "retries", "max.in.flight.requests.per.connection")


class DemoLab(StandInLab):
    """The stand-in lab running the demo's workload, for both properties-configured kinds."""

    def __init__(self) -> None:
        super().__init__(60.0, request_error=0.03)
        self.engines = frozenset({EngineId.LIBRDKAFKA, EngineId.JAVA})

    def run(self, profile: ClientProfile, reason: str) -> RunRecord:
        spec = SweepSpec(
            name="qunar-logs-short-recommend", workload=DEMO.spec.workload, profiles=[profile],
            name_format="{profile}",
        )  # fmt: skip
        plan: RunPlan = spec.expand()[0].model_copy(update={"index": len(self.runs)})
        return self.record(plan)


def _demo_recommendation() -> tuple[dict[str, str], DemoLab, dict[str, list[RunRecord]]]:
    baseline = next(p for p in DEMO.spec.profiles if p.name == "filebeat-like")
    lab = DemoLab()
    rec = recommend(
        Request(
            workload=DEMO.spec.workload, brokers=BROKERS, slo=SLO, clients=["librdkafka", "java"],
            baselines={"librdkafka": baseline}, baseline=baseline, trials=cast(Trials, lab), max_trials=2,
        )
    )  # fmt: skip
    runs = {r.run_id: r for r in lab.runs}
    confirming = {c.client: [runs[i] for i in c.evidence] for c in rec.clients}
    assert {c.client for c in rec.clients} == {"librdkafka", "java"}
    assert all(c.status == "confirmed" for c in rec.clients)
    return render_files(rec), lab, confirming


def test_the_demos_files_state_the_durability_their_confirming_runs_used() -> None:
    files, lab, confirming = _demo_recommendation()
    for client, filename in (("librdkafka", "librdkafka.properties"), ("java", "java.properties")):
        stated = parse_properties(files[filename], filename)
        assert all(key in stated for key in DURABLE), filename  # written out, never left to defaults
        kind = kind_named(client)
        for run in confirming[client]:
            ran = kind.durability(run.plan.profile)
            assert {k: stated[k] for k in DURABLE} == ran, (filename, run.run_id)
    # Every trial of a kind ran its baseline's durability (librdkafka: filebeat-like's acks 1, no
    # idempotence) or, without a baseline of its kind, its own client's defaults (Java).
    by_kind = {
        c: {str(kind_named(c).durability(r.plan.profile)) for r in lab.runs if r.plan.profile.client == c}
        for c in ("librdkafka", "java")
    }
    assert by_kind["librdkafka"] == {
        str({"acks": "1", "enable.idempotence": "false", "retries": "2147483647",
             "max.in.flight.requests.per.connection": "1000000"})
    }  # fmt: skip
    assert by_kind["java"] == {
        str({"acks": "all", "enable.idempotence": "true", "retries": "2147483647",
             "max.in.flight.requests.per.connection": "5"})
    }  # fmt: skip
    # the file says where it departs from the client's default; the Logstash options agree with Java's
    assert "# Not the librdkafka client's default: acks=1 (default -1)." in files["librdkafka.properties"]
    assert "Not the Java client's default" not in files["java.properties"]
    # the header says where the durability came from (the recommendation's own lines)
    assert (
        "# Durability as baseline filebeat-like had it: acks=1, enable.idempotence=false,"
        in (files["librdkafka.properties"])
    )
    assert "# Durability (never tuned): acks=all, enable.idempotence=true," in files["java.properties"]
    logstash = files["logstash-kafka-output.conf"]
    assert 'acks => "all"' in logstash and "retries => 2147483647" in logstash
    assert "derives true from these (as the measured run)" in logstash


_DURABILITY = st.fixed_dictionaries(
    {},
    optional={
        "acks": st.sampled_from(["0", "1", "all"]),
        "idempotence": st.booleans(),
        "max_in_flight": st.integers(1, 10),
        "overrides": st.sampled_from([{}, {"retries": "3"}, {"message.send.max.retries": "7"}]),
    },
)


@given(client=st.sampled_from(["librdkafka", "java"]), durability=_DURABILITY)
def test_candidates_keep_a_baselines_durability(client: str, durability: dict[str, Any]) -> None:
    overrides: dict[str, str] = durability.get("overrides", {})
    if client == "java" and "message.send.max.retries" in overrides:  # not a Java property
        return
    try:
        base = profile_of({"name": "base", "client": client, **durability})
    except ValueError:
        return  # an inconsistent baseline (idempotence with acks 1) is refused where it is written
    kind = kind_of(base)
    keep = kind.kept(base)
    model = LibrdkafkaProfile if client == "librdkafka" else JavaProfile
    candidate = model(name="cand", linger_ms=500, batch_bytes=131_072, compression="zstd", **keep)
    assert kind.durability(candidate) == kind.durability(base)
    # and the file the candidate renders says so
    assert _stated(client, kind.artifact(candidate).text) == kind.durability(base)


def _stated(client: str, text: str) -> dict[str, str]:
    """The durability a properties file states, each setting by its main name (aliases read too)."""
    props = parse_properties(text, "artifact")
    kind = kind_named(client)
    assert isinstance(kind, ProducerKind)
    return {key: next(props[k] for k in (key, *aliases) if k in props) for key, aliases in kind.DURABILITY}


@given(acks=st.sampled_from([-1, 0, 1, None]), keyless=st.booleans(), budget=st.floats(50, 2000))
def test_filebeat_candidates_keep_the_baselines_required_acks(
    acks: int | None, keyless: bool, budget: float
) -> None:
    """Filebeat spells durability as output.kafka.required_acks: a baseline that sets it (-1: every
    in-sync replica) gets it in every candidate's filebeat.yml; one that leaves it unset leaves the
    candidates at Filebeat's own default too (nothing written)."""
    kafka: dict[str, Any] = {} if acks is None else {"required_acks": acks}
    base = profile_of({"name": "base", "client": "filebeat", "filebeat": {"output": {"kafka": kafka}}})
    kind = kind_of(base)
    ctx = SearchContext(budget, 200.0, keyless, 1_048_576, None, base)
    for family in kind.families(ctx):
        for codec in ("none", "lz4"):
            text = kind.artifact(family.make(min(100.0, family.knob_max), codec)).text
            stated = [line.strip() for line in text.splitlines() if line.strip().startswith("required_acks:")]
            assert stated == ([] if acks is None else [f"required_acks: {acks}"])


@given(keyless=st.booleans(), budget=st.floats(50, 2000))
def test_filebeat_candidates_keep_the_baselines_other_output_options(keyless: bool, budget: float) -> None:
    """A recommendation changes batching only: the baseline's max_message_bytes (Filebeat drops a
    larger event), worker, codec, keyed partitioning, client_id and SASL stay in every candidate's
    filebeat.yml; keyless traffic alone makes partitioning part of the search."""
    kafka = {
        "max_message_bytes": 5_000_000, "worker": 2, "codec.format.string": "%{[message]}",
        "partition.hash.hash": ["fields.id"], "client_id": "app-logs", "bulk_max_size": 8192,
        "username": "${KAFKA_USER}", "password": "${KAFKA_PASSWORD}", "sasl.mechanism": "SCRAM-SHA-512",
    }  # fmt: skip
    base = profile_of({"name": "base", "client": "filebeat", "filebeat": {"output.kafka": kafka}})
    kind = kind_of(base)
    wanted = config_of(base).kafka
    for family in kind.families(SearchContext(budget, 200.0, keyless, 10_000_000, None, base)):
        candidate = config_of(family.make(min(100.0, family.knob_max), "lz4")).kafka
        for option in ("max_message_bytes", "worker", "codec", "client_id", "username", "password", "sasl"):
            assert getattr(candidate, option) == getattr(wanted, option), option
        assert (candidate.partition.strategy == "random") is keyless
        assert candidate.compression == "lz4" and candidate.bulk_max_size != 8192  # the search's own


@given(client=st.sampled_from(["librdkafka", "java"]), keyless=st.booleans())
def test_properties_candidates_keep_the_baselines_overrides_but_the_searched_ones(
    client: str, keyless: bool
) -> None:
    """How the team runs the client (a larger max request, its buffer, its client id) stays; the
    batching the search sets is the candidate's, under every name the client takes for it."""
    own = {"librdkafka": {"message.max.bytes": "5000000", "queue.buffering.max.kbytes": "65536"},
           "java": {"max.request.size": "5000000", "buffer.memory": "67108864"}}[client]  # fmt: skip
    searched = {"librdkafka": {"queue.buffering.max.ms": "50", "compression.codec": "gzip"},
                "java": {"linger.ms": "50", "compression.type": "gzip"}}[client]  # fmt: skip
    base = profile_of(
        {"name": "base", "client": client, "overrides": {**own, **searched, "client.id": "svc"}}
    )
    kind = kind_of(base)
    for family in kind.families(SearchContext(500.0, 200.0, keyless, 10_000_000, None, base)):
        settings = kind.client_settings(family.make(100.0, "lz4"))
        assert {k: settings[k] for k in (*own, "client.id")} == {**own, "client.id": "svc"}
        assert not set(searched) & set(settings) - {"linger.ms", "compression.type"}
        assert (settings["linger.ms"], settings["compression.type"]) == ("100", "lz4")
