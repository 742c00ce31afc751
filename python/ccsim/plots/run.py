"""The figures of one run's result directory (Parquet tables + ``summary.json``).

``ccsim run`` draws them unless ``--no-plots``; ``ccsim plot DIR`` draws them again:

- ``throughput``: throughput per interval (bytes on the wire that reached the receiver,
  headers and retransmissions included), with the bottleneck's capacity as a line that
  follows its ``rate_changes`` (or its ``trace``, in 100 ms bins); below it goodput
  (payload in order) smoothed over 1 s.
  One line per flow while every ``[[flows]]``/``[[udp]]`` group has one flow, else one
  line per group (the sum over its flows), named by the group's ``name`` or by its
  congestion control, RTT and PPV class.
- ``queue_delay``: bottleneck sojourn time (mean, min-max band) and queue length.
- ``sojourn_cdf``: the bottleneck's sojourn time distribution in the measurement window
  (with a ``[network]``, one curve per congested link).
- ``cwnd`` (flows with ``trace = true``): cwnd, ssthresh and smoothed RTT, one row of
  panels per traced group.
- ``rtt`` (with ``[trace] rtt_samples = true``): RTT samples over time and their CDF in
  the measurement window, as Flent draws latency under load.
- ``links`` (a ``[network]`` with congested links, see :mod:`ccsim.links`): a row per
  congested link, busiest first (at most :data:`MAX_LINK_ROWS`): its utilisation, sojourn
  percentiles and drop and mark probabilities over the measurement window.

The measurement window is shaded; legends sit outside the axes. Each figure is written
in every format asked for (PNG, PDF, SVG).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ccsim.plots.style import (
    DEFAULT_FORMATS,
    PALETTE,
    REFERENCE_COLOUR,
    legend_below,
    new_figure,
    save,
    shade_window,
    styled,
)
from ccsim.plots.text import scenario_caption

#: Figures of a run, by file stem, in the order they are drawn.
FIGURES = ("throughput", "queue_delay", "sojourn_cdf", "cwnd", "rtt")
#: Figures only a ``[network]`` run draws.
NETWORK_FIGURES = ("links", "link_queues")
#: Congested links drawn in the ``links`` figure.
MAX_LINK_ROWS = 8

#: Goodput is smoothed over this many seconds in ``throughput``'s lower panel.
GOODPUT_SMOOTHING_S = 1.0

#: At most this many traced groups get a row in ``cwnd``; at most this many flows of a
#: group are named in its legend.
MAX_CWND_ROWS = 6
MAX_NAMED_FLOWS = 6

Columns = dict[str, np.ndarray]


class NoResultsError(Exception):
    """The directory holds no ccsim results."""


def _load(directory: Path, name: str) -> Columns | None:
    path = directory / f"{name}.parquet"
    if not path.exists():
        return None
    table = pq.read_table(path)
    return {col: table.column(col).to_numpy(zero_copy_only=False) for col in table.column_names}


# --------------------------------------------------------------------------- groups


@dataclass
class Line:
    """What one line of a figure stands for: a flow, or a group of flows."""

    label: str
    flow_ids: list[int]
    key: tuple[str, int]  # (protocol, group)
    colour: str = ""


@dataclass
class Groups:
    """The flows of a run by group, and the lines to draw (per flow or per group)."""

    per_flow: bool
    lines: list[Line]
    group_of: dict[int, tuple[str, int]] = field(default_factory=dict)


def _ppv_class(scenario: dict[str, Any] | None, protocol: str, group: int) -> str | None:
    if not isinstance(scenario, dict):
        return None
    groups = scenario.get("flows" if protocol == "tcp" else "udp")
    if not isinstance(groups, list) or group >= len(groups) or not isinstance(groups[group], dict):
        return None
    ppv = groups[group].get("ppv")
    if isinstance(ppv, str):
        return ppv
    if isinstance(ppv, dict):
        return str(ppv.get("tvf", "custom"))
    return None


def _rtt_text(rtts: np.ndarray) -> str:
    low, high = float(np.min(rtts)), float(np.max(rtts))
    return f"{low:g} ms" if low == high else f"{low:g}-{high:g} ms"


def _describe(flows: Columns, rows: list[int], ppv: str | None) -> str:
    """``cubic, 10 ms, PPV gold`` for the flows at ``rows`` (one group)."""
    first = rows[0]
    protocol = str(flows["protocol"][first])
    algorithm = str(flows["algorithm"][first])
    kind = algorithm if protocol == "tcp" else f"UDP {algorithm}"
    parts = [kind, _rtt_text(flows["base_rtt_ms"][rows])]
    if ppv:
        parts.append(f"PPV {ppv}")
    return ", ".join(parts)


def flow_groups(flows: Columns | None, flow_ids: Iterable[int], summary: dict[str, Any]) -> Groups:
    """Lines per flow while every group has a single flow, else per group."""
    ids = sorted({int(f) for f in flow_ids})
    if flows is None or not len(flows.get("flow_id", ())):
        lines = [Line(f"flow {f}", [f], ("tcp", f)) for f in ids]
        return _coloured(Groups(True, lines, {f: ("tcp", f) for f in ids}))
    scenario = summary.get("scenario")
    members: dict[tuple[str, int], list[int]] = {}
    group_of: dict[int, tuple[str, int]] = {}
    for i, fid in enumerate(flows["flow_id"]):
        key = (str(flows["protocol"][i]), int(flows["group"][i]))
        members.setdefault(key, []).append(i)
        group_of[int(fid)] = key
    names = flows.get("group_name")
    per_flow = all(len(rows) == 1 for rows in members.values())
    lines = []
    for key, rows in members.items():
        name = str(names[rows[0]]) if names is not None and names[rows[0]] else None
        what = _describe(flows, rows, _ppv_class(scenario, *key))
        fids = [int(flows["flow_id"][i]) for i in rows]
        if per_flow:
            head = f"{name} (flow {fids[0]})" if name else f"flow {fids[0]}"
            label = f"{head}: {what}"
        else:
            count = f"{len(rows)} flows" if len(rows) > 1 else "1 flow"
            label = f"{name}: {count}, {what}" if name else f"{count}: {what}"
        lines.append(Line(label, fids, key))
    return _coloured(Groups(per_flow, lines, group_of))


def _coloured(groups: Groups) -> Groups:
    for i, line in enumerate(groups.lines):
        line.colour = PALETTE[i % len(PALETTE)]
    return groups


def _sum_by_time(
    time: np.ndarray, ids: np.ndarray, values: np.ndarray, wanted: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    """Times and the sum of ``values`` over the rows of the ``wanted`` ids at each time."""
    rows = np.isin(ids, np.asarray(wanted, dtype=ids.dtype))
    times, inverse = np.unique(time[rows], return_inverse=True)
    return times, np.bincount(inverse, weights=values[rows], minlength=len(times))


def _smooth(values: np.ndarray, window: int) -> np.ndarray:
    """Trailing moving average over ``window`` samples (fewer at the start)."""
    if window <= 1 or len(values) == 0:
        return values
    sums = np.cumsum(np.insert(values, 0, 0.0))
    n = np.arange(1, len(values) + 1)
    lo = np.maximum(n - window, 0)
    return (sums[n] - sums[lo]) / (n - lo)


# --------------------------------------------------------------------------- capacity


def _bottleneck_rows(table: Columns, summary: dict[str, Any]) -> np.ndarray:
    name = summary.get("bottleneck", {}).get("name", "bottleneck")
    queues = table["queue"]
    rows = queues == name
    return rows if rows.any() else np.ones(len(queues), dtype=bool)


#: A trace-driven bottleneck's capacity is drawn binned over this many seconds.
TRACE_BIN_S = 0.1


def trace_file(summary: dict[str, Any], value: str) -> Path:
    """Where a run's ``bottleneck.trace`` is: an absolute path as it is, a relative one
    from the scenario file's directory as the run recorded it (``scenario_dir``), else
    from the current directory."""
    path = Path(value)
    if path.is_absolute():
        return path
    base = summary.get("scenario_dir")
    return Path(base) / path if isinstance(base, str) and base else path


def _trace_capacity(
    summary: dict[str, Any], bottleneck: dict[str, Any]
) -> tuple[np.ndarray, np.ndarray] | None:
    """Step points (time s, Mbit/s) of a trace-driven bottleneck: the looped trace in
    :data:`TRACE_BIN_S` bins over the run, or None if the file cannot be read now."""
    from ccsim.traces import TraceError, capacity_mbps, read_trace

    end = summary.get("duration_s")
    if not isinstance(end, (int, float)) or end <= 0:
        return None
    try:
        trace = read_trace(trace_file(summary, str(bottleneck["trace"])))
    except TraceError:
        return None
    t, rate = capacity_mbps(trace, float(end), TRACE_BIN_S)
    return np.append(t, float(end)), np.append(rate, rate[-1])


def _scenario_capacity(summary: dict[str, Any]) -> tuple[np.ndarray, np.ndarray] | None:
    """Step points (time s, Mbit/s) of the bottleneck rate from the scenario recorded in
    ``summary.json`` (``bottleneck.rate`` and ``rate_changes``, or ``bottleneck.trace``
    binned), or None."""
    from ccsim import _core
    from ccsim.ppv import parse_rate

    scenario = summary.get("scenario")
    try:
        bottleneck = scenario["bottleneck"]  # type: ignore[index]
        if bottleneck.get("trace"):
            return _trace_capacity(summary, bottleneck)
        points = [(0.0, parse_rate(str(bottleneck["rate"]).replace(" ", "")))]
        for change in bottleneck.get("rate_changes") or []:
            at = _core.duration_ns(str(change["at"]), "at") / 1e9
            points.append((at, parse_rate(str(change["rate"]).replace(" ", ""))))
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    points.sort(key=lambda p: p[0])
    end = summary.get("duration_s")
    if isinstance(end, (int, float)) and end > points[-1][0]:
        points.append((float(end), points[-1][1]))
    t, rate = zip(*points, strict=True)
    return np.asarray(t, dtype=float), np.asarray(rate, dtype=float) / 1e6


def capacity(queue: Columns | None, summary: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """The bottleneck's rate (Mbit/s) as step points (each holds until the next): from
    the scenario recorded in ``summary.json``, else estimated from ``queue_series`` as the
    bits serialised per interval over its utilisation (close to the rate the core divided
    by). Empty arrays when it cannot be known."""
    known = _scenario_capacity(summary)
    if known is not None:
        return known
    empty = (np.array([]), np.array([]))
    if queue is None or "utilisation" not in queue or "departed_bytes" not in queue:
        return empty
    rows = _bottleneck_rows(queue, summary)
    t = queue["time_s"][rows].astype(float)
    if not len(t):
        return empty
    dt = np.diff(np.insert(t, 0, 0.0))
    util = queue["utilisation"][rows].astype(float)
    bits = queue["departed_bytes"][rows].astype(float) * 8.0
    ok = (util > 0.5) & (dt > 0)  # a busy interval: the estimate is within a packet
    if not ok.any():
        return empty
    rate = np.full(len(t), np.nan)
    rate[ok] = bits[ok] / (util[ok] * dt[ok]) / 1e6
    index = np.where(ok, np.arange(len(t)), 0)
    np.maximum.accumulate(index, out=index)
    rate = rate[index]  # carry the last known rate forward
    first = int(np.argmax(ok))
    rate[:first] = rate[first]
    return np.insert(t[:-1], 0, 0.0), rate


def _capacity_line(ax: Axes, cap: tuple[np.ndarray, np.ndarray]) -> None:
    t, rate = cap
    if len(t):
        ax.step(
            t,
            rate,
            where="post",
            color=REFERENCE_COLOUR,
            ls="--",
            lw=1.0,
            label="link capacity",
            zorder=3,
        )


# --------------------------------------------------------------------------- figures


def caption(fig: Figure, summary: dict[str, Any]) -> None:
    """The scenario's key parameters (bottleneck rate and queue, RTTs, flows) in small
    grey type at the top of the figure, so that a figure pasted into a draft still says
    what it shows; under the figure's title if it has one."""
    text = scenario_caption(summary.get("scenario"))
    if not text:
        return
    title = fig.get_suptitle()
    if title:
        fig.suptitle(f"{title}\n{text}")
    else:
        fig.suptitle(text, fontsize="small", color="0.35")


