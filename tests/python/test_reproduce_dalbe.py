"""000:dalbe and the framework pieces it added: ``coalesce`` and earlier metrics in an
expression, ``compare = "baseline"``, a check's ``when`` (judge only the runs whose metric
lies in a range), a bound checked per group, repeated zipped axis labels, ``xy`` plots."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from ccsim.plots.figure import Panel, check_plot, draw_figure
from ccsim.reproduce.experiment import experiment_paths, load_experiment
from ccsim.reproduce.metrics import Baseline, MetricError, add_metrics, parse, parse_metric
from ccsim.reproduce.verdict import evaluate

DALBE = next(p for p in experiment_paths() if p.parent.name == "000" and p.stem == "dalbe")


def _summary(fct: float | None, delivered: int) -> str:
    flow = {"size_bytes": 1000, "fct_s": fct, "bytes_delivered": delivered, "start_s": 0.0}
    return json.dumps({"duration_s": 10.0, "flows": [flow]})


def test_coalesce_earlier_metrics_and_the_baseline_itself():
    rows = pa.table(
        {
            "status": ["ok"] * 4,
            "ctrl": ["a", "base", "a", "base"],
            "case": [1, 1, 2, 2],
            "summary": [
                _summary(2.0, 1000),
                _summary(1.0, 1000),
                _summary(None, 500),
                _summary(4.0, 1000),
            ],
        }
    )
    names = {"flows", "duration_s", "ctrl", "case"}
    rate = "coalesce(flows[0].size_bytes / flows[0].fct_s, flows[0].bytes_delivered / duration_s)"
    metrics = {"rate": parse(rate, names)}
    metrics["double"] = parse("2 * rate", names | {"rate"})  # names the metric before it
    metrics["base_rate"] = parse_metric(
        {"of": "rate", "baseline": {"ctrl": "base"}, "compare": "baseline"}, names | {"rate"}
    )
    assert isinstance(metrics["base_rate"], Baseline)
    out = add_metrics(rows, metrics, ["ctrl", "case"])
    # unfinished (fct null): bytes delivered over the run instead
    assert out.column("rate").to_pylist() == pytest.approx([500.0, 1000.0, 50.0, 250.0])
    assert out.column("double").to_pylist() == pytest.approx([1000.0, 2000.0, 100.0, 500.0])
    # every run carries its case's baseline value
    assert out.column("base_rate").to_pylist() == pytest.approx([1000.0, 1000.0, 250.0, 250.0])
    with pytest.raises(MetricError, match="functions"):
        parse("coalesce2(flows)", names)


def test_a_when_check_judges_only_the_runs_its_metric_allows():
    exp = load_experiment(DALBE)
    met = next(c for c in exp.checks if c.metric == "met" and c.sweep == "cubic")
    assert met.when == ("feasible", 1.0, None) and met.bound == "lower"
    rows = pa.table(
        {
            "status": ["ok"] * 4,
            "controller": ["DA-LBE (CDG)"] * 4,
            "competitors": [1, 1, 8, 8],
            "rtt_ms": [50] * 4,
            "deadline_s": [60] * 4,
            "met": [1.0, 0.0, 0.0, 0.0],
            "feasible": [1.0, 1.0, 0.0, 0.0],  # N = 8: infeasible, not judged
        }
    )
    verdicts = evaluate(met, rows)
    assert len(verdicts) == 1 and "N = 1" in verdicts[0].quantity
    assert verdicts[0].ccsim == pytest.approx(0.5) and not verdicts[0].ok  # one repetition missed
    share = next(c for c in exp.checks if c.metric == "share_minus_g120" and c.sweep == "cubic")
    rows = rows.append_column("share_minus_g120", pa.array([-3.0, -1.0, 2.0, 2.0]))
    rows = rows.append_column("g120_met", pa.array([1.0, 1.0, 1.0, 1.0]))
    verdicts = {v.quantity: v for v in evaluate(share, rows)}
    assert len(verdicts) == 2  # a bound, per group of per
    assert [v.ok for v in verdicts.values()] == [True, False]


def test_dalbe_labels_a_zipped_axis_with_repeated_values():
    exp = load_experiment(DALBE)
    labels = exp.axis_labels("cubic", False)
    assert set(labels["control"].values()) == {"control", "record"}
    assert len(labels["controller"]) == 5


def test_xy_plot_draws_one_point_per_value_of_by(tmp_path: Path):
    rows = pa.table(
        {
            "controller": ["a", "a", "b", "b"],
            "deadline_s": [60, 240, 60, 240],
            "left_pct": [70.0, 90.0, 60.0, 60.0],
            "met": [0.0, 1.0, 1.0, 1.0],
        }
    )
    spec = {"type": "xy", "x": "left_pct", "y": "met", "series": "controller", "by": "deadline_s"}
    columns = set(rows.column_names)
    check_plot(spec, columns, set(), set())
    with pytest.raises(ValueError, match="by"):
        check_plot({k: v for k, v in spec.items() if k != "by"}, columns, set(), set())
    with pytest.raises(ValueError, match="xy plots"):
        check_plot(
            {"type": "lines", "x": "left_pct", "y": "met", "by": "deadline_s"},
            columns,
            set(),
            set(),
        )
    paths = draw_figure([Panel(spec, rows)], tmp_path / "figure")
    assert all(p.stat().st_size > 5_000 for p in paths)
