"""Sweep figures in the paper's form (issue 32): per-flow and per-group metrics as y,
errors over repetitions, categorical axes as labelled bars in grid order, plain log ticks,
readable titles; each checked on the data the figure draws, not on pixels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ccsim
from ccsim.plots import sweep as sweep_plots
from ccsim.plots.style import styled
from ccsim.plots.text import short_text
from ccsim.sweeps.spec import load_sweep
from ccsim.sweeps.store import read_results, read_series
from helpers import EXAMPLES, run_cli

SMALL = {
    "base": {
        "duration": "2s",
        "bottleneck": {"rate": "5Mbps", "queue": {"kind": "droptail", "limit": "1bdp"}},
        "flows": [
            {"name": "A", "cc": "newreno", "rtt": "20ms"},
            {"name": "B", "cc": "cubic", "rtt": "40ms", "start": {"uniform": ["0s", "0.3s"]}},
        ],
    },
    "grid": {"buffer": {"path": "bottleneck.queue.limit", "values": [0.5, 2], "format": "{}bdp"}},
    "repetitions": 2,
    "series": ["flow_series"],
}


def _sweep(tmp_path: Path, plot: dict, **extra) -> tuple[ccsim.SweepReport, dict]:
    doc = {**SMALL, **extra, "plot": plot}
    report = ccsim.sweep(doc, tmp_path / "s", jobs=1, plot=True)
    assert report.plot_error is None, report.plot_error
    return report, doc


def _figure(tmp_path: Path, doc: dict) -> sweep_plots.SweepFigure:
    sweep = load_sweep(doc)
    return sweep_plots.sweep_figure(sweep.plot, read_results(tmp_path / "s"), sweep)


def test_bbr_vs_cubic_example_draws_bbr_share_with_error_bars(tmp_path: Path) -> None:
    path = EXAMPLES / "sweeps" / "bbr_vs_cubic_buffer.toml"
    out = tmp_path / "bbr"
    result = run_cli("sweep", path, "-o", out, "--plot")
    assert result.returncode == 0, result.stderr
    assert "(png)" in result.stdout and "json" not in result.stdout.split("plot in")[-1]
    sweep = load_sweep(path)
    figure = sweep_plots.sweep_figure(sweep.plot, read_results(out), sweep)
    assert figure.kind == "line" and figure.logx and len(figure.series) == 1
    (series,) = figure.series
    assert series.x == [0.5, 1, 2, 4, 8] and series.n == [3] * 5
    results = read_results(out)
    shares = [json.loads(s)["groups"][0]["share"] for s in results.column("summary").to_pylist()]
    buffers = results.column("buffer_bdp").to_pylist()
    for x, mean in zip(series.x, series.mean, strict=True):
        values = [s for s, b in zip(shares, buffers, strict=True) if b == x]
        assert mean == pytest.approx(sum(values) / len(values))
    assert any(s > 0 for s in series.std)  # error bars over the repetitions
    assert series.mean[0] > series.mean[-1]  # BBR takes less of a deep buffer
    assert "3 repetitions" in figure.caption and "10Mbps" in figure.caption
    with styled():
        fig = sweep_plots.draw_sweep(figure)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0.5", "1", "2", "4", "8"]


def test_categorical_queue_axis_draws_labelled_bars_in_grid_order(tmp_path: Path) -> None:
    path = EXAMPLES / "sweeps" / "queue_disciplines.toml"
    out = tmp_path / "q"
    result = run_cli("sweep", path, "-o", out, "--plot")
    assert result.returncode == 0, result.stderr
    sweep = load_sweep(path)
    figure = sweep_plots.sweep_figure(sweep.plot, read_results(out), sweep)
    assert figure.kind == "bars"
    assert figure.x_labels == ["DropTail 1 BDP", "DropTail 4 BDP", "CoDel", "PIE"]
    (series,) = figure.series
    assert series.positions == [0.0, 1.0, 2.0, 3.0] and series.n == [2] * 4
    assert series.mean[1] > series.mean[0] > series.mean[2]  # 4 BDP > 1 BDP > CoDel
    with styled():
        fig = sweep_plots.draw_sweep(figure)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == figure.x_labels
    heights = [round(p.get_height(), 9) for p in ax.patches]
    assert heights == [round(m, 9) for m in series.mean]


def test_categorical_labels_default_to_short_text_never_json(tmp_path: Path) -> None:
    queues = [{"kind": "droptail", "limit": "4bdp"}, {"kind": "codel"}]
    doc_grid = {"queue": {"path": "bottleneck.queue", "values": queues}}
    _, doc = _sweep(tmp_path, {"x": "queue", "y": "utilisation"}, grid=doc_grid)
    figure = _figure(tmp_path, doc)
    assert figure.x_labels == ["droptail, limit 4bdp", "codel"]  # grid order, not sorted
    assert not any("{" in label for label in figure.x_labels)
    assert figure.title == "bottleneck utilisation against bottleneck.queue"
    assert short_text('{"kind": "pie", "target": "15ms"}') == "pie, target 15ms"


def test_per_flow_value_and_group_ratio(tmp_path: Path) -> None:
    _, doc = _sweep(tmp_path, {"x": "buffer", "y": "flow_goodput_mbps[1]"})
    figure = _figure(tmp_path, doc)
    results = read_results(tmp_path / "s")
    goodputs = results.column("flow_goodput_mbps").to_pylist()
    first = [
        g[1]
        for g, b in zip(goodputs, results.column("buffer").to_pylist(), strict=True)
        if b == 0.5
    ]
    assert figure.series[0].mean[0] == pytest.approx(sum(first) / len(first))
    assert figure.ylabel == "goodput (Mbit/s), flow 1"
    assert figure.xlabel == "bottleneck.queue.limit (BDP)"
    ratio = sweep_plots.parse_metric("group_goodput_mbps[A] / group_goodput_mbps[1]", set())
    values = sweep_plots.metric_values(ratio, results)
    expected = [g[0] / g[1] for g in goodputs]
    assert values == pytest.approx(expected)


@pytest.mark.parametrize(
    ("y", "message"),
    [
        ("flow_goodput_mbps", "plot.y: 'flow_goodput_mbps' holds one value per flow"),
        ("flow_goodput_mbps[5]", "plot.y: flow_goodput_mbps[5]: the base scenario has 2 flows"),
        ("group_share[C]", "plot.y: group_share[C]: no group named 'C'"),
        ("utilisation[0]", "plot.y: 'utilisation' takes no [index]"),
        ("goodput", "plot.y: 'goodput' is not a result column"),
    ],
)
def test_bad_y_is_one_line_and_exit_2_before_any_run(tmp_path: Path, y: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    doc = {**SMALL, "plot": {"x": "buffer", "y": y}}
    path.write_text(_toml(doc))
    result = run_cli("sweep", path, "-o", tmp_path / "out", "--plot")
    assert result.returncode == 2, result.stderr
    assert len(result.stderr_lines) == 1 and message in result.stderr, result.stderr
    assert not (tmp_path / "out").exists()


def test_sweep_on_a_scenario_file_suggests_ccsim_run(tmp_path: Path) -> None:
    result = run_cli("sweep", EXAMPLES / "demo.toml", "-o", tmp_path / "out")
    assert result.returncode == 2
    assert "a scenario file" in result.stderr and "ccsim run" in result.stderr
    assert len(result.stderr_lines) == 1


def test_read_series_joins_the_swept_values(tmp_path: Path) -> None:
    _sweep(tmp_path, {"x": "buffer", "y": "utilisation"})
    joined = ccsim.read_series(tmp_path / "s", "flow_series")
    names = joined.column_names
    at = names.index("run")
    assert names[at : at + 4] == ["run", "buffer", "repetition", "seed"]
    results = read_results(tmp_path / "s")
    buffer_of = dict(
        zip(results.column("run").to_pylist(), results.column("buffer").to_pylist(), strict=True)
    )
    for run, buffer in zip(
        joined.column("run").to_pylist(), joined.column("buffer").to_pylist(), strict=True
    ):
        assert buffer_of[run] == buffer
    stored = read_series(tmp_path / "s", "flow_series")
    assert "buffer" not in stored.column_names  # the stored tables are unchanged
    assert joined.num_rows == stored.num_rows


def _toml(doc: dict) -> str:
    """The few TOML forms these sweeps need (tomllib reads, no writer in the stdlib)."""

    def value(v: object) -> str:
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{json.dumps(k)} = {value(x)}" for k, x in v.items()) + " }"
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return json.dumps(v)

    return "\n".join(f"{json.dumps(k)} = {value(v)}" for k, v in doc.items()) + "\n"


def test_every_table_is_written_even_empty(tmp_path: Path) -> None:
    """Issue 32's choice: every table always, empty on purpose (a stable set of files and
    schemas for scripts), documented in ccsim.output and `ccsim run --help`."""
    import pyarrow.parquet as pq

    from ccsim import output

    scenario = {"duration": "1s", "bottleneck": {"rate": "10Mbps"}, "flows": [{"rtt": "20ms"}]}
    ccsim.run(scenario).write(tmp_path / "o")
    written = {p.stem for p in (tmp_path / "o").glob("*.parquet")}
    assert written == set(output.KNOWN_TABLES)
    empty = pq.read_table(tmp_path / "o" / "deadline_control.parquet")
    assert empty.num_rows == 0 and empty.num_columns > 0
    assert "empty on purpose" in (output.__doc__ or "")
    assert "empty on purpose" in run_cli("run", "--help").stdout.replace("\n", " ")
