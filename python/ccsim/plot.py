"""PNG plots of a result directory (Parquet tables + summary.json), matplotlib Agg only."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

#: Above this many flows the throughput plot shows one line per flow group.
MAX_FLOW_LINES = 12


class NoResultsError(Exception):
    """The directory holds no ccsim results."""


def _load(directory: Path, name: str) -> dict[str, np.ndarray] | None:
    path = directory / f"{name}.parquet"
    if not path.exists():
        return None
    table = pq.read_table(path)
    return {col: table.column(col).to_numpy(zero_copy_only=False) for col in table.column_names}


def _save(fig: Figure, path: Path) -> Path:
    """Render with Agg to a temporary file, then rename (no half-written PNG)."""
    FigureCanvasAgg(fig)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".png", dir=path.parent)
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=110, metadata={"Software": None})
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def _measurement_window(ax: Axes, summary: dict[str, Any]) -> None:
    start, end = summary.get("measure_start_s"), summary.get("measure_end_s")
    if start is not None and end is not None and end > start:
        ax.axvspan(start, end, color="0.92", zorder=0, label="measurement window")


def _flow_labels(flows: dict[str, np.ndarray] | None) -> dict[int, str]:
    if flows is None:
        return {}
    labels = {}
    for i, fid in enumerate(flows["flow_id"]):
        labels[int(fid)] = (
            f"flow {int(fid)}: {flows['protocol'][i]} {flows['algorithm'][i]}, "
            f"{float(flows['base_rtt_ms'][i]):g} ms"
        )
    return labels


def _group_means(
    time: np.ndarray, keys: np.ndarray, values: np.ndarray
) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per key: (unique times, mean of ``values`` over the rows with that key and time)."""
    out = {}
    for key in np.unique(keys):
        rows = keys == key
        times, inverse = np.unique(time[rows], return_inverse=True)
        sums = np.bincount(inverse, weights=values[rows], minlength=len(times))
        counts = np.bincount(inverse, minlength=len(times))
        out[int(key)] = (times, sums / counts)
    return out


def _flow_groups(flows: dict[str, np.ndarray]) -> tuple[dict[int, int], list[str]]:
    """Flow id -> index of its (protocol, group) pair, and a label per pair."""
    keys: dict[tuple[str, int], int] = {}
    members: list[list[int]] = []
    of_flow = {}
    for i, fid in enumerate(flows["flow_id"]):
        key = (str(flows["protocol"][i]), int(flows["group"][i]))
        if key not in keys:
            keys[key] = len(keys)
            members.append([])
        members[keys[key]].append(i)
        of_flow[int(fid)] = keys[key]
    labels = []
    for (protocol, group), index in keys.items():
        first = members[index][0]
        labels.append(
            f"{protocol} group {group}: {len(members[index])} x {flows['algorithm'][first]}, "
            f"{float(flows['base_rtt_ms'][first]):g} ms (mean per flow)"
        )
    return of_flow, labels


