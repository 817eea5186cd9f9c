"""librdkafka's own log lines: kept in a file, off the terminal, and summarised in one line.

Without a logger, librdkafka writes its lines straight to stderr, between kbt's own output (a trial
past a broker's knee printed 115 `REQTMOUT` lines). kbt's producers and consumers
(tuner.core.kafka_clients) get `client_logger()` instead: confluent-kafka then hands each line over
as a logging record when the client is polled (poll, flush, consume), and it is appended, in
librdkafka's own format, to the file the `KBT_LIBRDKAFKA_LOG` environment variable names. `kept_in`
sets it for a run (a file beside its record) or a command; it is an environment variable so that
every process kbt starts meanwhile (driver workers, locust, stress consumers) writes to the same file
without each launcher passing it on. With no file named, or one that cannot be written, a line goes
to stderr as librdkafka would have written it: a line is never dropped. `summary` reads a file back
as one line, counted by facility (REQTMOUT, FAIL, ...), error-level lines counted apart.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tuner.core.redact import scrub

ENV = "KBT_LIBRDKAFKA_LOG"
SHOWN_FACILITIES = 5  # the summary names the busiest facilities, then counts the rest

# What an operator reads in a facility's name (librdkafka's facilities are terse)
FACILITY_MEANING = {
    "REQTMOUT": "request timed out",
    "FAIL": "broker connection failed",
    "ERROR": "client error",
    "THROTTLE": "throttled by a broker",
    "CONFWARN": "configuration warning",
    "MAXPOLL": "consumer exceeded max.poll.interval.ms",
    "SESSTMOUT": "consumer group session timed out",
}

# confluent-kafka maps librdkafka's syslog levels onto logging's (0-2 CRITICAL, 3 ERROR, 4 WARNING,
# 5-6 INFO, 7 DEBUG); the file gets a syslog level back (notice and info both come as INFO: 5)
_SYSLOG = ((logging.CRITICAL, 2), (logging.ERROR, 3), (logging.WARNING, 4), (logging.INFO, 5))
ERROR_LEVELS = "0123"  # syslog's emergency to error (LOG_ERR, 3): a line at one is an error
# `%<level>|<epoch>|<FACILITY>|<client name>| <text>`, as librdkafka writes to stderr
_LINE = re.compile(r"%([0-7])\|[^|]*\|([^|]*)\|")
_BREAKS = re.compile("[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")  # whatever str.splitlines splits on


def _syslog(levelno: int) -> int:
    return next((syslog for level, syslog in _SYSLOG if levelno >= level), 7)


def line_of(record: logging.LogRecord) -> str:
    """A record as librdkafka's stderr line. confluent-kafka logs `"%s [%s] %s"` with (facility,
    client name, text); anything else (another caller of the logger) keeps its message whole."""
    args = record.args
    if isinstance(args, tuple) and len(args) == 3:
        facility, name, text = (str(a) for a in args)
    else:
        facility, name, text = "", record.name, _message(record)
    # one line per record (a multi-line text, a certificate chain, stays one line of the file), and
    # the facility and name never take the field separator
    facility, name = (_BREAKS.sub(" ", part).replace("|", "/") for part in (facility, name))
    # the time poll served it: librdkafka's own time of the line is not handed over; the text through
    # the redaction layer, as every other line kbt writes (a connection error may echo a URL)
    text = scrub(_BREAKS.sub(" ", text))
    return f"%{_syslog(record.levelno)}|{record.created:.3f}|{facility}|{name}| {text}\n"


def _message(record: logging.LogRecord) -> str:
    try:
        return record.getMessage()
    except (TypeError, ValueError):  # arguments its format does not take: both kept, not the line lost
        return f"{record.msg} {record.args}"


class _Lines(logging.Handler):
    """Each record to the file named by ENV, read at each line (a run's file takes over from the
    command's while the run lasts); to stderr when none is named or the file cannot be written."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = line_of(record)
            path = os.environ.get(ENV)
            if path:
                try:
                    _append(path, line)
                    return
                except OSError:
                    pass
            sys.stderr.write(line)
        except Exception:  # a handler never raises into the client's poll
            self.handleError(record)


def _append(path: str, line: str) -> None:
    """One write (the workers append beside); the directory is made by the first line, not each."""
    try:
        out = open(path, "a", encoding="utf-8")  # noqa: SIM115 (closed by the with below)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        out = open(path, "a", encoding="utf-8")  # noqa: SIM115
    with out:
        out.write(line)


def client_logger() -> logging.Logger:
    """The logger kbt's clients log through (one per process, its handler added once)."""
    logger = logging.getLogger("kbt.librdkafka")
    if not any(isinstance(h, _Lines) for h in logger.handlers):
        logger.addHandler(_Lines(logging.DEBUG))
        logger.setLevel(logging.DEBUG)  # a client's `log_level` already chose what it logs
        logger.propagate = False  # never through a root handler to the terminal
    return logger


@contextmanager
def kept_in(path: Path) -> Iterator[Path]:
    """While inside, librdkafka's lines from kbt's clients in this process, and in the processes it
    starts meanwhile, are appended to `path` (made with its directory on the first line)."""
    before = os.environ.get(ENV)
    os.environ[ENV] = str(path.absolute())  # a worker may run from another directory
    try:
        yield path
    finally:
        if before is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = before


def command_log() -> Path:
    """A command's file for the lines logged outside its runs (only made when a line comes)."""
    return Path(tempfile.gettempdir()) / f"kbt-librdkafka-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.log"


@dataclass
class Tally:
    """Lines counted by facility; `errors`: those at error level or worse."""

    lines: int = 0
    errors: int = 0
    by_facility: Counter[str] = field(default_factory=Counter)

    def add(self, line: str) -> None:
        match = _LINE.match(line)
        self.lines += 1
        # a line of another shape (a torn write) is still counted, and as an error: never hidden
        self.errors += match is None or match.group(1) in ERROR_LEVELS
        self.by_facility[(match.group(2).strip() if match else "") or "other"] += 1

    def said(self, where: str) -> str | None:
        """The one line (None: nothing logged)."""
        if not self.lines:
            return None
        ranked = self.by_facility.most_common()
        parts = [
            f"{fac} {n}: {FACILITY_MEANING[fac]}" if fac in FACILITY_MEANING else f"{fac} {n}"
            for fac, n in ranked[:SHOWN_FACILITIES]
        ]
        if rest := ranked[SHOWN_FACILITIES:]:
            parts.append(f"{sum(n for _, n in rest)} more in {len(rest)} other facilities")
        lines = f"{self.lines} line{'' if self.lines == 1 else 's'}"
        errors = f", {self.errors} at error level" if self.errors else ""
        return f"librdkafka logged {lines}{errors} ({', '.join(parts)}); the lines are in {where}"


def tally(lines: Iterable[str]) -> Tally:
    counted = Tally()
    for line in lines:
        if line.strip():
            counted.add(line)
    return counted


def summary(path: Path, where: str | None = None) -> str | None:
    """One line for what `path` holds (None: no file or nothing in it); `where`: the path as the
    line names it (default: `path`)."""
    where = where if where is not None else str(path)
    try:
        with open(path, encoding="utf-8", errors="replace") as lines:
            counted = tally(lines)
    except FileNotFoundError:
        return None
    except OSError as exc:  # the lines are still there: say where, not fail the run that logged them
        return f"librdkafka logged lines to {where}, which cannot be read back ({exc.strerror or exc})"
    return counted.said(where)
