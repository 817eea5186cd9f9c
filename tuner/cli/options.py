"""Every long option that more than one command takes, defined once: name, metavar, help, default.

A command takes one with `option("--json", what="the diagnosis")`, never with its own
`typer.Option(..., "--json", ...)` (tests/unit/test_cli_options.py fails on a second declaration,
and on two commands whose help or default for one name differ outside this table). Where a name
means a different thing on different commands (`--out` a file or a directory, `--timeout` before
healthy or before SIGKILL), each meaning is a role below, so every difference is visible here.
A help text with `{what}` takes the command's object: the one sentence, worded once.
The checks of the values stay with their concept: target_source (tuner/cli/cluster_flags.py),
results_dir and list_values (tuner/cli/args.py), seconds and prometheus_url (tuner/cli/diagnose.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from tuner.core.paths import DEFAULT_RESULTS_DIR

DEFAULT = "default"
REQUIRED: Any = ...  # typer's mark for an option with no default


@dataclass(frozen=True)
class Flag:
    help: str
    default: Any = None
    metavar: str | None = None
    aliases: tuple[str, ...] = ()  # more spellings, e.g. "-o"


_JSON_HELP = "Also write {what} as JSON ('-': stdout)."
_REQUEST_LOG_HELP = "A broker's request log (kafka.request.logger at DEBUG; repeat per broker): {what}."

# long option -> role -> definition; DEFAULT is the role a command gets when it names none
FLAGS: dict[str, dict[str, Flag]] = {
    "--bootstrap-server": {
        DEFAULT: Flag(
            "The cluster's brokers, as Kafka's tools take them (instead of --target FILE).",
            metavar="HOST:PORT[,...]",
        )
    },
    "--command-config": {
        DEFAULT: Flag(
            "Client security in Kafka's properties format (security.protocol, sasl.*, ssl.*);"
            " with --bootstrap-server.",
            metavar="FILE",
        )
    },
    "--prometheus": {
        # beside --bootstrap-server: the same target a target file would name
        DEFAULT: Flag("Prometheus scraping the brokers; with --bootstrap-server.", metavar="URL"),
        "forecast": Flag("With --bootstrap-server: the Prometheus to diagnose it from.", metavar="URL"),
        # alone: the commands that only read Prometheus (target_source's prometheus_alone)
        "source": Flag("Prometheus base URL, e.g. http://127.0.0.1:19090 (or --target)."),
        "report": Flag(
            "Prometheus URL to fetch time series for records saved without them (kept beside them)."
        ),
    },
    "--target": {
        DEFAULT: Flag("A target file (docs/targets.md): {what}."),
        "report": Flag(
            "Like --prometheus, with a target file's Prometheus (its auth, selectors and dialect)."
        ),
        "forecast": Flag(
            "Baseline from a live diagnosis of a target file's cluster (its Prometheus, auth, dialect)."
        ),
    },
    "--lab-dir": {
        DEFAULT: Flag("Lab directory (default: the lab's own)."),
        "lab": Flag("Lab directory (env KBT_LAB_DIR; default ~/.local/state/kbt/lab)."),
        "live": Flag("Lab directory (--live)."),
        "capture": Flag("Lab directory, when capturing kbt's lab."),
        "report": Flag("Like --prometheus, with the Prometheus of the lab in this directory."),
    },
    "--json": {
        DEFAULT: Flag(_JSON_HELP, metavar="PATH"),
        "bare": Flag(_JSON_HELP),  # shown as <path> (diagnose, forecast)
        "probe": Flag("Write the probe record (JSON) here."),
    },
    "--request-log": {DEFAULT: Flag(_REQUEST_LOG_HELP)},
    "--results": {
        DEFAULT: Flag("Directory for run records.", default=DEFAULT_RESULTS_DIR),
        "recommend": Flag("Results directory with run records.", default=DEFAULT_RESULTS_DIR),
        "report": Flag("Results directory (or one sweep's directory in it)."),
        "forecast": Flag(
            "Results directory (run records of kbt sweep): baseline runs and the cost model's data."
        ),
    },
    "--resume": {DEFAULT: Flag("Skip runs that already have a record.", default=False)},
    "--yes": {DEFAULT: Flag("Send to a target that is not on loopback without asking.", default=False)},
    "--dry-run": {DEFAULT: Flag("Validate and {what}; touch nothing.", default=False)},
    "--window": {
        DEFAULT: Flag("Window to average over, e.g. 5m, 300s, 1h (ends now).", default="5m"),
        "compare": Flag("Length of each window, e.g. 5m, 300s.", default="5m"),
        "forecast": Flag("With --target: the window to average over (ends now).", default="5m"),
        "capture": Flag("How long to watch the cluster (5s..1h), e.g. 60s, 5m.", default="60s"),
    },
    "--step": {
        DEFAULT: Flag("Resolution of the idle and queue averages (>= scrape interval).", default="15s")
    },
    "--cost-model": {
        DEFAULT: Flag(
            "Broker cost model: a JSON file from `kbt forecast --save-model` or a results directory to fit."
        ),
        "forecast": Flag("Cost model JSON or results directory (default: fitted from RESULTS)."),
    },
    "--sweep": {
        DEFAULT: Flag("Only records of these sweeps (repeat or comma list).", default=[]),
        "forecast": Flag("Sweep whose runs are the baseline (default: newest)."),
    },
    "--profile": {
        DEFAULT: Flag(
            "Only these profiles of the spec (repeat or comma list; default: every profile).", default=[]
        ),
        "stress": Flag(
            "Profiles to run back to back, by label (repeat or comma list; default: all, in spec order).",
            default=[],
            aliases=("--profiles",),
        ),
        "lab": Flag(
            "A named preset: pressure = 1 broker, 1 network and 1 handler thread, request queue 16,"
            " 2.5 ms per produce request (Qunar's regime on 2 cores; docs/benchmarks.md); chaos = 3 brokers"
            " behind Toxiproxy, tiered, 1 s scrapes (kbt chaos's faults). Flags win."
        ),
    },
    "--markdown": {
        DEFAULT: Flag("Also write the results table here."),
        "probe": Flag("Write the table and advice as Markdown here."),
    },
    "--codecs": {
        DEFAULT: Flag("Codecs a client may use, e.g. filebeat=lz4,snappy.", default=[]),
        "probe": Flag("Codecs, comma-separated.", default="gzip,snappy,lz4,zstd"),
    },
    "--out": {
        "recommend": Flag("Directory for the record and rendered files.", default=Path("out/recommend")),
        "report": Flag("The HTML file to write.", default=Path("report.html"), aliases=("-o",)),
        "capture": Flag(
            "Directory for capture.json and a folder per client group.", default=REQUIRED, metavar="DIR"
        ),
        "render": Flag("Directory for the Filebeat profiles (default: filebeat-profiles/ in the checkout)."),
    },
    "--timeout": {
        "up": Flag("Seconds to wait for the lab to be healthy.", default=120.0),
        "down": Flag("Seconds to wait after SIGTERM before SIGKILL.", default=30.0),
    },
}


def option(name: str, role: str = DEFAULT, *, what: str | None = None) -> Any:
    """The typer option `name` as defined above (a KeyError names a flag or role not defined)."""
    flag = FLAGS[name][role]
    if ("{what}" in flag.help) != (what is not None):
        raise TypeError(f"{name} ({role}): what= goes with a help text that has {{what}}, and only then")
    text = flag.help.format(what=what) if what is not None else flag.help
    return typer.Option(flag.default, name, *flag.aliases, metavar=flag.metavar, help=text)
