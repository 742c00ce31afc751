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
#: The reason of a miss that the experiment file does not explain.
UNEXPLAINED = "not yet explained"
NO_RESULT = "no ccsim result for this selection (its runs failed or did not run)"


@dataclass(frozen=True)
class Verdict:
    """One row of the report: the paper's value against ccsim's."""

    quantity: str
    unit: str
    paper: float
    ccsim: float | None
    tolerance: float
    source: str
    reason: str | None = None  # why a miss is a miss (None when it passes)

    @property
    def difference(self) -> float | None:
        return None if self.ccsim is None else self.ccsim - self.paper

    @property
    def ok(self) -> bool:
        # a little slack so 0.1 + 0.2 against 0.3 with tolerance 0 still passes
        diff = self.difference
        return diff is not None and abs(diff) <= self.tolerance + 1e-12 * max(1.0, abs(self.paper))

    @property
    def symbol(self) -> str:
        return PASS if self.ok else FAIL

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "difference": self.difference, "ok": self.ok}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Verdict:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__})


def judge(
    quantity: str,
    paper: float,
    ccsim: float | None,
    tolerance: float,
    *,
    unit: str = "",
    source: str = "",
    reason: str | None = None,
) -> Verdict:
    """ccsim's value against the paper's: within ``tolerance`` (absolute, in ``unit``)
    passes. A miss keeps ``reason`` (or says it is not yet explained, or that ccsim has
    no value); a pass carries none."""
    if ccsim is not None and not math.isfinite(ccsim):
        ccsim = None
    verdict = Verdict(quantity, unit, float(paper), ccsim, float(tolerance), source)
    if verdict.ok:
        return verdict
    why = NO_RESULT if ccsim is None else (reason or UNEXPLAINED)
    return Verdict(quantity, unit, float(paper), ccsim, float(tolerance), source, why)


_STATISTICS = {"mean": np.mean, "median": np.median, "min": np.min, "max": np.max}


def _same(a: Any, b: Any) -> bool:
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
    or one per group of ``check.per`` for a model."""
    ok = results.filter(pc.equal(results.column("status"), "ok"))
    columns = {name: ok.column(name).to_pylist() for name in (*check.where, *check.per)}
    metric = _metric_values(ok, check.metric)
    groups: dict[tuple[Any, ...], list[float]] = {}
    for i, value in enumerate(metric):
        if not all(_same(columns[k][i], v) for k, v in check.where.items()):
            continue
        key = tuple(columns[p][i] for p in check.per)
        bucket = groups.setdefault(key, [])
        if value is not None:
            bucket.append(float(value))
    if not check.per and not groups:
        groups[()] = []
    verdicts = []
    for key in sorted(groups):
        point = dict(zip(check.per, key, strict=True))
        values = groups[key]
        ccsim = float(_STATISTICS[check.statistic](values)) if values else None
        if check.model is not None:
            args = {p: point[v] if isinstance(v, str) else v for p, v in check.args.items()}
            paper = MODELS[check.model].function(**args)
        else:
            assert check.value is not None
            paper = check.value
        quantity = check.row_label.format(**point) if check.row_label else check.quantity
        verdicts.append(
            judge(
                quantity,
                paper,
                ccsim,
                check.tolerance,
                unit=check.unit,
                source=check.cited,
                reason=_reason(check, point),
            )
        )
    return verdicts


def _reason(check: Check, point: Mapping[str, Any]) -> str | None:
    """The experiment file's reason for a miss here: the first ``reasons`` entry whose
    ``where`` matches the group, else the check's ``reason``."""
    for where, reason in check.reasons:
        if all(k in point and _same(point[k], v) for k, v in where.items()):
            return reason
    return check.reason
