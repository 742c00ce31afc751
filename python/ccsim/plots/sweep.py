"""``ccsim sweep --plot``: one figure (``sweep.png``, and ``.pdf``/``.svg`` with
``--format``) from the sweep's ``[plot]`` table, in the form a paper uses.

``[plot]`` keys:

- ``x``: the column on the x axis, usually an axis of the sweep. Numbers (also ``"0.5bdp"``,
  ``"20ms"`` by their leading number) make a numeric axis; anything else (tables such as
  queue configurations, names) a categorical one, drawn in the grid's order.
- ``y``: what is plotted, validated before any run (see :func:`parse_metric`):

  - a result column: ``utilisation``, ``jain_index``, ``sojourn_p99_ms``, ...;
  - one flow's value: ``flow_goodput_mbps[1]`` (flows numbered as ``flow_id``, from 0);
  - one group's value: ``group_share[0]``, ``group_goodput_mbps[BBR]`` (groups as in
    ``summary.json``'s ``groups``: ``[[flows]]`` then ``[[udp]]``, by position or ``name``);
    group metrics: ``group_share`` (share of the total goodput), ``group_goodput_mbps``,
    ``group_throughput_mbps``;
  - a ratio of two of these: ``group_goodput_mbps[0] / group_goodput_mbps[1]``.
- ``lines``: one series per value of this column (an axis), in grid order.
- ``title``, ``xlabel``, ``ylabel``: default to readable names with units from the keys.
- ``logx``, ``logy``: log axes, ticks labelled plainly at the values (0.5, 1, 2, 4, 8).
- ``xtick_labels``: labels of the x values in grid order (categorical axes; the default
  is a short rendering such as ``droptail, limit 1bdp``); ``line_labels``: labels of the
  ``lines`` values in grid order.
- ``kind``: ``"bars"`` (default for a categorical x) or ``"points"``; a numeric x is
  drawn as lines with markers.
- ``band``: ``true`` draws mean ± one standard deviation as a band instead of error bars.

Each point is the mean over the runs that share ``x`` and ``lines`` (repetitions, other
axes), with one standard deviation as error bars (or a band) when there are several.
Failed runs are left out. A caption under the title names the scenario's key parameters.
:func:`sweep_figure` returns the plotted data (what the figure shows, for tests and
scripts); :func:`plot_sweep` draws and writes it.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ccsim.plots.formats import DEFAULT_FORMATS
from ccsim.plots.text import scenario_caption, short_text
from ccsim.scenario import SweepError
from ccsim.sweeps.spec import RESERVED_COLUMNS, Axis, Sweep
from ccsim.sweeps.store import PLOT_FILE

_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z/%]*)\s*$")
_TERM = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*(?:\[\s*([^\]]*?)\s*\])?\s*$")

#: Result columns with one value per flow (``flow_goodput_mbps[i]``).
PER_FLOW_COLUMNS = (
    "flow_goodput_mbps",
    "flow_throughput_mbps",
    "flow_retransmits",
    "flow_timeouts",
    "flow_fct_s",
)
#: Group metrics (``group_share[i]``) and their key in ``summary.json``'s ``groups``.
GROUP_METRICS = {
    "group_share": "share",
    "group_goodput_mbps": "goodput_mbps",
    "group_throughput_mbps": "throughput_mbps",
}

#: Readable names of result columns, with units.
_COLUMN_TEXT = {
    "utilisation": "bottleneck utilisation",
    "jain_index": "Jain's fairness index",
    "sojourn_mean_ms": "mean queueing delay (ms)",
    "sojourn_p50_ms": "median queueing delay (ms)",
    "sojourn_p90_ms": "90th percentile queueing delay (ms)",
    "sojourn_p99_ms": "99th percentile queueing delay (ms)",
    "drop_probability": "drop probability",
    "mark_probability": "mark probability",
    "flow_goodput_mbps": "goodput (Mbit/s)",
    "flow_throughput_mbps": "throughput (Mbit/s)",
    "flow_retransmits": "retransmissions",
    "flow_timeouts": "timeouts",
    "flow_fct_s": "flow completion time (s)",
    "group_share": "share of the goodput",
    "group_goodput_mbps": "goodput (Mbit/s)",
    "group_throughput_mbps": "throughput (Mbit/s)",
}

_UNITS = {"bdp": "BDP", "ms": "ms", "s": "s", "us": "µs", "mbps": "Mbit/s", "kbps": "kbit/s"}


# --------------------------------------------------------------------------- y metrics


@dataclass(frozen=True)
class Term:
    """One value of a run: ``column`` or ``column[selector]``."""

    column: str
    selector: int | str | None = None

    @property
    def text(self) -> str:
        return self.column if self.selector is None else f"{self.column}[{self.selector}]"


@dataclass(frozen=True)
class Metric:
    """``y``: a term, or the ratio of two."""

    terms: tuple[Term, ...]

    @property
    def is_ratio(self) -> bool:
        return len(self.terms) == 2


def _term(text: str, columns: set[str], where: str) -> Term:
    m = _TERM.match(text)
    if m is None:
        raise SweepError(
            f"{where}: cannot read {text!r} (expected a column like utilisation, "
            "flow_goodput_mbps[1], group_share[0], or A / B)"
        )
    column, selector_text = m.group(1), m.group(2)
    per_item = column in PER_FLOW_COLUMNS or column in GROUP_METRICS
    if selector_text is None:
        if column in PER_FLOW_COLUMNS:
            raise SweepError(
                f"{where}: {column!r} holds one value per flow: pick one as {column}[0], or "
                f"plot a group's as group_{column.removeprefix('flow_')}[0]"
            )
        if column in GROUP_METRICS:
            raise SweepError(f"{where}: {column!r} needs a group: {column}[0] or {column}[NAME]")
        if column not in columns:
            raise SweepError(
                f"{where}: {column!r} is not a result column (axes: "
                f"{', '.join(sorted(columns - RESERVED_COLUMNS)) or 'none'}; per flow: "
                f"{PER_FLOW_COLUMNS[0]}[i]; per group: group_share[i])"
            )
        return Term(column)
    if not per_item:
        raise SweepError(
            f"{where}: {column!r} takes no [index] (per flow: {', '.join(PER_FLOW_COLUMNS)}; "
            f"per group: {', '.join(GROUP_METRICS)})"
        )
    selector: int | str = selector_text.strip("\"'")
    if re.fullmatch(r"\d+", str(selector)):
        selector = int(selector)
    elif column in PER_FLOW_COLUMNS or not selector:
        raise SweepError(f"{where}: {column}[{selector_text}]: expected a flow number from 0")
    return Term(column, selector)


def parse_metric(text: Any, columns: set[str], where: str = "plot.y") -> Metric:
    """``y`` as a :class:`Metric`; :class:`SweepError` naming ``where`` if it cannot be."""
    if not isinstance(text, str) or not text.strip():
        raise SweepError(f'{where}: expected a column name such as "utilisation", got {text!r}')
    parts = text.split("/")
    if len(parts) > 2:
        raise SweepError(f"{where}: at most one '/' (a ratio of two values), got {text!r}")
    return Metric(tuple(_term(part, columns, where) for part in parts))


def _group_names(base: Mapping[str, Any]) -> list[tuple[str | None, str]]:
    """(name, protocol) of each group of a scenario, in ``summary.json``'s order."""
    out: list[tuple[str | None, str]] = []
    for key, protocol in (("flows", "tcp"), ("udp", "udp")):
        groups = base.get(key)
        for group in groups if isinstance(groups, list) else []:
            name = group.get("name") if isinstance(group, Mapping) else None
            out.append((name if isinstance(name, str) else None, protocol))
    return out