def _window(summary: dict[str, Any]) -> tuple[float | None, float | None]:
    return summary.get("measure_start_s"), summary.get("measure_end_s")


def _interval_s(time: np.ndarray) -> float:
    steps = np.diff(np.unique(time))
    return float(np.median(steps)) if len(steps) else 0.1


def plot_throughput(
    series: Columns,
    flows: Columns | None,
    summary: dict[str, Any],
    queue: Columns | None = None,
) -> Figure:
    """Throughput per interval with the capacity line; goodput smoothed over 1 s below."""
    flow_ids = series["flow_id"].astype(np.int64)
    groups = flow_groups(flows, flow_ids, summary)
    cap = capacity(queue, summary)
    time = series["time_s"].astype(float)
    interval = _interval_s(time)
    window = max(1, round(GOODPUT_SMOOTHING_S / interval))
    fig = new_figure(9, 6.5)
    top, bottom = fig.subplots(2, 1, sharex=True)
    start, end = _window(summary)
    columns = [("throughput_mbps", top), ("goodput_mbps", bottom)]
    for column, ax in columns:
        shade_window(ax, start, end)
        values = series.get(column, series["goodput_mbps"]).astype(float)
        for line in groups.lines:
            t, v = _sum_by_time(time, flow_ids, values, line.flow_ids)
            if ax is bottom:
                v = _smooth(v, window)
            ax.plot(t, v, color=line.colour, lw=1.0 if ax is top else 1.3, label=line.label)
        _capacity_line(ax, cap)
        ax.set_ylim(bottom=0)
    what = "per flow" if groups.per_flow else "per group (sum over its flows)"
    top.set_title(f"Throughput {what}: wire bytes received per {interval * 1000:g} ms")
    top.set_ylabel("throughput (Mbit/s)")
    bottom.set_title(f"Goodput {what}: payload in order, mean over {GOODPUT_SMOOTHING_S:g} s")
    bottom.set_ylabel("goodput (Mbit/s)")
    bottom.set_xlabel("time (s)")
    # One scale for both panels, from the capacity and every value drawn: in-order
    # delivery after a loss can put goodput above the capacity and above the interval's
    # wire throughput; a limit from the top panel alone cut such spikes off unseen.
    drawn = [
        float(np.max(line.get_ydata()))
        for ax in (top, bottom)
        for line in ax.get_lines()
        if len(line.get_ydata())
    ]
    peak = max([*drawn, float(np.max(cap[1])) if len(cap[0]) else 0.0, 0.0])
    if peak > 0:
        for ax in (top, bottom):
            ax.set_ylim(0, peak * 1.08)
    caption(fig, summary)
    legend_below(fig)
    return fig


