"""Running a sweep: :func:`sweep` loads it, opens its store, runs the pending runs on local
threads (:mod:`ccsim.sweeps.local`) or on a Dask cluster (:mod:`ccsim.sweeps.dask`),
and returns a :class:`SweepReport`; the progress bar and the end-of-sweep summary.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from ccsim.output import OutputDirError, output_path
from ccsim.scenario import SweepError
from ccsim.sweeps.dask import DaskConnection, connect_dask, run_dask
from ccsim.sweeps.execution import one_line
from ccsim.sweeps.local import cpu_count, run_local
from ccsim.sweeps.spec import Sweep, SweepSource, load_sweep
from ccsim.sweeps.store import FLUSH_RUNS, FLUSH_S, Outcome, SweepStore, iter_failures

#: Exit status of a sweep that ended with failed runs (``ccsim.cli`` documents them all).
EXIT_RUNS_FAILED = 3


# --------------------------------------------------------------------------- progress


class _RateColumn(ProgressColumn):
    def render(self, task: Any) -> Text:
        speed = task.finished_speed or task.speed
        return Text("-- runs/s" if not speed else f"{speed:.3g} runs/s", style="cyan")


class _Progress:
    """A rich bar on stderr: done/total, runs per second, failures, elapsed, ETA."""

    def __init__(self, enabled: bool, total: int, done: int, label: str):
        self.bar: Progress | None = None
        if enabled:
            self.bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                _RateColumn(),
                TextColumn("{task.fields[failed]} failed"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
            )
            self.task = self.bar.add_task(label, total=total, completed=done, failed=0)
        self.failed = 0

    def __enter__(self) -> _Progress:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def advance(self, outcome: Outcome) -> None:
        self.failed += outcome.failed
        if self.bar is not None:
            self.bar.update(self.task, advance=1, failed=self.failed)


# --------------------------------------------------------------------------- the sweep


@dataclass
class SweepReport:
    """What :func:`sweep` did. ``results`` is the whole result table (run order)."""

    out: Path
    total: int
    skipped: int
    ran: int
    failed_now: int
    failed: int
    wall_s: float
    sim_wall_s: float
    results: pa.Table | None = None
    failures: list[tuple[int, str]] = field(default_factory=list)
    plot: Path | None = None
    #: Every file of the plot, one per format written.
    plot_files: list[Path] = field(default_factory=list)
    plot_error: str | None = None

    @property
    def runs_per_s(self) -> float:
        return self.ran / self.wall_s if self.wall_s > 0 else float("inf")

    @property
    def overhead_ms(self) -> float:
        """Mean wall-clock time per run beyond the simulation itself (one worker)."""
        return (self.wall_s - self.sim_wall_s) / self.ran * 1e3 if self.ran else 0.0

    @property
    def exit_status(self) -> int:
        """0; 3 if some runs failed (``failed`` says how many); 1 if only the plot failed.
        Distinct from 2 (bad input) and 1 whatever the number of failed runs."""
        if self.failed:
            return EXIT_RUNS_FAILED
        return 1 if self.plot_error else 0


def sweep(
    spec: SweepSource,
    out: str | os.PathLike[str],
    *,
    jobs: int | None = None,
    dask: Any = None,
    force: bool = False,
    retry_failed: bool = False,
    batch_size: int | None = None,
    progress: bool = False,
    plot: bool = False,
    plot_formats: Sequence[str] | None = None,
    flush_runs: int = FLUSH_RUNS,
    flush_s: float = FLUSH_S,
) -> SweepReport:
    """Run every run of a sweep that ``out`` does not hold yet, and return a report.

    ``spec`` is a sweep file path, TOML text or a dict of the same keys (see the README,
    "Sweeps"). Runs go to ``jobs`` threads (default: all cores), or to a Dask cluster with
    ``dask`` = a scheduler address, ``"local:N"`` or a ``distributed.Client``. Finished
    runs' rows and series are written in batches, once ``flush_runs`` have finished or
    ``flush_s`` seconds after the oldest of them finished (and at the end, or on Ctrl-C);
    ``out/results.parquet`` once all are done. A run that fails is recorded
    (``status = "failed"``, ``error``) and the sweep goes on; ``retry_failed`` runs those
    again. A directory holding a different sweep is refused unless ``force`` (which
    deletes its results). ``plot`` draws the ``[plot]`` of the sweep into
    ``out/sweep.png`` (and ``.pdf``, ``.svg``; ``plot_formats`` picks among them).

    Raises :class:`ccsim.SweepError` for bad input before anything is written.
    """
    sweep_ = load_sweep(spec)
    if jobs is not None and dask is not None:
        raise SweepError("--jobs and --dask do not go together (Dask workers set their own)")
    if jobs is None:
        jobs = cpu_count()
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise SweepError(f"--jobs: expected an integer >= 1, got {jobs!r}")
    if batch_size is not None and (not isinstance(batch_size, int) or batch_size < 1):
        raise SweepError(f"--batch: expected an integer >= 1, got {batch_size!r}")
    if isinstance(flush_runs, bool) or not isinstance(flush_runs, int) or flush_runs < 1:
        raise SweepError(f"flush_runs: expected an integer >= 1, got {flush_runs!r}")
    if not isinstance(flush_s, (int, float)) or not flush_s >= 0:
        raise SweepError(f"flush_s: expected a number of seconds >= 0, got {flush_s!r}")
    if plot:
        from ccsim.plots.formats import FormatError, parse_formats
        from ccsim.plots.sweep import check_plot_spec

        check_plot_spec(sweep_)
        try:
            formats: tuple[str, ...] = parse_formats(plot_formats)
        except FormatError as exc:
            raise SweepError(str(exc)) from exc
    else:
        formats = ()
    try:
        out_dir = output_path(out)
    except OutputDirError as exc:
        raise SweepError(str(exc)) from exc
    store = SweepStore(out_dir, sweep_, flush_runs=flush_runs, flush_s=float(flush_s))
    store.check(force)
    conn = connect_dask(dask) if dask is not None else None
    interrupted = False
    try:
        store.open(force)
        try:
            return _execute(sweep_, store, conn, jobs, retry_failed, batch_size, progress, formats)
        finally:
            store.close()
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        if conn is not None:
            conn.close(interrupted)


def _execute(
    sweep_: Sweep,
    store: SweepStore,
    conn: DaskConnection | None,
    jobs: int,
    retry_failed: bool,
    batch_size: int | None,
    progress: bool,
    plot_formats: Sequence[str],
) -> SweepReport:
    pending = store.pending(retry_failed)
    total = len(sweep_.runs)
    if pending:
        store.remove_results_file()
    sim_wall = 0.0
    failed_now = 0
    start = time.perf_counter()
    with _Progress(
        progress, total, total - len(pending), f"sweep {Path(sweep_.label).name}"
    ) as bar:

        def on_done(outcome: Outcome) -> None:
            nonlocal sim_wall, failed_now
            if outcome.summary is not None:
                sim_wall += float(outcome.summary.get("wall_s") or 0.0)
            failed_now += outcome.failed
            bar.advance(outcome)

        if conn is None:
            run_local(pending, sweep_.series, store, jobs, on_done)
        else:
            run_dask(pending, sweep_.series, store, conn, batch_size, on_done)
    wall = time.perf_counter() - start
    results = store.consolidate()
    failed = sum(1 for s in results.column("status").to_pylist() if s == "failed")
    store.record_status(results.num_rows, failed)
    report = SweepReport(
        out=store.out,
        total=total,
        skipped=total - len(pending),
        ran=len(pending),
        failed_now=failed_now,
        failed=failed,
        wall_s=wall,
        sim_wall_s=sim_wall,
        results=results,
        failures=list(iter_failures(results, 5)),
    )
    if plot_formats:
        from ccsim.plots.sweep import plot_sweep

        try:
            report.plot_files = plot_sweep(store.out, sweep_.plot, results, plot_formats, sweep_)
            report.plot = report.plot_files[0]
        except Exception as exc:  # the results matter more than the picture
            report.plot_error = one_line(f"plotting failed: {exc}")
    return report


def print_summary(report: SweepReport, console: Console) -> None:
    """The end-of-sweep table (and the first failures)."""
    table = Table(title=f"sweep {report.out}", title_justify="left", show_header=False)
    table.add_column("", style="bold")
    table.add_column("", justify="right")
    table.add_row("runs in the sweep", f"{report.total:,}")
    table.add_row("already done (skipped)", f"{report.skipped:,}")
    table.add_row("run now", f"{report.ran:,}")
    table.add_row("failed now / in all", f"{report.failed_now:,} / {report.failed:,}")
    table.add_row("wall time", f"{report.wall_s:.2f} s")
    if report.ran:
        table.add_row("runs per second", f"{report.runs_per_s:,.1f}")
        table.add_row("simulation time per run", f"{report.sim_wall_s / report.ran * 1e3:.1f} ms")
    console.print(table)
    if report.failures:
        errors = Table(title="failed runs (first 5)", title_justify="left")
        errors.add_column("run", justify="right")
        errors.add_column("error")
        for run, error in report.failures:
            errors.add_row(str(run), error or "")
        console.print(errors)
    console.print(f"results in [bold]{report.out / 'results.parquet'}[/bold]")
    if report.plot is not None:
        # the formats written now (sweep.json beside them is no plot, and files of an
        # earlier --format are not this plot)
        names = ", ".join(p.suffix[1:] for p in report.plot_files or [report.plot])
        console.print(f"plot in [bold]{report.plot.with_suffix('')}[/bold] ({names})")
