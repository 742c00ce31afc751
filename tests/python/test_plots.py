"""The run figures (ccsim.plots.run) on real runs: throughput within the capacity line
(which follows rate changes), groups named so Gold and Silver differ, legends outside the
data, PNG/PDF/SVG written alike and deterministically."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure

import ccsim
from ccsim import output
from ccsim.plots import run as run_plots
from ccsim.plots.style import FORMATS, FormatError, file_names, parse_formats, styled

SCENARIO = {
    "duration": "6s",
    "measure": {"start": "2s"},
    "bottleneck": {
        "rate": "10Mbps",
        "queue": "codel",
        "rate_changes": [{"at": "3s", "rate": "5Mbps"}],
    },
    "flows": [
        {"count": 2, "cc": "cubic", "rtt": "20ms", "ppv": "gold", "trace": True},
        {"count": 2, "cc": "cubic", "rtt": "20ms", "ppv": "silver", "name": "Silver"},
    ],
    "udp": [{"rate": "1Mbps", "rtt": "20ms"}],
    "trace": {"rtt_samples": True},
}

MAGIC = {"png": b"\x89PNG", "pdf": b"%PDF", "svg": b"<?xml"}


@pytest.fixture(scope="module")
def result_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run") / "out"
    ccsim.run(SCENARIO).write(out, plots=True, plot_formats=FORMATS)
    return out


def _columns(directory: Path, name: str) -> dict[str, np.ndarray]:
    table = run_plots._load(directory, name)
    assert table is not None
    return table


def test_every_figure_in_every_format(result_dir: Path) -> None:
    for stem in run_plots.FIGURES:
        for fmt in FORMATS:
            data = (result_dir / f"{stem}.{fmt}").read_bytes()
            assert data.startswith(MAGIC[fmt]), (stem, fmt)
    every = run_plots.FIGURES + run_plots.NETWORK_FIGURES
    assert set(output.PLOT_FILES) == set(file_names(every))


def test_capacity_follows_rate_changes_and_bounds_throughput(result_dir: Path) -> None:
    summary = {"scenario": SCENARIO, "duration_s": 6.0}
    t, rate = run_plots.capacity(None, summary)
    assert t.tolist() == [0.0, 3.0, 6.0] and rate.tolist() == [10.0, 5.0, 5.0]
    # without the scenario: estimated from queue_series, within a packet per interval
    t2, rate2 = run_plots.capacity(_columns(result_dir, "queue_series"), {})
    away = np.abs(t2 - 2.95) > 0.1  # the interval ending at the change may take either rate
    expected = np.where(t2 < 3.0 - 1e-9, 10.0, 5.0)
    assert np.allclose(rate2[away], expected[away], rtol=0.03)
    series = _columns(result_dir, "flow_series")
    times, inverse = np.unique(series["time_s"], return_inverse=True)
    total = np.bincount(inverse, weights=series["throughput_mbps"])
    # all flows' throughput per interval (ending at `times`) within the interval's
    # larger rate, give or take one packet in flight on the last hop
    cap = np.where(times <= 3.0 + 1e-9, 10.0, 5.0)
    slack = 1500 * 8 / 0.1 / 1e6
    assert np.all(total <= cap + slack)


def test_group_labels_tell_gold_from_silver(result_dir: Path) -> None:
    flows = _columns(result_dir, "flows")
    summary = {"scenario": SCENARIO}
    groups = run_plots.flow_groups(flows, flows["flow_id"], summary)
    assert not groups.per_flow
    labels = [line.label for line in groups.lines]
    assert labels == [
        "2 flows: cubic, 20 ms, PPV gold",
        "Silver: 2 flows, cubic, 20 ms, PPV silver",
        "1 flow: UDP cbr, 20 ms",
    ]


def test_single_flow_groups_are_drawn_per_flow() -> None:
    flows = {
        "flow_id": np.array([0, 1]),
        "group": np.array([0, 1]),
        "group_name": np.array(["Gold", ""], dtype=object),
        "protocol": np.array(["tcp", "tcp"], dtype=object),
        "algorithm": np.array(["newreno", "cubic"], dtype=object),
        "base_rtt_ms": np.array([40.0, 100.0]),
    }
    groups = run_plots.flow_groups(flows, [0, 1], {})
    assert groups.per_flow
    assert [line.label for line in groups.lines] == [
        "Gold (flow 0): newreno, 40 ms",
        "flow 1: cubic, 100 ms",
    ]


def _overlaps(fig: Figure) -> list[str]:
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    bad = []
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for ax in fig.axes:
            if box.overlaps(ax.get_window_extent(renderer)):
                bad.append(f"legend over {ax.get_title() or ax.get_ylabel()}")
    return bad


def test_legends_never_cover_data(result_dir: Path) -> None:
    summary = {"measure_start_s": 2.0, "measure_end_s": 6.0, "scenario": SCENARIO}
    flows = _columns(result_dir, "flows")
    with styled():
        figures = [
            run_plots.plot_throughput(
                _columns(result_dir, "flow_series"),
                flows,
                summary,
                _columns(result_dir, "queue_series"),
            ),
            run_plots.plot_queue_delay(_columns(result_dir, "queue_series"), summary),
            run_plots.plot_sojourn_cdf(_columns(result_dir, "sojourn_cdf"), summary),
            run_plots.plot_cwnd(_columns(result_dir, "cc_trace"), flows, summary),
            run_plots.plot_rtt(_columns(result_dir, "rtt_samples"), flows, summary),
        ]
        for fig in figures:
            assert _overlaps(fig) == []


def test_same_tables_same_bytes(result_dir: Path, tmp_path: Path) -> None:
    for name in ("flow_series", "flows", "queue_series", "sojourn_cdf"):
        (tmp_path / f"{name}.parquet").write_bytes((result_dir / f"{name}.parquet").read_bytes())
    (tmp_path / "summary.json").write_bytes((result_dir / "summary.json").read_bytes())
    first = {p.name: p.read_bytes() for p in run_plots.plot_results(tmp_path)}
    second = {p.name: p.read_bytes() for p in run_plots.plot_results(tmp_path)}
    assert first == second
    assert {p.name for p in run_plots.plot_results(tmp_path, ["pdf"])} == {
        "throughput.pdf",
        "queue_delay.pdf",
        "sojourn_cdf.pdf",
    }


def test_parse_formats() -> None:
    assert parse_formats(None) == ("png",)  # PDF and SVG only when asked (issue 32)
    assert parse_formats("PDF, png,pdf") == ("pdf", "png")
    for bad in ("jpg", "", "png,eps"):
        with pytest.raises(FormatError, match="--format"):
            parse_formats(bad)


def test_sweep_plot_in_every_format(tmp_path: Path) -> None:
    sweep = {
        "base": {"duration": "1s", "bottleneck": {"rate": "2Mbps"}, "flows": [{"rtt": "20ms"}]},
        "grid": {"flows[0].cc.beta": [0.5, 0.7], "flows[0].rtt": ["20ms", "40ms"]},
        "plot": {"x": "flows[0].rtt", "y": "utilisation", "lines": "flows[0].cc.beta"},
        "series": [],
    }
    report = ccsim.sweep(sweep, tmp_path / "s", jobs=1, plot=True, plot_formats=["png", "svg"])
    assert report.plot == tmp_path / "s" / "sweep.png"
    assert (tmp_path / "s" / "sweep.svg").read_bytes().startswith(b"<?xml")
    assert not (tmp_path / "s" / "sweep.pdf").exists()


# --------------------------------------------------------------------------- issue 32


def _spiky_series() -> tuple[dict[str, np.ndarray], dict]:
    time = np.round(np.arange(1, 101) * 0.1, 6)
    goodput = np.full(100, 5.0)
    # in-order payload delivered in a burst (a hole filled after a loss) is goodput far
    # above the capacity and above the interval's wire throughput
    goodput[50:60] = 40.0
    series = {
        "time_s": time,
        "flow_id": np.zeros(100, dtype=np.int64),
        "throughput_mbps": np.full(100, 5.0),
        "goodput_mbps": goodput,
    }
    summary = {"scenario": {"bottleneck": {"rate": "10Mbps"}}, "duration_s": 10.0}
    return series, summary


def test_goodput_and_throughput_panels_show_spikes_above_capacity() -> None:
    series, summary = _spiky_series()
    with styled():
        fig = run_plots.plot_throughput(series, None, summary)
    for ax in fig.axes:
        highest = max(float(np.max(line.get_ydata())) for line in ax.get_lines())
        assert ax.get_ylim()[1] >= highest, ax.get_title()


def test_queue_delay_legend_tells_delay_from_length(result_dir: Path) -> None:
    queue = _columns(result_dir, "queue_series")
    with styled():
        fig = run_plots.plot_queue_delay(queue, {})
    handles = {
        t.get_text(): h
        for t, h in zip(fig.legends[0].get_texts(), fig.legends[0].legend_handles, strict=True)
    }
    mean, length = handles["mean per interval"], handles["queue length"]
    assert (mean.get_color(), mean.get_linestyle()) != (length.get_color(), length.get_linestyle())
    band = next(c for c in fig.axes[0].collections if c.get_label() == "min-max per interval")
    assert band.get_alpha() >= 0.3


def test_run_figures_name_the_scenario(result_dir: Path) -> None:
    summary = json.loads((result_dir / "summary.json").read_text())
    with styled():
        fig = run_plots.plot_sojourn_cdf(_columns(result_dir, "sojourn_cdf"), summary)
    texts = [fig.get_suptitle()] + [ax.get_title() for ax in fig.axes]
    assert any("10Mbps" in t and "codel" in t and "20ms" in t for t in texts), texts


def test_default_format_is_png_only(tmp_path: Path) -> None:
    scenario = {"duration": "1s", "bottleneck": {"rate": "10Mbps"}, "flows": [{"rtt": "20ms"}]}
    ccsim.run(scenario).write(tmp_path / "o", plots=True)
    assert sorted(p.suffix for p in (tmp_path / "o").glob("throughput.*")) == [".png"]
