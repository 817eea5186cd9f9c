"""ProbeRecord: the JSON document `kbt probe compression --json PATH` writes, schema-versioned.

The recommender reads it to pick a codec and the smallest batch worth forming. One record holds one
probe run: its options, the codec libraries' versions, and per log sample one curve per codec/level
(ratio, batch bytes and CPU per messages-per-batch) with its knee. docs/probe-record.md is generated
from these models (field descriptions included).

Compatibility: a reader accepts exactly PROBE_SCHEMA_VERSION; adding an optional field keeps the
version, anything else bumps it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from tuner.core.frozen import Frozen
from tuner.core.probe_figures import ProbePoint, Quantiles
from tuner.core.units import (
    CodecLevel,
    Count,
    Entries,
    Epoch,
    MillisInt,
    Ratio,
    Size,
    SizeInt,
    TallyInt,
    Text,
)
from tuner.core.writes import json_text
from tuner.spec.probe import Codec, ProbeOptions
from tuner.store.document import read_document, validated

PROBE_SCHEMA_VERSION = 1
PROBE_KIND: Literal["compression-probe"] = "compression-probe"

# A curve's points, defined once in tuner.core.probe_figures: the record's schema names them here.
__all__ = ["ProbePoint", "Quantiles"]


class Knee(Frozen):
    """Where a curve stops paying: computed by tuner.model.knee from the median ratios."""

    plateau_ratio: Ratio = Field(description="Highest median ratio measured (the plateau).")
    plateau_batch_messages: Count = Field(description="Batch size of the plateau ratio.")
    knee_batch_messages: Count = Field(
        description="Smallest batch size whose median ratio reaches `knee_fraction` of the plateau."
    )
    knee_fraction: Ratio = Field(description="0.9: the knee is at 90% of the plateau.")
    half_batch_messages: Count = Field(
        description="Smallest batch size reaching half the plateau: below it more than half is lost."
    )
    last_step_gain: Ratio | None = Field(
        description="Median ratio at the largest batch / the best median ratio of all smaller ones,"
        " minus 1 (null with one batch size)."
    )
    plateau_reached: bool = Field(
        description="False when the largest batch still gained 5% or more (last_step_gain): the"
        " true plateau (and knee) may lie above the largest batch measured."
    )


class ProbeCurve(Frozen):
    """One codec at one level on one sample, every batch size measured."""

    codec: Codec = Field(description="gzip, snappy, lz4 or zstd.")
    level: CodecLevel | None = Field(description="Compression level; null for snappy, which has none.")
    label: Text = Field(description='"zstd-3", "gzip-6", "snappy", ...')
    clients: Annotated[list[Text], Entries] = Field(description="Producer clients that can send this codec.")
    points: Annotated[list[ProbePoint], Entries] = Field(
        description="One per batch size measured, ascending."
    )
    knee: Knee | None = Field(default=None, description="Null only when no point was measured.")


class ProbeSample(Frozen):
    """One log file, cut into messages."""

    name: Text = Field(description="The file's name (no directories).")
    sha256: Text = Field(description="Of the file's bytes: the same sample gives the same batches.")
    file_bytes: TallyInt = Field(description="Size of the file.")
    lines: Count = Field(description="Non-blank lines in the file.")
    messages: Count = Field(description="Messages the lines were cut into.")
    mean_message_bytes: Size = Field(description="Mean message (record value) size.")
    event_bytes: SizeInt | None = Field(
        description="Target event size when lines were joined; null: one message per line."
    )
    skipped_batch_sizes: Annotated[list[Count], Entries] = Field(
        default_factory=list,
        description="Requested batch sizes the sample holds fewer than 4 times over (not measured).",
    )
    curves: Annotated[list[ProbeCurve], Entries] = Field(
        description="One per codec/level, in --codecs order."
    )
    advice: Text = Field(
        default="", description="One sentence: best codec, its knee, which clients can use it."
    )


class Framing(Frozen):
    """How batches were formed, so the ratios can be compared with what a broker stores."""

    format: Literal["kafka-record-batch-v2"] = Field(
        default="kafka-record-batch-v2", description="Records framed as in a magic-2 batch."
    )
    header_bytes: SizeInt = Field(
        default=61, description="Uncompressed batch header, counted in batch bytes."
    )
    compressed_part: Literal["records"] = Field(default="records", description="What the codec compresses.")
    keys: Literal["null"] = Field(default="null", description="Record keys (keyless, as log shippers send).")
    headers: Count = Field(default=0, description="Record headers per record.")
    timestamp_step_ms: MillisInt = Field(
        default=1, description="Timestamp delta between consecutive records."
    )
    cpu_clock: Literal["thread"] = Field(
        default="thread", description="CPU times are the measuring thread's CPU time, not wall clock."
    )


class ProbeRecord(Frozen):
    """A compression probe run."""

    schema_version: Count = Field(default=PROBE_SCHEMA_VERSION, description="Readers accept exactly one.")
    kind: Literal["compression-probe"] = Field(default=PROBE_KIND, description="What the document is.")
    created_at: Epoch = Field(description="Epoch seconds when the probe finished.")
    kbt_version: Text = Field(description="The kbt that measured.")
    libraries: Annotated[dict[Text, Text], Entries] = Field(
        description="Codec library versions (zlib, python-snappy, lz4, zstandard)."
    )
    options: ProbeOptions = Field(description="What was asked for.")
    framing: Framing = Field(default=Framing(), description="How batches were formed.")
    samples: Annotated[list[ProbeSample], Entries] = Field(description="One per file, in the order given.")


def probe_record_text(record: ProbeRecord) -> str:
    """The probe record as the JSON document it is stored as."""
    return json_text(record.model_dump(mode="json"))


def load_probe_record(path: Path) -> ProbeRecord:
    """Read a probe record; one-line BadInput when it is missing, of another version or invalid."""
    data = read_document(
        path, "probe record", PROBE_KIND, "a compression probe record", (PROBE_SCHEMA_VERSION,)
    )
    return validated(ProbeRecord, data, path, "probe record")