def _flow_count(base: Mapping[str, Any]) -> int | None:
    total = 0
    for key in ("flows", "udp"):
        for group in base.get(key) or []:
            count = group.get("count", 1) if isinstance(group, Mapping) else 1
            if isinstance(count, bool) or not isinstance(count, int):
                return None
            total += count
    return total


def _check_selectors(metric: Metric, base: Mapping[str, Any], where: str) -> None:
    groups = _group_names(base)
    flows = _flow_count(base)
    for term in metric.terms:
        if term.selector is None:
            continue
        if term.column in GROUP_METRICS:
            if isinstance(term.selector, int) and groups and term.selector >= len(groups):
                raise SweepError(
                    f"{where}: {term.text}: the base scenario has {len(groups)} groups "
                    f"(0-{len(groups) - 1})"
                )
            names = [name for name, _ in groups if name]
            if isinstance(term.selector, str) and term.selector not in names:
                raise SweepError(
                    f"{where}: {term.text}: no group named {term.selector!r} (named groups: "
                    f"{', '.join(names) or 'none; set name = ... in [[flows]]'})"
                )
        elif isinstance(term.selector, int) and flows is not None and term.selector >= flows:
            raise SweepError(
                f"{where}: {term.text}: the base scenario has {flows} flows (0-{flows - 1})"
            )