def plot_queue_delay(queue: Columns, summary: dict[str, Any]) -> Figure:
    """Bottleneck sojourn time (mean and min-max band) and queue length over time."""
    fig = new_figure(9, 6)
    delay_ax, qlen_ax = fig.subplots(2, 1, sharex=True)
    start, end = _window(summary)
    for ax in (delay_ax, qlen_ax):
        shade_window(ax, start, end)
    rows = _bottleneck_rows(queue, summary)
    t = queue["time_s"][rows]
    colour = PALETTE[0]
    if "sojourn_min_ms" in queue and "sojourn_max_ms" in queue:
        delay_ax.fill_between(
            t,
            queue["sojourn_min_ms"][rows],
            queue["sojourn_max_ms"][rows],
            color=colour,
            alpha=0.35,  # 0.2 was invisible under the mean line at 110 dpi
            lw=0,
            label="min-max per interval",
        )
    delay_ax.plot(t, queue["sojourn_mean_ms"][rows], color=colour, label="mean per interval")
    # another colour: one legend below both panels must tell delay from length
    qlen_ax.plot(t, queue["qlen_pkts"][rows], color=PALETTE[1], lw=1.0, label="queue length")
    discipline = summary.get("bottleneck", {}).get("discipline")
    delay_ax.set_title("Bottleneck queueing delay" + (f" ({discipline})" if discipline else ""))
    delay_ax.set_ylabel("sojourn time (ms)")
    delay_ax.set_ylim(bottom=0)
    qlen_ax.set_ylabel("queue length (packets)")
    qlen_ax.set_xlabel("time (s)")
    qlen_ax.set_ylim(bottom=0)
    caption(fig, summary)
    legend_below(fig)
    return fig


