"""Filebeat (libbeat's memory queue + Sarama): a typed output.kafka + queue.mem section.

A `client: filebeat` profile carries its settings under `filebeat:`, spelled as in filebeat.yml
(nested or dotted keys, durations as Filebeat writes them):

    client: filebeat
    filebeat:
      output.kafka: {bulk_max_size: 2048, bulk_flush_frequency: 500ms}
      queue.mem: {events: 4096, flush.min_events: 2048, flush.timeout: 0s}

The producer knobs of librdkafka/Java (linger_ms, batch_messages, overrides ...) are errors here:
each Filebeat option has one spelling. The queue hands the output batches of up to
min(bulk_max_size, flush.min_events) events, waiting up to flush.timeout to fill one; Sarama sends
one request per broker per flush: after bulk_flush_frequency, when bulk_max_size events are
buffered, or as soon as possible (frequency 0; Filebeat 7.17 keeps one request in flight per
broker). Its load runs real Filebeat pods when a build is installed, else the Sarama engine
(loadtests/sarama-engine/); the pods' input side is `input` (tuner/spec/filebeat_input.py), e.g.
`input: {type: filestream}`, and the harvester's bursts are part of the model.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import SerializationInfo, field_serializer, field_validator

from tuner.core.numbers import cut_value, document_number, parse_int
from tuner.core.yaml_block import block_yaml, yaml_scalar
from tuner.spec.base import config_string, flat_settings
from tuner.spec.clients.base import (
    ClientKind,
    Family,
    Rendered,
    SearchContext,
    name_of,
    team_file_profile,
)
from tuner.spec.clients.rules import FilebeatRules, Partitioning, PartitionMode
from tuner.spec.duration import Duration
from tuner.spec.engine_id import EngineId
from tuner.spec.filebeat import FilebeatConfig
from tuner.spec.filebeat_lines import DEFAULT_FILEBEAT, line_of
from tuner.spec.filebeat_load import expand_dotted, load_filebeat
from tuner.spec.profile import ProfileBase

if TYPE_CHECKING:
    from tuner.spec.clients import ClientProfile

# Placeholders: the engine targets the lab's bootstrap servers and the run's topic.
PLACEHOLDER_HOSTS = ["${KAFKA_HOSTS}"]
PLACEHOLDER_TOPIC = "${KAFKA_TOPIC}"
MIN_BULK = 2048  # the recommender's smallest bulk_max_size (Filebeat's default)
# The harvester's EOF backoff in recommended profiles (7.17's log input: 1s, growing to 10s).
INPUT_BACKOFF = Duration.of_ms(100)
INPUT_MAX_BACKOFF = Duration.of_ms(200)
# The Filebeat build kbt runs (7.17.29): its Sarama fork's one request in flight per broker.
RUNNING_IN_FLIGHT = 1
# A run record's client engine when real Filebeat pods ran (not the Sarama emulation).
REAL_ENGINE_NAME = "filebeat-real"
EMULATED_IN_FLIGHT = 6  # the Sarama engine: Net.MaxOpenRequests 5, plus the set being handed over
# Per event, from the queue into Sarama through its one output worker: real Filebeat JSON-encodes
# each event on the way, the Sarama engine hands over ready-made values. Real: fitted on the real
# 7.17 runs the harvester constants came from (tests/unit/test_model_requests.py), after the cycle
# below was measured; no held-out run (docs/benchmarks.md "The Filebeat sync-flush path").
RUNNING_ENTRY_SPACING_S = 18e-6
EMULATED_ENTRY_SPACING_S = 5e-6
# Real Filebeat's Sarama cycle per broker with its one request in flight, from a request's write to
# the next one's while events wait: the broker's round trip, the successes handed back one by one,
# the next request built. Traced with strace on real 7.17.29 pods (4 x 40/s of 1.6 KB lines, 24
# partitions, one broker, `log` and `filestream`; 4 x 400/s for the build), none a held-out run:
# 74 cycles, median 5.3 ms of which ~0.5 ms building its ~64 KB, log-sd 0.86; building (gzip)
# 8.5 ns per uncompressed byte (the gap from an answer to the next write, 64 KB vs 640 KB requests).
RUNNING_CYCLE_S = 4.8e-3
RUNNING_CYCLE_SPREAD = 0.86
RUNNING_BUILD_S_PER_BYTE = 8.5e-9
# The harvester hands the lines of one read into the pipeline this far apart (fitted on the real
# 7.17 runs of docs/benchmarks.md "Filebeat model", a loaded host). It follows the host's speed:
# run records of the synchronous flush path refit it (tuner/model/evidence.py, calibrate).
RUNNING_HARVEST_SPACING_S = 50e-6
_HINTS = {
    "linger_ms": " (set filebeat: output.kafka.bulk_flush_frequency)",
    "batch_messages": " (set filebeat: output.kafka.bulk_max_size)",
    "compression": " (set filebeat: output.kafka.compression)",
    "compression_level": " (set filebeat: output.kafka.compression_level)",
    "acks": " (set filebeat: output.kafka.required_acks)",
    "partitioner": " (set filebeat: output.kafka.partition)",
    "overrides": " (set Filebeat options under filebeat:)",
    "batch_bytes": " (Filebeat does not expose Sarama's Flush.Bytes)",
    "max_in_flight": " (Filebeat does not expose Sarama's Net.MaxOpenRequests; it stays 5)",
    "idempotence": " (Filebeat's Kafka output has no idempotent producer)",
}


def as_fragment(value: Any) -> Any:
    """A `filebeat:` section as FilebeatConfig input: dotted keys nested (as Filebeat reads them),
    the engine's placeholder hosts and topic filled in."""
    if not isinstance(value, Mapping):
        return value
    data = expand_dotted(value)
    output = data.setdefault("output", {})  # not a mapping: the model says so, in one line
    kafka = output.setdefault("kafka", {}) if isinstance(output, dict) else None
    if isinstance(kafka, dict):
        kafka.setdefault("hosts", list(PLACEHOLDER_HOSTS))
        kafka.setdefault("topic", PLACEHOLDER_TOPIC)
    return data


