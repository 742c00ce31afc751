"""Running a sweep's runs on a Dask cluster.

``dask=ADDRESS`` (or ``"local:N"``, a LocalCluster of N worker processes, or a
``distributed.Client``) sends batches of runs to the workers, which return the summaries
and tables; this process writes them, so no shared filesystem is needed. A batch whose
worker dies is re-run by Dask elsewhere; a batch that fails anyway is split into single
runs, and a single run that still fails is recorded as failed.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ccsim.scenario import SweepError
from ccsim.sweeps.execution import Writer, execute_batch, now, one_line
from ccsim.sweeps.spec import RunSpec
from ccsim.sweeps.store import Outcome, SweepStore

#: Seconds to wait for a Dask scheduler before giving up.
DASK_CONNECT_TIMEOUT_S = 5.0
#: A Dask task carries at most this many runs (unless ``batch_size`` says otherwise)...
MAX_BATCH = 32
#: ...and there are about this many tasks per worker thread, for load balance.
TASKS_PER_THREAD = 4
#: Dask: how long to sleep when no task has finished (its results are polled).
DASK_POLL_S = 0.02


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
            f"(waited {DASK_CONNECT_TIMEOUT_S:g} s): {one_line(str(exc))}"
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
    writer = Writer(store, on_done)
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
                    stamp = now()
                    error = one_line(f"the Dask task failed: {type(exc).__name__}: {exc}")
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