def check_plot_spec(sweep: Sweep) -> None:
    """:class:`SweepError` (one line naming the key) unless ``[plot]`` can be drawn: ``x``
    and ``lines`` name result columns, ``y`` is a metric (:func:`parse_metric`) whose
    flows and groups exist in the base scenario, and the other keys have their types."""
    spec = sweep.plot
    if not spec:
        raise SweepError("--plot: the sweep has no [plot] table (x = ..., y = ...)")
    columns = set(RESERVED_COLUMNS) | {a.name for a in sweep.axes}
    for key in ("x", "lines"):
        if key == "lines" and key not in spec:
            continue
        name = spec.get(key)
        if not isinstance(name, str) or name not in columns:
            raise SweepError(
                f"plot.{key}: {name!r} is not a result column (axes: "
                f"{', '.join(a.name for a in sweep.axes) or 'none'})"
            )
    metric = parse_metric(spec.get("y"), columns)
    _check_selectors(metric, sweep.base, "plot.y")
    for key in ("title", "xlabel", "ylabel"):
        if key in spec and not isinstance(spec[key], str):
            raise SweepError(f"plot.{key}: expected a string, got {spec[key]!r}")
    for key in ("logx", "logy", "band"):
        if key in spec and not isinstance(spec[key], bool):
            raise SweepError(f"plot.{key}: expected true or false, got {spec[key]!r}")
    if spec.get("kind", "bars") not in ("bars", "points"):
        raise SweepError(f'plot.kind: expected "bars" or "points", got {spec["kind"]!r}')
    axes = {a.name: a for a in sweep.axes}
    for key, column in (("xtick_labels", spec["x"]), ("line_labels", spec.get("lines"))):
        if key not in spec:
            continue
        labels = spec[key]
        axis = axes.get(column) if isinstance(column, str) else None
        if axis is None:
            raise SweepError(f"plot.{key}: only for an axis of the sweep ({column!r} is not one)")
        if not isinstance(labels, list) or not all(isinstance(v, str) for v in labels):
            raise SweepError(f"plot.{key}: expected an array of strings, got {labels!r}")
        if len(labels) != len(axis.values):
            raise SweepError(
                f"plot.{key}: {len(labels)} labels for the {len(axis.values)} values of "
                f"{axis.name!r}, in grid order"
            )


def _run_value(term: Term, row: Mapping[str, Any], summary: Mapping[str, Any] | None) -> Any:
    if term.selector is None:
        return row.get(term.column)
    if term.column in PER_FLOW_COLUMNS:
        items = row.get(term.column) or []
        index = int(term.selector)
        return items[index] if index < len(items) else None
    groups = (summary or {}).get("groups") or []
    key = GROUP_METRICS[term.column]
    if isinstance(term.selector, int):
        return groups[term.selector].get(key) if term.selector < len(groups) else None
    for group in groups:
        if group.get("name") == term.selector:
            return group.get(key)
    return None