def _percentiles(summary: dict[str, Any], link: dict[str, Any] | None = None) -> str:
    b = summary.get("bottleneck", {}) if link is None else link
    parts = [
        f"{name} {b[key]:.1f}"
        for name, key in (
            ("p50", "sojourn_p50_ms"),
            ("p90", "sojourn_p90_ms"),
            ("p99", "sojourn_p99_ms"),
        )
        if isinstance(b.get(key), (int, float))
    ]
    return f" ({', '.join(parts)} ms)" if parts else ""


def plot_sojourn_cdf(cdf: Columns, summary: dict[str, Any]) -> Figure:
    """The bottleneck's sojourn time CDF over the measurement window; with a
    ``[network]``, a curve per congested link (busiest first, at most
    :data:`MAX_LINK_ROWS`)."""
    from ccsim.links import congested_links

    fig = new_figure(7, 4.5)
    ax = fig.add_subplot()
    links = congested_links(summary, all_links=True)[:MAX_LINK_ROWS]
    curves = [
        (cdf["queue"] == link["name"], link["name"] + _percentiles(summary, link)) for link in links
    ]
    curves = [(rows, label) for rows, label in curves if rows.any()]
    if not curves:
        curves = [(_bottleneck_rows(cdf, summary), "bottleneck" + _percentiles(summary))]
    for rows, label in curves:
        ax.step(cdf["sojourn_ms"][rows], cdf["cdf"][rows], where="post", label=label)
    start, end = _window(summary)
    span = f", {start:g}-{end:g} s" if start is not None and end is not None else ""
    ax.set_title(f"Queueing delay distribution (measurement window{span})")
    ax.set_xlabel("sojourn time (ms)")
    ax.set_ylabel("CDF")
    ax.set_xlim(left=0)
    ax.set_ylim(0, 1.02)
    caption(fig, summary)
    legend_below(fig)
    return fig


