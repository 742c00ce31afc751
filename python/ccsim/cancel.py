"""Stopping runs in any thread.

Python delivers signals to the main thread only, and the core hears Ctrl-C by checking
for pending signals, which only the main thread can: a :func:`ccsim.run` in a worker
thread (a ``ThreadPoolExecutor`` of runs) kept going after two Ctrl-Cs (issue 33). So:

- When ``ccsim.api`` is imported on the main thread and SIGINT has Python's default
  handler, that handler is wrapped: a Ctrl-C still raises ``KeyboardInterrupt`` in the
  main thread as before, and also cancels every run going on in other threads, which
  raise ``KeyboardInterrupt`` there within about 0.1 s (the core calls back every 100 ms
  of wall time).
- :func:`cancel_runs` does the same from code (e.g. your own SIGINT handler, or a
  ``KeyboardInterrupt`` you caught); ``ccsim.run(..., cancel=event)`` stops one run when
  the ``threading.Event`` is set.

The same check (:func:`stop_check`) is made after the simulation too, between batches of
rows while the result tables are built, converted and turned into Arrow (SIGINT took
36.6 s to act there, issue 33); on the main thread, pending signals are checked there as
well, and Parquet files are written a row group at a time so that Ctrl-C is heard between
them.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import Any

_lock = threading.Lock()
_generation = 0  # how many times every run was cancelled


def cancel_runs() -> None:
    """Cancel every :func:`ccsim.run` going on now, in any thread: each raises
    ``KeyboardInterrupt`` within about 0.1 s (runs started later are not affected)."""
    global _generation
    with _lock:
        _generation += 1


def generation() -> int:
    return _generation


def _on_sigint(signum: int, frame: Any) -> None:
    cancel_runs()
    signal.default_int_handler(signum, frame)


_on_sigint.ccsim_cancels_runs = True  # type: ignore[attr-defined]


def install_sigint_hook() -> None:
    """Wrap Python's default SIGINT handler so that Ctrl-C also cancels runs in other
    threads (on the main thread only; a handler of your own is left alone)."""
    if threading.current_thread() is not threading.main_thread():
        return
    try:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, _on_sigint)
    except (ValueError, OSError):  # pragma: no cover - no signals here (embedded)
        pass


def stop_check(cancel: threading.Event | None) -> Callable[[], None] | None:
    """One run's cancellation check, made when the run starts: a callable raising
    ``KeyboardInterrupt`` once ``cancel`` is set or :func:`cancel_runs` was called after
    this moment. ``None`` when neither can happen (a run on the main thread without
    ``cancel``: the core hears the signals itself)."""
    on_main = threading.current_thread() is threading.main_thread()
    if cancel is None and on_main:
        return None
    started = _generation

    def check() -> None:
        if _generation != started or (cancel is not None and cancel.is_set()):
            raise KeyboardInterrupt("ccsim run cancelled")

    return check


def watcher(
    progress: Callable[[float], Any] | None, stop: Callable[[], None] | None
) -> Callable[[float], Any] | None:
    """The progress callback of one run: ``stop`` (from :func:`stop_check`), which raises
    when the run is cancelled, then ``progress``. ``progress`` itself when ``stop`` is
    None."""
    if stop is None:
        return progress

    def check(fraction: float) -> None:
        stop()
        if progress is not None:
            progress(fraction)

    return check
