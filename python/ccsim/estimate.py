"""What a run will cost, before running it: ``ccsim validate`` prints it and ``ccsim run``
refuses a run whose memory estimate exceeds the memory this machine has free, and warns
about one estimated to take long. The numbers come from the core
(``ccsim_core::sim::estimate``, calibrated on the examples: upper-leaning, a saturated
bottleneck for the whole run)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ccsim.api import ScenarioSource

#: ``ccsim run`` warns when a run is estimated to take longer than this (seconds).
LONG_RUN_S = 600.0


def estimate(source: ScenarioSource) -> dict[str, Any]:
    """The core's estimate for already-loaded scenario text (parsing only: no building,
    so it is cheap whatever the flow count). A scenario that does not parse raises the
    same explained ``ScenarioError`` as :func:`ccsim.api.check`."""
    from ccsim import _core, api

    try:
        return dict(_core.estimate(source.text, source.fmt))
    except _core.ScenarioError:
        api.check(source)  # raises the error with its explanation
        raise


def free_memory_bytes() -> int | None:
    """``MemAvailable`` of ``/proc/meminfo``, or ``None`` where there is none."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def address_space_left_bytes() -> int | None:
    """What ``ulimit -v`` (``RLIMIT_AS``) still lets this process map: the soft limit less
    the address space mapped already (``VmSize``); ``None`` without a limit. A run under
    a 4 GB limit with 20 GB free otherwise died of ``memory allocation failed`` (issue 33)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    mapped = 0
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                mapped = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return max(0, soft - mapped)


def available_memory_bytes() -> int | None:
    """The memory a run may use: the smaller of the free memory and what the process's
    address-space limit leaves (``None`` if neither is known)."""
    known = [b for b in (free_memory_bytes(), address_space_left_bytes()) if b is not None]
    return min(known) if known else None


def _count(x: float) -> str:
    for limit, suffix in ((1e9, " billion"), (1e6, " million"), (1e3, " thousand")):
        if x >= limit:
            return f"{x / limit:.3g}{suffix}"
    return f"{x:.0f}"


def _bytes(x: float) -> str:
    return f"{x / 1e9:.3g} GB" if x >= 1e9 else f"{x / 1e6:.3g} MB"


def _seconds(s: float) -> str:
    if s < 60:
        return f"{s:.2g} s"
    if s < 3600:
        return f"{s / 60:.2g} min"
    return f"{s / 3600:.3g} h"


def describe(est: dict[str, Any]) -> str:
    """One line: ``estimate: about N events (T at ...), M of memory, R rows of time series``."""
    return (
        f"estimate: about {_count(est['events'])} events (up to {_seconds(est['wall_s'])}), "
        f"{_bytes(est['memory_bytes'])} of memory, {_count(est['series_rows'])} rows of "
        f"time series, {est['flows']} flows"
    )


#: What to change, by the scenario key that costs the most memory.
_ADVICE = {
    "flows": "use fewer flows or a shorter run",
    "stats_interval": "use a longer stats_interval, fewer flows or a shorter run",
    "trace.pcap_max_packets": "capture fewer packets (trace.pcap_max_packets) or fewer links",
    "trace.qdisc_state": 'record qdisc_state per interval, not "updates", or a longer tupdate',
    "trace.queue_events": "turn queue_events off or use a shorter run",
    "trace.rtt_samples": "trace fewer flows or use a shorter run",
    "flows.trace": "trace fewer flows or use a shorter run",
    "flows.deadline_control": "use a longer deadline_control interval or a shorter run",
}


def too_big(est: dict[str, Any], label: str) -> str | None:
    """The one-line refusal when the run would not fit in the memory it may use (free
    memory, capped by ``ulimit -v``), else None. It names the scenario key that costs the
    most and its figure."""
    free = available_memory_bytes()
    if free is None or est["memory_bytes"] <= free:
        return None
    key, bytes_ = est.get("largest", ("flows", est["memory_bytes"]))
    rows = est.get("trace_rows", {}).get(key)
    figure = f"{_count(rows)} rows, " if rows is not None else ""
    if key == "stats_interval":
        figure = f"{_count(est['series_rows'])} rows of time series, "
    elif key == "flows":
        figure = f"{est['flows']} flows, "
    return (
        f"{label}: {key}: this run needs about {_bytes(est['memory_bytes'])} of memory "
        f"({figure}{_bytes(bytes_)} of it for {key}), more than the {_bytes(free)} it may "
        f"use (free memory, ulimit -v); {_ADVICE.get(key, 'use a shorter run')}"
    )


def long_run_warning(est: dict[str, Any]) -> str | None:
    """A warning line when the run may take longer than :data:`LONG_RUN_S`."""
    if est["wall_s"] <= LONG_RUN_S:
        return None
    return (
        f"warning: this run may take up to {_seconds(est['wall_s'])} "
        f"(about {_count(est['events'])} events); Ctrl-C stops it"
    )
