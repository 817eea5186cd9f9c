"""`filebeat test config` on a file, with an installed real Filebeat build.

Filebeat validates values the way it will use them (kbt's schema catches misspelled keys, which
Filebeat accepts silently). Every `${VAR}` reference gets a value the way a deployment sets it,
whatever the shell running the check holds: a variable under `hosts` three comma-separated brokers
(the form that breaks `hosts: ["${VAR}"]`), or one broker when it is one element of a list of
several; credentials a placeholder; TLS options (certificate authorities, certificate, key) the
paths of real PEM files made for the check. Any other variable is Filebeat's to read when the
environment holds it or the reference has a default (kbt's schema check read the same value), else
a placeholder word.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tuner.core.certs import placeholder_pems
from tuner.core.errors import BadInput
from tuner.core.inputs import parse_yaml, read_text, read_yaml, shown_path
from tuner.core.text import sorted_lists
from tuner.driver.filebeat.builds import build_version, filebeat_binary
from tuner.spec.filebeat_load import expand_dotted

# A reference's name, and its default when it has one (`${NAME:default}`, not `${NAME:?message}`).
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_.]*)(:[^?}][^}]*)?")
_ONE_HOST = "hosts[]"
# A multi-broker cluster as a deployment names it (nothing is contacted: `test config` connects to
# no broker).
THREE_HOSTS = "kafka-1.example:9092,kafka-2.example:9092,kafka-3.example:9092"
_TLS_FILES = ("certificate_authorities", "certificate", "key")  # output.kafka.ssl options naming files
_HAS_INPUTS = re.compile(r"^\s*(filebeat\.(inputs|modules|config)|inputs\s*:)", re.MULTILINE)
TIMEOUT_S = 60.0


def test_config(
    path: Path, version: str | None = None, notes: list[str] | None = None
) -> tuple[str, str | None]:
    """(version used, None when Filebeat accepts the file, else its one-line complaint). A TLS
    file the config names by a path absent on this machine (the pod's own) is checked as a
    placeholder PEM, said in `notes`."""
    binary = filebeat_binary(version)
    text = read_text(path, "Filebeat profile")  # the bounded reader: a swapped-in FIFO is one line
    with tempfile.TemporaryDirectory(prefix="kbt-fbtest-") as home:
        data = _parsed(path, text)  # the text read above: the substitutions and the TLS paths walk it
        env = {**os.environ, **substitutions(path, text, Path(home), data=data)}
        args = ["-c", str(path.resolve())]
        for option, absent in absent_tls_files(data).items():
            placeholder = _tls_files(Path(home))[option.rsplit(".", 1)[-1]]
            value = f'["{placeholder}"]' if option.endswith("certificate_authorities") else str(placeholder)
            args += ["-E", f"{option}={value}"]
            if notes is not None:
                notes.append(
                    f"{path}: {option}: {', '.join(absent)} is not on this machine: checked with a"
                    " placeholder file (it must exist where Filebeat runs)"
                )
        if not _HAS_INPUTS.search(text):
            # A profile fragment (output.kafka + queue.mem): Filebeat refuses a config without inputs,
            # so a stub input is merged in as a second -c file.
            stub = Path(home) / "kbt-stub-input.yml"
            stub.write_text(
                f'filebeat.inputs: [{{type: log, paths: ["{home}/none.log"]}}]\n', encoding="utf-8"
            )
            args += ["-c", str(stub)]
        try:
            proc = subprocess.run(
                [
                    str(binary),
                    "test",
                    "config",
                    *args,
                    "--strict.perms=false",
                    "--path.home",
                    home,
                    "--path.data",
                    home,
                    "--path.logs",
                    home,
                    # A file's own logging.files.path / path.* would make `test config` create
                    # directories beside the user's file: -E overrides every one into the temp home.
                    *("-E", f"logging.files.path={home}", "-E", "logging.to_files=false"),
                    *("-E", f"path.data={home}", "-E", f"path.logs={home}", "-E", f"path.home={home}"),
                ],
                capture_output=True,
                text=True,
                env=env,
                timeout=TIMEOUT_S,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            return build_version(binary), f"filebeat test config gave no answer in {TIMEOUT_S:g} s"
    if proc.returncode == 0:
        return build_version(binary), None
    lines = [ln.strip() for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
    lines = [ln for ln in lines if "fetching V2 controller" not in ln]  # a cgroup notice, not the config
    # go-ucfg's assertions print a Go stack trace after the reason: the reason is the line before it
    trace = next((i for i, ln in enumerate(lines) if ln.startswith("Trace:")), len(lines))
    lines = lines[:trace]
    return build_version(binary), (sorted_lists(lines[-1]) if lines else f"exit status {proc.returncode}")


def _parsed(path: Path, text: str | None = None) -> Any:
    """The file (its `text` when already read) as YAML; an empty mapping for a file kbt cannot read
    (the schema check says why)."""
    try:
        if text is None:
            return read_yaml(path, go_yaml="v2")
        return parse_yaml(text, shown_path(path), go_yaml="v2")
    except BadInput:
        return {}


def substitutions(
    path: Path, text: str, tmp: Path, environ: Mapping[str, str] | None = None, data: Any = None
) -> dict[str, str]:
    """A deployment's value for every `${VAR}` the file names, chosen by the option it sits in.
    Any other option's variable is left to Filebeat when `environ` (None: this process's
    environment) holds it or the reference has a default: the value kbt's schema check read."""
    environ = os.environ if environ is None else environ
    options: dict[str, str] = {}
    # A file kbt cannot read: the names alone get placeholders.
    _options_of(_parsed(path) if data is None else data, "", options)
    defaulted = {m.group(1) for m in _REFERENCE.finditer(text) if m.group(2)}
    out: dict[str, str] = {}
    for number, match in enumerate(_REFERENCE.finditer(text), 1):
        name = match.group(1)
        option = options.get(name, "")
        if option == _ONE_HOST:  # one element of a list of several brokers: one broker
            out[name] = f"kafka-{number}.example:9092"
        elif option == "hosts" or (not option and "HOST" in name.upper()):
            out[name] = THREE_HOSTS
        elif option in _TLS_FILES:
            out[name] = str(_tls_files(tmp)[option])
        elif name not in environ and name not in defaulted:
            out[name] = "kbt-placeholder"
    return out


