"""Running a sweep's runs on local threads.

``--jobs`` threads (all cores by default). The core releases the GIL for the whole
simulation, so threads use every core; they cost no process start-up and no pickling of
scenarios or results. Each thread takes the next run from a queue and hands the outcome
to this thread, which gives it to the store: the store writes finished runs in batches
(see :mod:`ccsim.sweeps.store`), bounded by runs and by seconds, so a crash that takes the
whole process down (rather than a Rust panic, which becomes an exception and a failed
run) loses only the runs in flight and the last, unflushed batch. Ctrl-C (or SIGTERM,
which the CLI turns into the same exception) stops the runs in flight too: each run's
progress callback, which the core calls at least every 100 ms of wall time, raises once
the shared stop flag is set, and the run is abandoned (it stays pending: it is neither
written nor counted as failed). Every finished run is written before the sweep stops.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from ccsim.sweeps.execution import Stopped, Writer, execute, wait_s
from ccsim.sweeps.spec import RunSpec
from ccsim.sweeps.store import Outcome, SweepStore

#: A local worker hands its finished runs to the store in groups of at most this many
#: runs, and at most this many seconds after the first of them ended.
HANDOFF_RUNS = 16
HANDOFF_S = 0.02


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


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

    writer = Writer(store, on_done)
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="ccsim-sweep")
    workers = [pool.submit(worker) for _ in range(min(jobs, len(specs)))]
    try:
        left = len(specs)
        while left:
            try:
                group = finished.get(timeout=wait_s(store))
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