def plot_cwnd(trace: Columns, flows: Columns | None, summary: dict[str, Any]) -> Figure:
    """One row per traced group: cwnd and ssthresh (dashed) left, smoothed RTT right."""
    traced = np.unique(trace["flow_id"]).astype(np.int64)
    groups = flow_groups(flows, traced, summary)
    by_key: dict[tuple[str, int], list[int]] = {}
    for fid in traced:
        by_key.setdefault(groups.group_of.get(int(fid), ("tcp", int(fid))), []).append(int(fid))
    if groups.per_flow:  # one row for all the single-flow groups
        rows = [("traced flows", [int(f) for f in traced])]
    else:
        labels = {line.key: line.label for line in groups.lines}
        rows = [(labels.get(key, str(key)), fids) for key, fids in by_key.items()]
    hidden = len(rows) - MAX_CWND_ROWS
    rows = rows[:MAX_CWND_ROWS]
    fig = new_figure(10, 0.6 + 2.4 * len(rows))
    axes = fig.subplots(len(rows), 2, sharex=True, squeeze=False)
    start, end = _window(summary)
    flow_label = {}
    if groups.per_flow:
        flow_label = {line.flow_ids[0]: line.label for line in groups.lines}
    for (title, fids), (cwnd_ax, rtt_ax) in zip(rows, axes, strict=True):
        for ax in (cwnd_ax, rtt_ax):
            shade_window(ax, start, end)
        for i, fid in enumerate(fids):
            sel = trace["flow_id"] == fid
            t = trace["time_s"][sel]
            colour = PALETTE[i % len(PALETTE)]
            label = flow_label.get(fid, f"flow {fid}") if i < MAX_NAMED_FLOWS else None
            cwnd_ax.plot(t, trace["cwnd_pkts"][sel], color=colour, lw=1.0, label=label)
            cwnd_ax.plot(t, trace["ssthresh_pkts"][sel], color=colour, lw=0.8, ls="--")
            rtt_ax.plot(t, trace["srtt_ms"][sel], color=colour, lw=1.0)
        more = len(fids) - MAX_NAMED_FLOWS
        if more > 0:
            cwnd_ax.plot([], [], color="0.5", label=f"... {more} more flows")
        cwnd_ax.set_title(title, loc="left", fontsize="medium")
        cwnd_ax.set_ylabel("cwnd (packets)")
        rtt_ax.set_ylabel("smoothed RTT (ms)")
        for ax in (cwnd_ax, rtt_ax):
            ax.set_ylim(bottom=0)
        handles, labels = cwnd_ax.get_legend_handles_labels()
        keep = [
            (h, lab) for h, lab in zip(handles, labels, strict=True) if lab != "measurement window"
        ]
        if keep:
            rtt_ax.legend(
                [h for h, _ in keep],
                [lab for _, lab in keep],
                loc="upper left",
                bbox_to_anchor=(1.02, 1.0),
                borderaxespad=0.0,
            )
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    note = f" ({hidden} more traced groups not shown)" if hidden > 0 else ""
    fig.suptitle(
        "Congestion window (dashed: ssthresh) and smoothed RTT; shaded: measurement window" + note
    )
    caption(fig, summary)
    return fig