def compact(config: FilebeatConfig, mode: str = "python") -> dict[str, Any]:
    """The settings the profile sets, nested as filebeat.yml (the engine's placeholder hosts and
    topic left out). A value set equal to a default stays: it is the user's choice, and another
    Filebeat version's default may differ. An unset option is left out, never written as null."""
    data = config.model_dump(mode=mode, exclude_unset=True, exclude_none=True)
    if config.line != line_of(DEFAULT_FILEBEAT):
        # The model's defaults are 7.17's: another line's queue is stated whole, so a value that
        # happens to equal 7.17's default is not lost (and the line's own defaults are not assumed).
        data["queue"] = {"mem": config.mem.model_dump(mode=mode, exclude_none=True)}
    kafka = data.get("output", {}).get("kafka", {})
    for key, placeholder in (("hosts", PLACEHOLDER_HOSTS), ("topic", PLACEHOLDER_TOPIC)):
        if kafka.get(key) == placeholder:
            del kafka[key]
    return data


class FilebeatProfile(ProfileBase):
    """Filebeat's settings: an output.kafka + queue.mem (+ input) fragment spelled as in filebeat.yml
    (hosts and topic are the engine's)."""

    client: Literal["filebeat"] = "filebeat"
    filebeat: FilebeatConfig | None = None

    @field_validator("filebeat", mode="before")
    @classmethod
    def _fragment(cls, value: Any) -> Any:
        return as_fragment(value)

    @field_serializer("filebeat")
    def _compact(self, value: FilebeatConfig | None, info: SerializationInfo) -> dict[str, Any] | None:
        """Only what the profile sets (records and dumps stay short and read back the same)."""
        return None if value is None else compact(value, info.mode)


def config_of(profile: ProfileBase) -> FilebeatConfig:
    """The profile's Filebeat configuration (Filebeat's defaults where it sets nothing); ValueError
    for another kind's profile."""
    if not isinstance(profile, FilebeatProfile):
        raise ValueError(f"profile {profile.name} is a {profile.client} profile, not a filebeat one")
    return profile.filebeat or FilebeatConfig.model_validate(as_fragment({}))


