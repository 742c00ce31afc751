"""End-to-end runs through the real core: reproducibility, seeds, the demo, progress."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import ccsim
from helpers import EXAMPLES, REPO, run_cli, tables_equal

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TABLES = ("flow_series", "cc_trace", "queue_series", "sojourn_cdf", "flows")
PLOTS = ("throughput.png", "queue_delay.png", "sojourn_cdf.png", "cwnd.png")

POISSON = """\
duration = "5s"
seed = {seed}

[bottleneck]
rate = "10Mbps"

[[flows]]
cc = "newreno"
rtt = "40ms"

[[udp]]
rate = "2Mbps"
pattern = "poisson"
rtt = "40ms"
"""


def test_same_scenario_twice_gives_byte_identical_parquet(tmp_path: Path) -> None:
    outs = [tmp_path / "a", tmp_path / "b"]
    for out in outs:
        result = run_cli("run", EXAMPLES / "single_newreno.toml", "-o", out, "--no-plots")
        assert result.returncode == 0, result.stderr
    names = sorted(p.name for p in outs[0].iterdir())
    assert names == sorted(p.name for p in outs[1].iterdir())
    assert {f"{t}.parquet" for t in TABLES} | {"summary.json"} <= set(names)
    assert not [n for n in names if n.endswith(".png")]
    for name in names:
        if name.endswith(".parquet"):
            assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
    summaries = [json.loads((out / "summary.json").read_text()) for out in outs]
    for summary in summaries:
        assert summary.pop("wall_s") > 0
    assert summaries[0] == summaries[1]


def test_rerun_into_the_same_directory_replaces_results(tmp_path: Path) -> None:
    out = tmp_path / "out"
    scenario = EXAMPLES / "single_newreno.toml"
    assert run_cli("run", scenario, "-o", out, "--no-plots").returncode == 0
    first = (out / "flow_series.parquet").read_bytes()
    (out / "notes.txt").write_text("kept")
    assert run_cli("run", scenario, "-o", out, "--no-plots").returncode == 0
    assert (out / "flow_series.parquet").read_bytes() == first
    assert (out / "notes.txt").read_text() == "kept"
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no staging directory left


def test_seed_changes_poisson_results_and_same_seed_repeats() -> None:
    runs = {seed: ccsim.run(POISSON.format(seed=seed)) for seed in (1, 2)}
    again = ccsim.run(POISSON.format(seed=1))
    for name in ("flow_series", "queue_series"):
        assert tables_equal(runs[1].tables[name], again.tables[name]), name
    assert not tables_equal(runs[1].tables["queue_series"], runs[2].tables["queue_series"])
    assert runs[1].summary["seed"] == 1 and runs[2].summary["seed"] == 2


def test_run_result_tables_and_summary() -> None:
    result = ccsim.run(EXAMPLES / "single_newreno.toml")
    assert set(TABLES) <= set(result.tables)
    series = result.tables["flow_series"]
    assert series.column_names[:4] == ["time_s", "flow_id", "goodput_mbps", "throughput_mbps"]
    assert series.num_rows > 0
    flows = result.tables["flows"].to_pylist()
    assert [f["flow_id"] for f in flows] == [f["flow_id"] for f in result.summary["flows"]]
    assert result.tables["cc_trace"].num_rows > 0  # trace = true in the example
    # A single bulk flow through a 1-BDP DropTail queue keeps the link busy.
    assert 0.5 < result.summary["utilisation"] <= 1.0 + 1e-9
    assert 0 < result.summary["flows"][0]["goodput_mbps"] <= 10.0


def test_write_matches_cli_output(tmp_path: Path) -> None:
    result = ccsim.run(EXAMPLES / "single_newreno.toml")
    result.write(tmp_path / "api")
    assert run_cli("run", EXAMPLES / "single_newreno.toml", "-o", tmp_path / "cli").returncode == 0
    for table in TABLES:
        name = f"{table}.parquet"
        assert (tmp_path / "api" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()
        assert tables_equal(pq.read_table(tmp_path / "api" / name), result.tables[table])


def test_demo_writes_tables_summary_and_plots(tmp_path: Path) -> None:
    result = run_cli("demo", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = tmp_path / "demo-out"
    for table in TABLES:
        assert pq.read_table(out / f"{table}.parquet").num_rows > 0, table
    for plot in PLOTS:
        assert (out / plot).read_bytes()[:8] == PNG_MAGIC, plot
    summary = json.loads((out / "summary.json").read_text())
    assert [f["protocol"] for f in summary["flows"]] == ["tcp", "tcp", "udp"]
    assert summary["duration_s"] == pytest.approx(60.0)
    assert str(out.name) in result.stdout


def test_packaged_demo_is_the_example() -> None:
    packaged = REPO / "python" / "ccsim" / "scenarios" / "demo.toml"
    assert packaged.read_text() == (EXAMPLES / "demo.toml").read_text()


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.toml")))
def test_examples_validate(example: str) -> None:
    result = run_cli("validate", EXAMPLES / example)
    assert result.returncode == 0, result.stderr


def test_plot_command_redraws(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run_cli("run", EXAMPLES / "single_newreno.toml", "-o", out, "--no-plots").returncode == 0
    assert not list(out.glob("*.png"))
    result = run_cli("plot", out)
    assert result.returncode == 0, result.stderr
    for plot in PLOTS:
        assert (out / plot).read_bytes()[:8] == PNG_MAGIC, plot


def test_progress_callback_sees_the_run_and_can_stop_it() -> None:
    seen: list[float] = []
    ccsim.run(EXAMPLES / "single_newreno.toml", progress=seen.append)
    assert seen, "the core reports progress"
    assert all(0.0 <= f <= 1.0 + 1e-9 for f in seen)
    assert seen == sorted(seen)

    class Stop(Exception):
        pass

    def stop(fraction: float) -> None:
        raise Stop(f"stopped at {fraction}")

    with pytest.raises(Stop):
        ccsim.run(EXAMPLES / "single_newreno.toml", progress=stop)
