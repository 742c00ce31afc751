"""Derived metrics: numbers an experiment computes from each run's summary.

A paper's statistic is often not a column of the result rows but arithmetic on the
summary: paper 000's "CDG share" is the CDG group's throughput over the TCP groups'. An
experiment file names such metrics once::

    [metrics]
    cdg_share_pct = "100 * groups[0].throughput_mbps / (groups[0].throughput_mbps
                                                          + groups[1].throughput_mbps)"

and uses the name wherever a result column goes (a plot's ``y``, a check's ``metric``).
An expression is Python syntax restricted to numbers, ``+ - * /``, parentheses, unary
minus, ``min(...)``, ``max(...)``, ``abs(...)``, ``sqrt(...)``, ``log(...)`` (natural; a
non-positive argument leaves the run without a value), ``coalesce(a, b, ...)`` (the first
argument that has a value in the run: ``coalesce(flows[0].fct_s, duration_s)``), and paths
into the run's ``summary.json`` (``utilisation``, ``bottleneck.drop_probability``,
``groups[1].share``, ``flows[0].goodput_mbps``), the run's axis columns (``rtt_ms``) or the
metrics named before this one in ``[metrics]``. A path that does not
exist in a run (a flow index past the end, a ``null``) makes that run's value missing;
division by zero too. Nothing is executed: the expression is parsed once and walked.

**Per-table statistics.** ``tables.<table>.<column>`` names a column of a per-run table
the sweep keeps (its ``series``), as the argument of a statistic: ``mean``, ``median``,
``sum``, ``count``, ``min``, ``max`` (one argument) or ``quantile(tables.t.c, q)``. Rows
of a table with a ``time_s`` column count only inside the run's measurement window, or,
with two more arguments, inside ``[from, to)`` seconds: ``sum(tables.queue_series.
departed_bytes, 0, 20)``. Paper 003's Fig. 4 takes b as ``median(tables.queue_events.
qlen_pkts)``: the queue length at each loss. A run without rows has no value. A table in
long form (``name`` and ``value`` columns: ``qdisc_state``) reads as wide, one column per
name: ``mean(tables.qdisc_state.drop_prob)`` is the mean of the ``value`` of its
``drop_prob`` rows.

**Times in a time series.** ``first_above(tables.t.c, threshold[, from_s, to_s])`` and
``first_below(...)`` are the ``time_s`` of the first row of a table with a ``time_s``
column (inside the window, or ``[from, to)``) whose value is above (below) the
threshold; a run where none is has no value. They nest, since every argument is an
expression: the time after 50 s at which the queueing delay, having risen above 30 ms,
first comes back below it is ``first_below(tables.queue_series.sojourn_mean_ms, 30,
first_above(tables.queue_series.sojourn_mean_ms, 30, 50, 100), 100)``.

**Relative to a baseline.** A metric given as a table, ``gain = { of = "<expression>",
baseline = { beta_ecn = 0.5 }, compare = "gain_pct" }``, divides (``ratio``; ``gain_pct``
is 100 (ratio - 1), ``reduction_pct`` 100 (1 - ratio): "the FCT reduction") or subtracts
(``difference``) the mean of ``of`` over the ok runs at
the baseline's axis values that share every other axis value with the run ("the gain in
bytes departed over beta_ecn = 0.5"); ``compare = "baseline"`` is that mean itself (each
run carries its case's baseline value: "did fixed G = 120 meet this deadline?").
"""

from __future__ import annotations

import ast
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: Top-level keys of ``summary.json`` an expression may start from.
SUMMARY_KEYS = frozenset(
    {
        "seed",
        "duration_s",
        "measure_start_s",
        "measure_end_s",
        "groups",
        "flows",
        "bottleneck",
        "convergence_time_s",
        "fct",
        "utilisation",
        "jain_index",
        "events",
        "bottleneck_packets",
    }
)


def _sqrt(x: float) -> float:
    if x < 0:
        raise _Missing
    return math.sqrt(x)


