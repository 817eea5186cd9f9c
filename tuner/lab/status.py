"""Health of a recorded lab: per-component report (`status`) and the wait loop of `up`."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from tuner.core.errors import EnvironmentProblem, Unreachable
from tuner.lab.health import (
    Health,
    broker_targets_up,
    brokers_in_metadata,
    jmx_exporter_ok,
    prometheus_ready,
)
from tuner.lab.layout import COMPONENT_CONTROLLER, COMPONENT_PROMETHEUS, broker_component
from tuner.lab.processes import is_ours, port_listening, tail
from tuner.lab.state import LabState
from tuner.lab.toxiproxy import COMPONENT_TOXIPROXY, Toxiproxy


def _process_ok(state: LabState, component: str) -> tuple[bool, str]:
    rec = state.process(component)
    if rec is None:
        return False, "not started"
    if not is_ours(rec.pid, rec.marker):
        return False, f"process {rec.pid} is not running"
    return True, f"pid {rec.pid}"


def component_health(state: LabState) -> list[Health]:
    out: list[Health] = []
    ok, detail = _process_ok(state, COMPONENT_CONTROLLER)
    if ok and not port_listening(state.controller_port):
        ok, detail = False, f"{detail}, port {state.controller_port} not listening"
    out.append(Health(COMPONENT_CONTROLLER, ok, detail))

    in_metadata = brokers_in_metadata(state.bootstrap_servers)
    for broker in state.brokers:
        name = broker_component(broker.id)
        ok, detail = _process_ok(state, name)
        if ok and broker.id not in in_metadata:
            ok, detail = False, f"{detail}, not in the cluster metadata"
        if ok:
            ok, why = jmx_exporter_ok(broker.jmx_port)
            detail = f"{detail}, in metadata, exporter ok" if ok else f"{detail}, {why}"
        out.append(Health(name, ok, detail))

    ok, detail = _process_ok(state, COMPONENT_PROMETHEUS)
    if ok:
        ready, why = prometheus_ready(state.prometheus_port)
        if not ready:
            ok, detail = False, f"{detail}, {why}"
        else:
            up = broker_targets_up(state.prometheus_port)
            down = [str(b.id) for b in state.brokers if up.get(str(b.id)) != 1.0]
            ok = not down
            detail = f"{detail}, " + (
                f"broker target(s) {','.join(down)} not up" if down else "all broker targets up"
            )
    out.append(Health(COMPONENT_PROMETHEUS, ok, detail))
    if state.config.via_toxiproxy:
        ok, detail = _process_ok(state, COMPONENT_TOXIPROXY)
        if ok and not Toxiproxy(state.config.toxiproxy_api_port).version():
            ok, detail = False, f"{detail}, API on port {state.config.toxiproxy_api_port} not answering"
        out.append(Health(COMPONENT_TOXIPROXY, ok, detail))
    return out


def _failure_line(log_file: Path) -> str:
    lines = tail(log_file, 200).splitlines()
    for line in reversed(lines):
        if "ERROR" in line or "Exception" in line or "Error:" in line:
            return line.strip()[:300]
    return lines[-1].strip()[:300] if lines else "no output"


def wait_until_healthy(state: LabState, timeout_s: float, progress: Callable[[str], None]) -> None:
    """Return once every broker is in the metadata and Prometheus scraped each broker with up == 1."""
    deadline = time.monotonic() + timeout_s
    last = ""
    while True:
        for rec in state.processes:
            if is_ours(rec.pid, rec.marker):
                continue
            time.sleep(0.3)  # a second look before declaring a process dead
            if not is_ours(rec.pid, rec.marker):
                raise EnvironmentProblem(
                    f"{rec.component} exited while starting: {_failure_line(rec.log_file)}"
                    f" (see 'kbt lab logs {rec.component}')"
                )
        missing = [h for h in component_health(state) if not h.healthy]
        if not missing:
            return
        summary = "; ".join(f"{h.component}: {h.detail}" for h in missing)
        if summary != last:
            progress(f"waiting: {summary}")
            last = summary
        if time.monotonic() > deadline:
            raise Unreachable(f"lab not healthy after {timeout_s:.0f}s: {summary}")
        time.sleep(0.5)