def plot_throughput(
    series: dict[str, np.ndarray], flows: dict[str, np.ndarray] | None, summary: dict[str, Any]
) -> Figure:
    fig = Figure(figsize=(9, 4.5), layout="constrained")
    ax = fig.add_subplot()
    _measurement_window(ax, summary)
    time, goodput = series["time_s"], series["goodput_mbps"]
    flow_ids = series["flow_id"].astype(np.int64)
    n_flows = len(np.unique(flow_ids))
    if n_flows <= MAX_FLOW_LINES or flows is None:
        labels = _flow_labels(flows)
        for fid, (t, g) in _group_means(time, flow_ids, goodput).items():
            ax.plot(t, g, lw=1.2, label=labels.get(fid, f"flow {fid}"))
        ax.set_title("Goodput per flow")
    else:
        of_flow, group_labels = _flow_groups(flows)
        groups = np.array([of_flow.get(int(f), -1) for f in flow_ids])
        for index, (t, g) in _group_means(time, groups, goodput).items():
            ax.plot(t, g, lw=1.2, label=group_labels[index] if index >= 0 else "other flows")
        ax.set_title(f"Goodput per flow, averaged over each group ({n_flows} flows)")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("goodput (Mbit/s)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="best")
    return fig


def _queue_rows(table: dict[str, np.ndarray], summary: dict[str, Any]) -> dict[str, np.ndarray]:
    """Row masks per queue name, the bottleneck's only if summary names one present."""
    names = [str(q) for q in np.unique(table["queue"])]
    bottleneck = summary.get("bottleneck", {}).get("name")
    if bottleneck in names:
        names = [bottleneck]
    return {name: table["queue"] == name for name in names}


def plot_queue_delay(queue: dict[str, np.ndarray], summary: dict[str, Any]) -> Figure:
    fig = Figure(figsize=(9, 6), layout="constrained")
    delay_ax, qlen_ax = fig.subplots(2, 1, sharex=True)
    for ax in (delay_ax, qlen_ax):
        _measurement_window(ax, summary)
    for name, rows in _queue_rows(queue, summary).items():
        t = queue["time_s"][rows]
        (line,) = delay_ax.plot(t, queue["sojourn_mean_ms"][rows], lw=1.2, label=f"{name} mean")
        delay_ax.plot(
            t,
            queue["sojourn_max_ms"][rows],
            lw=0.6,
            alpha=0.5,
            color=line.get_color(),
            label=f"{name} max",
        )
        qlen_ax.plot(t, queue["qlen_pkts"][rows], lw=1.0, color=line.get_color(), label=name)
    discipline = summary.get("bottleneck", {}).get("discipline")
    delay_ax.set_title("Bottleneck queueing delay" + (f" ({discipline})" if discipline else ""))
    delay_ax.set_ylabel("sojourn time (ms)")
    delay_ax.set_ylim(bottom=0)
    delay_ax.legend(fontsize="small", loc="best")
    qlen_ax.set_ylabel("queue length (packets)")
    qlen_ax.set_xlabel("time (s)")
    qlen_ax.set_ylim(bottom=0)
    for ax in (delay_ax, qlen_ax):
        ax.grid(alpha=0.3)
    return fig


def plot_sojourn_cdf(cdf: dict[str, np.ndarray], summary: dict[str, Any]) -> Figure:
    fig = Figure(figsize=(7, 4.5), layout="constrained")
    ax = fig.add_subplot()
    for name, rows in _queue_rows(cdf, summary).items():
        ax.step(cdf["sojourn_ms"][rows], cdf["cdf"][rows], where="post", label=name)
    ax.set_title("Sojourn time distribution (measurement window)")
    ax.set_xlabel("sojourn time (ms)")
    ax.set_ylabel("CDF")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="lower right")
    return fig


def plot_cwnd(trace: dict[str, np.ndarray], flows: dict[str, np.ndarray] | None) -> Figure:
    fig = Figure(figsize=(9, 6), layout="constrained")
    cwnd_ax, rtt_ax = fig.subplots(2, 1, sharex=True)
    labels = _flow_labels(flows)
    traced = np.unique(trace["flow_id"])
    legend = len(traced) <= MAX_FLOW_LINES // 2
    for fid in traced:
        rows = trace["flow_id"] == fid
        t = trace["time_s"][rows]
        label = labels.get(int(fid), f"flow {int(fid)}")
        (line,) = cwnd_ax.plot(t, trace["cwnd_pkts"][rows], lw=1.0, label=f"{label} cwnd")
        cwnd_ax.plot(
            t,
            trace["ssthresh_pkts"][rows],
            lw=0.8,
            ls="--",
            color=line.get_color(),
            label=f"{label} ssthresh",
        )
        rtt_ax.plot(t, trace["srtt_ms"][rows], lw=1.0, color=line.get_color(), label=label)
    cwnd_ax.set_title(
        "Congestion window (dashed: ssthresh)" + ("" if legend else f", {len(traced)} traced flows")
    )
    cwnd_ax.set_ylabel("packets")
    cwnd_ax.set_ylim(bottom=0)
    if legend:
        cwnd_ax.legend(fontsize="small", loc="best")
    rtt_ax.set_ylabel("smoothed RTT (ms)")
    rtt_ax.set_xlabel("time (s)")
    rtt_ax.set_ylim(bottom=0)
    for ax in (cwnd_ax, rtt_ax):
        ax.grid(alpha=0.3)
    return fig


def plot_results(directory: str | os.PathLike[str]) -> list[Path]:
    """Write ``throughput.png``, ``queue_delay.png``, ``sojourn_cdf.png`` and (when some flow
    was traced) ``cwnd.png`` into ``directory`` from its Parquet tables. Returns the paths."""
    directory = Path(directory)
    series = _load(directory, "flow_series")
    if series is None:
        raise NoResultsError(f"{directory}: no ccsim results here (flow_series.parquet missing)")
    summary_path = directory / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    flows = _load(directory, "flows")
    written = [_save(plot_throughput(series, flows, summary), directory / "throughput.png")]
    queue = _load(directory, "queue_series")
    if queue is not None and len(queue["time_s"]):
        written.append(_save(plot_queue_delay(queue, summary), directory / "queue_delay.png"))
    cdf = _load(directory, "sojourn_cdf")
    if cdf is not None and len(cdf["cdf"]):
        written.append(_save(plot_sojourn_cdf(cdf, summary), directory / "sojourn_cdf.png"))
    trace = _load(directory, "cc_trace")
    if trace is not None and len(trace["time_s"]):
        written.append(_save(plot_cwnd(trace, flows), directory / "cwnd.png"))
    return written
