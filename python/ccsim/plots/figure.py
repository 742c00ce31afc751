"""A paper's figure from result tables and a plot description (Flent's model: the
description is data, one plotter draws every experiment's figure).

A figure is one or more panels. Each panel is a plot description (a table of an
experiment file's ``[[plots]]``) and the rows to draw: the sweep's result rows, or a
per-run table joined with the axis columns. Reference curves (a paper's analytic model)
arrive as functions, quoted numbers as markers: this module never runs a simulation and
knows nothing of experiments or papers.

Plot types:

- ``lines``: y against a parameter x, one line per value of ``series``; points are the
  ``statistic`` (mean) over the runs sharing x and series, error bars the standard
  deviation when there are several (``errorbars = "minmax"`` spans the smallest and
  largest run instead; ``false`` hides them).
- ``timeseries``: y against time (x = ``time_s`` of a per-run ``table``), mean over runs;
  ``series_summary = { statistic, from, to, format }`` adds each line's statistic over
  that x range to its legend label.

Every type: ``panels = "<column>"`` draws one panel per value of that column (its
``title`` formats the value, ``"G = {}"``, or its ``panel_labels`` entry);
``refs = [{ y = 20.0, label = "ref_del 20 ms" }, { x = 53.0, label = ... }]`` draws
the paper's reference levels (horizontal) and times (vertical) as grey lines;
``series_label`` is a format (``"β = {}"``) or a table of labels by value; a ``where``
value may be a list (any of them); ``xticks`` places the x ticks.
- ``cdf``: the empirical CDF of column x per series, or, with ``y`` (such as the
  ``sojourn_cdf`` table's ``cdf``), the given curve of every run; ``pool = true`` draws
  instead one curve per series, the mean of its runs' CDFs (each run weighs the same:
  the distribution pooled over runs of equal length).

A reference curve whose ``args`` name a column other than x and series (paper 003's b,
measured per run) is the model evaluated at each row, its ``statistic`` per point,
drawn dashed through the points.
- ``bars``: the statistic of y per category x, grouped by series.
- ``xy``: one result column against another (a trade-off: deadlines met against the share
  left to others), one line per value of ``series``: a point per value of the column
  ``by`` (the statistic of x and of y over the rows there), joined in ``by``'s order and
  labelled with its value (``by_label``, a format, ``"{} s"``).

``curves_only = true`` (``lines``) draws the panel's reference curves alone over ``xlim``,
one colour each, without the runs: a function the paper draws by itself (paper 001's
throughput-value functions); on log x axes the curves are sampled evenly in log x.
``combine = "sum"`` (``timeseries``) first sums the rows of one run that share x and
series (the flow groups of one class), then takes the mean over runs.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator

PLOT_TYPES = ("lines", "timeseries", "cdf", "bars", "xy")
PLOT_KEYS = (
    "type",
    "sweep",
    "table",
    "x",
    "y",
    "series",
    "series_label",
    "where",
    "statistic",
    "errorbars",
    "title",
    "xlabel",
    "ylabel",
    "logx",
    "logy",
    "xlim",
    "ylim",
    "models",
    "legend",
    "panels",
    "panel_labels",
    "xticks",
    "series_summary",
    "pool",
    "refs",
    "curves_only",
    "combine",
    "by",
    "by_label",
)
REF_KEYS = ("x", "y", "label")
ERRORBARS = (True, False, "std", "minmax")
SUMMARY_KEYS = ("statistic", "from", "to", "format")
MODEL_KEYS = ("model", "args", "label")
_STATISTICS: dict[str, Callable[[np.ndarray], float]] = {
    "mean": np.mean,
    "median": np.median,
    "min": np.min,
    "max": np.max,
}
#: Points of a reference curve across the x range.
CURVE_POINTS = 201


@dataclass
class Curve:
    """A reference curve: ``function(**args)``, where an arg naming the panel's x column
    takes the x grid and one naming its series column takes each line's value."""

    function: Callable[..., float]
    args: Mapping[str, str | float]
    label: str


@dataclass
class Marker:
    """A number the paper quotes, drawn at the paper's coordinates."""

    x: float
    y: float
    label: str


@dataclass
class Panel:
    spec: Mapping[str, Any]
    rows: pa.Table
    curves: list[Curve] = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)