def _options_of(node: Any, option: str, out: dict[str, str]) -> None:
    """The option (last key of its path) each reference sits in; an element of a list of several
    broker addresses is `hosts[]` (each names one broker)."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            _options_of(value, str(key).rsplit(".", 1)[-1], out)
    elif isinstance(node, list):
        for item in node:
            _options_of(item, _ONE_HOST if option == "hosts" and len(node) > 1 else option, out)
    elif isinstance(node, str):
        for match in _REFERENCE.finditer(node):
            out.setdefault(match.group(1), option)


def absent_tls_files(data: Any) -> dict[str, list[str]]:
    """output.kafka's TLS options (certificate authorities, certificate, key) naming, as written, a
    file that is not on this machine (or a relative path, which Filebeat reads under its own
    path.config): option path -> those paths. `${VAR}` values are left out (substitutions gives
    them real files), as is an inline PEM. `data`: the file as YAML."""
    try:
        data = expand_dotted(data) if isinstance(data, Mapping) else {}
    except ValueError:
        return {}  # a setting given twice: the schema check says so
    for key in ("output", "kafka", "ssl"):
        data = data.get(key) if isinstance(data, Mapping) else None
    out: dict[str, list[str]] = {}
    for option in _TLS_FILES if isinstance(data, Mapping) else ():
        value = data.get(option)
        absent = [
            p for p in (value if isinstance(value, list) else [value])
            if isinstance(p, str) and p.strip() and "${" not in p and "-----BEGIN" not in p
            and not (Path(p).is_absolute() and Path(p).is_file())
        ]  # fmt: skip
        if absent:
            out[f"output.kafka.ssl.{option}"] = absent
    return out


def _tls_files(tmp: Path) -> dict[str, Path]:
    """Real PEM files for the CA, certificate and key options: Filebeat reads them when it builds
    the output."""
    pems = placeholder_pems(tmp)
    return {"certificate_authorities": pems.ca, "certificate": pems.cert, "key": pems.key}