def metric_values(metric: Metric, rows: pa.Table) -> list[float | None]:
    """The metric of each row of a sweep's results (None where a run has no value)."""
    needs_summary = any(t.column in GROUP_METRICS for t in metric.terms)
    columns = {t.column for t in metric.terms if t.column not in GROUP_METRICS}
    data = {c: rows.column(c).to_pylist() for c in columns}
    summaries = rows.column("summary").to_pylist() if needs_summary else [None] * rows.num_rows
    out: list[float | None] = []
    for i in range(rows.num_rows):
        row = {c: values[i] for c, values in data.items()}
        summary = json.loads(summaries[i]) if summaries[i] else None
        values = [_run_value(t, row, summary) for t in metric.terms]
        if any(v is None or isinstance(v, (list, dict)) for v in values):
            out.append(None)
            continue
        numbers = [float(v) for v in values]
        if metric.is_ratio:
            out.append(numbers[0] / numbers[1] if numbers[1] else math.nan)
        else:
            out.append(numbers[0])
    return out


# --------------------------------------------------------------------------- readable text


def numeric(values: Sequence[Any]) -> np.ndarray | None:
    """Numbers for the x axis: numbers as they are, ``"0.5bdp"``/``"20ms"`` by their
    leading number; None if some value has none."""
    out = []
    for v in values:
        if isinstance(v, bool):
            return None
        if isinstance(v, (int, float)):
            out.append(float(v))
            continue
        m = _NUMBER.match(str(v))
        if m is None:
            return None
        out.append(float(m.group(1)))
    return np.asarray(out, dtype=float)


def _axis_unit(axis: Axis | None) -> str | None:
    """The unit of an axis's values as the scenario gets them: "0.5bdp" -> BDP."""
    if axis is None:
        return None
    for value in axis.scenario_values:
        m = _NUMBER.match(str(value)) if isinstance(value, str) else None
        if m and m.group(2):
            return _UNITS.get(m.group(2).lower(), m.group(2))
    return None


def _axis_text(column: str, axis: Axis | None) -> str:
    """``bottleneck.queue.limit (BDP)`` for an axis (its key path and unit), a readable
    name for a result column."""
    if axis is None:
        return _COLUMN_TEXT.get(column, column)
    unit = _axis_unit(axis)
    return f"{axis.path.text} ({unit})" if unit else axis.path.text


def _group_label(selector: int | str, base: Mapping[str, Any]) -> str:
    if isinstance(selector, str):
        return selector
    groups = base.get("flows") or []
    udp = base.get("udp") or []
    if selector < len(groups) and isinstance(groups[selector], Mapping):
        group = groups[selector]
        cc = group.get("cc")
        cc_name = cc if isinstance(cc, str) else (cc or {}).get("kind", "tcp")
        return str(group.get("name") or f"group {selector} ({cc_name})")
    if selector - len(groups) < len(udp):
        return f"UDP group {selector - len(groups)}"
    return f"group {selector}"


def metric_text(metric: Metric, base: Mapping[str, Any]) -> str:
    """``share of the goodput: BBR``, ``goodput (Mbit/s): flow 1``, or a ratio of two."""

    def who(term: Term) -> str:
        assert term.selector is not None
        if term.column in PER_FLOW_COLUMNS:
            return f"flow {term.selector}"
        return _group_label(term.selector, base)

    def one(term: Term) -> str:
        what = _COLUMN_TEXT.get(term.column, term.column)
        return what if term.selector is None else f"{what}, {who(term)}"

    if metric.is_ratio:
        a, b = metric.terms
        if a.column == b.column and a.selector is not None and b.selector is not None:
            what = re.sub(r" \([^)]*\)$", "", _COLUMN_TEXT.get(a.column, a.column))
            return f"{what} ratio, {who(a)} / {who(b)}"  # a ratio has no unit
        return f"{one(a)} / {one(b)}"
    return one(metric.terms[0])


# --------------------------------------------------------------------------- data


@dataclass
class Series:
    """One line (or one set of bars): mean, standard deviation and count per x value."""

    label: str | None
    x: list[Any]  # the x values (categories or numbers), in drawing order
    positions: list[float]
    mean: list[float]
    std: list[float]
    n: list[int]