def check_plot(
    spec: Mapping[str, Any], columns: set[str], tables: set[str], models: set[str]
) -> None:
    """ValueError unless ``spec`` is a plot description this module can draw from a
    sweep with these result ``columns``, kept per-run ``tables`` and known ``models``."""
    unknown = sorted(set(spec) - set(PLOT_KEYS))
    if unknown:
        raise ValueError(f"{unknown[0]}: unknown key (expected: {', '.join(PLOT_KEYS)})")
    kind = spec.get("type")
    if kind not in PLOT_TYPES:
        raise ValueError(f"type: expected one of {', '.join(PLOT_TYPES)}, got {kind!r}")
    if "table" in spec:
        if spec["table"] not in tables:
            raise ValueError(f"table: {spec['table']!r} is not kept by the sweep's series")
        # the per-run table's own columns are known only once it exists; axes still are
    elif kind == "timeseries":
        raise ValueError("table: a time series is drawn from a per-run table (flow_series, ...)")
    needed = ["x"] + (["y"] if kind in ("lines", "timeseries", "bars", "xy") else [])
    needed += ["by"] if kind == "xy" else []
    if ("by" in spec or "by_label" in spec) and kind != "xy":
        raise ValueError("by, by_label: on xy plots")
    for key in needed:
        if not isinstance(spec.get(key), str):
            raise ValueError(f"{key}: missing (a column name)")
    if spec.get("curves_only"):
        if kind != "lines" or spec["curves_only"] is not True:
            raise ValueError("curves_only: true, on lines plots")
        if not spec.get("models") or not spec.get("xlim"):
            raise ValueError("curves_only: give the models to draw and xlim")
    if spec.get("combine", "mean") not in ("mean", "sum") or (
        "combine" in spec and kind != "timeseries"
    ):
        raise ValueError('combine: "mean" or "sum", on timeseries plots')
    if "table" not in spec and not spec.get("curves_only"):
        for key in ("x", "y", "series", "by"):
            if key in spec and spec[key] not in columns:
                raise ValueError(f"{key}: {spec[key]!r} is not a result column or axis")
    for key in ("where",):
        if key in spec and not (
            isinstance(spec[key], Mapping)
            and all(k in columns or "table" in spec for k in spec[key])
        ):
            raise ValueError(f"{key}: expected a table of axis = value")
    if "panels" in spec and not (
        isinstance(spec["panels"], str) and (spec["panels"] in columns or "table" in spec)
    ):
        raise ValueError(f"panels: {spec['panels']!r} is not a result column or axis")
    if not isinstance(spec.get("panel_labels", {}), Mapping):
        raise ValueError("panel_labels: a table of panel titles' values by value")
    if spec.get("errorbars", True) not in ERRORBARS:
        raise ValueError('errorbars: expected true, false, "std" or "minmax"')
    label = spec.get("series_label")
    if label is not None and not isinstance(label, (str, Mapping)):
        raise ValueError('series_label: a format ("β = {}") or a table of labels by value')
    ticks = spec.get("xticks")
    if ticks is not None and not (isinstance(ticks, list) and all(_is_number(v) for v in ticks)):
        raise ValueError("xticks: expected a list of numbers")
    summary = spec.get("series_summary")
    if summary is not None:
        if kind != "timeseries" or not isinstance(summary, Mapping):
            raise ValueError("series_summary: a table, on timeseries plots")
        bad = sorted(set(summary) - set(SUMMARY_KEYS))
        if bad:
            raise ValueError(f"series_summary.{bad[0]}: unknown key")
        if summary.get("statistic", "mean") not in _STATISTICS:
            raise ValueError(f"series_summary.statistic: expected one of {', '.join(_STATISTICS)}")
    if spec.get("statistic", "mean") not in _STATISTICS:
        raise ValueError(f"statistic: expected one of {', '.join(_STATISTICS)}")
    for key in ("xlim", "ylim"):
        value = spec.get(key)
        if value is not None and not (
            isinstance(value, list) and len(value) == 2 and all(_is_number(v) for v in value)
        ):
            raise ValueError(f"{key}: expected [low, high]")
    for i, model in enumerate(spec.get("models", [])):
        if not isinstance(model, Mapping):
            raise ValueError(f"models[{i}]: expected a table {{ model = ..., args = ... }}")
        bad = sorted(set(model) - set(MODEL_KEYS))
        if bad:
            raise ValueError(
                f"models[{i}].{bad[0]}: unknown key (expected: {', '.join(MODEL_KEYS)})"
            )
        if model.get("model") not in models:
            raise ValueError(f"models[{i}].model: unknown model {model.get('model')!r}")
        if kind != "lines":
            raise ValueError(f"models[{i}]: reference curves are drawn on lines plots")
        for name, arg in dict(model.get("args", {})).items():
            panel_axes = (spec.get("x"), spec.get("series"))
            if isinstance(arg, str) and arg not in panel_axes and arg not in columns:
                raise ValueError(
                    f"models[{i}].args.{name}: {arg!r} must be the panel's x or series "
                    "column, or a result column"
                )
    refs = spec.get("refs", [])
    if not isinstance(refs, list):
        raise ValueError("refs: expected a list of { y = 20.0, label = ... } or { x = ... }")
    for i, ref in enumerate(refs):
        if not isinstance(ref, Mapping) or set(ref) - set(REF_KEYS):
            raise ValueError(f"refs[{i}]: expected a table of {', '.join(REF_KEYS)}")
        if ("x" in ref) == ("y" in ref) or not _is_number(ref.get("x", ref.get("y"))):
            raise ValueError(f"refs[{i}]: give one number, x (a vertical line) or y")
        if not isinstance(ref.get("label", ""), str):
            raise ValueError(f"refs[{i}].label: expected a string")
    if "pool" in spec and (kind != "cdf" or not isinstance(spec["pool"], bool)):
        raise ValueError("pool: true or false, on cdf plots")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# --------------------------------------------------------------------------- drawing


