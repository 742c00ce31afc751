"""`ccsim reproduce` capabilities paper 003 needed, each on its own: statistics of a kept
per-run table (b as the median queue at a loss), metrics relative to a baseline row of
the same sweep (the gain over beta_ecn = 0.5), a model evaluated at a value measured per
run (check and curve), CDFs pooled over runs; and paper 003's files load."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from ccsim.plots.figure import Curve, Panel, check_plot, draw_figure
from ccsim.reproduce.experiment import Check, experiment_paths, load_experiment
from ccsim.reproduce.metrics import MetricError, add_metrics, parse, parse_metric
from ccsim.reproduce.models import abe_utilisation
from ccsim.reproduce.verdict import PASS
from ccsim.reproduce.verdict import evaluate as judge_rows

PATHS = {f"{p.parent.name}:{p.stem}": p for p in experiment_paths()}
NAMES = frozenset({"bottleneck", "utilisation", "beta_ecn", "rtt_ms", "measure_start_s"})


def _rows(n: int = 4) -> pa.Table:
    """Runs 0..n-1 at beta_ecn 0.5/0.9 x rtt 100/400, one summary each."""
    beta, rtt, summaries = [], [], []
    for i in range(n):
        b, r = (0.5, 0.9)[i % 2], (100, 400)[i // 2 % 2]
        beta.append(b)
        rtt.append(r)
        departed = 1000.0 * r * (1.2 if b == 0.9 else 1.0)
        summaries.append(
            json.dumps({"measure_start_s": 10.0, "bottleneck": {"bytes_departed": departed}})
        )
    return pa.table(
        {
            "run": list(range(n)),
            "status": ["ok"] * n,
            "beta_ecn": beta,
            "rtt_ms": rtt,
            "summary": summaries,
        }
    )


def test_statistics_of_a_kept_table_inside_the_window():
    events = pa.table(
        {
            "run": pa.array([0, 0, 0, 0, 1], pa.int32()),
            "time_s": [5.0, 11.0, 12.0, 13.0, 20.0],
            "qlen_pkts": [100, 4, 6, 8, 3],
        }
    )
    metrics = {
        "b": parse("median(tables.queue_events.qlen_pkts)", NAMES),
        "early": parse("max(tables.queue_events.qlen_pkts, 0, 10)", NAMES),
        "n": parse("count(tables.queue_events.qlen_pkts)", NAMES),
        "p": parse("quantile(tables.queue_events.qlen_pkts, 0.5) / rtt_ms", NAMES),
    }
    out = add_metrics(_rows(3), metrics, ["beta_ecn", "rtt_ms"], lambda t: events)
    # run 0: the drop at 5 s lies before the window (10 s); run 2 has no rows
    assert out.column("b").to_pylist() == [6.0, 3.0, None]
    assert out.column("early").to_pylist() == [100.0, None, None]
    assert out.column("n").to_pylist() == [3.0, 1.0, None]
    assert out.column("p").to_pylist() == [pytest.approx(0.06), pytest.approx(0.03), None]
    # without the table (the sweep does not keep it) there is no value
    assert add_metrics(_rows(1), metrics, []).column("b").to_pylist() == [None]


@pytest.mark.parametrize(
    "bad",
    [
        "tables.queue_events.qlen_pkts + 1",
        "abs(tables.queue_events.qlen_pkts)",
        "quantile(tables.queue_events.qlen_pkts)",
        "median(tables.queue_events.qlen_pkts, 1)",
    ],
)
def test_table_columns_only_inside_a_statistic(bad: str):
    with pytest.raises(MetricError):
        parse(bad, NAMES)


def test_gain_over_a_baseline_row_of_the_same_sweep():
    gain = parse_metric({"of": "bottleneck.bytes_departed", "baseline": {"beta_ecn": 0.5}}, NAMES)
    diff = parse_metric(
        {"of": "bottleneck.bytes_departed", "baseline": {"beta_ecn": 0.5}, "compare": "ratio"},
        NAMES,
    )
    out = add_metrics(_rows(4), {"gain": gain, "ratio": diff}, ["beta_ecn", "rtt_ms"])
    # each RTT against its own beta_ecn = 0.5 run
    assert out.column("gain").to_pylist() == pytest.approx([0.0, 20.0, 0.0, 20.0])
    assert out.column("ratio").to_pylist() == pytest.approx([1.0, 1.2, 1.0, 1.2])
    for bad in (
        {"of": "x"},
        {"of": "utilisation", "baseline": {"nosuch": 1}},
        {"of": "utilisation", "baseline": {"beta_ecn": 0.5}, "compare": "log"},
    ):
        with pytest.raises(MetricError):
            parse_metric(bad, NAMES)


def test_model_at_a_value_measured_per_run():
    rows = pa.table(
        {
            "status": ["ok"] * 3,
            "beta": [0.5, 0.5, 0.5],
            "b_bdp": [0.0, 0.1, 0.2],
            "utilisation": [0.75, 0.8, 0.85],
        }
    )
    check = Check(
        quantity="U",
        unit="",
        source={"section": "II-B", "figure": "Fig. 4", "quote": "q"},
        tolerance=0.03,
        tolerance_why="",
        metric="utilisation",
        model="abe_utilisation",
        args={"b": "b_bdp", "beta": "beta"},
        per=("beta",),
        statistic="median",
    )
    (verdict,) = judge_rows(check, rows)
    assert verdict.paper == pytest.approx(abe_utilisation(0.1, 0.5))  # median of 3 models
    assert verdict.ccsim == pytest.approx(0.8) and verdict.symbol == PASS


def test_measured_curve_and_pooled_cdf_draw(tmp_path: Path):
    rows = pa.table({"rtt_ms": [50, 100], "beta": [0.5, 0.5], "u": [0.8, 0.78], "b": [0.1, 0.04]})
    spec = {
        "type": "lines",
        "x": "rtt_ms",
        "y": "u",
        "series": "beta",
        "models": [{"model": "abe_utilisation", "args": {"b": "b", "beta": "beta"}}],
    }
    check_plot(spec, {"rtt_ms", "beta", "u", "b"}, set(), {"abe_utilisation"})
    with pytest.raises(ValueError, match="x or series"):
        check_plot(
            {**spec, "models": [{"model": "abe_utilisation", "args": {"b": "zz"}}]},
            {"rtt_ms", "beta", "u"},
            set(),
            {"abe_utilisation"},
        )
    curve = Curve(abe_utilisation, {"b": "b", "beta": "beta"}, "model")
    cdf = pa.table(
        {
            "run": [0, 0, 1, 1],
            "sojourn_ms": [1.0, 3.0, 2.0, 4.0],
            "cdf": [0.5, 1.0, 0.5, 1.0],
            "aqm": ["codel"] * 4,
        }
    )
    pooled = {
        "type": "cdf",
        "table": "sojourn_cdf",
        "x": "sojourn_ms",
        "y": "cdf",
        "series": "aqm",
        "pool": True,
    }
    check_plot(pooled, set(), {"sojourn_cdf"}, set())
    with pytest.raises(ValueError, match="pool"):
        check_plot({**spec, "pool": True}, {"rtt_ms", "beta", "u", "b"}, set(), {"abe_utilisation"})
    paths = draw_figure([Panel(spec, rows, [curve]), Panel(pooled, cdf)], tmp_path / "f")
    assert all(p.stat().st_size > 5000 for p in paths)


@pytest.mark.parametrize("name", sorted(k for k in PATHS if k.startswith("003:")))
def test_paper_003_files_load(name: str):
    exp = load_experiment(PATHS[name])
    assert exp.checks or exp.results


def test_one_sided_bound_and_a_where_list():
    from ccsim.reproduce.verdict import FAIL, judge

    assert judge("p90", 20.0, 12.0, 1.0, bound="upper").symbol == PASS  # below a ceiling
    assert judge("p90", 20.0, 22.0, 1.0, bound="upper").symbol == FAIL
    assert judge("gain", 0.0, 3.0, 0.0, bound="lower").symbol == PASS
    assert judge("p90", 20.0, 12.0, 1.0).symbol == FAIL  # two-sided by default
    rows = pa.table({"status": ["ok"] * 3, "b": [0.5, 0.85, 0.95], "p90": [18.0, 19.0, 30.0]})
    check = Check(
        quantity="p90 for b <= 0.85",
        unit="ms",
        source={"section": "IV-B", "figure": "Fig. 8", "quote": "q"},
        tolerance=0.0,
        tolerance_why="",
        metric="p90",
        value=20.0,
        where={"b": [0.5, 0.85]},
        statistic="max",
        bound="upper",
    )
    (verdict,) = judge_rows(check, rows)
    assert verdict.ccsim == 19.0 and verdict.symbol == PASS
