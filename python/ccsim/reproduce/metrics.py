"""Derived metrics: numbers an experiment computes from each run's summary.

A paper's statistic is often not a column of the result rows but arithmetic on the
summary: paper 000's "CDG share" is the CDG group's throughput over the TCP groups'. An
experiment file names such metrics once::

    [metrics]
    cdg_share_pct = "100 * groups[0].throughput_mbps / (groups[0].throughput_mbps
                                                          + groups[1].throughput_mbps)"

and uses the name wherever a result column goes (a plot's ``y``, a check's ``metric``).
An expression is Python syntax restricted to numbers, ``+ - * /``, parentheses, unary
minus, ``min(...)``, ``max(...)``, ``abs(...)``, and paths into the run's ``summary.json``
(``utilisation``, ``bottleneck.drop_probability``, ``groups[1].share``,
``flows[0].goodput_mbps``) or the run's axis columns (``rtt_ms``). A path that does not
exist in a run (a flow index past the end, a ``null``) makes that run's value missing;
division by zero too. Nothing is executed: the expression is parsed once and walked.
"""

from __future__ import annotations

import ast
import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pyarrow as pa

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
_FUNCTIONS: dict[str, Callable[..., float]] = {"min": min, "max": max, "abs": abs}
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


def _check(node: ast.AST, names: set[str] | frozenset[str]) -> None:
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
        if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS:
            raise MetricError(f"functions: {', '.join(_FUNCTIONS)}")
        if node.keywords or not node.args:
            raise MetricError(f"{node.func.id}(...) takes positional arguments")
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
        return float(_FUNCTIONS[node.func.id](*(_eval(a, scope) for a in node.args)))
    value = _path(node, scope)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Missing
    return float(value)


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


def add_metrics(
    rows: pa.Table, metrics: Mapping[str, ast.expr], axes: Sequence[str] = ()
) -> pa.Table:
    """``rows`` (a sweep's result rows, with their ``summary`` JSON) with one float
    column per metric appended (null where a run has no value, failed runs included)."""
    if not metrics:
        return rows
    summaries = rows.column("summary").to_pylist()
    axis_values = {a: rows.column(a).to_pylist() for a in axes if a in rows.column_names}
    scopes = []
    for i, text in enumerate(summaries):
        scope: dict[str, Any] = json.loads(text) if text else {}
        scope.update({a: values[i] for a, values in axis_values.items()})
        scopes.append(scope)
    for name, tree in metrics.items():
        values = [evaluate(tree, scope) if scope else None for scope in scopes]
        rows = rows.append_column(pa.field(name, pa.float64()), pa.array(values, pa.float64()))
    return rows
