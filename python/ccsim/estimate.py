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
    """The core's estimate for already-loaded scenario text."""
    from ccsim import _core

    return dict(_core.estimate(source.text, source.fmt))


def available_memory_bytes() -> int | None:
    """``MemAvailable`` of ``/proc/meminfo``, or ``None`` where there is none."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


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


def too_big(est: dict[str, Any], label: str) -> str | None:
    """The one-line refusal when the run would not fit in the free memory, else None."""
    free = available_memory_bytes()
    if free is None or est["memory_bytes"] <= free:
        return None
    return (
        f"{label}: this run needs about {_bytes(est['memory_bytes'])} of memory "
        f"({est['flows']} flows, {_count(est['series_rows'])} rows of time series), "
        f"more than the {_bytes(free)} free; use fewer flows, a shorter run or a longer "
        f"stats_interval"
    )


def long_run_warning(est: dict[str, Any]) -> str | None:
    """A warning line when the run may take longer than :data:`LONG_RUN_S`."""
    if est["wall_s"] <= LONG_RUN_S:
        return None
    return (
        f"warning: this run may take up to {_seconds(est['wall_s'])} "
        f"(about {_count(est['events'])} events); Ctrl-C stops it"
    )
