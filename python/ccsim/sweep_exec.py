"""Running a sweep: on local threads or on a Dask cluster, storing runs in batches.

**Local execution uses threads**, ``--jobs`` of them (all cores by default). The core
releases the GIL for the whole simulation, so threads use every core; they cost no process
start-up and no pickling of scenarios or results. Each thread takes the next run from a
queue and hands the outcome to this thread, which gives it to the store: the store writes
finished runs in batches (see :mod:`ccsim.sweep_store`), bounded by runs and by seconds,
so a crash that takes the whole process down (rather than a Rust panic, which becomes an
exception and a failed run) loses only the runs in flight and the last, unflushed batch.
Ctrl-C (or SIGTERM, which the CLI turns into the same exception) stops the runs in
flight too: each run's progress callback, which the core calls at least every 100 ms of
wall time, raises once the shared stop flag is set, and the run is abandoned (it stays
pending: it is neither written nor counted as failed). Every finished run is written
before the sweep stops.

**Dask** (``dask=ADDRESS`` or ``"local:N"``) sends batches of runs to the workers, which
return the summaries and tables; this process writes them, so no shared filesystem is
needed. A batch whose worker dies is re-run by Dask elsewhere; a batch that fails anyway
is split into single runs, and a single run that still fails is recorded as failed.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import math
import os
import queue
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
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

from ccsim import _core
from ccsim.output import OutputDirError, output_path
from ccsim.sweep_spec import RunSpec, Sweep, SweepError, SweepSource, load_sweep
from ccsim.sweep_store import FLUSH_RUNS, FLUSH_S, Columns, Outcome, SweepStore, iter_failures

#: Exit status of a sweep that ended with failed runs (``ccsim.cli`` documents them all).
EXIT_RUNS_FAILED = 3
#: Seconds to wait for a Dask scheduler before giving up.
DASK_CONNECT_TIMEOUT_S = 5.0
#: A Dask task carries at most this many runs (unless ``batch_size`` says otherwise)...
MAX_BATCH = 32
#: ...and there are about this many tasks per worker thread, for load balance.
TASKS_PER_THREAD = 4
#: The loops wake at least this often (seconds) to write a batch that is due, and to
#: notice workers that died.
POLL_S = 0.5
#: Dask: how long to sleep when no task has finished (its results are polled).
DASK_POLL_S = 0.02
#: A local worker hands its finished runs to the store in groups of at most this many
#: runs, and at most this many seconds after the first of them ended.
HANDOFF_RUNS = 16
HANDOFF_S = 0.02

_HOST = socket.gethostname()


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _worker_name() -> str:
    return f"{_HOST}/{os.getpid()}/{threading.current_thread().name}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


class Stopped(Exception):
    """Raised in a run's progress callback when the sweep is stopping: the run is abandoned
    (not a failed run: it stays pending and runs again on resume)."""


def simulate(
    text: str, series: Sequence[str], progress: Callable[[float], None] | None = None
) -> tuple[dict[str, Any], dict[str, Columns]]:
    """Run scenario JSON in the core (GIL released); the summary and the ``series`` tables
    as the core gives them (the store converts a whole batch to Arrow at once). An
    exception raised by ``progress`` stops the run and propagates."""
    # A sweep keeps tables, not captures: `[trace] pcap` is for single runs.
    summary_json, raw, _pcap = _core.run(text, "json", progress)
    return json.loads(summary_json), {name: raw[name] for name in series if name in raw}


def _stop_check(stop: threading.Event | None) -> Callable[[float], None] | None:
    """A progress callback raising :class:`Stopped` once ``stop`` is set."""
    if stop is None:
        return None

    def check(_fraction: float) -> None:
        if stop.is_set():
            raise Stopped

    return check


def execute(
    run: int, text: str, series: Sequence[str], stop: threading.Event | None = None
) -> Outcome:
    """Simulate one run; any exception but an interrupt (or :class:`Stopped`, once ``stop``
    is set) makes it a failed run."""
    started = _now()
    try:
        summary, tables = simulate(text, series, _stop_check(stop))
    except (KeyboardInterrupt, SystemExit, Stopped):
        raise
    except BaseException as exc:  # ScenarioError, a Rust panic (PanicException), ...
        error = _one_line(f"{type(exc).__name__}: {exc}")
        return Outcome(run, None, error, started, _now(), _worker_name())
    return Outcome(run, summary, None, started, _now(), _worker_name(), tables)


def execute_batch(items: Sequence[tuple[int, str]], series: Sequence[str]) -> list[Outcome]:
    """A Dask task: several runs, one after the other."""
    return [execute(run, text, series) for run, text in items]


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


# --------------------------------------------------------------------------- executors


class _Writer:
    """Gives outcomes to the store and remembers whether writing failed: then the runs
    still buffered are not written again on the way out (an interrupt, even in the middle
    of a write, still writes them: a batch is only forgotten once it is committed)."""

    def __init__(self, store: SweepStore, on_done: Callable[[Outcome], None]):
        self.store = store
        self.on_done = on_done
        self.failed = False

    def _guard(self, write: Callable[[], None]) -> None:
        try:
            write()
        except Exception:
            self.failed = True
            raise

    def add(self, outcome: Outcome) -> None:
        self._guard(lambda: self.store.add(outcome))
        self.on_done(outcome)

    def tick(self) -> None:
        self._guard(self.store.flush_if_due)

    def finish(self) -> None:
        if not self.failed:
            self.store.flush()


def _wait_s(store: SweepStore) -> float:
    due = store.seconds_to_flush()
    return POLL_S if due is None else min(POLL_S, due)


def run_local(
    specs: Sequence[RunSpec],
    series: Sequence[str],
    store: SweepStore,
    jobs: int,
    on_done: Callable[[Outcome], None],
) -> None:
    """Run on ``jobs`` threads, each taking the next run from a queue; store the outcomes
    here, in batches. On an interrupt or a write error, no new run starts, the runs in
    flight are abandoned (within the core's 100 ms reporting period), and every finished
    run is written (unless writing is what failed)."""
    todo: queue.SimpleQueue[RunSpec] = queue.SimpleQueue()
    for spec in specs:
        todo.put(spec)
    finished: queue.SimpleQueue[list[Outcome]] = queue.SimpleQueue()
    stop = threading.Event()
    series = tuple(series)

    def worker() -> None:
        # Outcomes go over in groups, so that short runs do not wake this thread (and
        # pass the GIL back and forth) once each; a long run goes over as soon as it ends.
        group: list[Outcome] = []
        first = 0.0
        try:
            while not stop.is_set():
                try:
                    spec = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    group.append(execute(spec.run, spec.scenario_json, series, stop))
                except Stopped:
                    return
                if len(group) == 1:
                    first = time.monotonic()
                if len(group) >= HANDOFF_RUNS or time.monotonic() - first >= HANDOFF_S:
                    finished.put(group)
                    group = []
        finally:
            if group:
                finished.put(group)

    writer = _Writer(store, on_done)
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="ccsim-sweep")
    workers = [pool.submit(worker) for _ in range(min(jobs, len(specs)))]
    try:
        left = len(specs)
        while left:
            try:
                group = finished.get(timeout=_wait_s(store))
            except queue.Empty:
                group = None
            if group is None:
                writer.tick()
                if all(w.done() for w in workers) and finished.empty():
                    for w in workers:
                        w.result()  # a worker that died raises here
                    raise RuntimeError("sweep workers stopped with runs left")  # pragma: no cover
                continue
            left -= len(group)
            for outcome in group:
                writer.add(outcome)
            writer.tick()
    finally:
        stop.set()
        pool.shutdown(wait=True)  # the runs in flight stop at their next progress report
        if not writer.failed:
            while not finished.empty():
                for outcome in finished.get():
                    writer.add(outcome)
        writer.finish()


def _quiet_distributed() -> None:
    """Silence every ``distributed`` logger of this process (the LocalCluster's scheduler
    runs here): when an interrupt reaches the workers, the scheduler's comms to them close
    and some loggers (``distributed.batched``) log a traceback at INFO, past
    ``silence_logs``, which would follow the one-line message a Ctrl-C promises."""
    names = [n for n in logging.root.manager.loggerDict if n.split(".")[0] == "distributed"]
    for name in ["distributed", *names]:
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


@dataclass
class DaskConnection:
    client: Any
    cluster: Any = None
    owned: bool = True

    def close(self, interrupted: bool = False) -> None:
        """Close an owned client and cluster. After an interrupt, a LocalCluster's worker
        processes are sent SIGTERM first: their runs are abandoned anyway, and a graceful
        close waits seconds for the tasks they are busy with."""
        if not self.owned:
            return
        if interrupted and self.cluster is not None:
            _quiet_distributed()
            self._terminate_local_workers()
        try:
            self.client.close()
        finally:
            if self.cluster is not None:
                self.cluster.close()

    def _terminate_local_workers(self) -> None:
        for nanny in list(getattr(self.cluster, "workers", {}).values()):
            pid = getattr(getattr(nanny, "process", None), "pid", None)
            if isinstance(pid, int) and pid > 0:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGTERM)

    @property
    def threads(self) -> int:
        return max(1, sum(self.client.nthreads().values()))


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError as exc:
        raise SweepError(
            "--dask needs dask.distributed, which is not installed: pip install 'ccsim[cluster]'"
        ) from exc
    return distributed


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """Ignore SIGINT while the LocalCluster starts its worker processes, which inherit
    that (Python keeps an ignored SIGINT ignored). Ctrl-C in a terminal reaches the whole
    process group: workers that heard it printed a traceback each (64 lines for 4) and
    then held up the cluster's shutdown for seconds. They are stopped by this process
    instead, which closes the cluster on an interrupt."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may change handlers (and gets SIGINT anyway)
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def connect_dask(address: Any) -> DaskConnection:
    """A client for ``address`` (a scheduler address, ``"local:N"`` for a LocalCluster
    of N worker processes, or an existing ``distributed.Client``). SweepError if the
    scheduler cannot be reached within :data:`DASK_CONNECT_TIMEOUT_S`."""
    distributed = _import_distributed()
    if isinstance(address, distributed.Client):
        return DaskConnection(address, owned=False)
    if not isinstance(address, str) or not address.strip():
        raise SweepError(f"--dask: expected a scheduler address or local:N, got {address!r}")
    address = address.strip()
    if address.startswith("local:") or address == "local":
        text = address.partition(":")[2]
        if not text.isdigit() or int(text) < 1:
            raise SweepError(f"--dask {address}: expected local:N with N >= 1 worker processes")
        with _sigint_ignored():
            cluster = distributed.LocalCluster(
                n_workers=int(text),
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.CRITICAL,
            )
        _quiet_distributed()  # its scheduler runs in this process
        return DaskConnection(distributed.Client(cluster), cluster)
    try:
        client = distributed.Client(address, timeout=DASK_CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError, ValueError) as exc:
        raise SweepError(
            f"cannot reach the Dask scheduler at {address} "
            f"(waited {DASK_CONNECT_TIMEOUT_S:g} s): {_one_line(str(exc))}"
        ) from exc
    return DaskConnection(client)


def batch_size_for(pending: int, threads: int, requested: int | None) -> int:
    if requested is not None:
        return requested
    return max(1, min(MAX_BATCH, math.ceil(pending / (threads * TASKS_PER_THREAD))))


def run_dask(
    specs: Sequence[RunSpec],
    series: Sequence[str],
    store: SweepStore,
    conn: DaskConnection,
    batch_size: int | None,
    on_done: Callable[[Outcome], None],
) -> None:
    """Submit batches of runs; write each run's result here as its batch returns."""
    distributed = _import_distributed()
    client = conn.client
    size = batch_size_for(len(specs), conn.threads, batch_size)
    series = tuple(series)
    live: dict[str, tuple[Any, list[tuple[int, str]]]] = {}

    def submit(items: list[tuple[int, str]]) -> Any:
        future = client.submit(execute_batch, items, series, pure=False)
        live[future.key] = (future, items)
        return future

    items = [(spec.run, spec.scenario_json) for spec in specs]
    pending = distributed.as_completed(
        [submit(items[i : i + size]) for i in range(0, len(items), size)], loop=client.loop
    )
    writer = _Writer(store, on_done)
    try:
        while not pending.is_empty():
            # poll rather than block, so that a batch due by time is written meanwhile
            ready = pending.next_batch(block=False)
            if not ready:
                writer.tick()
                time.sleep(DASK_POLL_S)
                continue
            for future in ready:
                _, batch = live.pop(future.key)
                try:
                    outcomes = future.result()
                except Exception as exc:  # the task failed (e.g. its workers kept dying)
                    if len(batch) > 1:
                        for item in batch:
                            pending.add(submit([item]))
                        continue
                    stamp = _now()
                    error = _one_line(f"the Dask task failed: {type(exc).__name__}: {exc}")
                    outcomes = [Outcome(batch[0][0], None, error, stamp, stamp, "dask")]
                finally:
                    future.release()
                for outcome in outcomes:
                    writer.add(outcome)
                writer.tick()
    finally:
        if live:  # interrupted, or writing failed: stop what is still queued
            client.cancel([future for future, _ in live.values()])
        writer.finish()


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
        jobs = _cpu_count()
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise SweepError(f"--jobs: expected an integer >= 1, got {jobs!r}")
    if batch_size is not None and (not isinstance(batch_size, int) or batch_size < 1):
        raise SweepError(f"--batch: expected an integer >= 1, got {batch_size!r}")
    if isinstance(flush_runs, bool) or not isinstance(flush_runs, int) or flush_runs < 1:
        raise SweepError(f"flush_runs: expected an integer >= 1, got {flush_runs!r}")
    if not isinstance(flush_s, (int, float)) or not flush_s >= 0:
        raise SweepError(f"flush_s: expected a number of seconds >= 0, got {flush_s!r}")
    if plot:
        from ccsim.plots.style import FormatError, parse_formats
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


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


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
            report.plot = plot_sweep(store.out, sweep_.plot, results, plot_formats)[0]
        except Exception as exc:  # the results matter more than the picture
            report.plot_error = _one_line(f"plotting failed: {exc}")
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
        others = sorted(report.plot.parent.glob(f"{report.plot.stem}.*"))
        names = ", ".join(p.suffix[1:] for p in others) or report.plot.suffix[1:]
        console.print(f"plot in [bold]{report.plot.with_suffix('')}[/bold] ({names})")