@dataclass
class SweepFigure:
    """What the sweep figure shows: its series, axes and texts."""

    kind: str  # "line", "bars" or "points"
    x_labels: list[str]  # tick labels of a categorical x, in grid order; else []
    series: list[Series] = field(default_factory=list)
    title: str = ""
    caption: str = ""
    xlabel: str = ""
    ylabel: str = ""
    logx: bool = False
    logy: bool = False
    band: bool = False


def _order(values: Sequence[Any], axis: Axis | None) -> list[Any]:
    """Distinct values in grid order for an axis (as stored: tables as JSON text)."""
    seen = list(dict.fromkeys(values))
    if axis is not None:
        stored = [v if not isinstance(v, (dict, list)) else json.dumps(v) for v in axis.values]
        rank = {v: i for i, v in enumerate(stored)}
        return sorted(seen, key=lambda v: rank.get(v, len(rank)))
    try:
        return sorted(seen)
    except TypeError:
        return seen


def sweep_figure(
    spec: Mapping[str, Any], results: pa.Table, sweep: Sweep | None = None
) -> SweepFigure:
    """The data and texts of the sweep figure ``spec`` draws from ``results``."""
    axes = {a.name: a for a in sweep.axes} if sweep is not None else {}
    base = sweep.base if sweep is not None else {}
    columns = set(results.column_names)
    metric = parse_metric(spec["y"], columns | set(axes))
    ok = results.filter(pc.equal(results.column("status"), "ok"))
    xs = ok.column(spec["x"]).to_pylist()
    ys = metric_values(metric, ok)
    line_key = spec.get("lines")
    lines = ok.column(line_key).to_pylist() if line_key else [None] * len(xs)
    groups: dict[Any, dict[Any, list[float]]] = defaultdict(lambda: defaultdict(list))
    for x, y, line in zip(xs, ys, lines, strict=True):
        if y is not None and not math.isnan(y):
            groups[line][x].append(y)

    x_axis = axes.get(spec["x"])
    all_x = _order([x for g in groups.values() for x in g], x_axis)
    numbers = numeric(all_x)
    categorical = numbers is None
    if categorical:
        positions = np.arange(len(all_x), dtype=float)
        labels = [short_text(x) for x in all_x]
        given = spec.get("xtick_labels")
        if given and x_axis is not None:
            stored = [
                v if not isinstance(v, (dict, list)) else json.dumps(v) for v in x_axis.values
            ]
            by_value = dict(zip(stored, given, strict=True))
            labels = [by_value.get(x, label) for x, label in zip(all_x, labels, strict=True)]
        kind = spec.get("kind", "bars")
    else:
        assert numbers is not None
        positions, labels, kind = numbers, [], "line"
    where = dict(zip(all_x, positions.tolist(), strict=True))

    line_axis = axes.get(line_key) if line_key else None
    line_names: dict[Any, str] = {}
    if line_key:
        given = spec.get("line_labels")
        stored_lines = (
            [v if not isinstance(v, (dict, list)) else json.dumps(v) for v in line_axis.values]
            if line_axis is not None
            else []
        )
        for i, value in enumerate(stored_lines):
            if given:
                line_names[value] = given[i]
        short_name = line_axis.name if line_axis is not None else line_key
        short_name = short_name.rsplit(".", 1)[-1].replace("_", " ")
        for value in groups:
            line_names.setdefault(value, f"{short_name} = {short_text(value)}")

    figure = SweepFigure(kind=kind, x_labels=labels)
    for line in _order(list(groups), line_axis):
        points = sorted(groups[line].items(), key=lambda item: where[item[0]])
        figure.series.append(
            Series(
                label=line_names.get(line) if line_key else None,
                x=[x for x, _ in points],
                positions=[where[x] for x, _ in points],
                mean=[float(np.mean(v)) for _, v in points],
                std=[float(np.std(v)) if len(v) > 1 else 0.0 for _, v in points],
                n=[len(v) for _, v in points],
            )
        )
    figure.xlabel = spec.get("xlabel") or _axis_text(spec["x"], x_axis)
    figure.ylabel = spec.get("ylabel") or metric_text(metric, base)
    figure.title = spec.get("title") or f"{figure.ylabel} against {figure.xlabel}"
    reps = (
        sweep.repetitions
        if sweep is not None
        else max((max(s.n) for s in figure.series if s.n), default=1)
    )
    caption = scenario_caption(base, [a.path.text for a in axes.values()])
    if reps > 1:
        spread = "band" if spec.get("band") else "error bars"
        caption += ("; " if caption else "") + f"mean of {reps} repetitions, {spread}: ±1 std"
    figure.caption = caption
    figure.logx = bool(spec.get("logx")) and not categorical
    figure.logy = bool(spec.get("logy"))
    figure.band = bool(spec.get("band"))
    return figure


