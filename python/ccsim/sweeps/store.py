"""A sweep's result directory: result rows and per-run tables, written in durable batches.

Layout of ``DIR``::

    sweep.json                             the sweep (base, axes, ...) and its fingerprint
    runs/part-000042.parquet               the result rows of batch 42 (several runs)
    series/<table>/part-000042.parquet     those runs' rows of <table>, ``run`` column last
    sums/part-000042.json                  the SHA-256 of each part of batch 42
    sums/results.json                      the SHA-256 of results.parquet
    results.parquet                        every row, by run id (written when all are done)

Writing one file per run cost more than a short simulation (file creation, a Parquet
footer, a directory per run and table), so finished runs are buffered and written
together as one *batch* when :data:`FLUSH_RUNS` runs have finished, :data:`FLUSH_S`
seconds after the oldest of them finished, or :data:`FLUSH_BYTES` of tables are held,
whichever comes first, and when the sweep ends or is interrupted (Ctrl-C). One writer
thread writes a batch while the next one fills (fsync waits do not hold up the sweep);
a full batch waits for the writer to be free, so at most two are unwritten.

A batch is committed in this order: every table goes to a hidden temporary file, is
fsync'ed and renamed into ``series/``; then the rows go to ``runs/`` the same way, and the
directories are fsync'ed. The rename of ``runs/part-K.parquet`` commits batch K: a run is
done once its row is in ``runs/``. When a sweep opens the directory again it removes
temporary files and the ``series/`` parts whose ``runs/`` part is missing (a sweep killed
between the two renames), so every run is in the results exactly once. A sweep killed
with SIGKILL (or a power cut) therefore loses the runs in flight and the finished runs
not committed yet: at most twice :data:`FLUSH_RUNS`, finished within the last
:data:`FLUSH_S` seconds plus the time to write one batch. Readers skip names starting
with ``.``, so they never see a half-written file.

Every part's SHA-256 is recorded in ``sums/part-K.json`` when the batch is written
(committed before the ``runs/`` part, so a committed batch always has its sums). A part
can read back as valid Parquet and still hold wrong numbers (bytes flipped inside a data
page), so a resumed sweep checks each part against its sum and sets a batch with a
mismatch aside like a truncated one (its runs run again); the readers
(:func:`read_results`, :func:`read_series`) check every file they read and refuse a
damaged one with a one-line :class:`SweepError`. Batches written before sums existed have
no ``sums/`` file and are checked as before (they must read back).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import re
import shutil
import sys
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from ccsim.output import OutputDirError, check_output_dir
from ccsim.results import PARQUET_OPTIONS, column_to_arrow, tables_from_core
from ccsim.sweeps.spec import Axis, RunSpec, Sweep, SweepError

MANIFEST = "sweep.json"
RUNS_DIR = "runs"
SERIES_DIR = "series"
RESULTS_FILE = "results.parquet"
#: ``sums/part-K.json``: ``{relative path: SHA-256 hex}`` of every part of batch K.
SUMS_DIR = "sums"
#: ``sums/results.json``: the SHA-256 of ``results.parquet``.
RESULTS_SUM = "results.json"
PLOT_FILE = "sweep.png"
LOCK_FILE = ".lock"
#: Where a resumed sweep moves the parts of a batch that does not read back.
DAMAGED_DIR = "damaged"
#: What ``--force`` removes (only ccsim's own files).
#: The figure in every format ``--plot-format`` can write: ``--force`` must not leave a
#: stale ``sweep.pdf`` of an earlier sweep beside the new results.
PLOT_FILES = tuple(f"sweep.{fmt}" for fmt in ("png", "pdf", "svg"))
OWNED = (MANIFEST, RUNS_DIR, SERIES_DIR, SUMS_DIR, RESULTS_FILE, *PLOT_FILES, DAMAGED_DIR)
#: ``ccsim-sweep/1`` was one file per run (``runs/part-<run>``, ``series/<t>/run=<run>/``).
FORMAT = "ccsim-sweep/2"

#: A batch is written once this many runs have finished...
FLUSH_RUNS = 250
#: ...or this many seconds after the oldest unwritten run finished...
FLUSH_S = 2.0
#: ...or when the unwritten tables hold about this many bytes, whichever comes first.
FLUSH_BYTES = 64 << 20
#: While the writer is busy, a batch that is due is looked at again this often (seconds).
WRITER_POLL_S = 0.01

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
    #: The kept tables as the core returns them, ``{name: {column: (dtype, data)}}``:
    #: converted to Arrow once per batch, not once per run (see :func:`concat_core_tables`).
    tables: dict[str, dict[str, tuple[str, Any]]] = field(default_factory=dict)

    @property
    def nbytes(self) -> int:
        """About how many bytes the tables hold, for the flush threshold (a string column
        counts its strings: only the numbers can be large)."""
        total = 0
        for columns in self.tables.values():
            for _, data in columns.values():
                total += len(data)
        return total

    @property
    def failed(self) -> bool:
        return self.summary is None


def _mentions_loss(node: Any) -> bool:
    """Whether a scenario (or a value put into one) has a loss model anywhere."""
    if isinstance(node, dict):
        return any(k in LOSS_KEYS or _mentions_loss(v) for k, v in node.items())
    if isinstance(node, list):
        return any(_mentions_loss(v) for v in node)
    return False


#: The keys of a link's random loss model (issue 31).
LOSS_KEYS = frozenset({"loss", "reverse_loss"})


def sweep_has_loss(sweep: Sweep) -> bool:
    """A loss model in the base scenario or on any axis: the rows then carry ``losses``
    (every link's packets lost on the wire, apart from the queues' drops) and
    ``flow_losses`` (each flow's). Other sweeps' rows keep their columns."""
    if _mentions_loss(sweep.base):
        return True
    for axis in sweep.axes:
        names = [step for step in axis.path.steps if isinstance(step, str)]
        if LOSS_KEYS & set(names) or _mentions_loss(list(axis.scenario_values)):
            return True
    return False


def _losses(summary: dict[str, Any]) -> int | None:
    links = summary.get("links")
    if links is not None:
        return sum(int(q.get("losses", 0)) for q in links)
    bottleneck = summary.get("bottleneck")
    return None if bottleneck is None else int(bottleneck.get("losses", 0))


class RowSchema:
    """The schema of the result rows of one sweep, and turning outcomes into rows."""

    def __init__(self, axes: list[Axis], lossy: bool = False):
        self.axes = axes
        self.lossy = lossy
        self._json_axes = set()
        fields = [pa.field("run", pa.int64()), pa.field("status", pa.string())]
        for axis in axes:
            arrow_type, as_json = _axis_column(axis)
            if as_json:
                self._json_axes.add(axis.name)
            fields.append(pa.field(axis.name, arrow_type))
        fields += [pa.field("repetition", pa.int64()), pa.field("seed", pa.uint64())]
        fields += [pa.field(name, t) for name, t, _ in _SCALARS]
        if lossy:
            fields.append(pa.field("losses", pa.int64()))
        fields += [pa.field(name, pa.list_(t)) for name, t, _ in _PER_FLOW]
        if lossy:
            fields.append(pa.field("flow_losses", pa.list_(pa.int64())))
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
        if self.lossy:
            row["losses"] = _losses(summary) if outcome.summary is not None else None
            row["flow_losses"] = None if flows is None else [f.get("losses", 0) for f in flows]
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


# --------------------------------------------------------------------------- batches

#: Bytes per value of the core's fixed-width column types (others are converted one by one).
_WIDTHS = {"f64": 8, "u64": 8, "u32": 4}

Columns = dict[str, tuple[str, Any]]


def _row_count(dtype: str, data: Any) -> int:
    if dtype == "str":
        return len(data)
    width = _WIDTHS.get(dtype)
    return len(data) // width if width else len(column_to_arrow(dtype, data))


def _concat_column(dtype: str, parts: list[Any]) -> pa.Array:
    if dtype == "str":
        return column_to_arrow(dtype, [value for part in parts for value in part])
    if dtype in _WIDTHS:  # one join and one zero-copy view instead of one array per run
        return column_to_arrow(dtype, b"".join(parts))
    return pa.concat_arrays([column_to_arrow(dtype, part) for part in parts])


def concat_core_tables(parts: Sequence[tuple[int, Columns]]) -> pa.Table:
    """One Arrow table of several runs' core columns (``(run, columns)`` in that order),
    with the run id as a last ``run`` column (int64)."""
    names = list(parts[0][1])
    signature = [(name, parts[0][1][name][0]) for name in names]
    if any([(n, c[0]) for n, c in columns.items()] != signature for _, columns in parts):
        # the core gave this table different columns in different runs: unify by name
        tables = [_with_run(tables_from_core({"t": columns})["t"], run) for run, columns in parts]
        return pa.concat_tables(tables, promote_options="permissive")
    arrays = [_concat_column(dtype, [c[name][1] for _, c in parts]) for name, dtype in signature]
    first = names[0] if names else None
    counts = [_row_count(*columns[first]) if first else 0 for _, columns in parts]
    runs = np.repeat(np.array([run for run, _ in parts], dtype=np.int64), counts)
    return pa.Table.from_arrays([*arrays, pa.array(runs)], names=[*names, "run"])


def _with_run(table: pa.Table, run: int) -> pa.Table:
    return table.append_column("run", pa.array(np.full(table.num_rows, run, dtype=np.int64)))


def _parquet_bytes(table: pa.Table) -> pa.Buffer:
    """The Parquet file of ``table`` in memory (deterministic bytes: fixed options)."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, **PARQUET_OPTIONS)
    return sink.getvalue()


def _tmp_name(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def _write_synced(data: bytes | pa.Buffer, path: Path) -> None:
    """Write ``data`` to ``path`` and fsync it (before it is renamed into place)."""
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _fsync_dir(directory: Path) -> None:
    """Make renames in ``directory`` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. Windows
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - file systems that refuse fsync on directories
        pass
    finally:
        os.close(fd)


def _commit(files: Sequence[tuple[Path, bytes | pa.Buffer]]) -> None:
    """Write every ``(path, data)`` durably, the last one renamed into place last."""
    staged: list[tuple[Path, Path]] = []
    try:
        for path, data in files:
            tmp = _tmp_name(path)
            staged.append((tmp, path))
            _write_synced(data, tmp)
        *first, (last_tmp, last) = staged
        for tmp, path in first:
            os.replace(tmp, path)
        for directory in dict.fromkeys(path.parent for _, path in first):
            _fsync_dir(directory)
        os.replace(last_tmp, last)
        _fsync_dir(last.parent)
    except BaseException:
        for tmp, _ in staged:
            with contextlib.suppress(OSError):
                tmp.unlink()
        raise


def _atomic_parquet(table: pa.Table, path: Path) -> None:
    _commit([(path, _parquet_bytes(table))])


def _atomic_text(text: str, path: Path) -> None:
    _commit([(path, text.encode("utf-8"))])


_PART = re.compile(r"part-(\d+)\.parquet")
_SUM = re.compile(r"part-(\d+)\.json")


def _digest(data: bytes | pa.Buffer) -> str:
    return hashlib.sha256(memoryview(data)).hexdigest()


def _file_digest(path: Path) -> str:
    sha = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            sha.update(chunk)
    return sha.hexdigest()


def _sum_name(batch: int) -> str:
    return f"part-{batch:06d}.json"


def _sums_text(sums: dict[str, str | list[str]]) -> bytes:
    return (json.dumps(sums, indent=1, sort_keys=True) + "\n").encode("utf-8")


def _read_sums(path: Path) -> dict[str, list[str]] | None:
    """``{relative path: accepted digests}`` of a sums file; None if it does not exist.
    An unreadable one is a ValueError (the batch is damaged)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(str(exc)) from exc
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object")
    sums: dict[str, list[str]] = {}
    for name, value in doc.items():
        accepted = [value] if isinstance(value, str) else value
        if not isinstance(accepted, list) or not all(isinstance(v, str) for v in accepted):
            raise ValueError(f"{name}: not a digest")
        sums[str(name)] = accepted
    return sums


def _relative(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def _damaged_error(path: Path) -> SweepError:
    return SweepError(
        f"{path}: damaged (its SHA-256 differs from the one recorded when it was written); "
        "run the sweep again with the same -o to set it aside and re-run its runs"
    )


def _check_parts(root: Path, files: Iterable[Path]) -> None:
    """Raise :func:`_damaged_error` for the first part in ``files`` (of sweep directory
    ``root``) whose digest differs from its batch's sums (parts without sums are legacy:
    not checked)."""
    loaded: dict[int, dict[str, list[str]] | None] = {}
    for path in files:
        m = _PART.fullmatch(path.name)
        if m is None:
            continue
        batch = int(m.group(1))
        if batch not in loaded:
            try:
                loaded[batch] = _read_sums(root / SUMS_DIR / _sum_name(batch))
            except ValueError:
                raise _damaged_error(root / SUMS_DIR / _sum_name(batch)) from None
        sums = loaded[batch]
        if sums is None:
            continue
        accepted = sums.get(_relative(root, path))
        if accepted is None or _file_digest(path) not in accepted:
            raise _damaged_error(path)


def _parts(directory: Path) -> dict[int, Path]:
    """``part-K.parquet`` files of a directory by K (none if it does not exist)."""
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return {}
    found = {}
    for entry in entries:
        m = _PART.fullmatch(entry.name)
        if m is not None:
            found[int(m.group(1))] = Path(entry.path)
    return found


def _remove_temporary(directory: Path) -> None:
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return
    for entry in entries:
        if entry.name.startswith(".") and entry.name.endswith(".tmp"):
            with contextlib.suppress(OSError):
                os.unlink(entry.path)


# --------------------------------------------------------------------------- the store


class SweepStore:
    """The result directory of one sweep.

    Finished runs are given to :meth:`add` (by one thread: the executor's loop) and
    written in batches by :meth:`flush`, which :meth:`add` calls when a batch is full;
    the loop calls :meth:`flush_if_due` when :meth:`seconds_to_flush` have passed, and
    :meth:`flush` at the end."""

    def __init__(
        self,
        out: Path,
        sweep: Sweep,
        flush_runs: int = FLUSH_RUNS,
        flush_s: float = FLUSH_S,
        flush_bytes: int = FLUSH_BYTES,
    ):
        self.out = out
        self.sweep = sweep
        self.fingerprint = sweep.fingerprint()
        self.rows = RowSchema(sweep.axes, lossy=sweep_has_loss(sweep))
        self.flush_runs = flush_runs
        self.flush_s = flush_s
        self.flush_bytes = flush_bytes
        self._lock_fd: int | None = None
        #: The runs handed out by :meth:`pending` (the rest are built again if needed).
        self._specs: dict[int, RunSpec] = {}
        self._buffer: list[Outcome] = []
        self._buffer_bytes = 0
        self._oldest: float | None = None  # time.monotonic() of the oldest buffered run
        self._next_batch = 0
        #: One writer thread, so that fsync and Parquet encoding overlap with collecting
        #: the next runs; ``_writing`` is the batch it is writing, if any.
        self._writer: ThreadPoolExecutor | None = None
        self._writing: Future[int] | None = None
        self.written = 0  # runs written in this session
        self.batches = 0  # batches written in this session

    # -- checks before anything is written

    def _manifest_doc(self) -> dict[str, Any] | None:
        """The existing manifest, None if the directory is new/empty; SweepError if unusable."""
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
            str(doc["fingerprint"])
            return dict(doc)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise SweepError(f"{manifest}: unreadable sweep manifest ({exc})") from exc

    def _same_sweep(self, doc: dict[str, Any] | None) -> bool:
        return (
            doc is not None
            and doc["fingerprint"] == self.fingerprint
            and doc.get("format") == FORMAT
        )

    def check(self, force: bool) -> None:
        """Refuse a directory holding another sweep (unless ``force``); write nothing."""
        doc = self._manifest_doc()
        if doc is None or self._same_sweep(doc) or force:
            return
        if doc.get("format") != FORMAT:
            raise SweepError(
                f"{self.out}: holds results in an older layout ({doc.get('format')}, one file "
                "per run); use --force to discard them, or another output directory"
            )
        raise SweepError(
            f"{self.out}: holds results of a different sweep (the expanded run list "
            "changed); use --force to discard them, or another output directory"
        )

    # -- opening

    def open(self, force: bool) -> None:
        """Create the directory, lock it, clear a different sweep's files if ``force``,
        write the manifest, and remove what a killed sweep left half-written."""
        self.out.mkdir(parents=True, exist_ok=True)
        self._lock()
        doc = self._manifest_doc()
        if doc is not None and not self._same_sweep(doc):
            if not force:  # another process changed it between check() and now
                raise SweepError(f"{self.out}: holds results of a different sweep")
            for name in OWNED:
                path = self.out / name
                if path.is_dir():
                    shutil.rmtree(path)
                else:
                    path.unlink(missing_ok=True)
        (self.out / RUNS_DIR).mkdir(exist_ok=True)
        for name in self.sweep.series:  # readers find every kept table, even if empty
            (self.out / SERIES_DIR / name).mkdir(parents=True, exist_ok=True)
        if not self._same_sweep(doc):
            _atomic_text(
                json.dumps(self.manifest(), indent=2, default=str) + "\n", self.out / MANIFEST
            )
        self._recover()

    def _series_dirs(self) -> list[Path]:
        root = self.out / SERIES_DIR
        return sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []

    def _damaged(self) -> set[int]:
        """Batches with a part whose SHA-256 differs from its recorded sum (or that has
        no recorded sum, or is recorded and missing); batches without sums (written
        before they existed) are checked as before: a row part is read whole (it is
        small); a series part's footer is read (truncation, the usual damage from a full
        disk or a copy cut short, destroys the footer)."""
        bad = set()
        unsummed = self._check_sums(bad)
        for batch, path in _parts(self.out / RUNS_DIR).items():
            if batch not in unsummed:
                continue
            try:
                pq.read_table(path, schema=self.rows.schema)
            except (OSError, ValueError, pa.ArrowException):
                bad.add(batch)
        for directory in self._series_dirs():
            for batch, path in _parts(directory).items():
                if batch not in unsummed:
                    continue
                try:
                    pq.read_metadata(path)
                except (OSError, ValueError, pa.ArrowException):
                    bad.add(batch)
        return bad

    def _check_sums(self, bad: set[int]) -> set[int]:
        """Add to ``bad`` the committed batches whose parts do not match their sums; return
        the committed batches that have no sums file (checked the old way)."""
        committed = _parts(self.out / RUNS_DIR)
        series = [_parts(directory) for directory in self._series_dirs()]
        unsummed = set()
        for batch, runs_part in committed.items():
            try:
                sums = _read_sums(self.out / SUMS_DIR / _sum_name(batch))
            except ValueError:
                bad.add(batch)
                continue
            if sums is None:
                unsummed.add(batch)
                continue
            present = {_relative(self.out, runs_part): runs_part}
            for parts in series:
                if batch in parts:
                    present[_relative(self.out, parts[batch])] = parts[batch]
            if set(present) != set(sums) or any(
                _file_digest(path) not in sums[name] for name, path in present.items()
            ):
                bad.add(batch)
        return unsummed

    def _set_aside(self, batch: int) -> None:
        """Move every part of ``batch`` into ``damaged/`` (kept for inspection, out of the
        readers' way) with a one-line warning: its runs are pending again."""
        name = f"part-{batch:06d}.parquet"
        aside = self.out / DAMAGED_DIR
        aside.mkdir(exist_ok=True)
        places = [self.out / RUNS_DIR / name, *(d / name for d in self._series_dirs())]
        for path in [*places, self.out / SUMS_DIR / _sum_name(batch)]:
            if path.exists():
                label = "-".join(path.relative_to(self.out).parts)
                os.replace(path, aside / label)
        print(
            f"warning: {self.out / RUNS_DIR / name}: damaged batch (a part does not read "
            f"back or does not match its recorded SHA-256); moved to {aside}/, its runs "
            "will run again",
            file=sys.stderr,
        )

    def _recover(self) -> None:
        """Remove temporary files and the series parts of batches never committed (killed
        between renaming the series and the rows), set damaged batches aside, and number
        the next batch."""
        for batch in sorted(self._damaged()):
            self._set_aside(batch)
        committed = _parts(self.out / RUNS_DIR)
        _remove_temporary(self.out / RUNS_DIR)
        highest = max(committed, default=-1)
        (self.out / SUMS_DIR).mkdir(exist_ok=True)
        _remove_temporary(self.out / SUMS_DIR)
        for entry in os.scandir(self.out / SUMS_DIR):
            m = _SUM.fullmatch(entry.name)
            if m is not None and int(m.group(1)) not in committed:
                os.unlink(entry.path)
        for directory in self._series_dirs():
            _remove_temporary(directory)
            for batch, path in _parts(directory).items():
                if batch not in committed:
                    path.unlink()
        self._next_batch = highest + 1

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
        """Let the batch being written end (it commits or fails whole), then unlock.
        Buffered runs not handed to the writer are not written: call :meth:`flush`."""
        if self._writer is not None:
            self._writer.shutdown(wait=True)
            self._writer = None
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

    def _row_parts(self) -> list[Path]:
        return [path for _, path in sorted(_parts(self.out / RUNS_DIR).items())]

    def _read_rows(self, columns: list[str] | None = None) -> pa.Table:
        files = [str(path) for path in self._row_parts()]
        if not files:
            return self.rows.schema.empty_table().select(columns or self.rows.schema.names)
        dataset = ds.dataset(files, format="parquet", schema=self.rows.schema)
        return dataset.to_table(columns=columns)

    def done(self) -> set[int]:
        """Runs with a result row (finished, successfully or not)."""
        runs = set(self._read_rows(["run"]).column("run").to_pylist())
        return {r for r in runs if self._is_run(r)}

    def failed(self) -> set[int]:
        """Runs whose stored row has ``status = "failed"``."""
        table = self._read_rows(["run", "status"])
        failed = table.filter(pc.equal(table.column("status"), "failed"))
        return set(failed.column("run").to_pylist())

    def pending(self, retry_failed: bool) -> list[RunSpec]:
        """Runs to do. With ``retry_failed``, the rows of failed runs are removed first
        (their batch files rewritten without them), so each run keeps one row."""
        if retry_failed:
            self._drop_failed_rows()
        done = self.done()
        runs = self.sweep.runs
        pending = [runs[i] for i in range(len(runs)) if i not in done]
        self._specs = {spec.run: spec for spec in pending}
        return pending

    def _is_run(self, run: Any) -> bool:
        return isinstance(run, int) and 0 <= run < len(self.sweep.runs)

    def _spec(self, run: int) -> RunSpec:
        spec = self._specs.get(run)
        return spec if spec is not None else self.sweep.runs[run]

    def _drop_failed_rows(self) -> None:
        for path in self._row_parts():
            table = pq.read_table(path, schema=self.rows.schema)
            ok = pc.equal(table.column("status"), "ok")
            if pc.all(ok).as_py():
                continue
            kept = table.filter(ok)
            batch = int(_PART.fullmatch(path.name).group(1))  # type: ignore[union-attr]
            sums_path = self.out / SUMS_DIR / _sum_name(batch)
            sums = _read_sums(sums_path)
            if kept.num_rows:
                data = _parquet_bytes(kept)
                if sums is None:
                    _commit([(path, data)])
                    continue
                name = _relative(self.out, path)
                # the sums accept both versions while the part is replaced, so that a
                # sweep killed between the two renames finds a batch that checks
                _commit([(sums_path, _sums_text({**sums, name: [*sums[name], _digest(data)]}))])
                _commit([(path, data)])
                _commit([(sums_path, _sums_text({**sums, name: [_digest(data)]}))])
            else:  # a batch of failed runs only: failed runs have no series
                path.unlink()
                _fsync_dir(path.parent)
                sums_path.unlink(missing_ok=True)

    # -- writing

    def add(self, outcome: Outcome) -> None:
        """Buffer a finished run; hand the batch to the writer if it is full (by runs or
        bytes). If the writer is still busy with the previous batch, wait for it: at most
        one batch is being written while the next one fills."""
        if not self._is_run(outcome.run):
            raise ValueError(f"run {outcome.run} is not a run of this sweep")
        if self._oldest is None:
            self._oldest = time.monotonic()
        self._buffer.append(outcome)
        self._buffer_bytes += outcome.nbytes
        self._reap()
        if self._full():
            self._reap(wait=True)
            self._hand_over()

    def _full(self) -> bool:
        return len(self._buffer) >= self.flush_runs or self._buffer_bytes >= self.flush_bytes

    def seconds_to_flush(self) -> float | None:
        """Seconds until :meth:`flush_if_due` has something to do (None: nothing buffered)."""
        if self._oldest is None:
            return None
        due = self._oldest + self.flush_s - time.monotonic()
        if self._writing is not None:  # due batches wait for the writer: look again soon
            return max(due, WRITER_POLL_S)
        return max(0.0, due)

    def flush_if_due(self) -> None:
        """Hand the buffered runs to the writer if they are due by time and it is free;
        raise the error of a batch that failed to be written."""
        self._reap()
        if self._writing is not None or self._oldest is None:
            return
        if self._full() or time.monotonic() >= self._oldest + self.flush_s:
            self._hand_over()

    def flush(self) -> None:
        """Write every buffered run and wait until all are committed (at the end, or on an
        interrupt)."""
        self._reap(wait=True)
        if self._buffer:
            self._hand_over()
            self._reap(wait=True)

    def wait(self) -> None:
        """Wait until the batch being written (if any) is committed."""
        self._reap(wait=True)

    def _reap(self, wait: bool = False) -> None:
        writing = self._writing
        if writing is None or not (wait or writing.done()):
            return
        self._writing = None
        self.written += writing.result()  # a write error surfaces here: its runs are not done
        self.batches += 1

    def _hand_over(self) -> None:
        batch, number = self._buffer, self._next_batch
        self._next_batch += 1
        self._buffer = []
        self._buffer_bytes = 0
        self._oldest = None
        if self._writer is None:
            self._writer = ThreadPoolExecutor(1, thread_name_prefix="ccsim-sweep-writer")
        self._writing = self._writer.submit(self._write_batch, batch, number)

    def _write_batch(self, batch: list[Outcome], number: int) -> int:
        """Write runs as batch ``number``: their tables, then their rows (the commit). Runs
        on the writer thread (Arrow, Parquet and fsync release the GIL); reads only what
        does not change during the sweep."""
        batch = sorted(batch, key=lambda o: o.run)
        files: list[tuple[Path, bytes | pa.Buffer]] = []
        name = f"part-{number:06d}.parquet"
        ok = [o for o in batch if not o.failed]
        for table in self.sweep.series:
            parts = [(o.run, o.tables[table]) for o in ok if table in o.tables]
            if parts:
                directory = self.out / SERIES_DIR / table
                files.append((directory / name, _parquet_bytes(concat_core_tables(parts))))
        rows = [self.rows.row(self._spec(o.run), o) for o in batch]
        table = pa.Table.from_pylist(rows, schema=self.rows.schema)
        files.append((self.out / RUNS_DIR / name, _parquet_bytes(table)))
        sums = {_relative(self.out, path): _digest(data) for path, data in files}
        # the sums go in before the rows part, whose rename commits the batch
        files.insert(-1, (self.out / SUMS_DIR / _sum_name(number), _sums_text(sums)))
        _commit(files)
        return len(batch)

    # -- the whole table

    def consolidate(self) -> pa.Table:
        """Every row in run order, written to ``results.parquet`` (kept as it is when this
        session wrote nothing and it is complete)."""
        results = self.out / RESULTS_FILE
        if not self.written and results.exists():  # complete already, nothing new
            try:
                _check_results_file(self.out)
                table = pq.read_table(results)
            except (OSError, ValueError, pa.ArrowException, SweepError):
                table = None  # damaged: written again from the parts below
            if (
                table is not None
                and table.schema == self.rows.schema
                and table.num_rows == len(self.done())
            ):
                return table
        table = self._read_rows().sort_by("run")
        data = _parquet_bytes(table)
        sums = self.out / SUMS_DIR / RESULTS_SUM
        sums.parent.mkdir(exist_ok=True)
        # the sum first: a kill between the two leaves a mismatch, which is rewritten
        _commit([(sums, _sums_text({RESULTS_FILE: _digest(data)}))])
        _commit([(results, data)])
        return table

    def record_status(self, done: int, failed: int) -> None:
        """Note in the manifest how many runs are done and how many of them failed (the
        CLI's exit status 3 says only *that* some failed)."""
        doc = self._manifest_doc() or self.manifest()
        doc["status"] = {"runs": len(self.sweep.runs), "done": done, "failed": failed}
        _atomic_text(json.dumps(doc, indent=2, default=str) + "\n", self.out / MANIFEST)

    def remove_results_file(self) -> None:
        (self.out / RESULTS_FILE).unlink(missing_ok=True)
        (self.out / SUMS_DIR / RESULTS_SUM).unlink(missing_ok=True)


def _check_results_file(out: Path) -> None:
    """SweepError if ``results.parquet`` does not match its recorded sum (a file written
    before sums existed has none and is not checked)."""
    try:
        sums = _read_sums(out / SUMS_DIR / RESULTS_SUM)
    except ValueError:
        raise _damaged_error(out / SUMS_DIR / RESULTS_SUM) from None
    if sums is not None and _file_digest(out / RESULTS_FILE) not in sums.get(RESULTS_FILE, []):
        raise _damaged_error(out / RESULTS_FILE)


def read_results(out: str | os.PathLike[str]) -> pa.Table:
    """The result rows of a sweep directory (finished or not), in run order."""
    directory = Path(out)
    results = directory / RESULTS_FILE
    if results.exists():  # removed when a session starts, rewritten when it completes
        _check_results_file(directory)
        return pq.read_table(results)
    _check_parts(directory, _parts(directory / RUNS_DIR).values())
    return ds.dataset(directory / RUNS_DIR, format="parquet").to_table().sort_by("run")


def read_series(out: str | os.PathLike[str], table: str) -> pa.Table:
    """One per-run table of every run, with its ``run`` column, in run order (each run's
    rows in the order the core gave them: the sort is stable)."""
    _check_parts(Path(out), _parts(Path(out) / SERIES_DIR / table).values())
    found = ds.dataset(Path(out) / SERIES_DIR / table, format="parquet").to_table()
    return found.sort_by("run") if "run" in found.column_names else found


def read_series_with_axes(out: str | os.PathLike[str], table: str) -> pa.Table:
    """One per-run table of every run (as :func:`read_series`), each row with its run's
    swept values, ``repetition`` and ``seed`` after ``run``: the join every analysis of a
    sweep starts with, in one call (``ccsim.read_series(DIR, "flow_series")``). The stored
    part files are not changed: they hold ``run`` only, so that a run's rows are the same
    whatever sweep produced them. Axes whose values are tables (queue configurations) are
    JSON text, as in ``results.parquet``."""
    directory = Path(out)
    meta = json.loads((directory / MANIFEST).read_text())
    axes = [axis["name"] for axis in meta.get("axes", [])]
    series = read_series(directory, table)
    runs = read_results(directory).select(["run", *axes, "repetition", "seed"])
    index = {run: i for i, run in enumerate(runs.column("run").to_pylist())}
    if "run" not in series.column_names:
        return series
    rows = pa.array([index[r] for r in series.column("run").to_pylist()], type=pa.int64())
    picked = runs.take(rows)
    at = series.column_names.index("run") + 1
    for offset, name in enumerate([*axes, "repetition", "seed"]):
        series = series.add_column(at + offset, picked.schema.field(name), picked.column(name))
    return series


def iter_failures(table: pa.Table, limit: int) -> Iterable[tuple[int, str]]:
    failed = table.filter(pc.equal(table.column("status"), "failed"))
    runs = failed.column("run").to_pylist()[:limit]
    errors = failed.column("error").to_pylist()[:limit]
    return list(zip(runs, errors, strict=True))
