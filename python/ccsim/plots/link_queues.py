"""The ``link_queues`` figure of a ``[network]`` run: a row of panels per congested link
(busiest first, as the report's sections; ``ccsim.links``), its queueing delay per
interval (mean, and the min-max band) and its queue length over time, from the
``queue_series`` rows of that link (the table's ``queue`` column names the link).

A dumbbell's one queue is the ``queue_delay`` figure's; this one exists where there are
several queues to tell apart."""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.figure import Figure

from ccsim.plots.style import PALETTE, legend_below, new_figure, shade_window

#: Congested links drawn, busiest first (the ``links`` figure shows as many).
MAX_LINK_PANELS = 8

Columns = dict[str, np.ndarray]


def queued_links(queue: Columns, summary: dict[str, Any]) -> list[str]:
    """The congested links (busiest first, at most :data:`MAX_LINK_PANELS`) that have
    rows in ``queue_series``."""
    from ccsim.links import congested_links

    names = set(queue["queue"].tolist()) if "queue" in queue else set()
    found = [q["name"] for q in congested_links(summary, all_links=True) if q["name"] in names]
    return found[:MAX_LINK_PANELS]


def plot_link_queues(queue: Columns, summary: dict[str, Any], links: list[str]) -> Figure:
    """One row per link of ``links``: sojourn time (left) and queue length (right)."""
    fig = new_figure(11, 1.2 + 1.9 * len(links))
    axes = np.atleast_2d(fig.subplots(len(links), 2, sharex=True, squeeze=False))
    start, end = summary.get("measure_start_s"), summary.get("measure_end_s")
    for row, name in enumerate(links):
        rows = queue["queue"] == name
        t = queue["time_s"][rows]
        delay_ax, qlen_ax = axes[row]
        for ax in (delay_ax, qlen_ax):
            shade_window(ax, start, end)
        delay_ax.fill_between(
            t,
            queue["sojourn_min_ms"][rows],
            queue["sojourn_max_ms"][rows],
            color=PALETTE[0],
            alpha=0.35,
            lw=0,
            label="min-max per interval" if row == 0 else None,
        )
        delay_ax.plot(
            t,
            queue["sojourn_mean_ms"][rows],
            color=PALETTE[0],
            label="mean per interval" if row == 0 else None,
        )
        qlen_ax.plot(
            t,
            queue["qlen_pkts"][rows],
            color=PALETTE[1],
            lw=1.0,
            label="queue length at the tick" if row == 0 else None,
        )
        delay_ax.set_ylabel(f"{name}\nsojourn (ms)")
        qlen_ax.set_ylabel("packets")
        delay_ax.set_ylim(bottom=0)
        qlen_ax.set_ylim(bottom=0)
    axes[-1][0].set_xlabel("time (s)")
    axes[-1][1].set_xlabel("time (s)")
    fig.suptitle("Queues of the congested links")
    legend_below(fig)
    return fig


__all__ = ["MAX_LINK_PANELS", "plot_link_queues", "queued_links"]
