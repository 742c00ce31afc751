"""Verdicts a reviewer can trust (issue 34): every check of every shipped experiment can
fail on each side its claim has, the cases a reading of the papers found too generous
have the verdict their own data supports, and the status is computed, never written.

Driven from the checks' data: a new experiment file is covered without editing this file.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from ccsim.reproduce.experiment import (
    KINDS,
    PAPER_KINDS,
    Check,
    load_all,
    status_of,
)
from ccsim.reproduce.verdict import FAIL, PASS, UNEXPLAINED, Verdict, evaluate, judge

EXPERIMENTS = load_all()
BY_ID = {e.id: e for e in EXPERIMENTS}
#: The paper value a model check is perturbed around (the model's value is computed from
#: ccsim's own runs; any value exercises the comparison).
NOMINAL_MODEL_VALUE = 1.0


def _paper_values(check: Check) -> list[float]:
    if check.value is not None:
        return [check.value]
    if check.values:
        return [v for _, v in check.values]
    return [NOMINAL_MODEL_VALUE]


def _checks() -> list[tuple[str, int, Check]]:
    return [(e.id, i, c) for e in EXPERIMENTS for i, c in enumerate(e.checks)]


def _judge(check: Check, paper: float, ccsim: float) -> Verdict:
    assert check.tolerance is not None
    return judge(check.quantity, paper, ccsim, check.tolerance, bound=check.bound, kind=check.kind)


@pytest.mark.parametrize(("exp_id", "index", "check"), _checks(), ids=lambda x: str(x)[:40])
def test_every_check_fails_just_beyond_its_tolerance_on_each_side_it_claims(
    exp_id: str, index: int, check: Check
):
    """Just inside the tolerance passes; just beyond fails on each side the claim has
    (both for a two-sided number, the bounded side of a bound), and the free side of a
    bound passes however far."""
    assert check.tolerance is not None
    tol = check.tolerance
    failing_sides = {None: (-1, 1), "upper": (1,), "lower": (-1,)}[check.bound]
    for paper in _paper_values(check):
        step = 1e-6 * max(1.0, abs(paper), tol)
        for side in (-1, 1):
            inside = _judge(check, paper, paper + side * tol * (1 - 1e-9))
            assert inside.ok, f"{exp_id} check {index}: {paper} {side:+}{tol} inside fails"
            beyond = _judge(check, paper, paper + side * (tol + step))
            far = _judge(check, paper, paper + side * (tol + 1e6 * max(1.0, abs(paper))))
            if side in failing_sides:
                assert not beyond.ok and beyond.symbol == FAIL, (
                    f"{exp_id} check {index}: {paper} {side:+}({tol} + {step:g}) passes"
                )
                assert not far.ok
            else:  # the free side of a bound
                assert beyond.ok and far.ok


@pytest.mark.parametrize(("exp_id", "index", "check"), _checks(), ids=lambda x: str(x)[:40])
def test_a_two_sided_band_does_not_reach_the_opposite_sign(exp_id: str, index: int, check: Check):
    """A band around a nonzero number that reaches past 0 passes no effect (or the
    opposite one) as the paper's number, and cannot fail on that side for a quantity
    that is never negative (000:table1's ±3 points on shares of 1-4 %)."""
    if check.bound is not None or check.model is not None:
        return
    for paper in _paper_values(check):
        if paper != 0:
            assert abs(paper) - check.tolerance >= -1e-12, (
                f"{exp_id} check {index}: {paper} ± {check.tolerance} reaches past 0"
            )


def test_kinds_are_written_or_derived_by_the_rule():
    for e in EXPERIMENTS:
        for c in e.checks:
            assert c.kind in KINDS
            assert (c.kind == "ccsim-only") == e.ccsim_only
            assert (c.kind == "model") == (c.model is not None and not e.ccsim_only)
        for r in e.results:
            assert r.kind is None and not r.judged
    only = {e.id for e in EXPERIMENTS if e.ccsim_only}
    assert only == {"000:dalbe", "000:aqm"} | {e.id for e in EXPERIMENTS if e.paper == "extra"}
    # the papers state numbers and claims in every paper experiment set
    kinds = {c.kind for e in EXPERIMENTS if not e.ccsim_only for c in e.checks}
    assert set(PAPER_KINDS) <= kinds


def test_status_is_computed_from_the_verdicts():
    ok = Verdict("q", "", 1.0, 1.0, 0.1, "s", kind="number")
    miss = Verdict("q", "", 1.0, 2.0, 0.1, "s", "why", kind="claim")
    result = Verdict("q", "", None, 3.0, None, "s")
    assert status_of([]) == status_of([result]) == "draft"  # 001:fig7: no check
    assert status_of([ok, result]) == "reproduced"  # 003:fig3/fig16: every check passes
    assert status_of([ok, miss]) == "partial"


# --------------------------------------------------------------------------- pinned cases


def _rows(check: Check, values: dict[Any, float], **fixed: Any) -> pa.Table:
    """Result rows for ``check``: one ok run per group of ``per`` (``values`` maps the
    group's value of the single ``per`` axis, or None without per, to ccsim's value),
    at the check's ``where`` (a list: its first value)."""
    where = {k: (v[0] if isinstance(v, list) else v) for k, v in check.where.items()}
    rows: list[dict[str, Any]] = []
    for point, value in values.items():
        row = {"status": "ok", **where, **fixed, check.metric: value}
        if check.per:
            row[check.per[0]] = point
        rows.append(row)
    return pa.Table.from_pylist(rows)


def _check(exp_id: str, quantity_part: str) -> Check:
    return next(c for c in BY_ID[exp_id].checks if quantity_part in c.quantity)


def _verdicts(check: Check, values: dict[Any, float], **fixed: Any) -> list[Verdict]:
    return evaluate(check, _rows(check, values, **fixed))


def test_003_fig5_never_drains_can_fail():
    check = _check("003:fig5", "never completely drains")
    assert check.kind == "claim" and check.bound == "lower" and check.value > 0
    assert [v.symbol for v in _verdicts(check, {None: 0.0})] == [FAIL]  # a drained queue
    assert [v.symbol for v in _verdicts(check, {None: 9.7})] == [PASS]


def test_003_fig18_pie_worse_than_codel_is_a_failed_claim():
    check = _check("003:fig18", "PIE better than CoDel")
    assert check.kind == "claim" and check.where["aqm"] == "PIE"
    # full run: PIE 6.1 % against CoDel 9.9 % at 200 ms, 0.5 % against 19.2 % at 400 ms
    verdicts = _verdicts(check, {"100": 0.7, "200": 6.1 - 9.9, "400": 0.5 - 19.2})
    assert [v.symbol for v in verdicts] == [PASS, FAIL, FAIL]
    assert verdicts[1].reason and verdicts[1].reason != UNEXPLAINED
    saturation = _check("003:fig18", "PIE: share of β_ecn = 0.95's")
    # a curve with nothing to saturate no longer passes as flat
    assert [v.symbol for v in _verdicts(saturation, {"400": 0.0})] == [FAIL]


def test_003_fig9_codel_trend_and_gains():
    numbers = _check("003:fig9", "CoDel, RTT 400 ms: long-term gain")
    # full run: +1.7 / +5.2 % where the paper has +5 / +10 %, which the file's reason
    # calls no gain: no longer within the tolerance
    assert [v.symbol for v in _verdicts(numbers, {0.5: 1.7, 0.6: 5.2})] == [FAIL, FAIL]
    trend = _check("003:fig9", "the trend reverses")
    assert trend.kind == "claim" and trend.bound == "upper"
    assert [v.symbol for v in _verdicts(trend, {0.75: 2.0, 0.8: 1.0})] == [FAIL, FAIL]


def test_003_fig3_ecn_that_hurts_is_no_assistance():
    check = _check("003:fig3", 'assistance": ECN does not lose')
    verdicts = _verdicts(check, {"CoDel": 0.86, "PIE": 1.02})
    assert [v.symbol for v in verdicts] == [FAIL, PASS]
    assert verdicts[0].reason and verdicts[0].reason != UNEXPLAINED


def test_003_fig8_fig10_added_delay_at_a_third_of_the_paper_fails():
    check = _check("003:fig10", "PIE, RTT 100 ms: 90th percentile added by β_ecn = 0.95")
    assert [v.symbol for v in _verdicts(check, {None: 5.0 / 3})] == [FAIL]
    check = _check("003:fig8", "PIE, RTT 100 ms: 90th percentile added over")
    verdicts = _verdicts(check, {0.7: 1.0, 0.85: 2.0, 0.95: 5.5})
    assert [v.symbol for v in verdicts] == [FAIL, FAIL, FAIL]


def test_002_fig8_recovery_is_measured_from_the_queue_building():
    check = _check("002:fig8", "time from the queue building")
    # PIE (paper) back 0.75 s after the queue builds: the absolute 54.35 s passed the
    # paper's 53 s only because the tokens ran out 3.6 s late
    verdicts = _verdicts(check, {"PIE (paper)": 0.75, "CoDel (Linux)": 4.6})
    assert [v.symbol for v in verdicts] == [FAIL, FAIL]
    assert not any(c.metric == "back_s" for c in BY_ID["002:fig8"].checks)


def test_000_table1_lower_bounds_can_fail_below():
    lowers = [c for c in BY_ID["000:table1"].checks if c.across == ("g", "min")]
    for check in lowers:
        for _, paper in check.values:
            assert not _judge(check, paper, 0.0).ok  # a CDG flow that takes nothing


def test_001_fig5_slightly_more_is_a_failed_claim_at_1_7():
    check = _check("001:fig5", "Gold DCTCP flow's throughput over a Gold CUBIC")
    assert check.kind == "claim"
    assert not _judge(check, check.value, 1.7).ok
    assert _judge(check, check.value, 1.1).ok
    assert not _judge(check, check.value, 0.95).ok  # "more" fails below 1


def test_no_check_in_a_paper_experiment_is_typed_as_ccsim_only():
    for e in EXPERIMENTS:
        if not e.ccsim_only:
            assert all(c.kind != "ccsim-only" for c in e.checks), e.id


def test_every_number_drawn_on_an_axis_finds_a_panel():
    """A paper number given ``drawn_on`` is drawn as a line on some panel whose
    selection it can be among (else the annotation draws nothing)."""
    from ccsim.reproduce.experiment import MAIN
    from ccsim.reproduce.runner import _compatible

    drawn = 0
    for e in EXPERIMENTS:
        for c in e.checks:
            if c.drawn_on is None:
                continue
            points = [p for p, _ in c.values] or [{}]
            panels = [
                p
                for p in e.plots
                if p.get("sweep", MAIN) == c.sweep and c.drawn_on in (p.get("x"), p.get("y"))
            ]
            assert any(
                _compatible(p.get("where", {}), {**c.where, **point})
                for p in panels
                for point in points
            ), f"{e.id}: {c.quantity} is drawn on no panel"
            drawn += 1
    assert drawn >= 20
    assert _compatible({"aqm": ["PIE", "CoDel"]}, {"aqm": "PIE", "rtt_ms": 90})
    assert not _compatible({"aqm": "CoDel"}, {"aqm": ["PIE", "PIE (ns-2 pie.cc)"]})