def _log(x: float) -> float:
    """The natural logarithm; a run whose value is not positive has no value."""
    if x <= 0:
        raise _Missing
    return math.log(x)


_FUNCTIONS: dict[str, Callable[..., float]] = {
    "min": min,
    "max": max,
    "abs": abs,
    "sqrt": _sqrt,
    "log": _log,
}
#: Statistics of a per-run table's column: ``median(tables.queue_events.qlen_pkts)``.
TABLE_STATISTICS: dict[str, Callable[..., float]] = {
    "mean": lambda v: float(np.mean(v)),
    "median": lambda v: float(np.median(v)),
    "sum": lambda v: float(np.sum(v)),
    "count": lambda v: float(len(v)),
    "min": lambda v: float(np.min(v)),
    "max": lambda v: float(np.max(v)),
    "quantile": lambda v, q: float(np.quantile(v, q)),
}
#: The time of the first row crossing a threshold: ``first_above(tables.t.c, 30, 50, 100)``.
CROSSINGS: dict[str, Callable[[np.ndarray, float], np.ndarray]] = {
    "first_above": lambda v, x: v > x,
    "first_below": lambda v, x: v < x,
}
#: The scope key under which a run's tables travel (not a summary key: no path reaches it).
TABLES = "tables"
COMPARES = ("gain_pct", "ratio", "difference", "reduction_pct", "baseline")
#: ``coalesce(a, b, ...)``: the first argument with a value (checked and evaluated apart).
COALESCE = "coalesce"
BASELINE_KEYS = ("of", "baseline", "compare")
_OPERATORS: dict[type, Callable[[float, float], float]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
}


class MetricError(ValueError):
    """An expression outside the allowed grammar, or naming an unknown key."""


class _Missing(Exception):
    """A path absent from this run's summary: the run has no value."""


def parse(expression: str, names: set[str] | frozenset[str]) -> ast.expr:
    """The parsed expression, or MetricError naming what is not allowed. ``names`` are the
    names a path may start from (summary keys and axis columns)."""
    try:
        tree = ast.parse(expression, mode="eval").body
    except SyntaxError as exc:
        raise MetricError(f"{expression!r}: not an expression ({exc.msg})") from exc
    _check(tree, names)
    return tree


def table_column(node: ast.AST) -> tuple[str, str] | None:
    """``tables.<table>.<column>`` -> (table, column); anything else None."""
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Attribute)
        and isinstance(node.value.value, ast.Name)
        and node.value.value.id == TABLES
    ):
        return node.value.attr, node.attr
    return None


def tables_used(tree: ast.AST) -> set[tuple[str, str]]:
    """Every (table, column) an expression reads."""
    return {tc for node in ast.walk(tree) if (tc := table_column(node)) is not None}


def _table_call(node: ast.Call) -> bool:
    return bool(node.args) and table_column(node.args[0]) is not None


def _check(node: ast.AST, names: set[str] | frozenset[str]) -> None:
    if isinstance(node, ast.Call) and _table_call(node):
        name = node.func.id if isinstance(node.func, ast.Name) else ""
        if name not in TABLE_STATISTICS and name not in CROSSINGS:
            known = ", ".join([*TABLE_STATISTICS, *CROSSINGS])
            raise MetricError(f"a table column's statistics: {known}")
        param = {"quantile": ", q"}.get(name, ", threshold" if name in CROSSINGS else "")
        extra = len(node.args) - 1 - bool(param)
        if node.keywords or extra not in (0, 2) or (param and len(node.args) < 2):
            raise MetricError(f"{name}(tables.<table>.<column>{param}[, from_s, to_s])")
        for arg in node.args[1:]:
            _check(arg, names)
        return
    if table_column(node) is not None:
        raise MetricError("a table column goes inside a statistic: median(tables.t.column)")
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise MetricError(f"{node.value!r}: only numbers are constants")
    elif isinstance(node, ast.BinOp):
        if type(node.op) not in _OPERATORS:
            raise MetricError("only + - * / are operators")
        _check(node.left, names)
        _check(node.right, names)
    elif isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, ast.USub):
            raise MetricError("only unary minus")
        _check(node.operand, names)
    elif isinstance(node, ast.Call):
        known = (*_FUNCTIONS, COALESCE)
        if not isinstance(node.func, ast.Name) or node.func.id not in known:
            raise MetricError(f"functions: {', '.join(known)}")
        if node.keywords or not node.args:
            raise MetricError(f"{node.func.id}(...) takes positional arguments")
        if node.func.id in ("sqrt", "log") and len(node.args) != 1:
            raise MetricError(f"{node.func.id}(...) takes one argument")
        for arg in node.args:
            _check(arg, names)
    elif isinstance(node, ast.Name):
        if node.id not in names:
            known = ", ".join(sorted(names))
            raise MetricError(f"{node.id!r}: not a summary key or axis ({known})")
    elif isinstance(node, ast.Attribute):
        _check(node.value, names)
    elif isinstance(node, ast.Subscript):
        index = node.slice
        if not (isinstance(index, ast.Constant) and type(index.value) is int and index.value >= 0):
            raise MetricError("an index is a whole number: groups[0]")
        _check(node.value, names)
    else:
        raise MetricError(f"{ast.unparse(node)!r}: not allowed in a metric")


