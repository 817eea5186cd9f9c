"""The JSON plan each Java engine process reads (loadtests/java-engine, Plan.java, schema 1), and how
the engine is started."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tuner.core.envref import java_env_names
from tuner.core.errors import BadInput, EnvironmentProblem
from tuner.core.numbers import parse_number
from tuner.core.paths import cache_dir
from tuner.core.properties import parse_properties, properties_line, read_properties
from tuner.driver.client_exporter import FINAL_SCRAPE_S, LOOPBACK
from tuner.driver.engine_process import ProcessPlan, ProcessSite, engine_plans
from tuner.spec.java_client import check_property_names
from tuner.spec.workload import WorkloadSpec

PLAN_SCHEMA = 1
RESULT_SCHEMA = 1
MAIN_CLASS = "io.github.kbt.javaengine.Main"
# Seconds for every JVM to start and connect before the shared schedule starts.
START_SLACK_S = 5.0
ARTIFACT = "java.properties"  # the kind's rendered file, as the run's producers load it
# The engine sets these itself.
ENGINE_PROPERTIES = frozenset({"bootstrap.servers", "key.serializer", "value.serializer"})
# Java's delivery.timeout.ms default (2 min): the drain waits at most that long.
DEFAULT_DELIVERY_TIMEOUT_MS = 120_000
# The JVM's heap: a base for the engine and the clients, plus each pod's buffer.memory (the producer
# allocates its batches from that pool, so a pod may hold all of it) with room for the collector.
HEAP_BASE_MB = 256
HEAP_PER_BUFFER = 1.25
DEFAULT_BUFFER_MEMORY = 33_554_432
# Beyond this a run needs more processes, not a larger JVM (2 of them fit a 24 GB machine's labs).
HEAP_MAX_MB = 6144


def heap_mb(pods: int, properties: Mapping[str, str]) -> int:
    """The heap a JVM of `pods` producers needs: BadInput when it is more than one process should take."""
    try:
        buffer = parse_number(str(properties.get("buffer.memory", DEFAULT_BUFFER_MEMORY)), "buffer.memory")
        if buffer <= 0:
            raise ValueError("not positive")
    except ValueError:  # the one number grammar: ASCII digits, finite (float() took "1e400", "٠.٥")
        raise BadInput(f"buffer.memory: not a number of bytes ({properties['buffer.memory']!r})") from None
    need = round(HEAP_BASE_MB + pods * buffer * HEAP_PER_BUFFER / 2**20)
    if need > HEAP_MAX_MB:
        raise BadInput(
            f"{pods} producers x buffer.memory {buffer / 2**20:.0f} MB need a {need} MB heap in one"
            f" Java engine process (at most {HEAP_MAX_MB} MB): raise the workload's processes or lower"
            " buffer.memory"
        )
    return max(512, need)


def engine_dir() -> Path:
    return cache_dir() / "java-engine"


def engine_command(heap: int = 512) -> list[str]:
    """`java -Xmx<heap>m -cp <engine jars> Main`: the engine `make install` built into the cache."""
    lib = engine_dir()
    if not (lib / "kbt-java-engine.jar").is_file():
        raise EnvironmentProblem(
            f"the Java engine is not built ({lib / 'kbt-java-engine.jar'} is missing): run 'make install'"
        )
    java = shutil.which("java")
    if java is None:
        raise EnvironmentProblem(
            "java not found on PATH (the Java engine needs Java 17+; run 'make install')"
        )
    return [java, f"-Xmx{heap}m", "-cp", f"{lib}/*", MAIN_CLASS]


def config_names_json() -> str:
    """The generated `tuner/spec/java_producer_config.json`: ProducerConfig's names from the engine."""
    cmd = engine_command()
    version = subprocess.run([*cmd, "--version"], capture_output=True, text=True, check=True, timeout=60)
    names = subprocess.run([*cmd, "--config-names"], capture_output=True, text=True, check=True, timeout=60)
    doc = {
        "generated_by": "the Java engine's --config-names (make generate)",
        "kafka_clients": version.stdout.split()[-1],
        "names": sorted(line for line in names.stdout.splitlines() if line.strip()),
    }
    return json.dumps(doc, indent=1) + "\n"


def producer_properties(properties: Mapping[str, str]) -> dict[str, str]:
    """The profile's properties for the engine: names checked against the client's, none of the
    engine's own."""
    taken = sorted(ENGINE_PROPERTIES & set(properties))
    if taken:
        raise BadInput(f"{taken[0]}: set by the Java engine itself (remove it from the profile)")
    try:
        check_property_names(set(properties))
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    return dict(properties)


def exporter_plan(ports: Sequence[int], index: int) -> dict[str, Any] | None:
    """Process `index`'s client exporter (Plan.Exporter): its port, the producer label of its own
    series (as the librdkafka engine's processes), the final-scrape wait; None without a port."""
    if index >= len(ports):
        return None
    return {
        "host": LOOPBACK,
        "port": ports[index],
        "process": f"process-{index}",
        "final_scrape_s": FINAL_SCRAPE_S,
    }


