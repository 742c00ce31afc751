"""Which of a ``[network]``'s links were congested in a run, read from the summary's
``links`` (the per-link figures over the measurement window).

A link is **congested** when over the window it dropped or ECN-marked a packet at its
queue, or its queue held meaningfully: a 99th-percentile sojourn of at least
:data:`QUEUED_PACKETS` full-size (1500-byte) packets' transmission time at the link's
rate. (A link whose p99 sojourn is below that only ever held a packet or two behind the
one on the wire, as any link a flow crosses at its own rate does.) The report prints a
section per congested link and the ``links`` plot a panel row per congested link, the
busiest :data:`BUSIEST` first unless every link is asked for."""

from __future__ import annotations

from typing import Any

#: The p99 backlog, in full-size packets, from which a link counts as queueing.
QUEUED_PACKETS = 10
#: Congested links shown by default (``ccsim run --all-links``: all).
BUSIEST = 4
_PACKET_BITS = 1500 * 8


def rate_bps(link: dict[str, Any], window_s: float) -> float | None:
    """A link's rate, from what it sent over the window and its utilisation (the summary
    does not carry the rate itself); None if it sent nothing."""
    used = link.get("utilisation") or 0.0
    if used <= 0 or window_s <= 0:
        return None
    return link["bytes_departed"] * 8 / (used * window_s)


def is_congested(link: dict[str, Any], window_s: float) -> bool:
    """Dropped or marked at its queue, or queued at least :data:`QUEUED_PACKETS` packets'
    worth at the 99th percentile of sojourn."""
    if link.get("drops", 0) > 0 or link.get("marks", 0) > 0:
        return True
    rate = rate_bps(link, window_s)
    p99_ms = link.get("sojourn_p99_ms")
    if rate is None or p99_ms is None or p99_ms != p99_ms:  # NaN: no histogram
        return False
    return p99_ms * 1e-3 >= QUEUED_PACKETS * _PACKET_BITS / rate


def congested_links(summary: dict[str, Any], all_links: bool = False) -> list[dict[str, Any]]:
    """The summary's congested links, busiest first (drops, then marks, then p99 sojourn),
    at most :data:`BUSIEST` unless ``all_links``."""
    window_s = summary.get("measure_end_s", 0.0) - summary.get("measure_start_s", 0.0)
    found = [q for q in summary.get("links") or [] if is_congested(q, window_s)]
    found.sort(key=lambda q: (-q["drops"], -q["marks"], -(q["sojourn_p99_ms"] or 0.0)))
    return found if all_links else found[:BUSIEST]