def evaluate(tree: ast.expr, scope: Mapping[str, Any]) -> float | None:
    """The expression's value in ``scope`` (a run's summary and axis values), or None
    when a path is missing, a value is not a number, or it divides by zero."""
    try:
        value = _eval(tree, scope)
    except (_Missing, ZeroDivisionError):
        return None
    return value if math.isfinite(value) else None


def _eval(node: ast.AST, scope: Mapping[str, Any]) -> float:
    if isinstance(node, ast.Constant):
        return float(node.value)
    if isinstance(node, ast.BinOp):
        return _OPERATORS[type(node.op)](_eval(node.left, scope), _eval(node.right, scope))
    if isinstance(node, ast.UnaryOp):
        return -_eval(node.operand, scope)
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)
        if _table_call(node):
            return _table_statistic(node, scope)
        if node.func.id == COALESCE:
            return _coalesce(node.args, scope)
        return float(_FUNCTIONS[node.func.id](*(_eval(a, scope) for a in node.args)))
    value = _path(node, scope)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Missing
    return float(value)


def _coalesce(args: Sequence[ast.expr], scope: Mapping[str, Any]) -> float:
    """The first argument that has a (finite) value in this run."""
    for arg in args:
        try:
            value = _eval(arg, scope)
        except (_Missing, ZeroDivisionError):
            continue
        if math.isfinite(value):
            return value
    raise _Missing


def _table_statistic(node: ast.Call, scope: Mapping[str, Any]) -> float:
    """A statistic of one column of one of the run's tables, inside the measurement
    window (or the ``from_s, to_s`` given) when the table has a ``time_s`` column."""
    assert isinstance(node.func, ast.Name)
    name = node.func.id
    table, column = table_column(node.args[0])  # type: ignore[misc]
    columns = scope.get(TABLES, {}).get(table)
    if columns is None or column not in columns:
        raise _Missing
    values = np.asarray(columns[column], dtype=float)
    rest = [_eval(a, scope) for a in node.args[1:]]
    q = rest.pop(0) if name == "quantile" or name in CROSSINGS else None
    if name in CROSSINGS and "time_s" not in columns:
        raise _Missing
    if "time_s" in columns:
        if rest:
            low, high = rest
        else:
            low = float(scope.get("measure_start_s") or 0.0)
            high = scope.get("measure_end_s")
            high = math.inf if high is None else float(high)
        t = np.asarray(columns["time_s"], dtype=float)
        inside = (t >= low) & (t < high)
        values, t = values[inside], t[inside]
        if name in CROSSINGS:  # the first row, in time order, past the threshold
            order = np.argsort(t, kind="stable")
            t, values = t[order], values[order]
            hit = np.flatnonzero(np.isfinite(values) & CROSSINGS[name](values, float(q)))
            if not len(hit):
                raise _Missing
            return float(t[hit[0]])
    values = values[np.isfinite(values)]
    if name == "count":
        return float(len(values))
    if not len(values):
        raise _Missing
    stat = TABLE_STATISTICS[name]
    return stat(values, q) if q is not None else stat(values)