class Filebeat(ClientKind[FilebeatProfile]):
    name = "filebeat"
    title = "Filebeat"
    engine = EngineId.FILEBEAT  # real Filebeat or the Sarama emulation (tuner/driver/filebeat/engine.py)
    model = FilebeatProfile
    hints = _HINTS
    codecs: tuple[str, ...] = ("none", "gzip", "snappy", "lz4")  # libbeat offers no zstd
    multi_partition_requests = True
    software = ("sarama",)
    client_ids = ("beats",)
    alternatives = (  # `workers`, when set, in place of `worker`; one partition strategy
        ("filebeat.output.kafka.workers", "filebeat.output.kafka.worker"),
        tuple(f"filebeat.output.kafka.partition.{s}" for s in ("random", "round_robin", "hash")),
    )

    def own_file_profile(self, path: Path, data: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """A team's filebeat.yml named as a profile: its batching, queue and encoding as Filebeat
        reads them (`${VAR}` from the environment); where it sends and how it connects
        (DEPLOYMENT_OPTIONS) are the lab's or the target's, as each deployment's are its own."""
        # data None: named `filebeat:FILE`; else a YAML file that is Filebeat's (an output, no `client`)
        if data is not None and ("client" in data or all(str(k).split(".")[0] != "output" for k in data)):
            return None
        fragment = load_filebeat(path).config.model_dump(mode="json", exclude_unset=True, exclude_none=True)
        kafka = fragment.get("output", {}).get("kafka", {})
        left = sorted(option for option in DEPLOYMENT_OPTIONS if kafka.pop(option, None) is not None)
        return team_file_profile(self, path, left, filebeat=fragment)

    def idle(self, profile: FilebeatProfile, path: Sequence[str]) -> tuple[str, str] | None:
        least = config_of(profile).mem.flush.min_events
        if ".".join(path) == "filebeat.queue.mem.flush.timeout" and least <= 1:
            gate = "filebeat.queue.mem.flush.min_events"
            return (
                gate,
                f"with queue.mem.flush.min_events {least}, Filebeat hands events over at once",
            )
        return None

    def client_settings(self, profile: FilebeatProfile) -> dict[str, str]:
        """filebeat.yml option paths that differ from Filebeat's defaults, as filebeat.yml text."""
        settings = flat_settings(compact(config_of(profile), "json"))
        if settings.get("output.kafka") == "{}":  # emptied by leaving out the engine's hosts and topic
            del settings["output.kafka"]
        return settings

    def rules(self, profile: FilebeatProfile) -> FilebeatRules:
        config = config_of(profile)
        kafka, inp = config.kafka, config.input
        emulated = inp.engine == "emulated"
        mem = config.mem
        part = kafka.partition
        # partition.hash without a key: a random partition per event, as partition.random's default
        keyless: PartitionMode = "round_robin" if part.strategy == "round_robin" else "random"
        if part.strategy == "random" and part.group_events > 1:
            keyless = "sticky_events"
        keyed: PartitionMode = "hash" if part.strategy == "hash" else keyless
        batch = config.batch_events
        return FilebeatRules(
            kind=self.name,
            queue_batch=batch,
            queue_fill=config.fill_events,
            queue_timeout_ms=mem.effective_flush_timeout.ms,
            queue_events=mem.events,
            flush_ms=kafka.bulk_flush_frequency.ms,
            flush_messages=kafka.bulk_max_size if kafka.bulk_max_size > 0 else batch,
            max_message_bytes=kafka.max_message_bytes,
            partitioning=Partitioning(keyless=keyless, keyed=keyed, sticky_events=part.group_events),
            compression=kafka.compression,
            read_backoff_ms=0.0 if emulated else inp.effective("backoff") * 1000,
            read_max_backoff_ms=0.0 if emulated else inp.effective("max_backoff") * 1000,
            read_backoff_factor=1.0 if emulated else float(inp.effective("backoff_factor")),
            reader="" if emulated else inp.type,
            in_flight=EMULATED_IN_FLIGHT if emulated else RUNNING_IN_FLIGHT,
            entry_spacing_s=EMULATED_ENTRY_SPACING_S if emulated else RUNNING_ENTRY_SPACING_S,
            cycle_s=0.0 if emulated else RUNNING_CYCLE_S,
            cycle_spread=0.0 if emulated else RUNNING_CYCLE_SPREAD,
            build_s_per_byte=0.0 if emulated else RUNNING_BUILD_S_PER_BYTE,
            harvest_spacing_s=0.0 if emulated else RUNNING_HARVEST_SPACING_S,
        )

    def render(self, profile: FilebeatProfile, header: Sequence[str]) -> Rendered:
        return Rendered(
            "filebeat.yml", filebeat_yaml(config_of(profile), [f"# {h}" if h else "#" for h in header])
        )

    def check_fits(self, profile: FilebeatProfile, topic_max_bytes: int, event_bytes: int | None) -> None:
        """max_message_bytes above the topic limit: the broker rejects the batch and Filebeat drops
        it; events above max_message_bytes: Filebeat drops them."""
        limit = config_of(profile).kafka.max_message_bytes
        where = f"output.kafka.max_message_bytes: {limit} (profile {profile.name})"
        if limit > topic_max_bytes:
            raise ValueError(
                f"{where} exceeds the topic's max.message.bytes {topic_max_bytes}: Filebeat would drop"
                " rejected batches"
            )
        if event_bytes is not None and event_bytes > limit:
            raise ValueError(
                f"{where} is below the workload's {event_bytes}-byte events: Filebeat would drop them"
            )

    def kept(self, base: ClientProfile | None) -> dict[str, Any]:
        """The baseline's `output.kafka.required_acks` when it sets one: Filebeat spells durability
        in its own section, so the base class's producer fields never find it, and a candidate
        without it would run Filebeat's default (1) under a baseline that asked for -1."""
        if not isinstance(base, FilebeatProfile):
            return {}
        kafka = config_of(base).kafka
        return {"acks": str(kafka.required_acks)} if "required_acks" in kafka.model_fields_set else {}

    def captured(self, acks: str, compressed: bool, record_limit: int | None) -> dict[str, Any]:
        kafka: dict[str, Any] = {"required_acks": {"all": -1, "0": 0, "1": 1}[acks]}
        if not compressed:
            kafka["compression"] = "none"  # else Filebeat's default codec (gzip)
        if record_limit is not None:
            kafka["max_message_bytes"] = record_limit
        return {"filebeat": {"output.kafka": kafka}}

    def describe(self, profile: FilebeatProfile) -> str:
        config = config_of(profile)
        parts = [
            self.name,
            f"bulk_flush_frequency {config.kafka.bulk_flush_frequency}",
            f"flush.timeout {config.mem.flush.timeout}",
            f"bulk_max_size {config.kafka.bulk_max_size}",
        ]
        if config.kafka.partition.strategy != "hash":
            parts.append(f"{config.kafka.partition.strategy} {config.kafka.partition.group_events}")
        parts.append(config.kafka.compression)
        return " ".join(parts)

    def families(self, ctx: SearchContext) -> list[Family]:
        bulk = MIN_BULK
        while bulk < 16_384 and bulk < 1.5 * ctx.rate_per_producer * ctx.budget_ms / 1000:
            bulk *= 2
        acks = self.kept(ctx.base).get("acks")
        group = bulk if ctx.keyless else None
        rest = _not_searched(ctx.base, keyless=ctx.keyless)
        # The Filebeat version is the user's, like durability: its line decides the queue's
        # hand-over and which inputs exist (tuner/spec/filebeat_lines.py).
        version = config_of(ctx.base).filebeat_version if isinstance(ctx.base, FilebeatProfile) else None

        def make(
            frequency: Duration, timeout: Duration, codec: str, knob: float, tag: str
        ) -> FilebeatProfile:
            kafka: dict[str, Any] = {
                **rest,
                "bulk_max_size": bulk,
                "bulk_flush_frequency": frequency,
                "compression": codec,
            }
            if group is not None:
                kafka["partition"] = {"random": {"group_events": group}}
            if acks is not None:
                kafka["required_acks"] = int(acks)  # kept(): the baseline's own -1, 0 or 1
            section = {
                "output": {"kafka": kafka},
                "queue": {"mem": {"events": 2 * bulk, "flush": {"min_events": bulk, "timeout": timeout}}},
                # Real Filebeat's harvester sleeps up to `backoff` (1 s by default) at EOF before
                # it reads new lines: a quick one leaves the budget to the queue and Sarama.
                "input": {"backoff": INPUT_BACKOFF, "max_backoff": INPUT_MAX_BACKOFF},
            }
            if version is not None and version != DEFAULT_FILEBEAT:
                section["filebeat_version"] = version
            return FilebeatProfile(name=name_of(self.name, codec, knob, tag), filebeat=section)

        def frequency(ms: float, codec: str) -> FilebeatProfile:
            return make(Duration.of_ms(round(ms)), Duration(0), codec, ms, "")

        def queue_timeout(ms: float, codec: str) -> FilebeatProfile:
            return make(Duration(0), Duration.of_ms(round(ms)), codec, ms, "q")

        budget = max(1.0, ctx.budget_ms - INPUT_MAX_BACKOFF.ms)  # what the harvester may take
        return [
            Family("Sarama flush frequency, queue at once", frequency, budget),
            Family("queue flush timeout, Sarama at once", queue_timeout, budget),
        ]

    def upgrade_v1(self, data: dict[str, Any]) -> dict[str, Any]:
        """Version-1 records spelled Filebeat settings as producer knobs plus dotted string
        overrides; today's profile carries them as one typed `filebeat:` section."""
        if "filebeat" in data:
            return data
        old = {k: data.pop(k) for k in list(data) if k in _HINTS}
        _check_v1(old)
        kafka: dict[str, Any] = {}
        if old.get("linger_ms") is not None:
            kafka["bulk_flush_frequency"] = Duration.of_ms(document_number(old["linger_ms"], "linger_ms"))
        if old.get("batch_messages") is not None:
            kafka["bulk_max_size"] = old["batch_messages"]
        for knob in ("compression", "compression_level"):
            if old.get(knob) is not None:
                kafka[knob] = old[knob]
        if old.get("acks") is not None:
            kafka["required_acks"] = -1 if old["acks"] == "all" else parse_int(str(old["acks"]), "acks")
        section: dict[str, Any] = {"output.kafka": kafka}
        section.update(old.get("overrides") or {})  # dotted paths; the schema reads "4096" as 4096
        partitioner = old.get("partitioner") or "default"
        if partitioner != "default":
            group = (
                FilebeatConfig.model_validate(as_fragment(section)).batch_events
                if partitioner == "sticky"
                else 1
            )
            kafka["partition"] = (
                {"hash": {}} if partitioner == "hash" else {"random": {"group_events": group}}
            )
        data["filebeat"] = section
        return data


# The output.kafka options that say where a deployment sends and how it connects: a team's own file
# run on the lab (or a target) leaves them to it. `key` goes too: it names the team's event fields,
# which the lab's events do not carry.
DEPLOYMENT_OPTIONS = frozenset(
    {"hosts", "topic", "topics", "key", "username", "password", "sasl", "ssl", "kerberos", "enable_krb5_fast"}
)
# The output.kafka options the search sets (hosts and topic are the deployment's); every other
# option a baseline sets is how the team runs Filebeat (max_message_bytes, worker, key, codec, TLS,
# required_acks ...) and stays in each candidate: Filebeat's default in its place would drop large
# events, re-encode them or move keys to other partitions.
_SEARCHED = frozenset(
    {"hosts", "topic", "bulk_max_size", "bulk_flush_frequency", "compression", "compression_level"}
)


def _not_searched(base: ClientProfile | None, keyless: bool) -> dict[str, Any]:
    """The baseline's output.kafka options a candidate keeps (its partitioning too, unless keyless
    events make grouping them part of the search)."""
    if not isinstance(base, FilebeatProfile):
        return {}
    kafka = compact(config_of(base)).get("output", {}).get("kafka", {})
    return {k: v for k, v in kafka.items() if k not in _SEARCHED and not (keyless and k == "partition")}


def _check_v1(old: dict[str, Any]) -> None:
    """The old profile fields read as fresh input would be: ValueError naming the field."""
    for knob in ("linger_ms", "batch_messages", "compression_level"):
        if old.get(knob) is not None:
            number = document_number(old[knob], f"profile.{knob}", whole=knob != "linger_ms")
            if number < 0:
                raise ValueError(f"profile.{knob}: must not be negative (got {number:g})")
    acks = old.get("acks")
    if acks is not None and str(acks) not in ("all", "-1", "0", "1"):
        raise ValueError(f"profile.acks: must be all, -1, 0 or 1 (got {cut_value(str(acks))})")
    overrides = old.get("overrides")
    if overrides is not None and not isinstance(overrides, dict):
        raise ValueError(f"profile.overrides: must be a mapping (got {type(overrides).__name__})")
    for knob in ("compression", "partitioner"):
        if old.get(knob) is not None and not isinstance(old[knob], str):
            raise ValueError(f"profile.{knob}: must be a name (got {cut_value(str(old[knob]))})")


# ---- filebeat.yml -------------------------------------------------------------------------------

# The options a rendered file writes first, in this order, when the profile sets them; any other
# option it sets follows. Options it leaves unset are not written: Filebeat's own defaults apply.
_OUTPUT_OPTIONS = (
    "bulk_max_size", "bulk_flush_frequency", "compression", "compression_level", "required_acks",
    "max_message_bytes", "partition", "version",
)  # fmt: skip
_QUEUE_OPTIONS = ("events", "flush.min_events", "flush.timeout")
# The brokers as one string: Filebeat (go-ucfg) reads a comma-separated variable into a list
# itself, while a list element holding it (["${KAFKA_HOSTS}"]) becomes a list inside the list and
# 7.17 exits ("can not convert 'object' into 'string' accessing 'output.kafka.hosts.0'").
HOSTS_LINE = 'hosts: "${KAFKA_HOSTS}"'
DEFAULT_NOTES = {
    "output.kafka.version": "the Kafka protocol version Sarama speaks: Kafka 4.x brokers refuse anything"
    " below 2.1.0, and Filebeat 7.17 defaults to 1.0.0, so it is always stated.",
    "output.kafka.bulk_max_size": "most events per Kafka request (Sarama Flush.MaxMessages) and per batch"
    " taken from the queue.",
    "output.kafka.bulk_flush_frequency": "how long Sarama may hold events to fill a request (0 = send as"
    " soon as possible).",
    "output.kafka.compression": "per partition batch; larger batches compress better.",
    "output.kafka.required_acks": "1 = the leader wrote it; -1 = every in-sync replica did.",
    "output.kafka.max_message_bytes": "larger events are dropped; keep at or below the topic's"
    " max.message.bytes.",
    "queue.mem.events": "events the queue holds, including those sent but not yet acknowledged.",
    "queue.mem.flush.min_events": "most events per batch handed to the output (caps bulk_max_size).",
    "queue.mem.flush.timeout": "how long a batch may wait to reach flush.min_events (0s = at once).",
}


def filebeat_yaml(
    config: FilebeatConfig, header: Sequence[str], notes: Mapping[str, str] | None = None
) -> str:
    """An output.kafka + queue.mem fragment of filebeat.yml under the `header` lines: the options
    the profile sets (and `version`, which Kafka 4.x needs), each with its note (`notes` by option
    path, else the default note); what it leaves unset stays Filebeat's default. Durations are
    written as the typed value renders itself. The text is the same with or without a header
    below the header's own lines (ClientKind.artifact)."""
    notes = notes or {}
    check = "kbt check filebeat <file>"
    if config.filebeat_version != DEFAULT_FILEBEAT:
        check = f"kbt check filebeat --filebeat-version {config.filebeat_version} <file>"
        header = [
            *header,
            f"# For Filebeat {config.filebeat_version} (queue rules of the {config.line.name} line).",
        ]
    data = compact(config, "json")
    kafka: dict[str, Any] = dict(data.get("output", {}).get("kafka", {}))
    for own in ("hosts", "topic"):  # the deployment's, from its environment (the lines below)
        kafka.pop(own, None)
    kafka["version"] = config.kafka.version  # always: 7.17's default (1.0.0) is refused by Kafka 4.x
    out = [
        *header,
        f"# Check edits with `{check}`. Credentials come from the environment only.",
        "# Options not written here keep Filebeat's own defaults.",
        "output.kafka:",
        "  # KAFKA_HOSTS: every broker, comma-separated (h1:9092,h2:9092,h3:9092). Keep it one string:",
        '  # as a list element (["${KAFKA_HOSTS}"]) several brokers make Filebeat exit.',
        f"  {HOSTS_LINE}",
        '  topic: "${KAFKA_TOPIC}"',
    ]
    if "username" not in kafka:
        out += [
            "  # With SASL: username and password only as ${VAR} references.",
            '  # username: "${KAFKA_USERNAME}"',
            '  # password: "${KAFKA_PASSWORD}"',
            "  # sasl.mechanism: SCRAM-SHA-512",
        ]
    for option in [o for o in _OUTPUT_OPTIONS if o in kafka] + [o for o in kafka if o not in _OUTPUT_OPTIONS]:
        path = f"output.kafka.{option}"
        if option == "partition":
            out += _partition_lines(config.kafka.partition.strategy, kafka[option], notes)
            continue
        out += _comment(notes.get(path) or DEFAULT_NOTES.get(path))
        out += _option_lines(option, kafka[option], "  ")
    mem = flat_settings(data.get("queue", {}).get("mem", {}))
    if mem:
        out.append("queue.mem:")
        for option in [o for o in _QUEUE_OPTIONS if o in mem] + [o for o in mem if o not in _QUEUE_OPTIONS]:
            path = f"queue.mem.{option}"
            out += _comment(notes.get(path) or DEFAULT_NOTES.get(path))
            out.append(f"  {option}: {mem[option]}")
    else:
        line = config.line
        out.append(
            f"# queue.mem: Filebeat {line.name}'s defaults (events {line.queue_events}, flush.min_events"
            f" {line.queue_min_events}, flush.timeout {line.queue_timeout})."
        )
    return "\n".join(out + _input_lines(config)) + "\n"


def _option_lines(option: str, value: Any, indent: str) -> list[str]:
    """One output.kafka option as filebeat.yml lines (a section in block style)."""
    if isinstance(value, dict | list):
        return [indent + line for line in block_yaml({option: value})]
    return [f"{indent}{option}: {yaml_scalar(value)}"]


def _input_lines(config: FilebeatConfig) -> list[str]:
    """The input options the measured pods read their files with, as a commented block: they
    belong on the user's own input (its paths are theirs), and they set the bursts the queue sees."""
    options = config.input.input_options()
    if not options:
        return []
    out = [
        "# This profile's input options: set them on your own input (its paths are yours); the",
        "# harvester's EOF backoff sets how many events reach the queue at once.",
        "# filebeat.inputs:",
        f"#   - type: {config.input.type}",
    ]
    out += [f"#     {name}: {config_string(value)}" for name, value in options.items()]
    return out


def _comment(text: str | None) -> list[str]:
    """A note above an option of a section (two spaces in)."""
    if not text:
        return []
    return [f"  # {line}" for line in textwrap.wrap(text[:1].upper() + text[1:], width=94)]


def _partition_lines(strategy: str, section: Mapping[str, Any], notes: Mapping[str, str]) -> list[str]:
    """The partition strategy the profile sets, as `partition.<strategy>:` and its options."""
    out = _comment(notes.get(f"output.kafka.partition.{strategy}.group_events"))
    for name, options in section.items():
        out.append(f"  partition.{name}:" + ("" if options else " {}"))
        for option, value in (options or {}).items():
            out += _option_lines(option, value, "    ")
    return out


KIND = Filebeat()
