"""The Python layer on its own: a small fake ``_core`` stands in for the simulator, so
these check table conversion, deterministic Parquet, the all-or-nothing output directory,
plots, the CLI's error handling and the benchmark report without depending on the engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from rich.console import Console

import ccsim
from ccsim import api, bench, cli, results
from ccsim.plots.run import plot_results
from ccsim.results import column_to_arrow
from helpers import snapshot

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _le(values: list[float] | np.ndarray, dtype: str) -> bytes:
    return np.asarray(values, dtype=dtype).tobytes()


def fake_output(n_flows: int = 2, steps: int = 50, traced: bool = True, wall: float = 0.25):
    """(summary_json, raw tables) shaped like the core's."""
    rng = np.random.default_rng(n_flows)
    t = np.repeat(np.arange(1, steps + 1) * 0.1, n_flows)
    fid = np.tile(np.arange(n_flows), steps)
    flows = [
        {
            "flow_id": i,
            "group": i % 2,
            "protocol": "tcp",
            "algorithm": "newreno",
            "base_rtt_ms": 20.0 * (1 + i % 2),
            "goodput_mbps": 1.0 + i,
            "throughput_mbps": 1.1,
            "bytes_delivered": 10,
            "packets_sent": 10,
            "retransmits": 0,
            "timeouts": 0,
            "drops": 0,
            "marks": 0,
            "fct_s": None,
        }
        for i in range(n_flows)
    ]
    summary = {
        "ccsim_version": "0",
        "seed": 1,
        "duration_s": steps * 0.1,
        "measure_start_s": steps * 0.05,
        "measure_end_s": steps * 0.1,
        "flows": flows,
        "bottleneck": {
            "name": "bottleneck",
            "discipline": "droptail",
            "arrivals": 9,
            "departures": 9,
            "drops": 0,
            "marks": 0,
            "drop_probability": 0.0,
            "mark_probability": 0.0,
            "sojourn_mean_ms": 1.0,
            "sojourn_p50_ms": None,
            "sojourn_p90_ms": 2.0,
            "sojourn_p99_ms": 3.0,
            "utilisation": 0.9,
        },
        "utilisation": 0.9,
        "jain_index": 1.0,
        "events": 1000,
        "bottleneck_packets": 500,
        "wall_s": wall,
    }
    qt = np.arange(1, steps + 1) * 0.1
    raw: dict[str, dict[str, tuple[str, Any]]] = {
        "flow_series": {
            "time_s": ("f64", _le(t, "<f8")),
            "flow_id": ("u32", _le(fid, "<u4")),
            "goodput_mbps": ("f64", _le(rng.random(len(t)), "<f8")),
            "throughput_mbps": ("f64", _le(rng.random(len(t)), "<f8")),
        },
        "cc_trace": {
            "time_s": ("f64", _le(t if traced else [], "<f8")),
            "flow_id": ("u32", _le(fid if traced else [], "<u4")),
            "cwnd_pkts": ("f64", _le(rng.random(len(t)) if traced else [], "<f8")),
            "ssthresh_pkts": ("f64", _le(np.full(len(t), np.nan) if traced else [], "<f8")),
            "srtt_ms": ("f64", _le(rng.random(len(t)) if traced else [], "<f8")),
            "inflight_pkts": ("f64", _le(rng.random(len(t)) if traced else [], "<f8")),
        },
        "queue_series": {
            "time_s": ("f64", _le(qt, "<f8")),
            "queue": ("str", ["bottleneck"] * steps),
            "qlen_pkts": ("u64", _le(np.arange(steps), "<u8")),
            "qlen_bytes": ("u64", _le(np.arange(steps) * 1500, "<u8")),
            "sojourn_mean_ms": ("f64", _le(np.where(np.arange(steps) % 7, 1.0, np.nan), "<f8")),
            "sojourn_max_ms": ("f64", _le(np.ones(steps) * 2, "<f8")),
            "arrivals": ("u64", _le(np.ones(steps), "<u8")),
            "drops": ("u64", _le(np.zeros(steps), "<u8")),
            "marks": ("u64", _le(np.zeros(steps), "<u8")),
        },
        "sojourn_cdf": {
            "queue": ("str", ["bottleneck"] * 3),
            "sojourn_ms": ("f64", _le([0.5, 1.0, 2.0], "<f8")),
            "cdf": ("f64", _le([0.2, 0.7, 1.0], "<f8")),
        },
        "flows": {
            "flow_id": ("u32", _le([f["flow_id"] for f in flows], "<u4")),
            "group": ("u32", _le([f["group"] for f in flows], "<u4")),
            "protocol": ("str", [f["protocol"] for f in flows]),
            "algorithm": ("str", [f["algorithm"] for f in flows]),
            "base_rtt_ms": ("f64", _le([f["base_rtt_ms"] for f in flows], "<f8")),
        },
    }
    return json.dumps(summary), raw