def _select(rows: pa.Table, where: Mapping[str, Any]) -> dict[str, list[Any]]:
    """The rows matching ``where`` (axis = value, or = [values]: any of them)."""
    columns = {name: rows.column(name).to_pylist() for name in rows.column_names}

    def match(a: Any, wanted: Any) -> bool:
        if isinstance(wanted, list):
            return any(_same(a, w) for w in wanted)
        return _same(a, wanted)

    keep = [all(match(columns[k][i], v) for k, v in where.items()) for i in range(rows.num_rows)]
    return {
        name: [v for v, k in zip(values, keep, strict=True) if k]
        for name, values in columns.items()
    }


def _same(a: Any, b: Any) -> bool:
    if _is_number(a) and _is_number(b):
        return bool(np.isclose(float(a), float(b), rtol=1e-9, atol=1e-12))
    return a == b


def _order(values: Iterable[Any]) -> list[Any]:
    return sorted(set(values), key=lambda v: (v is None, str(type(v)), v if v is not None else 0))


def _series_label(spec: Mapping[str, Any], value: Any) -> str | None:
    if value is None:
        return None
    fmt = spec.get("series_label")
    if isinstance(fmt, Mapping):  # labels by value; TOML keys are strings
        for key, label in fmt.items():
            if key == str(value) or (_is_number(value) and _is_float(key, value)):
                return str(label)
        return f"{spec['series']} = {value}"
    return fmt.format(value) if fmt else f"{spec['series']} = {value}"


def _is_float(text: str, value: float) -> bool:
    try:
        return _same(float(text), value)
    except ValueError:
        return False


def split_panels(panel: Panel) -> list[Panel]:
    """One panel per value of the spec's ``panels`` column (in order), each selecting its
    value and formatting it into its title; a spec without ``panels`` stays one panel."""
    spec = panel.spec
    column = spec.get("panels")
    if column is None:
        return [panel]
    data = _select(panel.rows, spec.get("where", {}))
    out = []
    for value in _order(data[column]):
        sub = {k: v for k, v in spec.items() if k != "panels"}
        sub["where"] = {**spec.get("where", {}), column: value}
        sub.pop("panel_labels", None)
        if "title" in spec:
            labels = spec.get("panel_labels", {})
            sub["title"] = spec["title"].format(labels.get(str(value), value))
        out.append(Panel(sub, panel.rows, panel.curves, panel.markers))
    return out


def _grouped(
    data: dict[str, list[Any]], spec: Mapping[str, Any], y: str
) -> dict[Any, dict[Any, list[float]]]:
    """series value -> x value -> the y values of the rows there."""
    xs = data[spec["x"]]
    series = data[spec["series"]] if "series" in spec else [None] * len(xs)
    groups: dict[Any, dict[Any, list[float]]] = defaultdict(lambda: defaultdict(list))
    for x, s, value in zip(xs, series, data[y], strict=True):
        if value is not None and not (isinstance(value, float) and np.isnan(value)):
            groups[s][x].append(float(value))
    return groups


