"""A small Prometheus HTTP API client: instant and range queries with clear errors.

    prom = Prometheus(state.prometheus_url)
    prom.instant('up{job="kafka-broker"}')      # [Sample(labels={...}, value=1.0), ...]
    prom.range(expr, start, end, step_s=1.0)    # [RangeSeries(labels, [(t, v), ...]), ...]

Unreachable when Prometheus cannot be reached; KbtError when it answers something that is not a
Prometheus API response or reports a query error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import requests

from tuner.core.errors import KbtError, Unreachable


class PrometheusError(KbtError):
    """Prometheus answered, but with an error or with something that is not its API."""


@dataclass(frozen=True)
class Sample:
    labels: dict[str, str]
    value: float


@dataclass(frozen=True)
class RangeSeries:
    labels: dict[str, str]
    points: list[tuple[float, float]]


def _float(raw: Any, where: str) -> float:
    try:
        return float(raw)  # Prometheus sends "NaN", "+Inf" as strings; float() reads them
    except (TypeError, ValueError):
        raise PrometheusError(f"Prometheus {where}: value {raw!r} is not a number") from None


class Prometheus:
    def __init__(self, url: str, timeout_s: float = 10.0, session: requests.Session | None = None) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self.session = session or requests.Session()

    def _get(self, path: str, params: dict[str, str]) -> Any:
        where = f"{self.url}{path}"
        try:
            resp = self.session.get(where, params=params, timeout=self.timeout_s)
        except requests.RequestException as exc:
            raise Unreachable(f"Prometheus at {self.url} is unreachable ({type(exc).__name__})") from None
        try:
            body = resp.json()
        except ValueError:
            snippet = resp.text[:80].replace("\n", " ")
            raise PrometheusError(
                f"{where} did not answer with Prometheus JSON (HTTP {resp.status_code}: {snippet!r})"
            ) from None
        if not isinstance(body, dict) or "status" not in body:
            raise PrometheusError(f"{where} answered JSON that is not a Prometheus API response")
        if body["status"] != "success":
            raise PrometheusError(
                f"Prometheus rejected the query ({body.get('errorType', 'error')}: {body.get('error', '?')})"
            )
        data = body.get("data")
        if not isinstance(data, dict) or "result" not in data:
            raise PrometheusError(f"{where} answered without data.result")
        return data

    def instant(self, expr: str, at: float | None = None) -> list[Sample]:
        """Evaluate `expr` now (or at unix time `at`): one Sample per resulting series."""
        params = {"query": expr}
        if at is not None:
            params["time"] = f"{at:.3f}"
        data = self._get("/api/v1/query", params)
        kind, result = data.get("resultType"), data["result"]
        try:
            if kind == "vector":
                return [Sample(dict(r["metric"]), _float(r["value"][1], "query")) for r in result]
            if kind == "scalar":
                return [Sample({}, _float(result[1], "query"))]
        except (KeyError, IndexError, TypeError):
            raise PrometheusError("Prometheus query answer has an unexpected shape") from None
        raise PrometheusError(f"Prometheus query answered a {kind!r}, expected a vector or scalar")

    def range(self, expr: str, start: float, end: float, step_s: float) -> list[RangeSeries]:
        """Evaluate `expr` every `step_s` seconds over [start, end]."""
        if end < start or step_s <= 0:
            raise PrometheusError(f"bad range: start={start} end={end} step={step_s}")
        params = {"query": expr, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step_s:g}"}
        data = self._get("/api/v1/query_range", params)
        if data.get("resultType") != "matrix":
            raise PrometheusError(f"Prometheus range query answered a {data.get('resultType')!r}")
        try:
            return [
                RangeSeries(dict(r["metric"]), [(float(t), _float(v, "range query")) for t, v in r["values"]])
                for r in data["result"]
            ]
        except (KeyError, TypeError, ValueError):
            raise PrometheusError("Prometheus range answer has an unexpected shape") from None

    def samples(self, selector: str, start: float, end: float) -> list[RangeSeries]:
        """The raw scraped samples of `selector` with timestamps in (start, end] (no evaluation
        steps, no lookback): a range-vector selector evaluated at `end`."""
        span_ms = max(1, int((end - start) * 1000))
        data = self._get("/api/v1/query", {"query": f"{selector}[{span_ms}ms]", "time": f"{end:.3f}"})
        if data.get("resultType") != "matrix":
            raise PrometheusError(f"Prometheus answered a {data.get('resultType')!r} to a range selector")
        try:
            return [
                RangeSeries(dict(r["metric"]), [(float(t), _float(v, "samples")) for t, v in r["values"]])
                for r in data["result"]
            ]
        except (KeyError, TypeError, ValueError):
            raise PrometheusError("Prometheus samples answer has an unexpected shape") from None

    def value(self, expr: str, at: float | None = None) -> float | None:
        """The single value of `expr` (None when it has no series, the sum when it has several)."""
        samples = [s.value for s in self.instant(expr, at) if not math.isnan(s.value)]
        return sum(samples) if samples else None
