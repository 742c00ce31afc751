"""A sweep's result directory: one Parquet row per finished run, written atomically.

Layout of ``DIR``::

    sweep.json                         the sweep (base, axes, ...) and its fingerprint
    runs/part-000123.parquet           the result row of run 123 (one file per run)
    series/<table>/run=000123/data.parquet   that run's time series (Hive partitions)
    results.parquet                    every row, by run id (written when all are done)

A run counts as done once its ``runs/part-*.parquet`` exists. Every file is written to a
hidden temporary name in the same directory and renamed into place (``os.replace``), so a
killed sweep leaves no half-written file, and readers (which skip names starting with
``.``) never see one. The series files of a run are written before its row.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import shutil
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from ccsim.output import OutputDirError, check_output_dir
from ccsim.results import PARQUET_OPTIONS
from ccsim.sweep_spec import Axis, RunSpec, Sweep, SweepError

MANIFEST = "sweep.json"
RUNS_DIR = "runs"
SERIES_DIR = "series"
RESULTS_FILE = "results.parquet"
PLOT_FILE = "sweep.png"
LOCK_FILE = ".lock"
#: What ``--force`` removes (only ccsim's own files).
OWNED = (MANIFEST, RUNS_DIR, SERIES_DIR, RESULTS_FILE, PLOT_FILE)
FORMAT = "ccsim-sweep/1"

#: Columns that depend on the machine and the moment, not on the scenario.
WALL_CLOCK_COLUMNS = ("wall_s", "started_at", "finished_at", "worker")

_TIMESTAMP = pa.timestamp("us", tz="UTC")

#: (column, type, where in the summary) for the scalar figures.
_SCALARS: tuple[tuple[str, pa.DataType, tuple[str, ...]], ...] = (
    ("utilisation", pa.float64(), ("utilisation",)),
    ("jain_index", pa.float64(), ("jain_index",)),
    ("sojourn_mean_ms", pa.float64(), ("bottleneck", "sojourn_mean_ms")),
    ("sojourn_p50_ms", pa.float64(), ("bottleneck", "sojourn_p50_ms")),
    ("sojourn_p90_ms", pa.float64(), ("bottleneck", "sojourn_p90_ms")),
    ("sojourn_p99_ms", pa.float64(), ("bottleneck", "sojourn_p99_ms")),
    ("drop_probability", pa.float64(), ("bottleneck", "drop_probability")),
    ("mark_probability", pa.float64(), ("bottleneck", "mark_probability")),
    ("arrivals", pa.int64(), ("bottleneck", "arrivals")),
    ("departures", pa.int64(), ("bottleneck", "departures")),
    ("drops", pa.int64(), ("bottleneck", "drops")),
    ("marks", pa.int64(), ("bottleneck", "marks")),
    ("discipline", pa.string(), ("bottleneck", "discipline")),
)
#: (column, type of the list items, key of each ``flows[i]``): one list item per flow.
_PER_FLOW: tuple[tuple[str, pa.DataType, str], ...] = (
    ("flow_goodput_mbps", pa.float64(), "goodput_mbps"),
    ("flow_throughput_mbps", pa.float64(), "throughput_mbps"),
    ("flow_retransmits", pa.int64(), "retransmits"),
    ("flow_timeouts", pa.int64(), "timeouts"),
    ("flow_fct_s", pa.float64(), "fct_s"),
)
_TAIL: tuple[tuple[str, pa.DataType, tuple[str, ...]], ...] = (
    ("events", pa.int64(), ("events",)),
    ("bottleneck_packets", pa.int64(), ("bottleneck_packets",)),
    ("duration_s", pa.float64(), ("duration_s",)),
    ("measure_start_s", pa.float64(), ("measure_start_s",)),
    ("measure_end_s", pa.float64(), ("measure_end_s",)),
)


def _axis_column(axis: Axis) -> tuple[pa.DataType, bool]:
    """Arrow type of an axis column, and whether values are stored as JSON text."""
    values = axis.values
    if all(isinstance(v, bool) for v in values):
        return pa.bool_(), False
    if all(
        isinstance(v, int) and not isinstance(v, bool) and -(1 << 63) <= v < 1 << 63 for v in values
    ):
        return pa.int64(), False
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return pa.float64(), False
    if all(isinstance(v, str) for v in values):
        return pa.string(), False
    return pa.string(), True


def _dig(summary: dict[str, Any], where: tuple[str, ...]) -> Any:
    node: Any = summary
    for key in where:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


@dataclass
class Outcome:
    """What executing one run gives (on a thread or a Dask worker), before it is stored."""

    run: int
    summary: dict[str, Any] | None
    error: str | None
    started_at: dt.datetime
    finished_at: dt.datetime
    worker: str
    tables: dict[str, pa.Table] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.summary is None


class RowSchema:
    """The schema of the result rows of one sweep, and turning outcomes into rows."""

    def __init__(self, axes: list[Axis]):
        self.axes = axes
        self._json_axes = set()
        fields = [pa.field("run", pa.int64()), pa.field("status", pa.string())]
        for axis in axes:
            arrow_type, as_json = _axis_column(axis)
            if as_json:
                self._json_axes.add(axis.name)
            fields.append(pa.field(axis.name, arrow_type))
        fields += [pa.field("repetition", pa.int64()), pa.field("seed", pa.uint64())]
        fields += [pa.field(name, t) for name, t, _ in _SCALARS]
        fields += [pa.field(name, pa.list_(t)) for name, t, _ in _PER_FLOW]
        fields += [pa.field(name, t) for name, t, _ in _TAIL]
        fields += [
            pa.field("error", pa.string()),
            pa.field("scenario", pa.string()),
            pa.field("summary", pa.string()),
            pa.field("ccsim_version", pa.string()),
            pa.field("worker", pa.string()),
            pa.field("started_at", _TIMESTAMP),
            pa.field("finished_at", _TIMESTAMP),
            pa.field("wall_s", pa.float64()),
        ]
        self.schema = pa.schema(fields)

    def row(self, spec: RunSpec, outcome: Outcome) -> dict[str, Any]:
        row: dict[str, Any] = {"run": spec.run, "status": "failed" if outcome.failed else "ok"}
        for axis, value in zip(self.axes, spec.axis_values, strict=True):
            row[axis.name] = json.dumps(value) if axis.name in self._json_axes else value
        row["repetition"] = spec.repetition
        row["seed"] = spec.seed
        summary = outcome.summary or {}
        for name, _, where in (*_SCALARS, *_TAIL):
            row[name] = _dig(summary, where)
        flows = summary.get("flows") if outcome.summary is not None else None
        for name, _, key in _PER_FLOW:
            row[name] = None if flows is None else [f.get(key) for f in flows]
        deterministic = {k: v for k, v in summary.items() if k != "wall_s"}
        row["error"] = outcome.error
        row["scenario"] = spec.scenario_json
        row["summary"] = json.dumps(deterministic) if outcome.summary is not None else None
        row["ccsim_version"] = summary.get("ccsim_version")
        row["worker"] = outcome.worker
        row["started_at"] = outcome.started_at
        row["finished_at"] = outcome.finished_at
        row["wall_s"] = summary.get("wall_s")
        return row


#: Options of the one-row part files: no compression, dictionary or statistics, which
#: would cost more time than they save space on a single row (results.parquet and the
#: series use :data:`ccsim.results.PARQUET_OPTIONS`).
PART_OPTIONS: dict[str, Any] = {
    "version": "2.6",
    "compression": "none",
    "use_dictionary": False,
    "write_statistics": False,
    "store_schema": True,
}


def _atomic_parquet(table: pa.Table, path: Path, options: dict[str, Any] = PARQUET_OPTIONS) -> None:
    """Write ``table`` to a hidden temporary file next to ``path``, then rename it."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, **options)
    data = sink.getvalue()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _remove_temporary(directory: Path) -> None:
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return
    for entry in entries:
        if entry.name.startswith(".") and entry.name.endswith(".tmp"):
            with contextlib.suppress(OSError):
                os.unlink(entry.path)


