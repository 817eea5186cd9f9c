"""A small Prometheus HTTP API client: instant and range queries with clear errors.

    prom = Prometheus(state.prometheus_url)          # or Prometheus(access) / Prometheus.for_target(t)
    prom.instant('up{job="kafka-broker"}')      # [Sample(labels={...}, value=1.0), ...]
    prom.range(expr, start, end, step_s=1.0)    # [RangeSeries(labels, [(t, v), ...]), ...]

Unreachable when Prometheus cannot be reached; KbtError when it answers something that is not a
Prometheus API response or reports a query error.

A `PrometheusAccess` brings auth (bearer token file, basic auth from the environment, a CA file,
extra headers); a base URL's query string (a tenant, an org id) is sent with every request. For a
target whose brokers export another metric dialect, `for_target` translates kbt's names in every
expression and maps result labels back (tuner.measure.dialects); a query that needs a series the
dialect lacks answers no series and is listed in `unavailable` with the reason.
"""

from __future__ import annotations

import json
import math
import os
import ssl
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import requests

from tuner.core.errors import BadInput, KbtError, Unreachable
from tuner.core.inputs import parse_json, read_bytes, read_text
from tuner.core.net import (
    MAX_BODY_BYTES,
    BadRequestValue,
    BodyTooLarge,
    BrokenAnswer,
    DeadlineExceeded,
    get_bounded,
    join_url,
    without_secrets,
)
from tuner.core.numbers import sample_value
from tuner.core.redact import register_basic_auth, register_secret, register_url_secrets
from tuner.core.text import cut
from tuner.measure.dialects import MissingSeries, Translator, resolve_translator
from tuner.spec.references import expand_references
from tuner.target.base import PrometheusAccess

if TYPE_CHECKING:
    from tuner.target.base import Target


class PrometheusError(KbtError):
    """Prometheus answered, but with an error or with something that is not its API."""


def _session(access: PrometheusAccess) -> requests.Session:
    """A session carrying the access's credentials (read now, registered for redaction)."""
    session = requests.Session()
    if access.bearer_token_file is not None:
        try:  # a regular file within the cap: a FIFO or device here would block or never end
            token = read_text(access.bearer_token_file, "token file", 1 << 20).strip()
        except BadInput:
            raise BadInput(
                f"Prometheus bearer token file {access.bearer_token_file.name} cannot be read"
            ) from None
        session.headers["Authorization"] = f"Bearer {register_secret(token)}"
    if access.basic_auth_user_env or access.basic_auth_password_env:
        user = os.environ.get(access.basic_auth_user_env or "")
        password = os.environ.get(access.basic_auth_password_env or "")
        if user is None or password is None:
            missing = access.basic_auth_user_env if user is None else access.basic_auth_password_env
            raise BadInput(f"Prometheus basic auth: ${{{missing}}} is not set in the environment")
        register_basic_auth(user, password)
        session.auth = (user, password)
    if access.ca_file is not None:
        _check_ca_file(access.ca_file)
        session.verify = str(access.ca_file)
    headers = dict(access.headers)
    headers.update(expand_references(headers, "Prometheus headers"))
    for value in headers.values():  # an API key in a custom header is a credential too
        register_secret(str(value))
    session.headers.update(headers)
    return session


def _check_ca_file(path: Any) -> None:
    """A CA bundle that TLS can load: a FIFO or a file that is not PEM is named as a TLS file problem
    here (it used to surface as "unreachable" at the first query); a missing one was said when the
    target was read (tuner.target.file)."""
    data = read_bytes(path, "CA file", 4 << 20)
    if b"-----BEGIN CERTIFICATE-----" not in data:
        raise BadInput(
            f"Prometheus CA file {path.name}: TLS file problem: not a PEM certificate bundle"
            " (no -----BEGIN CERTIFICATE----- block)"
        )
    try:
        ssl.create_default_context().load_verify_locations(cadata=data.decode("ascii", errors="replace"))
    except (ssl.SSLError, ValueError):
        raise BadInput(
            f"Prometheus CA file {path.name}: TLS file problem: its PEM certificates cannot be loaded"
        ) from None


