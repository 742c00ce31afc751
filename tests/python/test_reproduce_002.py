"""`ccsim reproduce` capabilities paper 002 needed, each on its own (axis labels for
table-valued axes, the first crossing of a threshold in a time series, reference lines
on a panel), and paper 002's experiment files loading."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from ccsim.plots.figure import Panel, check_plot, draw_figure
from ccsim.reproduce.experiment import (
    ExperimentError,
    experiment_paths,
    load_experiment,
    relabel,
)
from ccsim.reproduce.metrics import MetricError, add_metrics, evaluate, parse

PATHS = {f"{p.parent.name}:{p.stem}": p for p in experiment_paths()}
QUEUES = [{"kind": "pie", "preset": "pie2013"}, "codel"]


# --------------------------------------------------------------------------- crossings


def _delay_scope() -> dict[str, object]:
    t = np.round(np.arange(0.1, 100.0, 0.1), 6)
    d = np.where((t >= 50.5) & (t < 57.0), 120.0, 5.0)
    d[t == 80.0] = np.nan  # an interval without departures counts as no value
    return {"measure_start_s": 10.0, "tables": {"q": {"time_s": t, "d": d}}}


def test_first_above_and_below_give_the_time_of_the_first_crossing():
    scope = _delay_scope()
    above = parse("first_above(tables.q.d, 30, 20, 100)", set())
    assert evaluate(above, scope) == pytest.approx(50.5)
    # nested: back below 30 ms after having risen above it
    back = parse("first_below(tables.q.d, 30, first_above(tables.q.d, 30, 20, 100), 100)", set())
    assert evaluate(back, scope) == pytest.approx(57.0)
    # without from/to: the measurement window (from 10 s); below from the window's start
    assert evaluate(parse("first_below(tables.q.d, 30)", set()), scope) == pytest.approx(10.0)
    # never crossed, or a table without time_s: no value
    assert evaluate(parse("first_above(tables.q.d, 500)", set()), scope) is None
    untimed = {"tables": {"r": {"x": [2.0]}}}
    assert evaluate(parse("first_above(tables.r.x, 1)", set()), untimed) is None


@pytest.mark.parametrize(
    "bad", ["first_above(tables.q.d)", "first_below(tables.q.d, 1, 2)", "first_above(q, 1)"]
)
def test_crossings_need_a_table_column_and_a_threshold(bad: str):
    with pytest.raises(MetricError):
        parse(bad, {"q"})


def test_a_long_table_reads_as_wide_one_column_per_name():
    """qdisc_state has one row per (time, name): tables.qdisc_state.drop_prob is the
    value of its drop_prob rows, in the measurement window, run by run."""
    rows = pa.table(
        {
            "run": [0, 1, 2],
            "status": ["ok"] * 3,
            "summary": [json.dumps({"measure_start_s": 1.0})] * 3,
        }
    )
    state = pa.table(
        {
            "run": [0, 0, 0, 0, 0, 0, 1, 1],
            "time_s": [0.5, 0.5, 1.5, 1.5, 2.5, 2.5, 1.5, 1.5],
            "queue": ["bottleneck"] * 8,
            "name": ["drop_prob", "qdelay_ms"] * 4,
            "value": [0.9, 5.0, 0.1, 6.0, 0.3, 7.0, 0.2, 8.0],
        }
    )
    metrics = {
        "p": parse("mean(tables.qdisc_state.drop_prob)", set()),
        "d": parse("max(tables.qdisc_state.qdelay_ms)", set()),
        "late": parse("first_above(tables.qdisc_state.drop_prob, 0.25)", set()),
    }
    out = add_metrics(rows, metrics, [], lambda t: state if t == "qdisc_state" else None)
    # run 0: the 0.5 s sample lies before the window; run 2 has no rows
    assert out.column("p").to_pylist() == [pytest.approx(0.2), pytest.approx(0.2), None]
    assert out.column("d").to_pylist() == [7.0, 8.0, None]
    assert out.column("late").to_pylist() == [2.5, None, None]


# --------------------------------------------------------------------------- labels


def _labelled_experiment(tmp_path: Path, labels: object) -> Path:
    (tmp_path / "999").mkdir()
    path = tmp_path / "999" / "fig1.toml"
    axis = (
        '{ path = "bottleneck.queue", values = [{ kind = "pie", preset = "pie2013" }, "codel"], '
        f"labels = {json.dumps(labels)} }}"
    )
    path.write_text(
        f"""id = "999:fig1"
