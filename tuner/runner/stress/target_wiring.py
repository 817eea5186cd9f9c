"""Build a StressRunner for a target (the running lab by default): its cluster, its Prometheus,
local ports from the lab's range."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tuner.core.errors import BadInput
from tuner.runner.series_store import SeriesStore
from tuner.runner.stress.engine_stages import stage_parts
from tuner.runner.stress.locust_processes import LocustOptions
from tuner.runner.stress.run_stages import StressObserver, StressRunner
from tuner.target.base import TargetSource

# Offsets from the lab's base port, inside the block a lab reserves (base .. base+200) and past
# its client exporter range (base+100 ..): the locust master and its web UI.
MASTER_PORT_OFFSET = 180
WEB_PORT_OFFSET = 185
# Client exporter ports (scraped as job kbt-client): producers (one per locust process) from the
# start of the range, consumer groups from its end.
MAX_PRODUCER_PORTS = 32
MAX_CONSUMER_PORTS = 16


def stress_runner(
    lab_dir: Path | None,
    results: Path,
    flags: LocustOptions = LocustOptions(),
    observer: StressObserver | None = None,
    target_file: TargetSource | None = None,
) -> StressRunner:
    from tuner.target.registry import resolve_target

    found = resolve_target(lab_dir, target_file)
    ports = list(found.lab.client_exporter_ports) if found.lab is not None else []
    consumer_ports = ports[-MAX_CONSUMER_PORTS:] if len(ports) > MAX_CONSUMER_PORTS else []
    producer_ports = ports[: min(MAX_PRODUCER_PORTS, max(0, len(ports) - len(consumer_ports)))]
    base = found.lab.local_port_base if found.lab is not None else None
    if base is None and (flags.master_port is None or flags.web_port is None):
        raise BadInput(f"{found.name}: give --master-port and --web-port (no local port block is known)")
    locust = replace(
        flags,
        master_port=flags.master_port or (base or 0) + MASTER_PORT_OFFSET,
        web_port=flags.web_port or (base or 0) + WEB_PORT_OFFSET,
        producer_ports=tuple(producer_ports),
        consumer_ports=tuple(consumer_ports),
    )
    parts = stage_parts(found)
    store = SeriesStore(results, parts.prometheus, found.scrape_interval_s)  # + time series
    return StressRunner(target=found, store=store, locust=locust, observer=observer, stages=parts)
