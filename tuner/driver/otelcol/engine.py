"""Client kind `otelcol`: one real OpenTelemetry Collector per pod, each tailing a log file that a
writer process fills at the workload's rate, exactly as the real-Filebeat pods do
(tuner/driver/filebeat/real.py: the same corpus, writer, record ids and read-back).

A Kafka record carries one line (encoding raw) or one export of many lines (OTLP): the read-back
finds every line's id in every record, so delivery is verified per line: lost = written - read
back, duplicates and per-partition order from the same read. The collector retries until delivered
and drains its queue when stopped. Produce requests are the brokers' count (the sweep's broker
window); the pods' own counters (records sent, send failures) come from their telemetry endpoints.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

from tuner.core.errors import BadInput
from tuner.core.inputs import shown_path
from tuner.core.net import BodyTooLarge, DeadlineExceeded, get_bounded
from tuner.core.redact import scrub
from tuner.core.text import one_line
from tuner.driver.engine import Capabilities, Engine, Placement
from tuner.driver.otelcol.build import require_collector
from tuner.driver.otelcol.pod_config import BASE_NAME, LOG_NAME, base_config
from tuner.driver.tailed.pods import RestartsOnTakenPort, sized_payloads
from tuner.driver.tailed.readback import LINES
from tuner.driver.tailed.session import PodsRun, run_pods
from tuner.driver.tailed.writer import PREFIX_BYTES
from tuner.spec.clients.otelcol import KIND, OtelcolProfile, config_of
from tuner.spec.engine_id import EngineId
from tuner.spec.otelcol import OtelcolConfig
from tuner.spec.profile import ProfileBase
from tuner.spec.sweep import RunPlan
from tuner.target.engine_security import SecureClient, otelcol_security

STOP_WAIT_S = 15.0  # the collector drains its queue on shutdown
DRAIN_SLACK_S = 30.0  # the read-back of a loaded machine trails; it returns once every line is read
_METRIC = re.compile(r"^(otelcol_[a-z_]+?)(?:_total)?(?:\{[^}]*\})? ([0-9.e+]+)$", re.MULTILINE)
_ERROR_FIELD = re.compile(r'"error": "((?:[^"\\]|\\.)*)"')
COUNTERS = {
    "receiver.accepted": "otelcol_receiver_accepted_log_records",
    "exporter.sent": "otelcol_exporter_sent_log_records",
    "exporter.failed": "otelcol_exporter_send_failed_log_records",
    "exporter.enqueue_failed": "otelcol_exporter_enqueue_failed_log_records",
}


class Pod(RestartsOnTakenPort[OtelcolProfile]):
    def command(self, binary: Path, profile: OtelcolProfile) -> list[str]:
        """The collector on the lab's base config and the profile's rendered fragment as a user
        receives it, merged by the collector (tuner/driver/otelcol/pod_config.py)."""
        base = base_config(
            log_file=self.log_file, metrics_port=self.port, workdir=self.dir, client=self.secure.config
        )
        (self.dir / BASE_NAME).write_text(json.dumps(base, indent=2), encoding="utf-8")  # JSON is YAML
        artifact = KIND.artifact(profile)
        (self.dir / artifact.filename).write_text(artifact.text, encoding="utf-8")
        return [
            str(binary),
            "--config",
            str(self.dir / BASE_NAME),
            "--config",
            str(self.dir / artifact.filename),
        ]

    def answers(self) -> bool:
        return self.counters() is not None

    def counters(self) -> dict[str, float] | None:
        """The pod's own counters from its telemetry endpoint (None while it does not answer)."""
        import requests

        try:
            with requests.Session() as session:
                status, body, _ = get_bounded(session, f"http://127.0.0.1:{self.port}/metrics", 2.0)
        except (requests.RequestException, DeadlineExceeded, BodyTooLarge):
            return None
        if status != 200:
            return None
        found = _METRIC.findall(body.decode("utf-8", "replace"))  # (name, value) of every series
        return {
            key: sum([float(v) for name, v in found if name == metric], 0.0)
            for key, metric in COUNTERS.items()
        }

    def failure(self) -> str | None:
        """Why the pod's collector exited: the last lines of its own output (a config it refuses is
        said there, before its log is set up), else its log's last error (the error text itself,
        when the line is the collector's JSON-fielded log line), else its exit status."""
        if not self.exited() or self.proc is None:
            return None
        said = self.output_tail()
        if not said:
            log = self.dir / LOG_NAME
            lines = log.read_text(errors="replace").splitlines() if log.exists() else []
            errors = [ln for ln in lines if "error" in ln.lower()]
            last = (errors or lines or [""])[-1]
            found = _ERROR_FIELD.search(last)
            said = self.redacted(found.group(1) if found else last)[:300]
        return f"pod {self.index}: {said or f'exit status {self.proc.returncode}'}"