def plot_rtt(samples: Columns, flows: Columns | None, summary: dict[str, Any]) -> Figure:
    """RTT samples over time (median per interval) and their CDF in the window."""
    flow_ids = samples["flow_id"].astype(np.int64)
    groups = flow_groups(flows, flow_ids, summary)
    time = samples["time_s"].astype(float)
    rtt = samples["rtt_ms"].astype(float)
    interval = 0.1
    fig = new_figure(11, 4.6)
    over_time, cdf_ax = fig.subplots(1, 2, width_ratios=[1.6, 1])
    start, end = _window(summary)
    shade_window(over_time, start, end)
    present = set(flow_ids.tolist())
    for line in groups.lines:
        if not present.intersection(line.flow_ids):
            continue
        sel = np.isin(flow_ids, line.flow_ids)
        bins = np.floor(time[sel] / interval).astype(np.int64)
        order = np.argsort(bins, kind="stable")
        b, r = bins[order], rtt[sel][order]
        uniq, first = np.unique(b, return_index=True)
        medians = [float(np.median(chunk)) for chunk in np.split(r, first[1:])]
        over_time.plot(
            (uniq + 0.5) * interval, medians, color=line.colour, lw=1.0, label=line.label
        )
        in_window = sel & (time >= (start or 0.0)) & (time <= (end if end is not None else np.inf))
        values = np.sort(rtt[in_window])
        if len(values):
            cdf_ax.step(
                values, np.arange(1, len(values) + 1) / len(values), where="post", color=line.colour
            )
    what = "per flow" if groups.per_flow else "per group"
    over_time.set_title(f"RTT samples {what} (median per {interval * 1000:g} ms)")
    over_time.set_xlabel("time (s)")
    over_time.set_ylabel("RTT (ms)")
    over_time.set_ylim(bottom=0)
    cdf_ax.set_title("RTT distribution (measurement window)")
    cdf_ax.set_xlabel("RTT (ms)")
    cdf_ax.set_ylabel("CDF")
    cdf_ax.set_ylim(0, 1.02)
    caption(fig, summary)
    legend_below(fig)
    return fig


