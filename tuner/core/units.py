"""Bounded number, text and list types by unit: the one home of how large a figure may be.

Specs (tuner.spec.limits) and the documents kbt writes and reads back (run records, snapshots, a
diagnosis, probe records, recommendations, capture.json, lab state) hold their fields to these.
The bounds are physical maxima, far past any real cluster, not lab figures: a value past one is
a typo or a hostile file, and refusing it at validation keeps the model's arrays and loops (which
size themselves by brokers, queue caps, threads and list lengths) bounded in time and memory. A
value past its bound is one line naming the field and the bound (tuner.store.document).
"""

from __future__ import annotations

from array import array
from typing import Annotated, Any

from pydantic import AfterValidator, Field, PlainSerializer

from tuner.core.numbers import MAX_DURATION_S, MAX_MAGNITUDE

MAX_RATE_PER_S = 1e9  # messages or requests per second, per producer or per cluster
MAX_BYTES_PER_S = 1e12  # a terabyte a second: past any cluster's network
MAX_KAFKA_BYTES = 2**31 - 1  # Kafka's sizes (message.max.bytes, batch.size, a request) are Java ints
MAX_TOPIC_NAME_CHARS = 249  # Kafka's longest topic name
MAX_COUNT = 10**9  # things that exist at once: producers, consumers, keys, connections, lines
MAX_RATIO = 1e6  # a ratio of two like quantities (compression, a share, a skew, an error)
# queued.max.requests: far above any broker's setting (Kafka's default is 500); the queueing model
# builds arrays of this size (a saved model of 2^53 asked numpy for 64 PiB).
MAX_QUEUE_CAP = 1_000_000
MAX_THREADS = 1024  # a broker's network or request handler threads
MAX_MEMORY_BYTES = 2**40  # a terabyte: more queue than any host has
# Brokers in one cluster: the largest run a few thousand; the model keeps a list per broker and
# counts each one's partitions per topic (brokers x topics steps).
MAX_BROKERS = 10_000
MAX_BROKER_ID = 2**31 - 1  # Kafka's node.id is a Java int
# Partitions of one topic or cluster: KRaft clusters are tested to a few million.
MAX_PARTITIONS_TOTAL = 10_000_000
MAX_CORES = 1_000_000  # CPU cores: every broker of the largest cluster together
MAX_EPOCH_S = 1e10  # epoch seconds: the year 2286
# A count or byte total accumulated over a window (records acked, bytes sent): a terabyte a second
# for a day is past 2**53 already, so the float's exact range is the bound.
MAX_TALLY = int(MAX_MAGNITUDE)
# One string of a document (a name, a query, a note, a hex payload) and one list or mapping of
# measured entries (series points, samples, runs, brokers): far past any real document, and they
# keep a hostile file's cost linear and small. A list holds no more than a whole JSON document kbt
# reads may (tuner.core.inputs.MAX_NODES); the bound also holds documents validated in memory.
MAX_TEXT_CHARS = 1 << 20
MAX_ENTRIES = 1_000_000


def _within(limit: float) -> Any:
    """A measured figure's bound, either side of zero: a difference of counters or clocks can come out
    a little negative, and a document kbt writes must never fail on that; only the size is bounded."""
    return Field(ge=-limit, le=limit)


Ratio = Annotated[float, _within(MAX_RATIO)]
Rate = Annotated[float, _within(MAX_RATE_PER_S)]  # events per second
ByteRate = Annotated[float, _within(MAX_BYTES_PER_S)]  # bytes per second
Size = Annotated[float, _within(MAX_KAFKA_BYTES)]  # bytes of one message, batch or request
SizeInt = Annotated[int, Field(ge=0, le=MAX_KAFKA_BYTES)]
# records or partition batches in one produce request: each takes at least a byte of it
PerRequest = Annotated[float, _within(MAX_KAFKA_BYTES)]
Tally = Annotated[float, _within(MAX_TALLY)]  # a count or byte total over a window
TallyInt = Annotated[int, _within(MAX_TALLY)]
Counted = Annotated[int, Field(ge=0, le=MAX_TALLY)]  # what kbt counted itself (log lines): never below 0
Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
Seconds = Annotated[float, _within(MAX_DURATION_S)]
Millis = Annotated[float, _within(MAX_DURATION_S * 1000)]
MillisInt = Annotated[int, Field(ge=0, le=int(MAX_DURATION_S * 1000))]
Epoch = Annotated[float, _within(MAX_EPOCH_S)]
QueueLength = Annotated[float, _within(MAX_QUEUE_CAP)]  # requests waiting
QueueCap = Annotated[int, Field(ge=0, le=MAX_QUEUE_CAP)]
Threads = Annotated[int, Field(ge=0, le=MAX_THREADS)]
Cores = Annotated[float, _within(MAX_CORES)]
CoresInt = Annotated[int, Field(ge=0, le=MAX_CORES)]
Megabytes = Annotated[float, _within(MAX_MEMORY_BYTES / 1e6)]
Brokers = Annotated[int, Field(ge=0, le=MAX_BROKERS)]
BrokerId = Annotated[int, Field(ge=0, le=MAX_BROKER_ID)]
LeaderId = Annotated[int, Field(ge=-1, le=MAX_BROKER_ID)]  # a partition's leader; -1: it has none
Partitions = Annotated[int, Field(ge=0, le=MAX_PARTITIONS_TOTAL)]
# A figure of any unit above, totals included (a client's own metrics, a gate's limit and value,
# quantiles of bytes or of a ratio, a series' points): the float's exact range.
Figure = Annotated[float, _within(MAX_TALLY)]
CodecLevel = Annotated[int, Field(ge=-131072, le=22)]  # zstd's fastest (negative) to its highest
Port = Annotated[int, Field(ge=0, le=65535)]
Pid = Annotated[int, Field(ge=0, le=2**22)]  # Linux's pid_max at most
Text = Annotated[str, Field(max_length=MAX_TEXT_CHARS)]
Entries = Field(max_length=MAX_ENTRIES)  # on a list or mapping field: Annotated[list[X], Entries]


def _packed(values: list[float]) -> list[float]:
    return array("d", values)  # type: ignore[return-value]  # read as a sequence of floats: it is one


# A sample of times (request times, ms) validated as list[Millis] is, held as 8-byte floats: a list
# keeps a 24-byte float and an 8-byte pointer each (a capture's 10,000 rows of 2,000 times took
# 640 MB as lists, 160 MB so). Written and dumped as the same JSON list.
MillisSample = Annotated[
    list[Millis], Entries, AfterValidator(_packed), PlainSerializer(list, return_type=list[float])
]