def _atomic_text(text: str, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


class SweepStore:
    """The result directory of one sweep."""

    def __init__(self, out: Path, sweep: Sweep):
        self.out = out
        self.sweep = sweep
        self.fingerprint = sweep.fingerprint()
        self.rows = RowSchema(sweep.axes)
        self.width = max(6, len(str(max(len(sweep.runs) - 1, 0))))
        self._lock_fd: int | None = None
        self._written: dict[int, dict[str, Any]] = {}
        self._by_run = {spec.run: spec for spec in sweep.runs}

    # -- checks before anything is written

    def existing_fingerprint(self) -> str | None:
        """Fingerprint in an existing directory, None if new/empty; SweepError if unusable."""
        try:
            check_output_dir(self.out)
        except OutputDirError as exc:
            raise SweepError(str(exc)) from exc
        if not self.out.exists():
            return None
        manifest = self.out / MANIFEST
        if not manifest.exists():
            entries = {p.name for p in self.out.iterdir()} - {LOCK_FILE}
            if entries:
                raise SweepError(
                    f"{self.out}: exists and is not a ccsim sweep directory (no {MANIFEST}); "
                    "give a new or empty directory"
                )
            return None
        try:
            doc = json.loads(manifest.read_text(encoding="utf-8"))
            return str(doc["fingerprint"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise SweepError(f"{manifest}: unreadable sweep manifest ({exc})") from exc

    def check(self, force: bool) -> None:
        """Refuse a directory holding another sweep (unless ``force``); write nothing."""
        found = self.existing_fingerprint()
        if found is not None and found != self.fingerprint and not force:
            raise SweepError(
                f"{self.out}: holds results of a different sweep (the expanded run list "
                "changed); use --force to discard them, or another output directory"
            )

    # -- opening

    def open(self, force: bool) -> None:
        """Create the directory, lock it, clear a different sweep's files if ``force``,
        and write the manifest."""
        self.out.mkdir(parents=True, exist_ok=True)
        self._lock()
        found = self.existing_fingerprint()
        if found is not None and found != self.fingerprint:
            if not force:  # another process changed it between check() and now
                raise SweepError(f"{self.out}: holds results of a different sweep")
            for name in OWNED:
                path = self.out / name
                if path.is_dir():
                    shutil.rmtree(path)
                else:
                    path.unlink(missing_ok=True)
        (self.out / RUNS_DIR).mkdir(exist_ok=True)
        if found != self.fingerprint:
            _atomic_text(
                json.dumps(self.manifest(), indent=2, default=str) + "\n", self.out / MANIFEST
            )

    def _lock(self) -> None:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            return
        fd = os.open(self.out / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            raise SweepError(f"{self.out}: another ccsim sweep is writing to it") from exc
        self._lock_fd = fd

    def close(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def manifest(self) -> dict[str, Any]:
        from ccsim import __version__

        sweep = self.sweep
        return {
            "format": FORMAT,
            "fingerprint": self.fingerprint,
            "runs": len(sweep.runs),
            "source": sweep.label,
            "created_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "ccsim_version": __version__,
            "repetitions": sweep.repetitions,
            "series": list(sweep.series),
            "axes": [
                {"name": a.name, "path": a.path.text, "values": list(a.values)} for a in sweep.axes
            ],
            "zip_groups": [[a.name for a in d.axes] for d in sweep.dimensions if len(d.axes) > 1],
            "base": sweep.base,
            "plot": sweep.plot,
        }

    # -- state

    def part_path(self, run: int) -> Path:
        return self.out / RUNS_DIR / f"part-{run:0{self.width}d}.parquet"

    def done(self) -> set[int]:
        """Runs with a result row (finished, successfully or not)."""
        runs: set[int] = set()
        directory = self.out / RUNS_DIR
        if not directory.is_dir():
            return runs
        for entry in os.scandir(directory):
            name = entry.name
            if name.startswith("part-") and name.endswith(".parquet"):
                with contextlib.suppress(ValueError):
                    runs.add(int(name[5:-8]))
        return {r for r in runs if r in self._by_run}

    def failed(self) -> set[int]:
        """Runs whose stored row has ``status = "failed"``."""
        if not self.done():
            return set()
        table = self.dataset().to_table(columns=["run", "status"])
        failed = table.filter(pc.equal(table.column("status"), "failed"))
        return set(failed.column("run").to_pylist())

    def pending(self, retry_failed: bool) -> list[RunSpec]:
        """Runs to do, after removing temporary files a killed sweep left behind."""
        done = self.done()
        if retry_failed:
            done -= self.failed()
        todo = [spec for spec in self.sweep.runs if spec.run not in done]
        _remove_temporary(self.out / RUNS_DIR)
        for name in self.sweep.series:
            for spec in todo:
                _remove_temporary(self.out / SERIES_DIR / name / f"run={spec.run:0{self.width}d}")
        return todo

    # -- writing

    def write(self, outcome: Outcome) -> None:
        """Store one run: its series (if it succeeded), then its row. Thread-safe."""
        spec = self._by_run[outcome.run]
        tag = f"run={outcome.run:0{self.width}d}"
        if not outcome.failed:
            for name, table in outcome.tables.items():
                if table.num_rows == 0:
                    continue
                directory = self.out / SERIES_DIR / name / tag
                directory.mkdir(parents=True, exist_ok=True)
                _atomic_parquet(table, directory / "data.parquet")
        row = self.rows.row(spec, outcome)
        table = pa.Table.from_pylist([row], schema=self.rows.schema)
        _atomic_parquet(table, self.part_path(spec.run), PART_OPTIONS)
        self._written[spec.run] = row  # for consolidate(), without reading the file back

    def dataset(self) -> ds.Dataset:
        return ds.dataset(self.out / RUNS_DIR, format="parquet", schema=self.rows.schema)

    def consolidate(self) -> pa.Table:
        """Every row in run order, written to ``results.parquet``: the rows written in
        this session from memory, the others read from their part files."""
        results = self.out / RESULTS_FILE
        if not self._written and results.exists():  # complete already, nothing new
            table = pq.read_table(results)
            if table.schema == self.rows.schema and table.num_rows == len(self.done()):
                return table
        new = [self._written[run] for run in sorted(self._written)]
        table = pa.Table.from_pylist(new, schema=self.rows.schema)
        old = [self.part_path(run) for run in sorted(self.done() - set(self._written))]
        if old:
            files = [str(path) for path in old]
            previous = ds.dataset(files, format="parquet", schema=self.rows.schema).to_table()
            table = pa.concat_tables([table, previous]).sort_by("run")
        _atomic_parquet(table, self.out / RESULTS_FILE)
        return table

    def remove_results_file(self) -> None:
        (self.out / RESULTS_FILE).unlink(missing_ok=True)


def read_results(out: str | os.PathLike[str]) -> pa.Table:
    """The result rows of a sweep directory (finished or not), in run order."""
    directory = Path(out)
    results = directory / RESULTS_FILE
    runs = directory / RUNS_DIR
    if results.exists():  # removed when a session starts, rewritten when it completes
        return pq.read_table(results)
    return ds.dataset(runs, format="parquet").to_table().sort_by("run")


def read_series(out: str | os.PathLike[str], table: str) -> pa.Table:
    """One per-run table of every run, with its ``run`` column (Hive partition)."""
    return ds.dataset(
        Path(out) / SERIES_DIR / table, format="parquet", partitioning="hive"
    ).to_table()


def iter_failures(table: pa.Table, limit: int) -> Iterable[tuple[int, str]]:
    failed = table.filter(pc.equal(table.column("status"), "failed"))
    runs = failed.column("run").to_pylist()[:limit]
    errors = failed.column("error").to_pylist()[:limit]
    return list(zip(runs, errors, strict=True))