def drain_s(config: OtelcolConfig) -> float:
    """How long delivery may trail the last line: a poll, an emitter tick, a batch, a linger."""
    batch = config.batching
    waits = config.poll_interval.seconds + 0.1 + config.linger.seconds
    return waits + (batch.flush_timeout.seconds if batch else 0.0) + DRAIN_SLACK_S


def run_otelcol(plan: RunPlan, placement: Placement) -> PodsRun[dict[str, float]]:
    """Drive one run of a `client: otelcol` profile through real collector pods; verify delivery."""
    profile = plan.profile
    if not isinstance(profile, OtelcolProfile):
        raise BadInput(f"profile {profile.name} is a {profile.client} profile, not an otelcol one")
    config = config_of(profile)
    workload = plan.workload
    topic, bootstrap = placement.single_topic("otelcol"), placement.bootstrap_servers
    if workload.rate_per_producer == "max":
        raise BadInput("rate_per_producer max: collector pods tail files written at a set rate")
    secure = SecureClient.of(plan.profile.name, placement.security, otelcol_security)
    binary = require_collector()
    return run_pods(
        lambda i, work: Pod(i, work, secure),
        lambda pod: pod.start(binary, profile, bootstrap, topic),
        _sum,
        lambda counters: round(
            counters.get("exporter.failed", 0) + counters.get("exporter.enqueue_failed", 0)
        ),
        shipper="the collector",
        engine="otelcol",
        artifact=KIND.artifact(profile),
        plan=plan,
        placement=placement,
        security=secure.librdkafka,
        # Each written line (id prefix included) has the workload's event size.
        payloads=lambda work, _pods: sized_payloads(plan, work, PREFIX_BYTES, lambda t: t.replace("\n", " ")),
        line=LINES,
        drain_s=drain_s(config),
        stop_wait_s=STOP_WAIT_S,
    )


def _sum(pods: list[Pod]) -> dict[str, float]:
    total = dict.fromkeys(COUNTERS, 0.0)
    for pod in pods:
        for key, value in (pod.counters() or {}).items():
            total[key] += value
    return total


def check_otelcol(profile: ProfileBase, own_file: Path | None) -> str | None:
    """The collector's own `validate`, when the collector is built (else the run says so), of the
    team's collector config the profile stands for (`own_file`, as `kbt check otelcol` validates it:
    an option the collector does not have, which kbt would not run, is refused), else of the config
    fragment a run starts it from (its artifact): one line before anything runs."""
    from tuner.driver.otelcol.build import collector_binary
    from tuner.driver.otelcol.check import check_fragment

    if not isinstance(profile, OtelcolProfile) or collector_binary() is None:
        return None
    if own_file is not None:
        problem = check_fragment(own_file)
        return (
            None
            if problem is None
            else one_line(scrub(f"{shown_path(own_file)}: otelcol validate: {problem}"))
        )
    with tempfile.TemporaryDirectory(prefix="kbt-otelcheck-") as tmp:
        path = Path(tmp) / "otelcol.yaml"
        path.write_text(KIND.artifact(profile).text, encoding="utf-8")
        problem = check_fragment(path)
    if problem is None:
        return None
    return f"profile {profile.name}: otelcol validate of the config it runs: {one_line(scrub(problem))}"


# Client kind otelcol's engine: real collector pods; the brokers count its requests.
OTELCOL_ENGINE = Engine(
    EngineId.OTELCOL,
    Capabilities(secure=True, holds_load=False, live_trials=True, counts_requests=False, live_exporter=False),
    lambda plan, placement: run_otelcol(plan, placement).result,
    check_otelcol,
)
