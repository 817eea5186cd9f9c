"""`Lab`: bring the local cluster up (idempotently), down (recorded PIDs only), report its health."""

from __future__ import annotations

import base64
import fcntl
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tuner.core.errors import BadInput, EnvironmentProblem, KbtError, did_you_mean
from tuner.lab import faults, node_config, prometheus_config, security, toxiproxy
from tuner.lab.config import LabConfig
from tuner.lab.health import Health
from tuner.lab.layout import COMPONENT_CONTROLLER, COMPONENT_PROMETHEUS, LabLayout, broker_component
from tuner.lab.preflight import check_lab_dir, find_java, preflight
from tuner.lab.processes import is_ours, port_in_use, spawn, stop, tail
from tuner.lab.state import LabState, Phase, ProcessRecord, load_state, new_state, read_state, save_state
from tuner.lab.status import component_health, wait_until_healthy

Progress = Callable[[str], None]
FORMAT_TIMEOUT_S = 120.0


# The component name of an extra dialect's standalone exporter: exporter-<dialect>-<node>.
EXPORTER_COMPONENT = "exporter-"


def _quiet(_: str) -> None:
    pass


def new_cluster_id() -> str:
    """A Kafka cluster id (URL-safe base64 UUID) that cannot be mistaken for a command-line flag."""
    while True:
        cid = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if cid[0].isalnum():
            return cid