# A time window as (start, end) epoch seconds.
Window = tuple[float, float]
# Prometheus' names APIs (/api/v1/labels, /api/v1/label/<name>/values): lists of names, of at
# most MAX_NAMES here (a broker exports a few thousand series names at most).
NAMES_API = "/api/v1/label"
MAX_NAMES = 100_000
# Prometheus refuses a range query of more points than this a series ("exceeded maximum
# resolution of 11,000 points per timeseries"). kbt holds a window's subqueries (avg_over_time over
# [window:step]) to it too: a step that fine adds nothing past the scrape interval, and every point
# counts against Prometheus' --query.max-samples.
MAX_POINTS_PER_SERIES = 11_000


def fits(span_s: float, step_s: float) -> bool:
    """Whether Prometheus answers a query over `span_s` every `step_s` seconds (its own check)."""
    return span_s / step_s <= MAX_POINTS_PER_SERIES


def fitting_step(span_s: float) -> float:
    """The shortest whole-second step at which Prometheus answers a query over `span_s`."""
    return float(max(1, math.ceil(span_s / MAX_POINTS_PER_SERIES)))


def too_many_points(span: str, step: str, span_s: float, step_s: float) -> str | None:
    """Why a window of `span_s` at `step_s` cannot be asked (shown as `span` and `step`), or None."""
    if fits(span_s, step_s):
        return None
    return (
        f"{span} at {step} is {math.floor(span_s / step_s) + 1:,} points a series, past the"
        f" {MAX_POINTS_PER_SERIES:,} Prometheus answers a query: give a step of {fitting_step(span_s):g} s"
        " or longer"
    )


# How Prometheus says a query passed its --query.max-samples (promql.ErrTooManySamples).
_TOO_MANY_SAMPLES = "query processing would load too many samples into memory"


# A query of a run's or a cluster's window (range queries over minutes, a remote Prometheus): longer
# than the constructor's default, which serves the lab's quick checks.
QUERY_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Sample:
    labels: dict[str, str]
    value: float


@dataclass(frozen=True)
class RangeSeries:
    labels: dict[str, str]
    points: list[tuple[float, float]]


def _float(raw: Any, where: str) -> float:
    if not isinstance(raw, str | int | float) or isinstance(raw, bool):
        raise PrometheusError(f"Prometheus {where}: value of type {type(raw).__name__} is not a number")
    try:
        # The one number grammar (ASCII digits; Prometheus's own "NaN"/"+Inf" spellings): float()
        # alone would read "\u0660.\u0665" and "1_0" from a server that is not Prometheus.
        value = float(raw) if not isinstance(raw, str) else sample_value(raw, where)
    except (TypeError, ValueError):
        raise PrometheusError(f"Prometheus {where}: value {cut(repr(raw), 60)} is not a number") from None
    # No figure kbt derives can use an infinite sample (histogram_quantile past the last bucket):
    # it counts as no value, like NaN, which every consumer already skips.
    return value if math.isfinite(value) else math.nan