class FakeCore:
    """Accepts any scenario whose text has no "bad"; reports progress like the core."""

    def __init__(self, **output: Any) -> None:
        self.output = output
        self.calls: list[tuple[str, str]] = []

    def parse_check(self, text: str, fmt: str) -> None:
        self.calls.append((text, fmt))
        if "bad" in text:
            raise ccsim.ScenarioError('flows[1].rtt: expected a duration like "50ms", got "50"')

    def duration_ns(self, text: str, key: str) -> int:
        return 100_000_000

    def run(
        self,
        text: str,
        fmt: str,
        progress=None,
        controller=None,
        control_interval_ns=0,
        cancel=None,
    ):
        self.parse_check(text, fmt)
        if progress is not None:
            for i in range(1, 11):
                progress(i / 10)
        summary, raw = fake_output(**self.output)
        return summary, raw, None  # the core returns pcap bytes only when [trace] pcap asks


@pytest.fixture
def fake_core(monkeypatch: pytest.MonkeyPatch) -> FakeCore:
    core = FakeCore()
    monkeypatch.setattr(api, "_core", core)
    # the fake scenarios are not real ones, so the core's cost estimate is faked too: small
    monkeypatch.setattr(
        "ccsim.estimate.estimate",
        lambda source: {"events": 1e3, "wall_s": 0.01, "memory_bytes": 1e6, "series_rows": 10},
    )
    return core


# -- columns ------------------------------------------------------------------------------


def test_numeric_columns_decode_little_endian_exactly() -> None:
    big = 2**63 + 5
    assert column_to_arrow("u64", _le(np.array([0, big], dtype=np.uint64), "<u8")).to_pylist() == [
        0,
        big,
    ]
    assert column_to_arrow("u32", (7).to_bytes(4, "little")).to_pylist() == [7]
    f = column_to_arrow("f64", _le([1.5, np.nan, -0.0], "<f8"))
    assert f.type == pa.float64() and f.null_count == 0
    assert np.isnan(f.to_numpy()[1]) and f.to_pylist()[0] == 1.5
    assert column_to_arrow("str", ["a", "b"]).to_pylist() == ["a", "b"]
    with pytest.raises(ValueError, match="dtype"):
        column_to_arrow("f16", b"")


def test_tables_keep_the_core_order() -> None:
    _, raw = fake_output()
    tables = results.tables_from_core(raw)
    assert list(tables) == list(raw)
    assert tables["queue_series"].column_names == list(raw["queue_series"])
    assert tables["flow_series"].schema.field("flow_id").type == pa.uint32()


# -- scenario input -------------------------------------------------------------------------


def test_scenario_forms(tmp_path: Path) -> None:
    text = 'duration = "1s"\n'
    file = tmp_path / "s.toml"
    file.write_text(text)
    assert api.load_scenario(text).fmt == "toml"
    assert api.load_scenario(' {"duration": "1s"}').fmt == "json"
    assert api.load_scenario(file).text == text
    assert api.load_scenario(str(file)).label == str(file)
    (tmp_path / "s.json").write_text('{"duration": "1s"}')
    assert api.load_scenario(tmp_path / "s.json").fmt == "json"
    from_dict = api.load_scenario({"duration": "1s", "flows": [{"rtt": "5ms"}]})
    assert from_dict.fmt == "json"
    assert json.loads(from_dict.text) == {"duration": "1s", "flows": [{"rtt": "5ms"}]}
    with pytest.raises(FileNotFoundError):
        api.load_scenario(tmp_path / "missing.toml")
    with pytest.raises(TypeError):
        api.load_scenario(3)  # type: ignore[arg-type]


def test_progress_callable_receives_fractions(fake_core: FakeCore) -> None:
    seen: list[float] = []
    ccsim.run({"duration": "1s"}, progress=seen.append)
    assert seen == [i / 10 for i in range(1, 11)]


# -- writing --------------------------------------------------------------------------------


def test_write_is_byte_identical_and_wall_time_only_in_summary(
    fake_core: FakeCore, tmp_path: Path
) -> None:
    first = ccsim.run("x = 1")
    fake_core.output = {"wall": 9.75}  # same data, different wall-clock time
    second = ccsim.run("x = 1")
    first.write(tmp_path / "a")
    second.write(tmp_path / "b")
    a, b = snapshot(tmp_path / "a"), snapshot(tmp_path / "b")
    assert a.keys() == b.keys()
    for name in a:
        if name.endswith(".parquet"):
            assert a[name] == b[name], name
            assert b"9.75" not in b[name]
            metadata = pq.read_metadata(tmp_path / "b" / name).metadata or {}
            assert not any(b"wall" in k or b"time" in v for k, v in metadata.items())
    assert json.loads(b["summary.json"])["wall_s"] == 9.75
    assert pq.read_table(tmp_path / "a" / "flow_series.parquet").equals(first.tables["flow_series"])


