"""``ccsim sweep --plot``: one figure (``sweep.png``, ``.pdf``, ``.svg``) from the sweep's
``[plot]`` table.

``[plot]`` names result columns: ``x`` (usually an axis), ``y`` (a figure such as
``utilisation``), optionally ``lines`` (one line per value of that column), ``title``,
``xlabel``, ``ylabel``, ``logx``, ``logy``. Points are the mean over the runs that share
``x`` and ``lines`` (repetitions, other axes), with the standard deviation as error bars
when there are several. Failed runs are left out.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ccsim.plots.style import DEFAULT_FORMATS, legend_right, new_figure, save, styled
from ccsim.scenario import SweepError
from ccsim.sweeps.spec import RESERVED_COLUMNS, Sweep
from ccsim.sweeps.store import PLOT_FILE

_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")


def check_plot_spec(sweep: Sweep) -> None:
    """SweepError unless ``[plot]`` names an ``x`` and a ``y`` among the result columns."""
    spec = sweep.plot
    if not spec:
        raise SweepError("--plot: the sweep has no [plot] table (x = ..., y = ...)")
    columns = RESERVED_COLUMNS | {a.name for a in sweep.axes}
    for key in ("x", "y", "lines"):
        if key == "lines" and key not in spec:
            continue
        name = spec.get(key)
        if not isinstance(name, str) or name not in columns:
            raise SweepError(
                f"plot.{key}: {name!r} is not a result column (axes: "
                f"{', '.join(a.name for a in sweep.axes) or 'none'})"
            )


def numeric(values: list[Any]) -> np.ndarray | None:
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


def plot_sweep(
    out: Path,
    spec: dict[str, Any],
    results: pa.Table,
    formats: Sequence[str] = DEFAULT_FORMATS,
) -> list[Path]:
    """Draw ``spec`` from the result rows into ``out/sweep.<fmt>``; the paths written."""
    with styled():
        return _plot_sweep(out, spec, results, formats)


def _plot_sweep(
    out: Path, spec: dict[str, Any], results: pa.Table, formats: Sequence[str]
) -> list[Path]:
    ok = results.filter(pc.equal(results.column("status"), "ok"))
    xs = ok.column(spec["x"]).to_pylist()
    ys = ok.column(spec["y"]).to_pylist()
    lines = ok.column(spec["lines"]).to_pylist() if "lines" in spec else [None] * len(xs)
    groups: dict[Any, dict[Any, list[float]]] = defaultdict(lambda: defaultdict(list))
    for x, y, line in zip(xs, ys, lines, strict=True):
        if y is not None:
            groups[line][x].append(float(y))

    fig = new_figure(8 if "lines" in spec else 7, 4.5)
    ax = fig.add_subplot()
    all_x = sorted({x for g in groups.values() for x in g}, key=lambda v: (str(type(v)), v))
    positions = numeric(all_x)
    if positions is None:  # categorical x
        positions = np.arange(len(all_x), dtype=float)
        ax.set_xticks(positions, [str(x) for x in all_x])
    where = dict(zip(all_x, positions, strict=True))
    for line in sorted(groups, key=lambda v: (v is None, str(type(v)), v if v is not None else 0)):
        points = sorted(groups[line].items(), key=lambda item: where[item[0]])
        px = np.array([where[x] for x, _ in points])
        mean = np.array([np.mean(v) for _, v in points])
        std = np.array([np.std(v) if len(v) > 1 else 0.0 for _, v in points])
        label = None if line is None else f"{spec['lines']} = {line}"
        if std.any():
            ax.errorbar(px, mean, yerr=std, marker="o", ms=4, capsize=3, label=label)
        else:
            ax.plot(px, mean, marker="o", ms=4, label=label)
    ax.set_xlabel(spec.get("xlabel", spec["x"]))
    ax.set_ylabel(spec.get("ylabel", spec["y"]))
    if spec.get("logx"):
        ax.set_xscale("log")
    if spec.get("logy"):
        ax.set_yscale("log")
    ax.set_title(spec.get("title", f"{spec['y']} vs {spec['x']}"))
    if "lines" in spec:
        legend_right(ax)
    return save(fig, out, Path(PLOT_FILE).stem, formats)