def _draw_lines(ax: Axes, panel: Panel) -> None:
    spec = panel.spec
    data = _select(panel.rows, spec.get("where", {}))
    stat = _STATISTICS[spec.get("statistic", "mean")]
    groups = {} if spec.get("curves_only") else _grouped(data, spec, spec["y"])
    colours: dict[Any, str] = {}
    for i, line in enumerate(_order(groups)):
        colour = colours.setdefault(line, f"C{i}")
        points = sorted(groups[line].items())
        px = np.array([float(x) for x, _ in points])
        py = np.array([stat(np.array(v)) for _, v in points])
        err: np.ndarray
        if spec.get("errorbars", True) == "minmax":  # from the smallest to the largest run
            err = np.array(
                [
                    [y - min(v) for (_, v), y in zip(points, py, strict=True)],
                    [max(v) - y for (_, v), y in zip(points, py, strict=True)],
                ]
            )
        else:
            err = np.array([np.std(v) for _, v in points])
        label = _series_label(spec, line) or spec["y"]
        if spec.get("errorbars", True) and err.any():
            ax.errorbar(px, py, yerr=err, fmt="o-", color=colour, ms=4, capsize=3, label=label)
        else:
            ax.plot(px, py, "o-", color=colour, ms=4, label=label)
    measured = [c for c in panel.curves if _measured(c, spec)]
    for curve in measured:
        for line in _order(groups):
            points = _modelled(curve, spec, data, line)
            if points:
                px, py = zip(*points, strict=True)
                ax.plot(px, py, "x--", color=colours.get(line, "k"), lw=1, ms=5, alpha=0.8)
        ax.plot([], [], "kx--", lw=1, label=curve.label)
    if any(c not in measured for c in panel.curves):
        xs = [float(x) for g in groups.values() for x in g]
        low, high = spec.get("xlim") or [min(xs, default=0.0), max(xs, default=1.0)]
        if spec.get("logx") and float(low) > 0:
            grid = np.geomspace(float(low), float(high), CURVE_POINTS)
        else:
            grid = np.linspace(float(low), float(high), CURVE_POINTS)
        lines = _order(groups) or [None]
        for j, curve in enumerate(c for c in panel.curves if c not in measured):
            if not groups:  # the curves alone: each its own colour, labelled
                ys = [curve.function(**_curve_args(curve, spec, x, None)) for x in grid]
                ax.plot(grid, ys, "-", color=f"C{j}", lw=1.5, label=curve.label)
                continue
            for line in lines:
                ys = [curve.function(**_curve_args(curve, spec, x, line)) for x in grid]
                ax.plot(grid, ys, "--", color=colours.get(line, "k"), lw=1, alpha=0.8)
            ax.plot([], [], "k--", lw=1, label=curve.label)


def _measured(curve: Curve, spec: Mapping[str, Any]) -> bool:
    """A curve with an argument measured per run (not the panel's x or series)."""
    return any(
        isinstance(a, str) and a not in (spec.get("x"), spec.get("series"))
        for a in curve.args.values()
    )


def _modelled(
    curve: Curve, spec: Mapping[str, Any], data: Mapping[str, list[Any]], line: Any
) -> list[tuple[float, float]]:
    """(x, statistic of the model at each row of this line there), by x."""
    stat = _STATISTICS[spec.get("statistic", "mean")]
    n = len(data[spec["x"]])
    series = data[spec["series"]] if "series" in spec else [None] * n
    by_x: dict[Any, list[float]] = defaultdict(list)
    for i in range(n):
        if series[i] != line:
            continue
        args: dict[str, Any] = {}
        for name, arg in curve.args.items():
            args[name] = data[arg][i] if isinstance(arg, str) else arg
        if all(v is not None and not (isinstance(v, float) and np.isnan(v)) for v in args.values()):
            by_x[data[spec["x"]][i]].append(float(curve.function(**args)))
    return [(float(x), float(stat(np.array(v)))) for x, v in sorted(by_x.items()) if v]


def _curve_args(curve: Curve, spec: Mapping[str, Any], x: float, line: Any) -> dict[str, Any]:
    args: dict[str, Any] = {}
    for name, arg in curve.args.items():
        if arg == spec.get("x"):
            args[name] = x
        elif arg == spec.get("series"):
            args[name] = line
        else:
            args[name] = arg
    return args