def test_write_replaces_own_files_and_keeps_others(fake_core: FakeCore, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "cwnd.png").write_bytes(b"stale plot of an older run")
    fake_core.output = {"traced": False}
    ccsim.run("x = 1").write(out, plots=True)
    assert (out / "notes.txt").read_text() == "mine"
    assert not (out / "cwnd.png").exists()  # no trace this time: the old plot would lie
    assert (out / "throughput.png").read_bytes()[:8] == PNG_MAGIC
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_failed_write_leaves_nothing(
    fake_core: FakeCore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = ccsim.run("x = 1")
    written: list[str] = []

    def failing(table: pa.Table, path: Path) -> None:
        if written:
            raise OSError(28, "No space left on device")
        written.append(path.name)
        pq.write_table(table, path)

    monkeypatch.setattr(results, "write_parquet", failing)
    with pytest.raises(OSError):
        result.write(tmp_path / "new" / "out")
    assert not (tmp_path / "new" / "out").exists()
    assert list((tmp_path / "new").iterdir()) == []  # the staging directory is gone

    existing = tmp_path / "existing"
    existing.mkdir()
    (existing / "flows.parquet").write_bytes(b"previous results")
    before = snapshot(existing)
    written.clear()
    with pytest.raises(OSError):
        result.write(existing)
    assert snapshot(existing) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["existing", "new"]


# -- plots ----------------------------------------------------------------------------------


@pytest.mark.parametrize("n_flows", [2, 17])
def test_plots_from_a_result_directory(fake_core: FakeCore, tmp_path: Path, n_flows: int) -> None:
    fake_core.output = {"n_flows": n_flows}
    ccsim.run("x = 1").write(tmp_path)
    written = plot_results(tmp_path, ["png"])
    names = {"throughput.png", "queue_delay.png", "sojourn_cdf.png", "cwnd.png"}
    assert {p.name for p in written} == names
    for name in names:
        assert (tmp_path / name).read_bytes()[:8] == PNG_MAGIC


def test_no_cwnd_plot_without_trace(fake_core: FakeCore, tmp_path: Path) -> None:
    fake_core.output = {"traced": False}
    ccsim.run("x = 1").write(tmp_path)
    assert "cwnd.png" not in {p.name for p in plot_results(tmp_path, ["png"])}


# -- CLI ------------------------------------------------------------------------------------


def test_cli_bad_scenario_one_line_exit_2(
    fake_core: FakeCore, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text('bad = "yes"\n')
    out = tmp_path / "out"
    assert cli.main(["run", str(scenario), "-o", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == 'error: flows[1].rtt: expected a duration like "50ms", got "50"\n'
    assert not out.exists()


def test_cli_run_writes_and_reports(
    fake_core: FakeCore, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text('duration = "5s"\n')
    out = tmp_path / "out"
    assert cli.main(["run", str(scenario), "-o", str(out)]) == 0
    report = capsys.readouterr().out
    for word in ("goodput", "utilisation", "p99", "drop prob.", "mark prob.", "Jain", "wall"):
        assert word in report
    assert (out / "summary.json").exists() and (out / "queue_delay.png").exists()


def test_cli_demo_uses_packaged_scenario(
    fake_core: FakeCore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main(["demo", "--quiet"]) == 0
    text, fmt = fake_core.calls[-1]
    assert fmt == "toml" and "[[udp]]" in text and 'pattern = "poisson"' in text
    assert (tmp_path / "demo-out" / "cwnd.png").exists()


def test_cli_plot_on_a_directory_without_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["plot", str(tmp_path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


# -- bench ----------------------------------------------------------------------------------


def test_benchmark_scenarios_match_the_standard_set() -> None:
    full = bench.benchmarks()
    shapes = [
        (
            b.scenario["flows"][0]["count"],
            b.scenario["bottleneck"]["rate"],
            b.scenario["flows"][0]["rtt"],
            b.scenario["duration"],
            b.target_wall_s,
        )
        for b in full
    ]
    assert shapes == [
        (1, "10Mbps", "100ms", "300s", 0.15),
        (10, "1Gbps", "20ms", "10s", 0.35),
        (1000, "10Gbps", "20ms", "2s", 0.6),
    ]
    for b in full:
        assert b.scenario["bottleneck"]["queue"] == {"kind": "droptail", "limit": "1bdp"}
        assert b.scenario["flows"][0]["cc"] == "newreno"
    quick = bench.benchmarks(quick=True)
    assert [b.scenario["duration"] for b in quick] == ["30s", "1s", "0.2s"]


def test_bench_report(fake_core: FakeCore) -> None:
    console = Console(record=True, width=160)
    found = bench.run_all(console, quick=True)
    assert [r.passed for r in found] == [False, False, False]  # 0.25 s wall vs scaled targets
    assert found[0].events_per_s == pytest.approx(1000 / 0.25)
    assert found[0].speedup == pytest.approx(found[0].simulated_s / 0.25)
    text = console.export_text()
    assert "miss" in text and "events/s" in text
    assert bench.as_records(found)[2]["target_wall_s"] == pytest.approx(0.06)
