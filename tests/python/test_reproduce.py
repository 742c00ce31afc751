"""`ccsim reproduce`: the list, a quick run of 003:fig2, bad names, every shipped
experiment file, and the comparison of quoted numbers with results."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pytest

from ccsim.reproduce.experiment import (
    ExperimentError,
    experiment_paths,
    load_all,
    load_experiment,
)
from ccsim.reproduce.models import abe_utilisation
from ccsim.reproduce.verdict import FAIL, NO_RESULT, PASS, UNEXPLAINED, evaluate, judge
from helpers import run_cli

FIG2 = next(p for p in experiment_paths() if p.parent.name == "003" and p.stem == "fig2")


def test_list_shows_every_experiment():
    result = run_cli("reproduce", "--list")
    assert result.returncode == 0, result.stderr
    header, *lines = result.stdout.splitlines()
    assert "checks by kind" in header
    assert any(line.startswith("003:fig2") and "Fig. 2" in line for line in lines)
    assert len(lines) == len(experiment_paths())
    # papers first, ccsim-only experiments after, each with its checks counted by kind
    only = [line.endswith("[ccsim-only]") for line in lines]
    assert only == sorted(only) and any(only)
    assert any(line.startswith("003:fig2") and "num 2, model 1" in line for line in lines)


def test_quick_run_of_003_fig2(tmp_path: Path):
    out = tmp_path / "repro"
    result = run_cli("reproduce", "003:fig2", "--quick", "--timing", "-o", out)
    assert result.returncode == 0, result.stderr
    assert "wall time in all" in result.stdout
    exp = out / "003_fig2"
    for name in ("figure.png", "figure.pdf"):
        assert (exp / name).stat().st_size > 10_000
    assert (exp / "quick" / "results.parquet").exists()

    summary = (out / "report.md").read_text()
    assert "report-003.md" in summary and "paper numbers" in summary
    report = (out / "report-003.md").read_text()
    rows = [line for line in report.splitlines() if re.search(r"\| (pass|\*\*FAIL\*\*) \|", line)]
    # every quick grid point against Eq. (5)/(6), plus the two numbers the text quotes
    assert len(rows) == 4 * 3 + 2
    assert any("ψ at b = 0, β = 0.5" in row and "| 0.75 of C |" in row for row in rows)
    assert sum("| model |" in row for row in rows) == 4 * 3
    assert "Choices where the paper is silent" in report
    for row in rows:  # a miss always says why
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[7] == "pass" or cells[8]

    index = (out / "index.html").read_text()
    assert 'href="paper-003.html"' in index and "<script" not in index
    page = (out / "paper-003.html").read_text()
    assert '<img src="003_fig2/figure.png"' in page
    assert "<script" not in page

    # the record holds ccsim's values as simulated, next to the paper's
    record = json.loads((exp / "experiment.json").read_text())
    b0 = next(v for v in record["verdicts"] if v["quantity"].startswith("throughput ψ"))
    assert b0["paper"] == 0.75 and 0.7 < b0["ccsim"] < 0.8

    # running again resumes from the store (no run repeated) and keeps the report whole
    again = run_cli("reproduce", "003", "--quick", "-o", out)
    assert again.returncode == 0, again.stderr
    assert (out / "report-003.md").read_text().count("## 003:fig2") == 1


@pytest.mark.parametrize("name", ["003:fig99", "9"])
def test_unknown_experiment_is_bad_input(tmp_path: Path, name: str):
    out = tmp_path / "nothing"
    result = run_cli("reproduce", name, "-o", out)
    assert result.returncode == 2
    assert len(result.stderr_lines) == 1
    assert name in result.stderr and "003:fig2" in result.stderr and "--list" in result.stderr
    assert not out.exists()


@pytest.mark.parametrize("path", experiment_paths(), ids=lambda p: f"{p.parent.name}:{p.stem}")
def test_every_shipped_experiment_validates(path: Path):
    exp = load_experiment(path)  # the sweeps (full and quick) are checked by the core too
    # the paper's numbers it is judged by, or (where the paper has none) ccsim's results
    assert exp.checks or exp.results
    for check in exp.checks:
        assert check.source["quote"] and check.tolerance_why
    for result in exp.results:
        assert not result.judged
    for name in exp.sweeps:  # a shared sweep's store is its owner's, which exists
        owner, _ = exp.owner(name)
        assert owner == exp.slug or owner.replace("_", ":", 1) in {
            f"{p.parent.name}:{p.stem}" for p in experiment_paths()
        }


def _broken(tmp_path: Path, old: str, new: str) -> Path:
    text = FIG2.read_text()
    assert old in text
    path = tmp_path / "003" / "fig2.toml"
    path.parent.mkdir()
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('id = "003:fig2"', 'id = "003:fig2"\ncolour = "red"', "colour: unknown key"),
        ('id = "003:fig2"', 'id = "003:fig2"\nstatus = "reproduced"', "status is computed"),
        ('kind = "number"', 'kind = "paper"', "kind: expected one of"),
        ('kind = "number"', "", "kind: expected one of"),
        ('[[checks]]\nquantity = "utilisation U"', '[[checks]]\nkind = "number"', "kind model"),
        ("tolerance = 0.01\n", "", "tolerance: missing"),
        ('quote = "With', 'qoute = "With', "unknown key"),
        ('"flows[0].cc.beta"', '"flows[0].cc.bta"', "no such key path"),
        ('model = "abe_utilisation"', 'model = "nosuch"', "unknown model"),
        ("where = { buffer_bdp = 1.0,", "where = { buffer_bdp = 0.3,", "quick sweep's axis"),
    ],
)
def test_malformed_experiment_files_are_rejected(tmp_path: Path, old: str, new: str, message: str):
    with pytest.raises(ExperimentError, match=re.escape(message)):
        load_experiment(_broken(tmp_path, old, new))


def test_judge_inside_and_outside_tolerance():
    inside = judge("U", 0.75, 0.77, 0.03, reason="never shown")
    assert inside.ok and inside.symbol == PASS and inside.reason is None
    assert inside.difference == pytest.approx(0.02)
    outside = judge("U", 0.75, 0.70, 0.03, reason="the model ignores fast recovery")
    assert not outside.ok and outside.symbol == FAIL
    assert outside.reason == "the model ignores fast recovery"
    assert judge("U", 0.75, 0.70, 0.03).reason == UNEXPLAINED
    assert judge("U", 0.75, None, 0.03).reason == NO_RESULT
    assert judge("U", 0.3, 0.1 + 0.2, 0.0).ok  # exact value, exact tolerance


def test_evaluate_a_model_check_per_grid_point():
    exp = next(e for e in load_all() if e.id == "003:fig2")
    check = next(c for c in exp.checks if c.model)
    rows = pa.table(
        {
            "status": ["ok", "ok", "ok", "failed"],
            "beta": [0.5, 0.5, 0.9, 0.9],
            "buffer_bdp": [0.1, 0.1, 0.1, 0.5],
            "utilisation": [0.80, 0.82, 0.90, None],
        }
    )
    verdicts = {v.quantity: v for v in evaluate(check, rows)}
    mean = verdicts["U at b = 0.1 δ, β = 0.5"]
    assert mean.ccsim == pytest.approx(0.81) and mean.ok
    assert mean.paper == pytest.approx(abe_utilisation(0.1, 0.5))
    miss = verdicts["U at b = 0.1 δ, β = 0.9"]
    assert not miss.ok and miss.reason == UNEXPLAINED
    assert "U at b = 0.5 δ, β = 0.9" not in verdicts  # failed runs are left out


def test_model_matches_the_numbers_the_paper_derives_from_it():
    assert abe_utilisation(0.0, 0.5) == pytest.approx(0.75)  # "ψ = 3/4 C"
    assert abe_utilisation(1.0, 0.5) == 1.0  # Eq. (1): b >= δ for β = 0.5
    assert abe_utilisation(0.2, 0.9) == 1.0  # b >= δ (1 - β) / β = 0.111 δ


def test_every_plot_type_draws_from_tables(tmp_path: Path):
    """The one plotter, without a simulation: each plot type, a model curve and a marker."""
    from ccsim.plots.figure import Curve, Marker, Panel, check_plot, draw_figure

    rows = pa.table(
        {
            "run": [0, 0, 1, 1],
            "beta": [0.5, 0.5, 0.9, 0.9],
            "buffer_bdp": [0.1, 0.5, 0.1, 0.5],
            "time_s": [1.0, 2.0, 1.0, 2.0],
            "utilisation": [0.8, 0.95, 0.99, 1.0],
        }
    )
    lines = {"type": "lines", "x": "buffer_bdp", "y": "utilisation", "series": "beta"}
    specs = [
        lines,
        {"type": "timeseries", "table": "flow_series", "x": "time_s", "y": "utilisation"},
        {"type": "cdf", "x": "utilisation", "series": "beta"},
        {"type": "bars", "x": "beta", "y": "utilisation"},
    ]
    columns = {"beta", "buffer_bdp", "utilisation"}
    for spec in specs:
        check_plot(spec, columns, {"flow_series"}, {"abe_utilisation"})
    with pytest.raises(ValueError, match="unknown key"):
        check_plot({**lines, "colour": "red"}, columns, set(), set())
    curve = Curve(abe_utilisation, {"b": "buffer_bdp", "beta": "beta"}, "model")
    panels = [Panel(specs[0], rows, [curve], [Marker(0.0, 0.75, "0.75")])]
    panels += [Panel(spec, rows) for spec in specs[1:]]
    paths = draw_figure(panels, tmp_path / "figure", columns=2)
    assert [p.name for p in paths] == ["figure.png", "figure.pdf"]
    assert all(p.stat().st_size > 10_000 for p in paths)