title = "t"
[source]
section = "s"
figure = "f"
caption = "c"
[sweep]
series = ["queue_series"]
base = {{ duration = "2s", bottleneck = {{ rate = "10Mbps" }}, flows = [{{ rtt = "10ms" }}] }}
grid = {{ aqm = {axis} }}
[[plots]]
type = "timeseries"
table = "queue_series"
x = "time_s"
y = "qlen_pkts"
series = "aqm"
where = {{ aqm = "CoDel" }}
refs = [{{ y = 20.0, label = "ref" }}]
[[results]]
quantity = "u"
metric = "utilisation"
where = {{ aqm = "PIE" }}
""",
        encoding="utf-8",
    )
    return path


def test_axis_labels_name_table_values_in_columns_and_checks(tmp_path: Path):
    exp = load_experiment(_labelled_experiment(tmp_path, ["PIE", "CoDel"]))
    # the sweep layer never sees labels; checks and plots select by them
    doc = exp.sweep_document("main", quick=False)
    assert "labels" not in doc["grid"]["aqm"]
    assert [a.values for a in exp.load_sweep("main", False).axes] == [("PIE", "CoDel")]
    stored = pa.table({"aqm": [json.dumps(q) for q in QUEUES], "utilisation": [0.5, 0.6]})
    rows = relabel(stored, exp.axis_labels("main", False))
    assert rows.column("aqm").to_pylist() == ["PIE", "CoDel"]


@pytest.mark.parametrize("labels", [["PIE"], ["PIE", "PIE"], ["PIE", 3]])
def test_axis_labels_are_one_distinct_string_per_value(tmp_path: Path, labels: object):
    with pytest.raises(ExperimentError, match="labels"):
        load_experiment(_labelled_experiment(tmp_path, labels))


# --------------------------------------------------------------------------- refs


def test_reference_lines_are_checked_and_drawn(tmp_path: Path):
    spec = {"type": "timeseries", "table": "t", "x": "time_s", "y": "v"}
    for bad in ([{"y": 1, "x": 2}], [{"label": "no position"}], [{"y": "20"}], {"y": 1}):
        with pytest.raises(ValueError, match="refs"):
            check_plot({**spec, "refs": bad}, set(), {"t"}, set())
    good = {**spec, "refs": [{"y": 20.0, "label": "ref_del"}, {"x": 53.0}]}
    check_plot(good, set(), {"t"}, set())
    rows = pa.table({"time_s": [0.1, 0.2], "v": [1.0, 2.0], "run": [0, 0]})
    paths = draw_figure([Panel(good, rows)], tmp_path / "figure")
    assert all(p.stat().st_size > 0 for p in paths)


# --------------------------------------------------------------------------- paper 002


def test_paper_002_experiments_load():
    ids = {i for i in PATHS if i.startswith("002:")}
    assert {f"002:fig{n}" for n in range(2, 9)} <= ids
    for i in sorted(ids):
        exp = load_experiment(PATHS[i])
        assert exp.checks, i


def test_paper_002_runs_data_and_a_shaper_on_the_reverse_path():
    """Issue 15 done-when 4 in use: 002:fig6's pages come down the CMTS downstream (a
    token bucket and a DropTail queue on the reverse path) while 15 uploads go up."""
    base = load_experiment(PATHS["002:fig6"]).sweep_document("main", quick=True)["base"]
    link = base["bottleneck"]
    assert link["reverse_shaper"] == {"sustained": "20Mbps", "peak": "50Mbps", "burst": "20MB"}
    assert link["reverse_queue"]["kind"] == "droptail"
    directions = [g.get("direction", "forward") for g in base["flows"]]
    assert directions.count("forward") == 1 and directions.count("reverse") == 4
    assert sum(g["count"] for g in base["flows"] if g.get("direction") == "reverse") == 100