# --------------------------------------------------------------------------- drawing


def _plain_log_ticks(axis: Any, values: Sequence[float]) -> None:
    """Log ticks at the data's values, labelled as plain numbers (0.5, 1, 2, 4, 8)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator

    ticks = sorted({float(v) for v in values if v > 0})
    if 1 < len(ticks) <= 12:
        axis.set_major_locator(FixedLocator(ticks))
        axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def draw_sweep(figure: SweepFigure) -> Any:
    """A matplotlib Figure of ``figure`` (drawn inside :func:`ccsim.plots.style.styled`)."""
    from ccsim.plots.style import PALETTE, legend_below, new_figure

    named = any(s.label for s in figure.series)
    fig = new_figure(7.5, 4.8 if named else 4.5)
    ax = fig.add_subplot()
    count = max(1, len(figure.series))
    width = 0.8 / count
    for i, series in enumerate(figure.series):
        colour = PALETTE[i % len(PALETTE)]
        x = np.asarray(series.positions, dtype=float)
        mean = np.asarray(series.mean)
        std = np.asarray(series.std)
        yerr = std if std.any() else None
        if figure.kind == "bars":
            ax.bar(
                x + (i - (count - 1) / 2) * width,
                mean,
                width * 0.92,
                yerr=yerr,
                capsize=3,
                color=colour,
                label=series.label,
                error_kw={"lw": 1.0},
            )
        elif figure.kind == "points":
            ax.errorbar(
                x + (i - (count - 1) / 2) * width * 0.5,
                mean,
                yerr=yerr,
                fmt="o",
                ms=5,
                capsize=3,
                color=colour,
                label=series.label,
            )
        elif figure.band:
            ax.plot(x, mean, marker="o", ms=4, color=colour, label=series.label)
            if yerr is not None:
                ax.fill_between(x, mean - std, mean + std, color=colour, alpha=0.2, lw=0)
        else:
            ax.errorbar(
                x, mean, yerr=yerr, marker="o", ms=4, capsize=3, color=colour, label=series.label
            )
    if figure.x_labels:
        ax.set_xticks(np.arange(len(figure.x_labels)), figure.x_labels)
        if max((len(t) for t in figure.x_labels), default=0) > 14:
            ax.tick_params(axis="x", labelrotation=20)
            for label in ax.get_xticklabels():
                label.set_horizontalalignment("right")
        ax.grid(False, axis="x")
    if figure.logx:
        ax.set_xscale("log")
        _plain_log_ticks(ax.xaxis, [p for s in figure.series for p in s.positions])
    if figure.logy:
        ax.set_yscale("log")
        _plain_log_ticks(ax.yaxis, [])
    elif figure.kind == "bars":
        ax.set_ylim(bottom=0)
    ax.set_xlabel(figure.xlabel)
    ax.set_ylabel(figure.ylabel)
    fig.suptitle(figure.title)
    if figure.caption:
        ax.set_title(figure.caption, fontsize="small", color="0.35")
    if named:
        legend_below(fig)
    return fig


def plot_sweep(
    out: Path,
    spec: Mapping[str, Any],
    results: pa.Table,
    formats: Sequence[str] = DEFAULT_FORMATS,
    sweep: Sweep | None = None,
) -> list[Path]:
    """Draw ``spec`` from the result rows into ``out/sweep.<fmt>``; the paths written."""
    from ccsim.plots.style import save, styled

    data = sweep_figure(spec, results, sweep)
    with styled():
        return save(draw_sweep(data), out, Path(PLOT_FILE).stem, formats)
