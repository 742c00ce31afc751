"""`ccsim reproduce` capabilities paper 000 needed, each on its own (derived metrics,
shared sweeps, table-shaped and across-axis checks, results without a paper number,
min-max error bars, one panel per axis value), and a quick run of 000:fig2 end to end."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from ccsim.plots.figure import Panel, check_plot, draw_figure, split_panels
from ccsim.reproduce.experiment import ExperimentError, experiment_paths, load_experiment
from ccsim.reproduce.metrics import MetricError, add_metrics, evaluate, parse
from ccsim.reproduce.report import markdown_pages
from ccsim.reproduce.verdict import FAIL, PASS, UNJUDGED, Verdict
from ccsim.reproduce.verdict import evaluate as judge_rows
from helpers import run_cli

PATHS = {f"{p.parent.name}:{p.stem}": p for p in experiment_paths()}
SUMMARY = {
    "utilisation": 0.99,
    "groups": [
        {"group": 0, "flows": 2, "throughput_mbps": 1.0},
        {"group": 1, "flows": 2, "throughput_mbps": 3.0},
    ],
    "fct": None,
}
SHARE = "100 * groups[0].throughput_mbps / (groups[0].throughput_mbps + groups[1].throughput_mbps)"


# --------------------------------------------------------------------------- metrics


def test_metric_expressions_read_the_summary_and_axes():
    names = {"groups", "utilisation", "fct", "rtt_ms"}
    assert evaluate(parse(SHARE, names), SUMMARY) == pytest.approx(25.0)
    per_flow = parse(f"{SHARE} / groups[0].flows", names)
    assert evaluate(per_flow, SUMMARY) == pytest.approx(12.5)
    assert evaluate(parse("max(utilisation, 0.5) - -1", names), SUMMARY) == pytest.approx(1.99)
    assert evaluate(parse("rtt_ms * 2", names), {"rtt_ms": 20}) == 40.0
    # a path a run lacks, a null, a division by zero: that run has no value
    assert evaluate(parse("groups[5].throughput_mbps", names), SUMMARY) is None
    assert evaluate(parse("fct + 1", names), SUMMARY) is None
    assert evaluate(parse("1 / (utilisation - utilisation)", names), SUMMARY) is None


@pytest.mark.parametrize(
    "bad",
    [
        "__import__('os')",
        "groups[0].x ** 2",
        "nosuch + 1",
        "groups[-1].share",
        "'a'",
        "a if b else c",
    ],
)
def test_metric_expressions_outside_the_grammar_are_refused(bad: str):
    with pytest.raises(MetricError):
        parse(bad, {"groups", "a", "b", "c"})


def test_add_metrics_appends_a_column_per_metric():
    rows = pa.table(
        {
            "status": ["ok", "failed"],
            "g": [0.1, 120.0],
            "summary": [json.dumps(SUMMARY), None],
        }
    )
    out = add_metrics(rows, {"share": parse(SHARE, {"groups"})}, ["g"])
    assert out.column("share").to_pylist() == [pytest.approx(25.0), None]


# --------------------------------------------------------------------------- checks


def _rows() -> pa.Table:
    """Two RTTs x three values of G x two repetitions, one failed run."""
    rtt, g, share, status = [], [], [], []
    for r, base in ((20, 10.0), (300, 1.0)):
        for gv, factor in ((0.1, 1.0), (6.0, 3.0), (120.0, 4.0)):
            for rep in (0, 1):
                rtt.append(r)
                g.append(gv)
                share.append(base * factor + rep)  # mean base * factor + 0.5
                status.append("ok")
    status[-1] = "failed"  # (300, 120, rep 1): left out
    return pa.table({"status": status, "rtt_ms": rtt, "g": g, "share": share})


def _experiment(tmp_path: Path, text: str, name: str = "000:fig3") -> Path:
    """A copy of a shipped experiment with one change, in a tree of its own."""
    root = tmp_path / "experiments"
    for key, path in PATHS.items():
        if key.startswith("000:"):
            (root / "000" / "scenarios").mkdir(parents=True, exist_ok=True)
            (root / "000" / path.name).write_text(path.read_text())
    base = PATHS["000:fig3"].parent / "scenarios" / "cdg_vs_cubic.toml"
    (root / "000" / "scenarios" / base.name).write_text(base.read_text())
    target = root / "000" / f"{name.split(':')[1]}.toml"
    if text:
        target.write_text(target.read_text() + text)
    return target


def test_table_of_values_with_a_minimum_across_an_axis(tmp_path: Path):
    exp = load_experiment(_experiment(tmp_path, "", "000:table1"))
    lowers = [c for c in exp.checks if c.across == ("g", "min")]
    # the lower bounds come in groups of RTTs, each with its tolerance: here as one table
    values = tuple(v for c in lowers for v in c.values)
    lower = type(lowers[0])(**{**lowers[0].__dict__, "values": values})
    check = type(lower)(**{**lower.__dict__, "metric": "share"})
    verdicts = judge_rows(check, _rows())
    # rows of the paper's table that the sweep did not run (50 ms, ...) are left out
    assert [v.quantity for v in verdicts] == [
        "lower bound at RTT_base = 20 ms (at g = 0.1)",
        "lower bound at RTT_base = 300 ms (at g = 0.1)",
    ]
    assert verdicts[0].paper == 10.3 and verdicts[0].ccsim == pytest.approx(10.5)
    assert verdicts[0].symbol == PASS
    upper = type(lower)(**{**lower.__dict__, "metric": "share", "across": ("g", "max")})
    top = judge_rows(upper, _rows())
    assert top[0].ccsim == pytest.approx(40.5) and top[0].quantity.endswith("(at g = 120)")
    assert top[1].ccsim == pytest.approx(4.0)  # the failed repetition is not averaged
    assert top[0].symbol == FAIL  # 40.5 against 10.3


def test_results_have_no_verdict_and_are_counted_apart(tmp_path: Path):
    exp = load_experiment(PATHS["000:aqm"])
    result = next(r for r in exp.results if r.per == ("rtt_ms",))
    assert not result.judged and result.tolerance is None
    check = type(result)(**{**result.__dict__, "metric": "share", "sweep": "main"})
    rows = judge_rows(check, _rows())
    assert [v.symbol for v in rows] == [UNJUDGED, UNJUDGED]
    assert rows[0].paper is None and rows[0].difference is None and not rows[0].ok
    record = {
        "id": "000:x",
        "title": "t",
        "status": "draft",
        "mode": "quick",
        "runs": 1,
        "failed_runs": 0,
        "ccsim_version": "0",
        "source": {"section": "IV", "figure": "Fig. 9", "caption": "c"},
        "verdicts": [v.as_dict() for v in rows]
        + [Verdict("q", "%", 1.0, 1.5, 1.0, "here", kind="number").as_dict()],
        "_dir": "000_x",
    }
    pages = markdown_pages([record])
    summary = pages["report.md"]
    # the paper number counted under its kind, the results apart (and folded away)
    assert "| 000 | 1 | 1 pass / 0 FAIL | — |" in summary and "| 2 |" in summary
    detail = pages["report-000.md"]
    assert "<details><summary>2 results without a paper number</summary>" in detail
    assert re.search(r"\| [^|]* \| 10\.5 % \| [^|]* \|", detail)


def test_shared_sweep_is_the_owners(tmp_path: Path):
    table1 = load_experiment(PATHS["000:table1"])
    fig3 = load_experiment(PATHS["000:fig3"])
    assert table1.owner("main") == ("000_fig3", "main")
    for quick in (False, True):  # the same runs, so one store serves both
        assert table1.sweep_document("main", quick) == fig3.sweep_document("main", quick)
    aqm = load_experiment(PATHS["000:aqm"])
    assert aqm.owner("droptail") == ("000_fig3", "main") and aqm.owner("aqm") == ("000_aqm", "aqm")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('\n[metrics]\nbad = "nosuch * 2"\n', "not a summary key or axis"),
        ('\n[metrics]\nrepetition = "utilisation"\n', "new column name"),
    ],
)
def test_bad_metrics_are_rejected(tmp_path: Path, extra: str, message: str):
    path = _experiment(tmp_path, "", "000:fig2")
    text = path.read_text().replace("[metrics]\n", "[metrics]\n" + extra.split("[metrics]\n")[1])
    path.write_text(text)
    with pytest.raises(ExperimentError, match=re.escape(message)):
        load_experiment(path)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('from = "000:fig3"', 'from = "000:nosuch"', "no readable experiment file"),
        ('from = "000:fig3"', 'from = "000:fig3:other"', "has no sweep 'other'"),
        ('from = "000:fig3"', 'from = "000:table1"', "an experiment does not share its own"),
        ('statistic = "min" }', 'statistic = "min" }\nvalue = 3.0', "give the paper's value"),
        ('axis = "g", statistic = "min"', 'axis = "rtt_ms", statistic = "min"', "across.axis"),
        ("{ rtt_ms = 20, value = 10.3 }", "{ rtt_ms = 21, value = 10.3 }", "not a value"),
    ],
)
def test_malformed_table1_is_rejected(tmp_path: Path, old: str, new: str, message: str):
    path = _experiment(tmp_path, "", "000:table1")
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(ExperimentError, match=re.escape(message)):
        load_experiment(path)


# --------------------------------------------------------------------------- figure


def test_minmax_errorbars_panels_and_label_tables(tmp_path: Path):
    rows = _rows().filter(pc.equal(_rows().column("status"), "ok"))
    spec = {
        "type": "lines",
        "x": "g",
        "y": "share",
        "series": "rtt_ms",
        "series_label": {"20": "20 ms", "300": "300 ms"},
        "errorbars": "minmax",
        "panels": "rtt_ms",
        "panel_labels": {"20": "short"},
        "title": "RTT {}",
        "xticks": [0.1, 6, 120],
        "logx": True,
    }
    check_plot(spec, {"g", "share", "rtt_ms"}, set(), set())
    with pytest.raises(ValueError, match="errorbars"):
        check_plot({**spec, "errorbars": "range"}, {"g", "share", "rtt_ms"}, set(), set())
    with pytest.raises(ValueError, match="panels"):
        check_plot({**spec, "panels": "nosuch"}, {"g", "share", "rtt_ms"}, set(), set())
    panels = split_panels(Panel(spec, rows))
    assert [p.spec["title"] for p in panels] == ["RTT short", "RTT 300"]
    assert panels[1].spec["where"] == {"rtt_ms": 300}
    series = pa.table(
        {
            "run": [0] * 4,
            "time_s": [1.0, 2.0, 1.0, 2.0],
            "flow_id": [0, 0, 4, 4],
            "throughput_mbps": [1.0, 3.0, 9.0, 9.0],
        }
    )
    ts = {
        "type": "timeseries",
        "table": "flow_series",
        "x": "time_s",
        "y": "throughput_mbps",
        "series": "flow_id",
        "where": {"flow_id": [0, 1]},
        "series_summary": {"from": 1.0, "format": "mean {:.1f}"},
    }
    check_plot(ts, set(), {"flow_series"}, set())
    paths = draw_figure([*panels, Panel(ts, series)], tmp_path / "figure", columns=3)
    assert all(p.stat().st_size > 10_000 for p in paths)


# --------------------------------------------------------------------------- end to end


def test_quick_run_of_000_fig2(tmp_path: Path):
    out = tmp_path / "repro"
    result = run_cli("reproduce", "000:fig2", "--quick", "-o", out)
    assert result.returncode == 0, result.stderr
    record = json.loads((out / "000_fig2" / "experiment.json").read_text())
    assert record["runs"] == 4 and not record["plot_error"]
    assert record["metrics"]["cdg_share_pct"].startswith("100 * groups[0]")
    one_flow = next(v for v in record["verdicts"] if "G = 0.1" in v["quantity"])
    assert 2.0 < one_flow["ccsim"] < 10.0
    assert (out / "000_fig2" / "figure.png").stat().st_size > 50_000
