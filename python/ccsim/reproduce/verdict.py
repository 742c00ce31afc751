"""The one comparison of a paper's numbers with ccsim's results (ns-3's
``NS_TEST_ASSERT_MSG_EQ_TOL``: an expected value always travels with its tolerance and
its message).

:func:`judge` turns one paper value, one ccsim value and a tolerance into a
:class:`Verdict`; :func:`evaluate` computes ccsim's values of a :class:`Check` from a
sweep's result rows (selection, grouping, statistic) and judges each.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ccsim.reproduce.experiment import Check, metric_column
from ccsim.reproduce.models import MODELS

PASS, FAIL = "✅", "❌"
#: The verdict column of a result the paper quotes no number for.
UNJUDGED = "—"
#: The reason of a miss that the experiment file does not explain.
UNEXPLAINED = "not yet explained"
NO_RESULT = "no ccsim result for this selection (its runs failed or did not run)"


@dataclass(frozen=True)
class Verdict:
    """One row of the report: the paper's value against ccsim's; or, with ``paper`` and
    ``tolerance`` None, a result of ccsim's that the paper quotes no number for (no
    verdict: neither passed nor missed)."""

    quantity: str
    unit: str
    paper: float | None
    ccsim: float | None
    tolerance: float | None
    source: str
    reason: str | None = None  # why a miss is a miss (None when it passes)
    #: ``"upper"``: the paper's number is a bound ccsim's must not exceed ("stays below
    #: 20 ms"), by more than the tolerance; ``"lower"``: must not fall below; None: both
    bound: str | None = None
    #: what the comparison is (experiment.KINDS); None for a result without a verdict
    kind: str | None = None

    @property
    def judged(self) -> bool:
        return self.paper is not None

    @property
    def difference(self) -> float | None:
        return None if self.ccsim is None or self.paper is None else self.ccsim - self.paper

    @property
    def ok(self) -> bool:
        # a little slack so 0.1 + 0.2 against 0.3 with tolerance 0 still passes
        diff = self.difference
        if diff is None or self.paper is None or self.tolerance is None:
            return False
        if self.bound == "upper":
            diff = max(diff, 0.0)
        elif self.bound == "lower":
            diff = min(diff, 0.0)
        return abs(diff) <= self.tolerance + 1e-12 * max(1.0, abs(self.paper))

    @property
    def symbol(self) -> str:
        if not self.judged:
            return UNJUDGED
        return PASS if self.ok else FAIL

    def as_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "difference": self.difference,
            "ok": self.ok,
            "judged": self.judged,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Verdict:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


def judge(
    quantity: str,
    paper: float,
    ccsim: float | None,
    tolerance: float,
    *,
    unit: str = "",
    source: str = "",
    reason: str | None = None,
    bound: str | None = None,
    kind: str | None = None,
) -> Verdict:
    """ccsim's value against the paper's: within ``tolerance`` (absolute, in ``unit``)
    passes. A miss keeps ``reason`` (or says it is not yet explained, or that ccsim has
    no value); a pass carries none."""
    if ccsim is not None and not math.isfinite(ccsim):
        ccsim = None
    verdict = Verdict(
        quantity, unit, float(paper), ccsim, float(tolerance), source, None, bound, kind
    )
    if verdict.ok:
        return verdict
    why = NO_RESULT if ccsim is None else (reason or UNEXPLAINED)
    return Verdict(quantity, unit, float(paper), ccsim, float(tolerance), source, why, bound, kind)


_STATISTICS = {"mean": np.mean, "median": np.median, "min": np.min, "max": np.max}


def _same(a: Any, b: Any) -> bool:
    if isinstance(b, list):  # a where value may list several: any of them
        return any(_same(a, v) for v in b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def _metric_values(rows: pa.Table, metric: str) -> list[float | None]:
    column, index = metric_column(metric)
    values = rows.column(column).to_pylist()
    if index is not None:  # a per-flow list column: that flow's value
        values = [v[index] if v is not None and index < len(v) else None for v in values]
    return values


def evaluate(check: Check, results: pa.Table) -> list[Verdict]:
    """Judge ``check`` against a sweep's result rows (failed runs left out): one verdict,
    or one per group of ``check.per`` (for a model, or a table of values: a row the
    sweep did not run, as in a quick mode's coarser grid, is left out). With
    ``check.across``, each group's value is that statistic over the axis's values of the
    per-point statistic, and the row names the axis value where it lies."""
    ok = results.filter(pc.equal(results.column("status"), "ok"))
    across = [check.across[0]] if check.across else []
    columns = {name: ok.column(name).to_pylist() for name in (*check.where, *check.per, *across)}
    metric = _metric_values(ok, check.metric)
    # model arguments measured per run (not axes of per): the model run by run
    measured = {
        p: _metric_values(ok, v)
        for p, v in check.args.items()
        if isinstance(v, str) and v not in check.per
    }
    groups: dict[tuple[Any, ...], dict[Any, list[float]]] = {}
    modelled: dict[tuple[Any, ...], list[float]] = {}
    when = _metric_values(ok, check.when[0]) if check.when else []
    for i, value in enumerate(metric):
        if not all(_same(columns[k][i], v) for k, v in check.where.items()):
            continue
        if check.when and not _holds(check.when, when[i]):
            continue
        key = tuple(columns[p][i] for p in check.per)
        point = columns[across[0]][i] if across else None
        bucket = groups.setdefault(key, {}).setdefault(point, [])
        if value is not None:
            bucket.append(float(value))
        if measured and check.model is not None:
            run_args = {p: values[i] for p, values in measured.items()}
            if all(v is not None for v in run_args.values()):
                fixed = dict(zip(check.per, key, strict=True))
                args = {
                    p: run_args[p] if p in run_args else (fixed[v] if isinstance(v, str) else v)
                    for p, v in check.args.items()
                }
                modelled.setdefault(key, []).append(MODELS[check.model].function(**args))
    if check.values:  # the paper's table: its rows, in its order
        per_columns = [results.column(p).to_pylist() for p in check.per]
        ran = set(zip(*per_columns, strict=True))  # every point the sweep ran, ok or not
        keys = [_find(ran, tuple(point[p] for p in check.per)) for point, _ in check.values]
        rows = [
            (key, paper)
            for key, (_, paper) in zip(keys, check.values, strict=True)
            if key is not None
        ]
    else:
        if not check.per and not groups and not check.when:
            groups[()] = {}
        rows = [(key, None) for key in sorted(groups)]
    if check.when:  # only the groups with runs that meet the condition
        rows = [(key, quoted) for key, quoted in rows if key in groups]
    verdicts = []
    for key, quoted in rows:
        point = dict(zip(check.per, key, strict=True))
        ccsim, where = _value(check, groups.get(key, {}))
        paper: float | None
        if check.model is not None and measured:
            runs = modelled.get(key)
            paper = float(_STATISTICS[check.statistic](runs)) if runs else None
            if paper is None:
                verdicts.append(
                    Verdict(
                        quantity_of(check, point),
                        check.unit,
                        None,
                        None,
                        None,
                        check.cited,
                        NO_RESULT,
                        check.bound,
                        check.kind,
                    )
                )
                continue
        elif check.model is not None:
            args = {p: point[v] if isinstance(v, str) else v for p, v in check.args.items()}
            paper = MODELS[check.model].function(**args)
        elif check.values:
            paper = quoted
        else:
            paper = check.value
        quantity = quantity_of(check, point)
        if where is not None:
            at = f"{where:g}" if isinstance(where, (int, float)) else str(where)  # a label axis
            quantity += f" (at {check.across[0]} = {at})"  # type: ignore[index]
        if paper is None:  # a result: ccsim's number, no verdict
            verdicts.append(Verdict(quantity, check.unit, None, ccsim, None, check.cited))
            continue
        verdicts.append(
            judge(
                quantity,
                paper,
                ccsim,
                check.tolerance if check.tolerance is not None else 0.0,
                unit=check.unit,
                source=check.cited,
                reason=_reason(check, point),
                bound=check.bound,
                kind=check.kind,
            )
        )
    return verdicts


def _holds(when: tuple[str, float | None, float | None], value: float | None) -> bool:
    """The run's value of the ``when`` metric lies in [min, max] (no value: it does not)."""
    if value is None or not math.isfinite(value):
        return False
    _, low, high = when
    slack = 1e-9
    return (low is None or value >= low - slack) and (high is None or value <= high + slack)


def quantity_of(check: Check, point: Mapping[str, Any]) -> str:
    return check.row_label.format(**point) if check.row_label else check.quantity


def _find(keys: set[tuple[Any, ...]], wanted: tuple[Any, ...]) -> tuple[Any, ...] | None:
    return next((k for k in keys if all(_same(a, b) for a, b in zip(k, wanted, strict=True))), None)


def _value(check: Check, points: Mapping[Any, list[float]]) -> tuple[float | None, Any]:
    """ccsim's value of one group: the statistic over its runs, or with ``across`` the
    across statistic of the per-point statistics, and the axis value where it lies."""
    stat = _STATISTICS[check.statistic]
    per_point = {p: float(stat(v)) for p, v in points.items() if v}
    if not per_point:
        return None, None
    if check.across is None:
        return per_point[None], None
    chosen = float(_STATISTICS[check.across[1]](list(per_point.values())))
    if check.across[1] in ("min", "max"):
        where = next(p for p, v in sorted(per_point.items()) if v == chosen)
        return chosen, where
    return chosen, None


def _reason(check: Check, point: Mapping[str, Any]) -> str | None:
    """The experiment file's reason for a miss here: the first ``reasons`` entry whose
    ``where`` matches the group, else the check's ``reason``."""
    for where, reason in check.reasons:
        if all(k in point and _same(point[k], v) for k, v in where.items()):
            return reason
    return check.reason