def exporter_notes(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per engine process whose client exporter could not serve (port taken): the run went
    on unexported."""
    exporters = [r.get("exporter") or {} for r in results]
    return [
        f"the Java engine's client exporter could not listen on {LOOPBACK}:{exp.get('port')}"
        f" ({exp.get('problem', 'unknown')}): the run goes on unexported"
        for exp in exporters
        if exp and not exp.get("serving", False)
    ]


def drain_s(properties: Mapping[str, str]) -> float:
    """How long outstanding records may take after the schedule ends: the client's own delivery
    bound (delivery.timeout.ms covers linger, retries and the request timeout) plus a margin."""
    try:
        timeout_ms = parse_number(
            str(properties.get("delivery.timeout.ms", DEFAULT_DELIVERY_TIMEOUT_MS)), "delivery.timeout.ms"
        )
        if timeout_ms < 0:
            raise ValueError("negative")
    except ValueError:
        timeout_ms = DEFAULT_DELIVERY_TIMEOUT_MS
    return min(600.0, timeout_ms / 1000 + 5.0)


def process_plans(
    workload: WorkloadSpec,
    file_text: str,
    site: ProcessSite,
    environment: Mapping[str, str] | None = None,
    filename: str = ARTIFACT,
) -> list[ProcessPlan]:
    """One plan per workload process. Every producer loads the rendered properties file `file_text`
    (written into the run's work directory, loaded by the engine as Kafka's tools load one) with
    `environment` (the security the target and the profile's secrets need) on top. Process i
    serves its client exporter on the placement's `exporter_ports[i]` (none when there are fewer
    ports)."""
    environment = environment or {}
    props = producer_properties({**parse_properties(file_text, filename), **environment})
    path = site.workdir / filename
    path.write_text(file_text)
    ports = site.placement.exporter_ports
    return engine_plans(
        workload,
        lambda index: {
            "properties": dict(environment),
            "properties_file": str(path),
            "exporter": exporter_plan(ports, index),
        },
        site,
        schema=PLAN_SCHEMA,
        drain_s=drain_s(props),
    )


# Kafka's config providers that read the file or directory a reference names (`${alias:path:key}`).
_FILE_PROVIDERS = frozenset(
    {
        "org.apache.kafka.common.config.provider.FileConfigProvider",
        "org.apache.kafka.common.config.provider.DirectoryConfigProvider",
    }
)
_PROVIDER_REFERENCE = re.compile(r"\$\{([A-Za-z0-9_.-]+):([^{}]*):([^{}:]*)\}")
PLACEHOLDER = "kbt-placeholder"


def absent_provider_files(props: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """The properties with each reference to a file provider's file that is not on this machine
    (the pod's secret mount) replaced by a placeholder value, and those files."""
    aliases = {a.strip() for a in props.get("config.providers", "").split(",") if a.strip()}
    readers = {a for a in aliases if props.get(f"config.providers.{a}.class", "").strip() in _FILE_PROVIDERS}
    absent: list[str] = []

    def swap(m: re.Match[str]) -> str:
        alias, where = m.group(1), m.group(2)
        if alias not in readers or Path(where).exists():
            return m.group(0)
        if where not in absent:
            absent.append(where)
        return PLACEHOLDER

    return {k: _PROVIDER_REFERENCE.sub(swap, v) if readers else v for k, v in props.items()}, absent


def check_properties_file(
    path: Path, env: Mapping[str, str] | None = None, notes: list[str] | None = None, text: str | None = None
) -> dict[str, str]:
    """The Java client's own reading of a producer properties file (ProducerConfig: names, types,
    validators, config providers, idempotence's defaults), as the engine's `--check-config` prints
    it; BadInput with the client's one-line reason when it refuses the file. A file provider's file
    absent here is read as placeholder values, said in `notes`. `text` is the file's text when the
    caller has read it already."""
    props = parse_properties(read_properties(path) if text is None else text, path.name)
    swapped, absent = absent_provider_files(props)
    with tempfile.TemporaryDirectory(prefix="kbt-check-") as tmp:
        checked = path
        if absent:
            checked = Path(tmp) / path.name
            checked.write_text(
                "".join(properties_line(k, v) + "\n" for k, v in swapped.items()), encoding="utf-8"
            )
            if notes is not None:
                notes += [
                    f"{where} is not on this machine: its config provider's values were checked as"
                    " placeholders (it must exist where the client runs)"
                    for where in absent
                ]
        result = subprocess.run(
            [*engine_command(), "--check-config", str(checked)],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, **(env or {})},
        )
    if result.returncode != 0:
        reason = (result.stderr.strip().splitlines() or ["no reason given"])[-1].removeprefix("java-engine: ")
        raise BadInput(f"{path.name}: the Java producer refuses it: {reason}")
    settings: dict[str, str] = json.loads(result.stdout)["settings"]
    return settings


UNRESOLVED = "[unresolved reference]"  # the engine's account of a secret its reference left as written


def unset_references(
    props: Mapping[str, str], reported: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Each property the Java client left unresolved (`reported`, of `check_properties_file`), and
    why in words: the `${env:NAME}` variables of its value (`props`) not set in `environ`, named
    (a name, never a value); when each is set, that the client did not resolve them."""
    environ = os.environ if environ is None else environ
    out: dict[str, str] = {}
    for key, text in sorted(reported.items()):
        if text != UNRESOLVED:
            continue
        names = list(dict.fromkeys(java_env_names(props.get(key, ""))))
        unset = [n for n in names if n not in environ]
        listed = " and ".join(f"${{env:{n}}}" for n in (unset or names))
        if unset:
            out[key] = f"{listed} {'is' if len(unset) == 1 else 'are'} not set here"
        else:
            out[key] = f"{listed or 'its reference'} not resolved (config.providers names no env provider?)"
    return out