class Lab:
    """One lab directory. `up`, `down`, `status` and `logs` may be called from any process."""

    def __init__(self, config: LabConfig, progress: Progress | None = None) -> None:
        self.config = config
        self.layout = LabLayout(config.lab_dir)
        self.progress = progress or _quiet

    @classmethod
    def at(cls, lab_dir: Path, progress: Progress | None = None) -> Lab:
        """The lab recorded in `lab_dir` (its own settings), or defaults when none was started there."""
        state = read_state(lab_dir)
        config = state.config if state is not None else LabConfig(lab_dir=lab_dir)
        return cls(config, progress)

    # ---- locking ---------------------------------------------------------------------------
    @contextmanager
    def _locked(self) -> Iterator[None]:
        """One `up`/`down` at a time per lab directory. The lock dies with its holder."""
        check_lab_dir(self.layout.root)
        with open(self.layout.lock_file, "a+") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise EnvironmentProblem(
                    f"another kbt lab command is running on {self.layout.root}; wait for it to finish"
                ) from None
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    # ---- up ---------------------------------------------------------------------------------
    def up(self, timeout_s: float = 120.0) -> LabState:
        """Start the lab, or return the running one; waits until every component is healthy."""
        with self._locked():
            faults.undo_faults(self.layout.root)  # a chaos run killed half-way
            state = read_state(self.layout.root)
            if state is not None and state.phase == Phase.UP:
                if all(h.healthy for h in component_health(state)):
                    self._require_same_config(state)
                    self.progress("lab already up")
                    return state
                self.progress("found a lab that is no longer healthy: cleaning it up")
                self._stop_recorded(state)
            elif state is not None and state.phase == Phase.STARTING:
                self.progress("found a lab whose 'up' was interrupted: cleaning it up")
                self._stop_recorded(state)
            return self._fresh_start(timeout_s)

    def _require_same_config(self, state: LabState) -> None:
        running = state.config.model_dump()
        wanted = self.config.model_dump()
        diff = [k for k in wanted if running.get(k) != wanted[k]]
        if diff:
            what = ", ".join(f"{k}={running.get(k)}" for k in diff)
            raise BadInput(
                f"a lab with other settings is running in {self.layout.root} ({what});"
                " run 'kbt lab down' first"
            )

    def _fresh_start(self, timeout_s: float) -> LabState:
        cfg = self.config
        java, prometheus = preflight(cfg)
        proxy_binary = toxiproxy.find_toxiproxy() if cfg.via_toxiproxy else ""
        self._write_files()
        state = new_state(cfg, new_cluster_id(), time.time())
        save_state(state)
        try:
            self._format(state, java)
            if cfg.via_toxiproxy:  # before the brokers: clients and health checks go through it
                cmd = toxiproxy.toxiproxy_command(cfg, self.layout, proxy_binary)
                marker = str(toxiproxy.config_file(self.layout))
                self._start(state, toxiproxy.COMPONENT_TOXIPROXY, cmd, marker=marker)
            self._start_nodes(state, java)
            self._start(
                state,
                COMPONENT_PROMETHEUS,
                prometheus_config.prometheus_command(cfg, self.layout, prometheus),
                marker=str(self.layout.prometheus_config),
            )
            self.progress(f"waiting for {cfg.brokers} broker(s) and Prometheus to be healthy")
            wait_until_healthy(state, timeout_s, self.progress)
            if cfg.security == "sasl_ssl":
                self.progress(f"creating the SCRAM user {security.USERNAME!r} for the SASL_SSL listeners")
                files = security.SecurityFiles(self.layout.security_dir)
                security.create_user(state.bootstrap_servers, files)
                security.wait_until_secure(state.secure_bootstrap_servers, files, timeout_s)
        except BaseException as exc:
            self.progress("start failed: stopping what was started")
            self._stop_recorded(state)
            if isinstance(exc, KbtError) or not isinstance(exc, Exception):
                raise  # KbtError lines and Ctrl-C/SystemExit go up as they are
            raise EnvironmentProblem(f"lab start failed: {exc}") from exc
        state.phase = Phase.UP
        save_state(state)
        return state

    def _write_files(self) -> None:
        cfg, layout = self.config, self.layout
        for path in layout.generated_dirs():
            shutil.rmtree(path, ignore_errors=True)
        layout.logs_dir.mkdir(parents=True, exist_ok=True)
        for old in layout.logs_dir.glob("*.log"):
            old.unlink()
        if cfg.security == "sasl_ssl":
            security.create_material(security.SecurityFiles(layout.security_dir))
        nodes = {COMPONENT_CONTROLLER: node_config.controller_properties(cfg, layout)}
        for node in cfg.node_ids:
            nodes[broker_component(node)] = node_config.broker_properties(cfg, layout, node)
        for component, props in nodes.items():
            layout.node_data_dir(component).mkdir(parents=True, exist_ok=True)
            properties = layout.node_properties(component)
            properties.touch(mode=0o600)  # may hold the keystore password
            properties.write_text(node_config.render_properties(props))
            layout.node_log4j(component).write_text(node_config.log4j2_properties())
        if cfg.tiered:
            layout.remote_storage_dir.mkdir(parents=True, exist_ok=True)
        layout.prometheus_data_dir.mkdir(parents=True, exist_ok=True)
        layout.prometheus_config.write_text(prometheus_config.render_prometheus_config(cfg))
        if cfg.via_toxiproxy:
            toxiproxy.write_config(cfg, layout)
        for dialect in cfg.extra_dialects:
            for node in cfg.node_ids:
                path = node_config.dialect_exporter_file(layout, dialect, node)
                path.write_text(node_config.dialect_exporter_config(cfg, dialect, node))

    def _components(self) -> list[str]:
        return [COMPONENT_CONTROLLER] + [broker_component(n) for n in self.config.node_ids]

    def _format(self, state: LabState, java: str) -> None:
        """Format every node's storage with the cluster id, in parallel."""
        self.progress(f"formatting storage of {len(self._components())} Kafka nodes")
        procs: dict[str, subprocess.Popen[bytes]] = {}
        for component in self._components():
            log = self.layout.log_file(f"format-{component}")
            with open(log, "wb") as out:
                cmd = node_config.format_command(self.layout, component, state.cluster_id, java)
                procs[component] = subprocess.Popen(
                    cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
                )
        for component, proc in procs.items():
            try:
                code = proc.wait(timeout=FORMAT_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                for p in procs.values():
                    p.kill()
                raise EnvironmentProblem(f"formatting {component} storage timed out") from None
            if code != 0:
                last = tail(self.layout.log_file(f"format-{component}"), 1)
                raise EnvironmentProblem(f"formatting {component} storage failed: {last}")

    def _start(self, state: LabState, component: str, command: list[str], marker: str) -> None:
        log = self.layout.log_file(component)
        pid = spawn(command, log, cwd=self.layout.root)
        state.record(ProcessRecord(component=component, pid=pid, marker=marker, log_file=log))
        save_state(state)

    def _start_nodes(self, state: LabState, java: str) -> None:
        cfg, layout = self.config, self.layout
        self.progress(f"starting the controller and {cfg.brokers} broker(s)")
        commands = {COMPONENT_CONTROLLER: node_config.controller_command(cfg, layout, java)}
        for node in cfg.node_ids:
            commands[broker_component(node)] = node_config.broker_command(cfg, layout, node, java)
        for component, command in commands.items():
            self._start(state, component, command, marker=str(layout.node_properties(component)))
        for dialect in cfg.extra_dialects:  # each reads its broker's JMX port once it listens
            for node in cfg.node_ids:
                path = node_config.dialect_exporter_file(layout, dialect, node)
                self._start(
                    state,
                    f"{EXPORTER_COMPONENT}{dialect}-{node}",
                    node_config.dialect_exporter_command(cfg, layout, dialect, node, java),
                    marker=str(path),
                )

    # ---- down -------------------------------------------------------------------------------
    def down(self, timeout_s: float = 30.0) -> list[str]:
        """Stop every recorded process; returns the components that were running. A lab directory
        that does not exist holds no lab: it is reported, never created (the lock file would)."""
        if not self.layout.root.is_dir():
            return []
        with self._locked():
            state = read_state(self.layout.root)
            faults.undo_faults(self.layout.root)  # resume paused brokers so they can stop cleanly
            if state is None:
                return []
            stopped = self._stop_recorded(state, timeout_s)
            if stopped:
                self._verify_ports_free(state)
            return stopped

    def _stop_recorded(self, state: LabState, timeout_s: float = 30.0) -> list[str]:
        """Prometheus first, then the brokers together (controlled shutdown needs the controller),
        then the controller. Marks the state stopped."""
        first = (COMPONENT_PROMETHEUS, toxiproxy.COMPONENT_TOXIPROXY)
        groups = [
            [p for p in state.processes if p.component in first],
            # The extra dialects' exporters (they only read the brokers).
            [p for p in state.processes if p.component.startswith(EXPORTER_COMPONENT)],
            [p for p in state.processes if p.component.startswith("broker-")],
            [p for p in state.processes if p.component == COMPONENT_CONTROLLER],
        ]
        running = [p.component for p in state.processes if is_ours(p.pid, p.marker)]
        for group in groups:
            if group:
                stop([(p.pid, p.marker) for p in group], timeout_s)
        state.phase = Phase.STOPPED
        save_state(state)
        return running

    def _verify_ports_free(self, state: LabState, wait_s: float = 10.0) -> None:
        busy = [(w, p) for w, p in state.config.named_ports() if w != "client exporter"]
        deadline = time.monotonic() + wait_s
        while busy:
            busy = [(w, p) for w, p in busy if port_in_use(p, state.config.host_of(p))]
            if not busy or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        if busy:
            what, port = busy[0]
            raise EnvironmentProblem(
                f"port {port} ({what}) is still in use after the lab stopped: a process the lab did not"
                " record holds it"
            )

    # ---- faults (kbt chaos) ----------------------------------------------------------------
    def start_broker(self, node: int) -> int:
        """Start broker `node` again after a fault stopped or killed it; returns its new PID."""
        with self._locked():
            state = load_state(self.layout.root)
            component = broker_component(node)
            if faults.broker_pid(state, node) is not None:
                raise EnvironmentProblem(f"{component} is still running")
            command = node_config.broker_command(state.config, self.layout, node, find_java())
            self._start(state, component, command, marker=str(self.layout.node_properties(component)))
            record = state.process(component)
            assert record is not None
            return record.pid

    # ---- status and logs ----------------------------------------------------------------------
    def status(self) -> tuple[LabState | None, list[Health]]:
        state = read_state(self.layout.root)
        if state is None or state.phase == Phase.STOPPED:
            return state, []
        return state, component_health(state)

    def components(self) -> list[str]:
        state = read_state(self.layout.root)
        cfg = state.config if state is not None else self.config
        extra = [toxiproxy.COMPONENT_TOXIPROXY] if cfg.via_toxiproxy else []
        brokers = [broker_component(n) for n in cfg.node_ids]
        return [COMPONENT_CONTROLLER, *brokers, COMPONENT_PROMETHEUS, *extra]

    def logs(self, component: str, lines: int = 50) -> str:
        names = self.components()
        if component not in names:
            raise BadInput(
                f"unknown lab component {component!r}{did_you_mean(component, names)}"
                f"; one of: {', '.join(names)}"
            )
        path = self.layout.log_file(component)
        if not path.exists():
            raise EnvironmentProblem(
                f"no log for {component} yet in {self.layout.logs_dir} (run 'kbt lab up')"
            )
        return tail(path, lines)