def _links_drawn(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The congested links, busiest first, then the links that only lost packets on the
    wire (a loss model: never congested, but their losses are the experiment's)."""
    from ccsim.links import congested_links

    links = congested_links(summary, all_links=True)
    names = {q["name"] for q in links}
    lossy = [q for q in summary.get("links") or [] if q.get("losses") and q["name"] not in names]
    return (links + lossy)[:MAX_LINK_ROWS]


def plot_links(summary: dict[str, Any]) -> Figure:
    """A row per congested link (and per link that lost packets on the wire):
    utilisation, sojourn p50/p90/p99, drop, mark and loss probability over the
    measurement window (from the summary's ``links``)."""
    links = _links_drawn(summary)
    names = [q["name"] for q in links]
    fig = new_figure(11, 1.6 + 0.45 * len(links))
    use_ax, delay_ax, prob_ax = fig.subplots(1, 3, sharey=True)
    y = np.arange(len(links))
    use_ax.barh(y, [q["utilisation"] for q in links], color=PALETTE[0])
    use_ax.set_xlim(0, 1.05)
    use_ax.set_xlabel("utilisation")
    use_ax.set_yticks(y, names)
    use_ax.invert_yaxis()
    height = 0.27
    for k, (key, label) in enumerate(
        (("sojourn_p50_ms", "p50"), ("sojourn_p90_ms", "p90"), ("sojourn_p99_ms", "p99"))
    ):
        values = [q[key] if q[key] is not None else np.nan for q in links]
        delay_ax.barh(y + (k - 1) * height, values, height, color=PALETTE[k], label=label)
    delay_ax.set_xlabel("sojourn time (ms)")
    bars = [
        ("drop", [q["drop_probability"] for q in links]),
        ("mark", [q["mark_probability"] for q in links]),
    ]
    if any(q.get("losses") for q in links):  # lost on the wire, per packet sent on it
        bars.append(("loss", [q.get("losses", 0) / max(q["departures"], 1) for q in links]))
    width = 0.8 / len(bars)
    for k, (label, values) in enumerate(bars):
        offset = (k - (len(bars) - 1) / 2) * width
        prob_ax.barh(y + offset, values, width, color=PALETTE[3 + k], label=label)
    prob_ax.set_xlabel("probability per arrival (loss: per packet sent)")
    lossy = any(q.get("losses") for q in links)
    title = "Congested and lossy links" if lossy else "Congested links"
    fig.suptitle(f"{title} (measurement window)")
    caption(fig, summary)
    legend_below(fig)
    return fig


def _summary(directory: Path) -> dict[str, Any]:
    path = directory / "summary.json"
    return json.loads(path.read_text()) if path.exists() else {}


def _has_rows(table: Columns | None) -> bool:
    return table is not None and bool(len(next(iter(table.values()), ())))


def plot_results(
    directory: str | os.PathLike[str], formats: Sequence[str] = DEFAULT_FORMATS
) -> list[Path]:
    """Draw every figure the tables of ``directory`` allow (see the module's doc) into it,
    each in every one of ``formats``. Returns the paths written."""
    directory = Path(directory)
    series = _load(directory, "flow_series")
    if series is None:
        raise NoResultsError(f"{directory}: no ccsim results here (flow_series.parquet missing)")
    summary = _summary(directory)
    flows = _load(directory, "flows")
    queue = _load(directory, "queue_series")
    network_queues = queue
    if queue is not None and summary.get("links") is not None and "queue" in queue:
        # A [network]'s queue_series has a row per tick for every link that queued: the
        # run's figures of "the bottleneck" read its first link's rows only (none if it
        # never queued), the link_queues figure the congested links'.
        first = queue["queue"] == summary.get("bottleneck", {}).get("name")
        queue = {column: values[first] for column, values in queue.items()}
    drawers: list[tuple[str, Callable[[], Figure]]] = [
        ("throughput", lambda: plot_throughput(series, flows, summary, queue))
    ]
    if queue is not None and _has_rows(queue):
        drawers.append(("queue_delay", lambda: plot_queue_delay(queue, summary)))
    cdf = _load(directory, "sojourn_cdf")
    if cdf is not None and _has_rows(cdf):
        drawers.append(("sojourn_cdf", lambda: plot_sojourn_cdf(cdf, summary)))
    trace = _load(directory, "cc_trace")
    if trace is not None and _has_rows(trace):
        drawers.append(("cwnd", lambda: plot_cwnd(trace, flows, summary)))
    samples = _load(directory, "rtt_samples")
    if samples is not None and _has_rows(samples):
        drawers.append(("rtt", lambda: plot_rtt(samples, flows, summary)))
    if _links_drawn(summary):
        drawers.append(("links", lambda: plot_links(summary)))
    if network_queues is not None and summary.get("links") is not None:
        from ccsim.plots.link_queues import plot_link_queues, queued_links

        shown = queued_links(network_queues, summary)
        if shown:
            drawers.append(
                ("link_queues", lambda: plot_link_queues(network_queues, summary, shown))
            )

    def draw(stems: Sequence[str]) -> None:
        with styled():
            for stem, drawer in drawers:
                if stem in stems:
                    save(drawer(), directory, stem, formats)

    stems = [stem for stem, _ in drawers]
    in_parallel(draw, stems)
    return [directory / f"{stem}.{fmt}" for stem in stems for fmt in formats]


def in_parallel(draw: Callable[[Sequence[str]], None], stems: Sequence[str]) -> None:
    """``draw(stems)``, with every other figure drawn in a forked child process on a machine
    with more than one core: matplotlib draws in one thread, and the figures of a run are
    independent (a run's plotting time halves on 2 idle cores). If the child fails, its
    figures are drawn again here, so that an error is raised (and reported) as without it.
    Only from the main thread, where forking is safe for the parent's state."""
    can_fork = (
        hasattr(os, "fork")
        and len(stems) > 1
        and (os.cpu_count() or 1) > 1
        and threading.current_thread() is threading.main_thread()
        and os.environ.get("CCSIM_PLOT_JOBS") != "1"
    )
    if not can_fork:
        draw(stems)
        return
    theirs, mine = list(stems[1::2]), list(stems[0::2])
    pid = os.fork()
    if pid == 0:  # the child: draw, and leave without running the parent's exit handlers
        status = 1
        try:
            draw(theirs)
            status = 0
        finally:
            os._exit(status)
    try:
        draw(mine)
    finally:
        _, wait_status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(wait_status) != 0:
        draw(theirs)


__all__ = ["FIGURES", "NETWORK_FIGURES", "NoResultsError", "plot_results"]