def _draw_timeseries(ax: Axes, panel: Panel) -> None:
    spec = panel.spec
    data = _select(panel.rows, spec.get("where", {}))
    summary = spec.get("series_summary")
    if spec.get("combine") == "sum":
        groups = _summed(data, spec)
    else:
        groups = _grouped(data, spec, spec["y"])
    for i, line in enumerate(_order(groups)):
        points = sorted(groups[line].items())
        xs = np.array([float(t) for t, _ in points])
        ys = np.array([np.mean(v) for _, v in points])
        label = _series_label(spec, line) or spec["y"]
        if summary is not None:
            low, high = summary.get("from", -np.inf), summary.get("to", np.inf)
            inside = ys[(xs > low) & (xs <= high)]
            if inside.size:
                value = _STATISTICS[summary.get("statistic", "mean")](inside)
                label += ": " + summary.get("format", "{:.3g}").format(value)
        ax.plot(xs, ys, color=f"C{i}", lw=1.2, label=label)


def _summed(
    data: dict[str, list[Any]], spec: Mapping[str, Any]
) -> dict[Any, dict[Any, list[float]]]:
    """series value -> x value -> one sum per run of the y values of its rows there."""
    xs, ys = data[spec["x"]], data[spec["y"]]
    series = data[spec["series"]] if "series" in spec else [None] * len(xs)
    runs = data.get("run", [0] * len(xs))
    sums: dict[tuple[Any, Any, Any], float] = defaultdict(float)
    for x, s, r, value in zip(xs, series, runs, ys, strict=True):
        if value is not None and not (isinstance(value, float) and np.isnan(value)):
            sums[(s, x, r)] += float(value)
    groups: dict[Any, dict[Any, list[float]]] = defaultdict(lambda: defaultdict(list))
    for (s, x, _), total in sums.items():
        groups[s][x].append(total)
    return groups


def _draw_cdf(ax: Axes, panel: Panel) -> None:
    spec = panel.spec
    data = _select(panel.rows, spec.get("where", {}))
    n = len(data[spec["x"]])
    series = data[spec["series"]] if "series" in spec else [None] * n
    for i, line in enumerate(_order(series)):
        rows = [k for k in range(n) if series[k] == line]
        label = _series_label(spec, line)
        if "y" in spec and spec.get("pool"):  # the mean of the runs' CDFs
            runs = data.get("run", [0] * n)
            curves = defaultdict(list)
            for k in rows:
                curves[runs[k]].append((float(data[spec["x"]][k]), float(data[spec["y"]][k])))
            grid = np.unique([x for pts in curves.values() for x, _ in pts])
            total = np.zeros(len(grid))
            for pts in curves.values():
                pts.sort()
                xs, ys = np.array(pts).T
                # a step CDF: the value at the last point at or below each grid x
                idx = np.searchsorted(xs, grid, side="right") - 1
                total += np.where(idx >= 0, ys[np.clip(idx, 0, None)], 0.0)
            if len(grid):
                ax.step(grid, total / len(curves), where="post", color=f"C{i}", label=label)
        elif "y" in spec:  # a CDF per run, as the run computed it
            runs = data.get("run", [0] * n)
            for j, run in enumerate(_order(runs[k] for k in rows)):
                pts = sorted(
                    (data[spec["x"]][k], data[spec["y"]][k]) for k in rows if runs[k] == run
                )
                ax.step(
                    *zip(*pts, strict=True),
                    where="post",
                    color=f"C{i}",
                    lw=1,
                    label=label if j == 0 else None,
                )
        else:
            # a run without a value (a metric with no value there) is left out
            values = np.sort([float(v) for k in rows if (v := data[spec["x"]][k]) is not None])
            if not len(values):
                continue
            # the empirical CDF rises from 0 at the smallest value
            ax.step(
                np.r_[values[:1], values],
                np.arange(len(values) + 1) / len(values),
                where="post",
                color=f"C{i}",
                label=label,
            )
    ax.set_ylim(0, 1.02)


def _draw_bars(ax: Axes, panel: Panel) -> None:
    spec = panel.spec
    data = _select(panel.rows, spec.get("where", {}))
    stat = _STATISTICS[spec.get("statistic", "mean")]
    groups = _grouped(data, spec, spec["y"])
    categories = _order(x for g in groups.values() for x in g)
    lines = _order(groups)
    width = 0.8 / max(len(lines), 1)
    for i, line in enumerate(lines):
        heights = [
            stat(np.array(groups[line][c])) if groups[line].get(c) else 0.0 for c in categories
        ]
        positions = np.arange(len(categories)) + (i - (len(lines) - 1) / 2) * width
        ax.bar(positions, heights, width, color=f"C{i}", label=_series_label(spec, line))
    ax.set_xticks(np.arange(len(categories)), [str(c) for c in categories])