def _path(node: ast.AST, scope: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Name):
        if node.id not in scope:
            raise _Missing
        return scope[node.id]
    if isinstance(node, ast.Attribute):
        inner = _path(node.value, scope)
        if not isinstance(inner, Mapping) or node.attr not in inner:
            raise _Missing
        return inner[node.attr]
    if isinstance(node, ast.Subscript):
        inner = _path(node.value, scope)
        index = node.slice.value  # type: ignore[attr-defined]
        if not isinstance(inner, list) or index >= len(inner):
            raise _Missing
        return inner[index]
    raise _Missing


@dataclass(frozen=True)
class Baseline:
    """A metric relative to a baseline row of the same sweep (see the module doc)."""

    of: ast.expr
    baseline: dict[str, Any]
    compare: str


Metric = ast.expr | Baseline


def parse_metric(raw: Any, names: set[str] | frozenset[str]) -> Metric:
    """A ``[metrics]`` entry: an expression string, or a baseline table."""
    if isinstance(raw, str):
        return parse(raw, names)
    if not isinstance(raw, Mapping):
        raise MetricError("expected an expression string or { of, baseline, compare }")
    unknown = sorted(set(raw) - set(BASELINE_KEYS))
    if unknown:
        raise MetricError(f"{unknown[0]}: unknown key (expected: {', '.join(BASELINE_KEYS)})")
    if not isinstance(raw.get("of"), str):
        raise MetricError("of: expected an expression string")
    baseline = raw.get("baseline")
    if not isinstance(baseline, Mapping) or not baseline:
        raise MetricError("baseline: expected a table of axis = value")
    missing = sorted(set(baseline) - set(names))
    if missing:
        raise MetricError(f"baseline.{missing[0]}: not an axis")
    compare = raw.get("compare", "gain_pct")
    if compare not in COMPARES:
        raise MetricError(f"compare: expected one of {', '.join(COMPARES)}")
    return Baseline(parse(raw["of"], names), dict(baseline), compare)


def add_metrics(
    rows: pa.Table,
    metrics: Mapping[str, Metric],
    axes: Sequence[str] = (),
    tables: Callable[[str], pa.Table | None] | None = None,
) -> pa.Table:
    """``rows`` (a sweep's result rows, with their ``summary`` JSON) with one float
    column per metric appended (null where a run has no value, failed runs included).
    ``tables(name)`` gives a kept per-run table (with its ``run`` column) or None."""
    if not metrics:
        return rows
    summaries = rows.column("summary").to_pylist()
    axis_values = {a: rows.column(a).to_pylist() for a in axes if a in rows.column_names}
    scopes = []
    for i, text in enumerate(summaries):
        scope: dict[str, Any] = json.loads(text) if text else {}
        scope.update({a: values[i] for a, values in axis_values.items()})
        scopes.append(scope)
    wanted: dict[str, set[str]] = {}
    for metric in metrics.values():
        for table, column in tables_used(metric.of if isinstance(metric, Baseline) else metric):
            wanted.setdefault(table, set()).add(column)
    if wanted and "run" in rows.column_names:
        runs = rows.column("run").to_pylist()
        for table, columns in wanted.items():
            found = tables(table) if tables is not None else None
            if found is None:
                continue
            found = _wide(found, columns)
            for run, cols in _per_run(found, columns).items():
                for i in (i for i, r in enumerate(runs) if r == run):
                    scopes[i].setdefault(TABLES, {})[table] = cols
    for name, metric in metrics.items():
        if isinstance(metric, Baseline):
            values = _relative(metric, rows, scopes, axis_values)
        else:
            values = [evaluate(metric, scope) if scope else None for scope in scopes]
        for scope, value in zip(scopes, values, strict=True):
            if scope and value is not None:  # later metrics may name this one
                scope[name] = value
        rows = rows.append_column(pa.field(name, pa.float64()), pa.array(values, pa.float64()))
    return rows


