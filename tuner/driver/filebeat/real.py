"""Client kind `filebeat` with real Filebeat: one Filebeat process per pod, each tailing a log file
that a writer process fills at the workload's rate with the workload's payloads.

Every line carries its record id and intended write time (tuner/driver/tailed/writer.py), so
delivery verification is exact: Filebeat retries until delivered, so lost = written - read back;
duplicates and per-partition order come from the same read-back. The run's topic is switched to
LogAppendTime so a record's timestamp is the leader's append time: write time -> that is the
delivery latency (the ack follows the append; acks 1 by default).

Filebeat cannot count produce requests (it turns Sarama's metrics into no-ops): the brokers' Produce
request counter is the count (the sweep's broker window). Filebeat's own `/stats` (events acked,
output batches) is read from each pod's loopback monitoring endpoint before it stops.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

from tuner.core.errors import BadInput
from tuner.driver.engine import Placement
from tuner.driver.filebeat.builds import build_for
from tuner.driver.filebeat.plan import drain_s
from tuner.driver.filebeat.yml import EVENT_OVERHEAD_BYTES, SIDE_FILE, pod_side
from tuner.driver.tailed.pods import RestartsOnTakenPort, sized_payloads
from tuner.driver.tailed.session import PodsRun, run_pods
from tuner.driver.tailed.writer import PREFIX_BYTES
from tuner.spec.clients.filebeat import KIND, REAL_ENGINE_NAME, FilebeatProfile, config_of
from tuner.spec.sweep import RunPlan
from tuner.target.engine_security import SecureClient, filebeat_security

# Each pod's log file holds this line (no record id: the read-back counts it as foreign) before its
# Filebeat starts, as a running host's log does. 7.17's `filestream` skips an empty new file and
# looks again only at its next scan (prospector.scanner.check_interval, 10 s): from an empty file
# its harvester started 4-9 s into a run, and the lines of the measured window waited for it
# (docs/benchmarks.md, "filestream's reader timing"). The `log` input harvests either at once.
PRIMER_LINE = "kbt: the pod's log, opened before its Filebeat starts\n"
STOP_WAIT_S = 10.0


def run_real(plan: RunPlan, placement: Placement) -> PodsRun[dict[str, int]]:
    """Drive one run of a `client: filebeat` profile through real Filebeat and verify delivery.
    `placement.security` is written into output.kafka with the password as a `${NAME}` reference
    that Filebeat expands from its environment (the pods' alone); kbt's own clients (topic config,
    read-back) use it in librdkafka terms."""
    profile = plan.profile
    if not isinstance(profile, FilebeatProfile):
        raise BadInput(f"profile {profile.name} is a {profile.client} profile, not a filebeat one")
    config = config_of(profile)
    connection = SecureClient.of(plan.profile.name, placement.security, filebeat_security)
    workload = plan.workload
    topic, bootstrap = placement.single_topic("filebeat"), placement.bootstrap_servers
    if workload.rate_per_producer == "max":
        raise BadInput("rate_per_producer max: real Filebeat pods tail files written at a set rate")
    binary = build_for(config.filebeat_version)

    def payloads(work: Path, pods: list[_Pod]) -> list[str]:
        # Sized so the Kafka record (Filebeat's JSON event) has the workload's size.
        overhead = EVENT_OVERHEAD_BYTES + len(str(pods[0].log_file)) + PREFIX_BYTES
        return sized_payloads(plan, work, overhead, lambda t: t.replace("\\", "/").replace('"', "'"))

    def start(pod: _Pod) -> None:
        pod.log_file.write_text(PRIMER_LINE, encoding="utf-8")
        pod.start(binary, profile, bootstrap, topic)

    return run_pods(
        lambda i, work: _Pod(i, work, connection),
        start,
        _sum_stats,
        lambda stats: stats.get("output.events.failed", 0) + stats.get("output.events.dropped", 0),
        shipper="real Filebeat",
        engine=REAL_ENGINE_NAME,
        artifact=KIND.artifact(profile),
        plan=plan,
        placement=placement,
        security=connection.librdkafka,
        payloads=payloads,
        drain_s=drain_s(config) + float(config.input.effective("max_backoff")),
        stop_wait_s=STOP_WAIT_S,
    )


class _Pod(RestartsOnTakenPort[FilebeatProfile]):
    def command(self, binary: Path, profile: FilebeatProfile) -> list[str]:
        """Filebeat on the profile's rendered file as a user receives it, and the lab's side file
        (tuner/driver/filebeat/yml.py)."""
        artifact = KIND.artifact(profile)
        deployed = self.dir / artifact.filename
        deployed.write_text(artifact.text, encoding="utf-8")
        side = pod_side(
            config_of(profile),
            pod=self.index,
            log_file=self.log_file,
            http_port=self.port,
            workdir=self.dir,
            output_security=self.secure.config,
        )
        # JSON is YAML: no YAML writer needed, and every value keeps its type.
        (self.dir / SIDE_FILE).write_text(json.dumps(side, indent=2), encoding="utf-8")
        return [
            str(binary),
            *("-c", str(deployed), "-c", str(self.dir / SIDE_FILE)),
            *("--path.home", str(self.dir), "--strict.perms=false"),
        ]

    def answers(self) -> bool:
        return self.stats() is not None

    def stats(self) -> dict[str, Any] | None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats", timeout=2) as resp:
                data: dict[str, Any] = json.load(resp)
                return data
        except (OSError, ValueError):
            return None

    def failure(self) -> str | None:
        """Why the pod's Filebeat exited: the last lines of its own output (a config it refuses is
        said there) and its log's last error, or its exit status."""
        if not self.exited() or self.proc is None:
            return None
        errors: list[str] = []
        for log in sorted((self.dir / "logs").glob("filebeat*")):
            errors += [ln for ln in log.read_text(errors="replace").splitlines() if "ERROR" in ln]
        said = [self.output_tail()]
        last = self.redacted(errors[-1].split("\t")[-1]) if errors else ""
        if last and last not in said[0]:
            said.append(last)
        text = " | ".join(s for s in said if s) or f"exit status {self.proc.returncode}"
        return f"pod {self.index}: {text}"


_STATS = {
    "output.events.acked": ("libbeat", "output", "events", "acked"),
    "output.events.batches": ("libbeat", "output", "events", "batches"),
    "output.events.failed": ("libbeat", "output", "events", "failed"),
    "output.events.dropped": ("libbeat", "output", "events", "dropped"),
    "pipeline.events.retry": ("libbeat", "pipeline", "events", "retry"),
    # The memory queue's size in force (queue.mem.events, set or Filebeat's default), summed.
    "pipeline.queue.max_events": ("libbeat", "pipeline", "queue", "max_events"),
    "filebeat.events.done": ("filebeat", "events", "done"),
    "harvester.started": ("filebeat", "harvester", "started"),
}


def _sum_stats(pods: list[_Pod]) -> dict[str, int]:
    total = dict.fromkeys(_STATS, 0)
    for pod in pods:
        data = pod.stats() or {}
        for name, path in _STATS.items():
            node: Any = data
            for part in path:
                node = node.get(part, {}) if isinstance(node, dict) else {}
            total[name] += int(node) if isinstance(node, int) else 0
    return total
