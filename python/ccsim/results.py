"""Run results: the summary dict and Arrow tables, and writing them as Parquet + JSON."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ccsim.output import output_path, staged_dir

_NUMERIC: dict[str, tuple[pa.DataType, str]] = {
    "f64": (pa.float64(), "<f8"),
    "u64": (pa.uint64(), "<u8"),
    "u32": (pa.uint32(), "<u4"),
}

#: Fixed Parquet writer options: the same tables give byte-identical files.
PARQUET_OPTIONS: dict[str, Any] = {
    "version": "2.6",
    "compression": "zstd",
    "compression_level": 3,
    "use_dictionary": True,
    "write_statistics": True,
    "data_page_version": "1.0",
    "row_group_size": 1 << 20,
    "store_schema": True,
}

SUMMARY_FILE = "summary.json"
#: Where ``[trace] pcap`` writes its capture in a result directory.
PCAP_FILE = "trace.pcapng"


#: Rows of a string column turned into Arrow per call: a cancelled run is heard between
#: batches (``ccsim.cancel``; a column of millions of strings is seconds in one call).
ARROW_BATCH_ROWS = 1 << 16

#: A run's cancellation check (``ccsim.cancel.stop_check``): raises ``KeyboardInterrupt``.
StopCheck = Callable[[], None]


class PlotError(RuntimeError):
    """Plotting failed after the results themselves were written."""


def _no_stop() -> None:
    pass


def column_to_arrow(dtype: str, data: bytes | list[str], stop: StopCheck | None = None) -> pa.Array:
    """One core column (``dtype``, data) as an Arrow array, without copying numbers.
    Strings are converted in batches with ``stop`` (and, on the main thread, signals)
    heard between them; the array is the same as one conversion gives."""
    if dtype == "str":
        if len(data) <= ARROW_BATCH_ROWS:
            return pa.array(data, type=pa.string())
        stop = stop or _no_stop
        batches = []
        for start in range(0, len(data), ARROW_BATCH_ROWS):
            batches.append(pa.array(data[start : start + ARROW_BATCH_ROWS], type=pa.string()))
            stop()
        return pa.concat_arrays(batches)
    if dtype not in _NUMERIC:
        raise ValueError(f"unknown column dtype {dtype!r} from the core")
    arrow_type, np_dtype = _NUMERIC[dtype]
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"a {dtype} column comes as bytes, not {type(data).__name__}")
    values = np.frombuffer(data, dtype=np_dtype)
    if sys.byteorder != "little":
        values = values.astype(values.dtype.newbyteorder("="))
    return pa.array(values, type=arrow_type)


def tables_from_core(
    raw: dict[str, dict[str, tuple[str, Any]]], stop: StopCheck | None = None
) -> dict[str, pa.Table]:
    """``{name: {column: (dtype, data)}}`` from the core as Arrow tables, order kept;
    ``stop`` is heard between batches of rows."""
    tables: dict[str, pa.Table] = {}
    for name, columns in raw.items():
        arrays = [column_to_arrow(dtype, data, stop) for dtype, data in columns.values()]
        tables[name] = pa.Table.from_arrays(arrays, names=list(columns))
    return tables


def write_parquet(table: pa.Table, path: Path, stop: StopCheck | None = None) -> None:
    """Write ``table`` with :data:`PARQUET_OPTIONS` (deterministic bytes), a row group per
    call so that ``stop`` (and, on the main thread, Ctrl-C) is heard between them: the
    same bytes as ``pq.write_table`` (which cuts the same row groups), removed if stopped."""
    options = dict(PARQUET_OPTIONS)
    group_rows = options.pop("row_group_size")
    try:
        with pq.ParquetWriter(path, table.schema, **options) as writer:
            if table.num_rows == 0:  # one empty row group, as pq.write_table writes
                writer.write_table(table, row_group_size=group_rows)
            for start in range(0, table.num_rows, group_rows):
                writer.write_table(table.slice(start, group_rows), row_group_size=group_rows)
                if stop is not None:
                    stop()
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(path)
        raise


def write_summary(summary: dict[str, Any], path: Path) -> None:
    path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


def write_results(summary: dict[str, Any], tables: dict[str, pa.Table], directory: Path) -> None:
    """Write ``<table>.parquet`` for every table and ``summary.json`` into ``directory``."""
    for name, table in tables.items():
        write_parquet(table, directory / f"{name}.parquet")
    write_summary(summary, directory / SUMMARY_FILE)


@dataclass
class RunResult:
    """What :func:`ccsim.run` returns.

    ``summary`` is the ``summary.json`` document (per-flow and bottleneck figures over the
    measurement window, Jain index, event count, wall-clock seconds). ``tables`` maps each
    table name (``flow_series``, ``cc_trace``, ``queue_series``, ``sojourn_cdf``, ``flows``)
    to a :class:`pyarrow.Table`; use ``.to_pandas()`` or ``.column(name).to_numpy()``.
    """

    summary: dict[str, Any]
    tables: dict[str, pa.Table]
    #: The pcapng capture of ``[trace] pcap`` (written as ``trace.pcapng``), if any.
    pcap: bytes | None = None

    @classmethod
    def from_core(
        cls,
        summary_json: str,
        raw: dict[str, Any],
        pcap: bytes | None = None,
        stop: StopCheck | None = None,
    ) -> RunResult:
        """The core's output as a result; ``stop`` (the run's cancellation check) is heard
        between batches of rows while the tables become Arrow."""
        tables = tables_from_core(raw, stop)
        return cls(summary=json.loads(summary_json), tables=tables, pcap=pcap)

    def write(
        self,
        out_dir: str | os.PathLike[str],
        *,
        plots: bool = False,
        plot_formats: Sequence[str] | None = None,
    ) -> Path:
        """Write one Parquet file per table plus ``summary.json`` (and the plots if
        ``plots``, as PNG or the ``plot_formats`` given) into ``out_dir``. Every table is
        written, empty when the scenario cannot fill it (see :mod:`ccsim.output`).
        If only plotting fails, the results are still written and :class:`PlotError` is
        raised.

        Files are written to a temporary directory next to ``out_dir`` and moved into place
        only once all are written. Files ccsim did not write in an existing ``out_dir`` are
        left alone. Returns the output directory.
        """
        out = output_path(out_dir)
        if plots:
            from ccsim.plots.formats import parse_formats

            formats = parse_formats(plot_formats)  # a bad format: nothing written
        plot_failure: Exception | None = None
        with staged_dir(out) as stage:
            write_results(self.summary, self.tables, stage)
            if self.pcap is not None:
                (stage / PCAP_FILE).write_bytes(self.pcap)
            if plots:
                from ccsim.plots.run import plot_results

                try:
                    plot_results(stage, formats)
                except Exception as exc:  # the results matter more than the pictures
                    plot_failure = exc
        if plot_failure is not None:
            raise PlotError(f"plotting failed: {plot_failure} (results written to {out})")
        return out


def budget_warnings(summary: dict[str, Any]) -> list[str]:
    """``warning: ...`` lines for the traces that stopped recording at their row budget
    (the core's ``trace::budget``; the summary's ``warnings``)."""
    return [f"warning: {w}" for w in summary.get("warnings") or []]


def idle_warning(summary: dict[str, Any]) -> str | None:
    """One line when the run has TCP flows but none was active in the measurement window
    (they finished or had not started), whose figures are then zeros; else None."""
    tcp = [f for f in summary.get("flows", []) if f.get("protocol") == "tcp"]
    if not tcp or any((f.get("throughput_mbps") or 0) > 0 for f in tcp):
        return None
    start, end = summary.get("measure_start_s"), summary.get("measure_end_s")
    ends = [
        f["start_s"] + f["fct_s"]
        for f in tcp
        if isinstance(f.get("fct_s"), (int, float)) and isinstance(f.get("start_s"), (int, float))
    ]
    why = f"; the last transfer finished at {max(ends):.3g} s" if len(ends) == len(tcp) else ""
    return (
        f"warning: no TCP flow was active in the measurement window ({start:g}-{end:g} s){why}: "
        f"its goodput and utilisation figures say nothing of the flows; set "
        f'measure = {{ start = "...", end = "..." }} to cover them'
    )