class Prometheus:
    def __init__(
        self,
        url: str | PrometheusAccess,
        timeout_s: float = 10.0,
        translator: Translator | None = None,
        deadline_s: float | None = None,
    ) -> None:
        access = url if isinstance(url, PrometheusAccess) else PrometheusAccess(url=url)
        register_url_secrets(access.url)  # registered where it enters: every output scrubs them
        parts = urlsplit(access.url)
        # The base URL without its query string; the query's parameters go with every request.
        self.url = urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))
        self.base_params = dict(parse_qsl(parts.query, keep_blank_values=True))
        self.shown = without_secrets(self.url)  # never a password or a token in a message
        self.timeout_s = timeout_s
        self.session = _session(access)
        self.translator = translator
        self.unavailable: dict[str, str] = {}
        # One deadline for every call this client makes (diagnose: the whole run), besides each
        # call's own timeout_s from its first byte to its last.
        self.deadline = None if deadline_s is None else time.monotonic() + deadline_s

    @classmethod
    def for_target(
        cls,
        target: Target,
        timeout_s: float = 10.0,
        deadline_s: float | None = None,
        window: Window | None = None,
    ) -> Prometheus:
        """The target's Prometheus, its dialect resolved (`auto`: detected from the series present
        now, or within `window` when the figures are a past window's)."""
        if target.prometheus is None:
            raise BadInput(f"{target.name}: the target names no Prometheus")
        prom = cls(target.prometheus, timeout_s=timeout_s, deadline_s=deadline_s)
        prom.translator = resolve_translator(prom, target, window)
        return prom

    def _get(self, path: str, params: dict[str, str]) -> Any:
        where = f"{self.shown}{path}"
        if self.translator is not None and "query" in params:
            try:
                params = {**params, "query": self.translator.translate(params["query"])}
            except MissingSeries as exc:
                self.unavailable[exc.series] = exc.reason
                return {"resultType": "missing", "result": []}
        budget = self.timeout_s
        if self.deadline is not None:
            budget = min(budget, self.deadline - time.monotonic())
        try:
            if budget <= 0:
                raise DeadlineExceeded
            url = join_url(self.url, path, {**self.base_params, **params})
            status, raw, _ = get_bounded(self.session, url, budget)
        except DeadlineExceeded:
            raise Unreachable(
                f"Prometheus at {self.shown} did not answer within {self.timeout_s:g} s"
            ) from None
        except BodyTooLarge:
            raise PrometheusError(f"{where} answered more than {MAX_BODY_BYTES >> 20} MiB") from None
        except BrokenAnswer as exc:
            raise Unreachable(f"Prometheus at {self.shown} {exc}") from None
        except BadRequestValue as exc:
            raise BadInput(f"Prometheus at {self.shown}: {exc}") from None
        except (requests.RequestException, OSError) as exc:
            raise Unreachable(f"Prometheus at {self.shown} is unreachable ({type(exc).__name__})") from None
        try:
            body = parse_json(raw, where)
        except BadInput:
            snippet = raw[:80].decode("utf-8", errors="replace")
            raise PrometheusError(
                f"{where} did not answer with Prometheus JSON (HTTP {status}: {snippet!r})"
            ) from None
        if not isinstance(body, dict) or "status" not in body:
            raise PrometheusError(f"{where} answered JSON that is not a Prometheus API response")
        if body["status"] != "success":
            if _TOO_MANY_SAMPLES in str(body.get("error", "")):
                raise PrometheusError(
                    f"Prometheus at {self.shown} refused the query: it would hold more samples at once than"
                    " its --query.max-samples allows (a window's points times its series); a shorter window"
                    " or a longer step asks for fewer"
                )
            raise PrometheusError(
                f"Prometheus rejected the query ({cut(str(body.get('errorType', 'error')), 60)}:"
                f" {cut(str(body.get('error', '?')), 200)})"
            )
        data = body.get("data")
        if path.startswith(NAMES_API):  # a list of names, not a query's result
            if not isinstance(data, list) or len(data) > MAX_NAMES:
                raise PrometheusError(f"{where} answered without a list of at most {MAX_NAMES} names")
            return data
        if not isinstance(data, dict) or not isinstance(data.get("result"), list | str | int | float):
            raise PrometheusError(f"{where} answered without data.result")
        return data

    def instant(self, expr: str, at: float | None = None) -> list[Sample]:
        """Evaluate `expr` now (or at unix time `at`): one Sample per resulting series."""
        params = {"query": expr}
        if at is not None:
            params["time"] = f"{at:.3f}"
        data = self._get("/api/v1/query", params)
        kind, result = data.get("resultType"), data["result"]
        if kind == "missing":
            return []
        try:
            if kind == "vector":
                return [Sample(self._labels(r["metric"]), _float(r["value"][1], "query")) for r in result]
            if kind == "scalar":
                return [Sample({}, _float(result[1], "query"))]
        except (KeyError, IndexError, TypeError):
            raise PrometheusError("Prometheus query answer has an unexpected shape") from None
        raise PrometheusError(f"Prometheus query answered a {kind!r}, expected a vector or scalar")

    def range(self, expr: str, start: float, end: float, step_s: float) -> list[RangeSeries]:
        """Evaluate `expr` every `step_s` seconds over [start, end]."""
        if end < start or step_s <= 0:
            raise PrometheusError(f"bad range: start={start} end={end} step={step_s}")
        refused = too_many_points(
            f"a range of {end - start:g} s", f"a {step_s:g} s step", end - start, step_s
        )
        if refused is not None:  # said before asking: Prometheus' own answer names no way out
            raise BadInput(refused)
        params = {"query": expr, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step_s:g}"}
        data = self._get("/api/v1/query_range", params)
        return self._matrix(data, "range query", "range", "Prometheus range query answered a {!r}")

    def samples(self, selector: str, start: float, end: float) -> list[RangeSeries]:
        """The raw scraped samples of `selector` with timestamps in (start, end] (no evaluation
        steps, no lookback): a range-vector selector evaluated at `end`."""
        span_ms = max(1, int((end - start) * 1000))
        data = self._get("/api/v1/query", {"query": f"{selector}[{span_ms}ms]", "time": f"{end:.3f}"})
        return self._matrix(data, "samples", "samples", "Prometheus answered a {!r} to a range selector")

    def _matrix(self, data: dict[str, Any], what: str, answer: str, wrong_kind: str) -> list[RangeSeries]:
        """A matrix answer's series (none for a missing series); `what` and `answer` name the request
        in errors, `wrong_kind` formats the answer's result type when it is not a matrix."""
        kind = data.get("resultType")
        if kind == "missing":
            return []
        if kind != "matrix":
            raise PrometheusError(wrong_kind.format(kind))
        try:
            return [
                RangeSeries(
                    self._labels(r["metric"]), [(_float(t, what), _float(v, what)) for t, v in r["values"]]
                )
                for r in data["result"]
            ]
        except (KeyError, TypeError, ValueError):
            raise PrometheusError(f"Prometheus {answer} answer has an unexpected shape") from None

    def _labels(self, metric: Any) -> dict[str, str]:
        if not isinstance(metric, dict):
            raise TypeError("metric is not an object")
        # label values of odd types from a server are text
        labels = {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in metric.items()}
        return self.translator.labels(labels) if self.translator is not None else labels

    def series_names(self, matchers: str, window: Window | None = None) -> set[str]:
        """The names of the series matching `matchers` (e.g. 'job="kafka"'): now, or any that had a
        sample within `window` (start, end epoch seconds: a past window's series may be gone now)."""
        if window is None:
            data = self._get("/api/v1/query", {"query": f"count by (__name__)({{{matchers}}})"})
            try:
                return {str(r["metric"].get("__name__", "")) for r in data["result"]} - {""}
            except (KeyError, TypeError, AttributeError):
                raise PrometheusError("Prometheus answer has an unexpected shape") from None
        return self._names(f"{NAMES_API}/__name__/values", matchers, window) - {""}

    def labels_present(
        self, matchers: str, labels: tuple[str, ...], window: Window | None = None
    ) -> set[str]:
        """Which of `labels` the series matching `matchers` carry (which one names a broker): now, or
        within `window`."""
        if window is not None:
            return self._names(f"{NAMES_API}s", matchers, window) & set(labels)
        data = self._get("/api/v1/query", {"query": f"group by ({', '.join(labels)})({{{matchers}}})"})
        try:
            return {k for r in data["result"] for k, v in r["metric"].items() if v and k in labels}
        except (KeyError, TypeError, AttributeError):
            raise PrometheusError("Prometheus answer has an unexpected shape") from None

    def _names(self, path: str, matchers: str, window: Window) -> set[str]:
        """A names API's answer (label names, or one label's values) over the series matching
        `matchers` within `window`."""
        start, end = window
        data = self._get(path, {"match[]": f"{{{matchers}}}", "start": f"{start:.3f}", "end": f"{end:.3f}"})
        return {str(name) for name in data}

    def value(self, expr: str, at: float | None = None) -> float | None:
        """The single value of `expr` (None when it has no series, the sum when it has several)."""
        samples = [s.value for s in self.instant(expr, at) if not math.isnan(s.value)]
        return sum(samples) if samples else None