def _draw_xy(ax: Axes, panel: Panel) -> None:
    spec = panel.spec
    data = _select(panel.rows, spec.get("where", {}))
    stat = _STATISTICS[spec.get("statistic", "mean")]
    n = len(data[spec["by"]])
    series = data[spec["series"]] if "series" in spec else [None] * n
    points: dict[Any, dict[Any, tuple[list[float], list[float]]]] = defaultdict(dict)
    for i in range(n):
        x, y = data[spec["x"]][i], data[spec["y"]][i]
        if x is None or y is None or not (np.isfinite(float(x)) and np.isfinite(float(y))):
            continue
        xs, ys = points[series[i]].setdefault(data[spec["by"]][i], ([], []))
        xs.append(float(x))
        ys.append(float(y))
    fmt = spec.get("by_label", "{}")
    for i, line in enumerate(_order(points)):
        by = _order(points[line])
        px = [stat(np.array(points[line][b][0])) for b in by]
        py = [stat(np.array(points[line][b][1])) for b in by]
        label = _series_label(spec, line) or spec["y"]
        ax.plot(px, py, "o-", color=f"C{i}", ms=4, label=label)
        for b, x, y in zip(by, px, py, strict=True):
            ax.annotate(
                fmt.format(b),
                (x, y),
                textcoords="offset points",
                xytext=(4, 3),
                fontsize="xx-small",
                color=f"C{i}",
            )


_DRAW = {
    "lines": _draw_lines,
    "timeseries": _draw_timeseries,
    "cdf": _draw_cdf,
    "bars": _draw_bars,
    "xy": _draw_xy,
}


def _draw_panel(ax: Axes, panel: Panel) -> None:
    spec = panel.spec
    _DRAW[spec["type"]](ax, panel)
    if spec.get("xlim"):
        ax.set_xlim(*spec["xlim"])
    low, high = ax.get_xlim()
    for marker in panel.markers:
        ax.plot([marker.x], [marker.y], "k*", ms=11, zorder=5, clip_on=False)
        right = marker.x > (low + high) / 2  # keep the label inside the axes
        ax.annotate(
            marker.label,
            (marker.x, marker.y),
            textcoords="offset points",
            xytext=(-8 if right else 8, -12),
            ha="right" if right else "left",
            fontsize="x-small",
        )
    if panel.markers:
        ax.plot([], [], "k*", ms=9, label="number quoted in the paper")
    for i, ref in enumerate(spec.get("refs", [])):  # the paper's reference levels and times
        style = {"color": "0.35", "lw": 1, "ls": (":", "-.", "--")[i % 3], "zorder": 1}
        if "y" in ref:
            ax.axhline(float(ref["y"]), label=ref.get("label"), **style)
        else:
            ax.axvline(float(ref["x"]), label=ref.get("label"), **style)
    ax.set_xlabel(spec.get("xlabel", spec["x"]))
    ax.set_ylabel(spec.get("ylabel", spec.get("y", "CDF")))
    if spec.get("logx"):
        ax.set_xscale("log")
    if spec.get("xticks"):
        ax.set_xticks(spec["xticks"], [f"{t:g}" for t in spec["xticks"]])
        ax.xaxis.set_minor_locator(NullLocator())
    if spec.get("logy"):
        ax.set_yscale("log")
    if spec.get("ylim"):
        ax.set_ylim(*spec["ylim"])
    if spec.get("title"):
        ax.set_title(spec["title"], fontsize="medium")
    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small", loc=spec.get("legend", "best"))


def draw_figure(
    panels: Sequence[Panel],
    stem: Path,
    *,
    columns: int | None = None,
    size: Sequence[float] | None = None,
) -> list[Path]:
    """Draw the panels side by side (``columns`` per row) and write ``stem``.png and
    ``stem``.pdf. Returns the two paths."""
    cols = max(1, min(columns or len(panels), len(panels)))
    rows = -(-len(panels) // cols)
    width, height = size or (7.0 * cols, 4.5 * rows)
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, squeeze=False)
    for ax, panel in zip(axes.flat, panels, strict=False):
        _draw_panel(ax, panel)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    return [
        save(fig, stem.with_suffix(".png"), {"Software": None}),
        save(
            fig, stem.with_suffix(".pdf"), {"Creator": None, "Producer": None, "CreationDate": None}
        ),
    ]


def save(fig: Figure, path: Path, metadata: dict[str, Any]) -> Path:
    """Render to a hidden temporary file next to ``path``, then rename it into place."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=110, metadata=metadata)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return path
