"""The input side of a Filebeat pod: which input reads the pod's log file and how eagerly.

Real Filebeat does not hand events to its queue as lines are written: a harvester reads the file
until EOF, then sleeps (`backoff`, growing by `backoff_factor` up to `max_backoff` while nothing new
arrives), and the input looks for files every `scan_frequency` / `prospector.scanner.check_interval`.
Events therefore reach the memory queue in bursts, and the burst size shapes the produce requests as
much as the queue and output settings do. A profile sets them in its Filebeat section,
`filebeat: {input: {type: filestream, backoff: 250ms}}` (or dotted, `input.backoff: 250ms`), and a
sweep varies them like any other option.

One kbt name per knob, mapped to each input type's own option (filebeat/input/log/config.go,
filebeat/input/filestream/config.go, 7.17):

    kbt knob               log input                 filestream input
    backoff                backoff (1s)              backoff.init (2s)
    max_backoff            max_backoff (10s)         backoff.max (10s)
    backoff_factor         backoff_factor (2)        (none)
    check_interval         scan_frequency (10s)      prospector.scanner.check_interval (10s)
    close_eof              close_eof (false)         close.reader.on_eof (false)
    harvester_buffer_size  harvester_buffer_size     buffer_size (16384)

`None` leaves the option to Filebeat's default (it is not written to filebeat.yml). `engine` says
which Filebeat runs the pods: `real` (the Filebeat build in kbt's cache), `emulated` (the Sarama
engine, which has no input stage: every event reaches the queue as it is written) or `auto` (real
when a build is installed).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from tuner.spec.base import StrictModel
from tuner.spec.duration import Duration
from tuner.spec.limits import MAX_KAFKA_BYTES

InputType = Literal["log", "filestream"]
Engine = Literal["auto", "real", "emulated"]

# Filebeat 7.17's defaults, per input type (used by the model and the docs; the yml leaves them out).
DEFAULTS: dict[str, dict[str, Any]] = {
    "log": {"backoff": 1.0, "max_backoff": 10.0, "backoff_factor": 2, "check_interval": 10.0},
    "filestream": {"backoff": 2.0, "max_backoff": 10.0, "backoff_factor": 1, "check_interval": 10.0},
}


class FilebeatInput(StrictModel):
    """`input.*` in a `client: filebeat` profile."""

    engine: Engine = "auto"
    type: InputType = "log"
    backoff: Duration | None = None
    max_backoff: Duration | None = None
    backoff_factor: int | None = Field(
        default=None, ge=1, le=1000
    )  # each wait times this: 1000 reaches max_backoff at once
    check_interval: Duration | None = None
    close_eof: bool | None = None
    harvester_buffer_size: int | None = Field(default=None, ge=1024, le=MAX_KAFKA_BYTES)

    @model_validator(mode="after")
    def _check(self) -> FilebeatInput:
        if self.type == "filestream" and self.backoff_factor is not None:
            raise ValueError("backoff_factor: the filestream input has no backoff factor (log input only)")
        for knob in DURATION_KNOBS:
            value = getattr(self, knob)
            if value is not None and value.seconds <= 0:
                raise ValueError(f"{knob}: must be greater than 0 (got {value})")
        if self.effective("backoff") > self.effective("max_backoff"):
            raise ValueError(
                f"backoff: {self.effective('backoff'):g}s must not exceed max_backoff"
                f" ({self.effective('max_backoff'):g}s)"
            )
        return self

    def effective(self, knob: str) -> Any:
        """The knob's value in force (durations in seconds): the profile's, else Filebeat's default
        for this input type."""
        value = getattr(self, knob)
        if value is None:
            return DEFAULTS[self.type].get(knob)
        return value.seconds if isinstance(value, Duration) else value

    @property
    def is_default(self) -> bool:
        """Nothing but the engine choice set: what the Sarama emulation can stand for."""
        return self.model_dump(exclude={"engine"}) == FilebeatInput().model_dump(exclude={"engine"})

    def input_options(self) -> dict[str, Any]:
        """The options this input sets in filebeat.yml (Filebeat's own names, Go durations)."""
        names = _LOG_NAMES if self.type == "log" else _FILESTREAM_NAMES
        return {
            names[k]: str(v) if isinstance(v, Duration) else v
            for k, v in self.model_dump(exclude={"engine", "type"}).items()
            if v is not None
        }


# The log input's options are the kbt knobs' names but for check_interval.
_LOG_NAMES = {k: k for k in FilebeatInput.model_fields if k not in ("engine", "type")} | {
    "check_interval": "scan_frequency"
}
_FILESTREAM_NAMES = {
    "backoff": "backoff.init",
    "max_backoff": "backoff.max",
    "check_interval": "prospector.scanner.check_interval",
    "close_eof": "close.reader.on_eof",
    "harvester_buffer_size": "buffer_size",
}
DURATION_KNOBS = frozenset({"backoff", "max_backoff", "check_interval"})
