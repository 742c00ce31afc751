"""What every sweep backend shares: one run simulated in the core (on a worker thread or
a Dask worker), a batch of runs (one Dask task), and the writer that hands finished runs
to the store (:mod:`ccsim.sweeps.store`) on the sweep's own thread.

A run that raises (a bad scenario, a Rust panic) is a failed run; an interrupt, or
:class:`Stopped` once the sweep's stop flag is set, abandons it (it stays pending).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import threading
from collections.abc import Callable, Sequence
from typing import Any

from ccsim.sweeps.store import Columns, Outcome, SweepStore

#: The loops wake at least this often (seconds) to write a batch that is due, and to
#: notice workers that died.
POLL_S = 0.5

_HOST = socket.gethostname()


def now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _worker_name() -> str:
    return f"{_HOST}/{os.getpid()}/{threading.current_thread().name}"


def one_line(text: str) -> str:
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
    # the one dispatch between the core and the driver of flows run by Python policies
    from ccsim.api import _run_core

    summary_json, raw, _pcap = _run_core(text, "json", progress, None, 100_000_000)
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
    started = now()
    try:
        summary, tables = simulate(text, series, _stop_check(stop))
    except (KeyboardInterrupt, SystemExit, Stopped):
        raise
    except BaseException as exc:  # ScenarioError, a Rust panic (PanicException), ...
        error = one_line(f"{type(exc).__name__}: {exc}")
        return Outcome(run, None, error, started, now(), _worker_name())
    return Outcome(run, summary, None, started, now(), _worker_name(), tables)


def execute_batch(items: Sequence[tuple[int, str]], series: Sequence[str]) -> list[Outcome]:
    """A Dask task: several runs, one after the other."""
    return [execute(run, text, series) for run, text in items]


class Writer:
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


def wait_s(store: SweepStore) -> float:
    due = store.seconds_to_flush()
    return POLL_S if due is None else min(POLL_S, due)