def _wide(table: pa.Table, columns: set[str]) -> pa.Table:
    """A long table (``name``, ``value``: ``qdisc_state``) asked for columns it lacks, as
    wide: one row per (run, time_s), one column per name asked for (the ``value`` of that
    name's row there, NaN where it has none). Any other table as it is."""
    names = sorted(columns - set(table.column_names))
    if not names or not {"name", "value", "run"} <= set(table.column_names):
        return table
    name = table.column("name")
    if pa.types.is_dictionary(name.type):
        name = name.cast(pa.string())
    table = table.filter(pc.is_in(name, value_set=pa.array(names, pa.string())))
    name = np.asarray(table.column("name").cast(pa.string()).to_pylist(), dtype=object)
    run = table.column("run").to_numpy(zero_copy_only=False).astype(float)
    timed = "time_s" in table.column_names
    time = table.column("time_s").to_numpy(zero_copy_only=False) if timed else run * 0.0
    keys, where = np.unique(np.column_stack([run, time]), axis=0, return_inverse=True)
    where = where.reshape(-1)
    value = table.column("value").to_numpy(zero_copy_only=False).astype(float)
    wide: dict[str, Any] = {"run": keys[:, 0].astype(np.int64)}
    if timed:
        wide["time_s"] = keys[:, 1]
    for n in names:
        column = np.full(len(keys), np.nan)
        column[where[name == n]] = value[name == n]
        wide[n] = column
    return pa.table(wide)


def _per_run(table: pa.Table, columns: set[str]) -> dict[int, dict[str, np.ndarray]]:
    """run -> column -> values, for the columns asked (and ``time_s``)."""
    keep = [c for c in table.column_names if c in columns or c == "time_s"]
    run = np.asarray(pc.cast(table.column("run"), pa.int64()).to_numpy(zero_copy_only=False))
    data = {c: table.column(c).to_numpy(zero_copy_only=False) for c in keep}
    order = np.argsort(run, kind="stable")
    run = run[order]
    bounds = np.flatnonzero(np.diff(run)) + 1
    out = {}
    for chunk in np.split(np.arange(len(run)), bounds):
        if len(chunk):
            rows = order[chunk]
            out[int(run[chunk[0]])] = {c: np.asarray(v[rows]) for c, v in data.items()}
    return out


def _relative(
    metric: Baseline,
    rows: pa.Table,
    scopes: list[dict[str, Any]],
    axis_values: Mapping[str, list[Any]],
) -> list[float | None]:
    """Each run's ``of`` against the mean of ``of`` over the ok baseline runs that share
    its other axis values."""
    of = [evaluate(metric.of, scope) if scope else None for scope in scopes]
    status = rows.column("status").to_pylist()
    others = [a for a in axis_values if a not in metric.baseline]

    def key(i: int) -> tuple[Any, ...]:
        return tuple(_key(axis_values[a][i]) for a in others)

    sums: dict[tuple[Any, ...], list[float]] = {}
    for i, value in enumerate(of):
        at_base = all(_key(axis_values[a][i]) == _key(v) for a, v in metric.baseline.items())
        if at_base and status[i] == "ok" and value is not None:
            sums.setdefault(key(i), []).append(value)
    out: list[float | None] = []
    for i, value in enumerate(of):
        base = sums.get(key(i))
        if value is None or not base:
            out.append(None)
            continue
        b = float(np.mean(base))
        if metric.compare == "baseline":
            out.append(b)
        elif metric.compare == "difference":
            out.append(value - b)
        elif b == 0:
            out.append(None)
        elif metric.compare == "reduction_pct":
            out.append(100 * (1 - value / b))
        else:
            out.append(value / b if metric.compare == "ratio" else 100 * (value / b - 1))
    return out


def _key(value: Any) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return round(float(value), 12)
    return json.dumps(value, sort_keys=True) if isinstance(value, (list, dict)) else value
