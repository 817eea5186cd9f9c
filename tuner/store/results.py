"""The results store: run records as JSON files under a results directory.

Layout: `<results>/<sweep>/<run name>--<UTC timestamp>.json`, and beside a record the lines its
run's Kafka clients logged, if any (`... .librdkafka.log`, appended while the run lasts). Records
are written atomically (temp file, fsync, hard link) and never overwritten; a rerun of the same run
adds a new file. Readers (reports, the recommender) go through `ResultsStore` only.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from tuner.core.errors import BadInput, EnvironmentProblem
from tuner.core.inputs import read_json, shown_path, type_name
from tuner.core.paths import DEFAULT_RESULTS_DIR
from tuner.core.writes import atomic_write_json
from tuner.store.document import validated, version_refused
from tuner.store.probe_record import PROBE_KIND
from tuner.store.recommendation import RECOMMENDATION_KIND
from tuner.store.record import SCHEMA_VERSION, RunRecord
from tuner.store.record_upgrade import UpgradeError, readable, upgrade
from tuner.store.run_series import SERIES_KIND

# kbt's other documents say what they are (a run record has no `kind`): one in a results directory
# (`recommend --out` at its --results) is passed over by the readers, not read as a broken record.
OTHER_DOCUMENTS = frozenset({RECOMMENDATION_KIND, SERIES_KIND, PROBE_KIND})


class OtherDocument(BadInput):
    """A kbt document of another kind where run records are read."""


def run_stamp(epoch_s: float) -> str:
    """Sortable UTC timestamp with milliseconds, safe in file names."""
    dt = datetime.fromtimestamp(epoch_s, tz=UTC)
    return dt.strftime("%Y%m%dT%H%M%S") + f".{dt.microsecond // 1000:03d}Z"


def make_run_id(sweep: str, name: str, epoch_s: float) -> str:
    return f"{sweep}/{name}--{run_stamp(epoch_s)}"


class ResultsStore:
    def __init__(self, root: Path = DEFAULT_RESULTS_DIR) -> None:
        self.root = Path(root)

    # ---- writing ---------------------------------------------------------------------------------

    def path_for(self, record: RunRecord) -> Path:
        return self._beside(record.run_id, ".json")

    def client_log_path(self, run_id: str) -> Path:
        """Where the lines a run's Kafka clients log go (tuner.core.client_log): beside its record."""
        return self._beside(run_id, ".librdkafka.log")

    def _beside(self, run_id: str, suffix: str) -> Path:
        sweep, _, leaf = run_id.partition("/")
        return self.root / sweep / f"{leaf}{suffix}"

    def write(self, record: RunRecord) -> Path:
        """Write `record` atomically; refuse to replace an existing file."""
        target = self.path_for(record)
        try:  # replace=False: records are never overwritten
            return atomic_write_json(target, record.model_dump(mode="json"), "run record", replace=False)
        except FileExistsError:
            raise EnvironmentProblem(f"{target}: a run record with this id already exists") from None

    # ---- reading ---------------------------------------------------------------------------------

    def paths(self, sweep: str | None = None) -> list[Path]:
        base = self.root / sweep if sweep else self.root
        if not base.is_dir():
            return []
        pattern = "*.json" if sweep else "*/*.json"
        return sorted(p for p in base.glob(pattern) if not p.name.startswith("."))

    def load(self, path: Path) -> RunRecord:
        data = read_json(path, "run record")
        if not isinstance(data, dict):
            raise BadInput(
                f"{shown_path(path)}: not a run record: expected a JSON object, found {type_name(data)}"
            )
        if data.get("kind") in OTHER_DOCUMENTS:
            raise OtherDocument(f"{shown_path(path)}: a {data['kind']} document, not a run record")
        version = data.get("schema_version")
        if not readable(version):
            raise version_refused(path, "run record", version, range(1, SCHEMA_VERSION + 1))
        try:
            current = upgrade(data)
        except UpgradeError as exc:
            raise BadInput(f"{shown_path(path)}: invalid run record: {exc}") from None
        return validated(RunRecord, current, path, "run record")

    def records(self, sweep: str | None = None) -> list[RunRecord]:
        """Every record (of one sweep), oldest first; kbt's other documents passed over."""
        records = []
        for path in self.paths(sweep):
            try:
                records.append(self.load(path))
            except OtherDocument:
                continue
        return sorted(records, key=lambda r: r.created_at)

    def sweeps(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and any(p.glob("*.json")))

    def latest(self, sweep: str) -> dict[str, RunRecord]:
        """The newest record of each run name in a sweep."""
        return {record.name: record for record in self.records(sweep)}

    def completed(self, sweep: str, name: str, spec_hash: str) -> RunRecord | None:
        """The newest record of this exact run (same name and spec hash), if any: what --resume skips."""
        found = (r for r in reversed(self.records(sweep)) if r.name == name and r.spec_hash == spec_hash)
        return next(found, None)
