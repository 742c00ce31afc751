"""The sweep store: every table can be kept, batches do not change results, a batch is
flushed by time as well as by size, and what a killed sweep left half-written is cleaned
up on resume. (Killing a real sweep: test_sweep_run.py and test_sweep_dask.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import ccsim
from ccsim import output
from ccsim.sweeps import execution, runner
from ccsim.sweeps import store as sweep_store
from ccsim.sweeps.spec import all_series, load_sweep
from ccsim.sweeps.store import WALL_CLOCK_COLUMNS, SweepStore, read_results, read_series
from helpers import run_cli, tables_equal

# DCTCP reports its alpha in cc_vars; RED marks, so cc_reductions has ECN (and loss) rows.
TRACED = {
    "base": {
        "duration": "1s",
        "seed": 2,
        "bottleneck": {"rate": "10Mbps", "queue": {"kind": "red", "ecn": True}},
        "flows": [
            {"cc": "dctcp", "rtt": "20ms", "trace": True, "ecn": True},
            {"cc": "newreno", "rtt": "30ms", "trace": True},
        ],
    },
    "grid": {"flows[0].rtt": ["10ms", "20ms", "40ms"]},
    "series": ["cc_vars", "cc_reductions"],
}


def test_cc_vars_and_cc_reductions_are_kept_as_a_direct_run_gives_them(tmp_path: Path):
    out = tmp_path / "out"
    report = ccsim.sweep(TRACED, out, jobs=2, flush_runs=2)
    assert (report.ran, report.failed) == (3, 0)
    assert sorted(p.name for p in (out / "series").iterdir()) == ["cc_reductions", "cc_vars"]
    scenarios = report.results.column("scenario").to_pylist()
    for name in ("cc_vars", "cc_reductions"):
        kept = read_series(out, name)
        assert kept.column_names[-1] == "run"
        assert sorted(set(kept.column("run").to_pylist())) == [0, 1, 2]
        for run, text in enumerate(scenarios):
            direct = ccsim.run(json.loads(text)).tables[name]
            mine = kept.filter(pc.equal(kept.column("run"), run)).drop_columns(["run"])
            assert direct.num_rows > 0 and tables_equal(mine, direct), (name, run)
    assert set(read_series(out, "cc_vars").column("name").to_pylist()) == {"alpha"}
    assert "ecn" in read_series(out, "cc_reductions").column("cause").to_pylist()


def test_a_kept_table_without_rows_reads_back_empty_with_its_columns(tmp_path: Path):
    # NewReno reports no controller variables: cc_vars has no rows, but its columns
    spec = {**TRACED, "base": {**TRACED["base"], "flows": [TRACED["base"]["flows"][1]]}}
    ccsim.sweep(spec, tmp_path / "out", jobs=1)
    empty = read_series(tmp_path / "out", "cc_vars")
    assert empty.num_rows == 0
    assert empty.column_names == ["time_s", "flow_id", "name", "value", "run"]


def test_series_all_is_the_one_list_of_known_tables(monkeypatch):
    base = {"base": TRACED["base"], "series": "all"}
    assert load_sweep(base).series == tuple(output.KNOWN_TABLES) == all_series()
    assert {"cc_vars", "cc_reductions"} <= set(all_series())
    # a table the core gains becomes keepable with no change to the sweep code
    monkeypatch.setattr(output, "KNOWN_TABLES", (*output.KNOWN_TABLES, "group_series"))
    assert load_sweep({**base, "series": ["group_series"]}).series == ("group_series",)
    assert load_sweep(base).series[-1] == "group_series"


def test_series_all_keeps_every_table_the_core_gives(tmp_path: Path):
    out = tmp_path / "out"
    report = ccsim.sweep({"base": TRACED["base"], "series": "all"}, out, jobs=1)
    direct = ccsim.run(json.loads(report.results.column("scenario")[0].as_py())).tables
    for name in all_series():
        if name in direct:
            kept = read_series(out, name).drop_columns(["run"])
            assert tables_equal(kept, direct[name]), name


SWEEP_12 = {
    "base": {
        "duration": "2s",
        "seed": 7,
        "bottleneck": {"rate": "10Mbps", "queue": {"kind": "droptail", "limit": "1bdp"}},
        "flows": [{"cc": "newreno", "rtt": "20ms", "trace": True}],
        "udp": [{"rate": "1Mbps", "pattern": "poisson", "rtt": "30ms"}],
    },
    "repetitions": 3,
    "grid": {"flows[0].cc.beta": [0.5, 0.7], "bottleneck.queue.limit": ["0.5bdp", "1bdp"]},
}


def test_results_do_not_depend_on_batches_or_jobs(tmp_path: Path):
    one = ccsim.sweep(SWEEP_12, tmp_path / "one", jobs=1, flush_runs=1)
    many = ccsim.sweep(SWEEP_12, tmp_path / "many", jobs=2, flush_s=600)
    assert len(list((tmp_path / "one" / "runs").glob("part-*"))) == 12
    assert len(list((tmp_path / "many" / "runs").glob("part-*"))) == 1
    a = one.results.drop_columns(list(WALL_CLOCK_COLUMNS))
    b = many.results.drop_columns(list(WALL_CLOCK_COLUMNS))
    assert a.column("run").to_pylist() == list(range(12))
    assert a.equals(b)  # the summary has no NaN (JSON), so equals is exact
    assert read_results(tmp_path / "one").equals(one.results)
    for name in ("flow_series", "queue_series", "cc_trace"):
        assert tables_equal(
            read_series(tmp_path / "one", name), read_series(tmp_path / "many", name)
        ), name


SWEEP_8 = {**SWEEP_12, "repetitions": 2}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _store(tmp_path: Path, **flush) -> tuple[SweepStore, list]:
    sweep = load_sweep(SWEEP_8)
    store = SweepStore(tmp_path / "out", sweep, **flush)
    store.open(force=False)
    return store, store.pending(retry_failed=False)


def _outcome(spec, series=("flow_series",)):
    return execution.execute(spec.run, spec.scenario_json, series)


def test_a_batch_is_flushed_by_size_or_by_time(tmp_path: Path, monkeypatch):
    clock = Clock()
    monkeypatch.setattr(sweep_store.time, "monotonic", clock)
    store, specs = _store(tmp_path, flush_runs=3, flush_s=2.0)
    try:
        runs = tmp_path / "out" / "runs"
        assert store.seconds_to_flush() is None  # nothing buffered
        store.add(_outcome(specs[0]))
        clock.now += 1.5
        store.add(_outcome(specs[1]))
        assert store.seconds_to_flush() == pytest.approx(0.5)  # from the oldest run
        store.flush_if_due()
        assert not list(runs.iterdir())
        clock.now += 0.5
        store.flush_if_due()  # due by time, with 2 of 3 runs: to the writer thread
        store.wait()
        assert [p.name for p in runs.iterdir()] == ["part-000000.parquet"]
        for spec in specs[2:5]:  # a full batch goes to the writer at once
            store.add(_outcome(spec))
        store.wait()
        assert sorted(p.name for p in runs.iterdir())[-1] == "part-000001.parquet"
        assert store.done() == {0, 1, 2, 3, 4} and store.seconds_to_flush() is None
        rows = pq.read_table(runs / "part-000001.parquet")
        assert rows.column("run").to_pylist() == [2, 3, 4]
        series = pq.read_table(tmp_path / "out" / "series" / "flow_series" / rows_name(1))
        assert sorted(set(series.column("run").to_pylist())) == [2, 3, 4]
    finally:
        store.close()


def rows_name(batch: int) -> str:
    return f"part-{batch:06d}.parquet"


def test_reopening_removes_what_a_killed_sweep_left_half_written(tmp_path: Path):
    store, specs = _store(tmp_path, flush_runs=2)
    out = tmp_path / "out"
    for spec in specs[:4]:
        store.add(_outcome(spec, ("flow_series", "queue_series", "cc_trace")))
    store.close()
    # killed mid-commit: batch 2's series renamed but not its rows, temporaries left
    for name in ("flow_series", "cc_trace"):
        (out / "series" / name / rows_name(2)).write_bytes(b"half")
        (out / "series" / name / f".{rows_name(3)}.123.tmp").write_bytes(b"half")
    (out / "runs" / f".{rows_name(2)}.123.tmp").write_bytes(b"half")

    again = SweepStore(out, load_sweep(SWEEP_8))
    again.open(force=False)
    again.close()
    assert not (out / "series" / "flow_series" / rows_name(2)).exists()
    assert not (out / "series" / "cc_trace" / rows_name(2)).exists()
    assert not [p for p in out.rglob(".*") if p.name != ".lock"]

    report = ccsim.sweep(SWEEP_8, out, jobs=1)
    assert (report.skipped, report.ran) == (4, 4)
    assert not [p for p in out.rglob(".*") if p.name != ".lock"]
    # the new batch took the number of the uncommitted one, with its own series
    assert sorted(p.name for p in (out / "runs").iterdir()) == [rows_name(i) for i in range(3)]
    for name in ("flow_series", "cc_trace", "queue_series"):
        kept = read_series(out, name)
        per_run = [len(kept.filter(pc.equal(kept.column("run"), r))) for r in range(8)]
        assert per_run == [per_run[0]] * 8 and per_run[0] > 0, name


def test_ctrl_c_writes_every_finished_run(tmp_path: Path, monkeypatch):
    calls = {"n": 0}
    real = runner._Progress.advance

    def interrupt_third(self, outcome):
        real(self, outcome)
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(runner._Progress, "advance", interrupt_third)
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        ccsim.sweep(SWEEP_12, out, jobs=1)  # batches of 500 runs: none full yet
    done = set(pq.read_table(out / "runs", columns=["run"]).column("run").to_pylist())
    assert {0, 1, 2} <= done and len(done) < 12
    monkeypatch.setattr(runner._Progress, "advance", real)
    again = ccsim.sweep(SWEEP_12, out, jobs=2)
    assert (again.skipped, again.ran, again.failed) == (len(done), 12 - len(done), 0)
    assert again.results.column("run").to_pylist() == list(range(12))


def test_a_directory_of_the_old_layout_is_refused_unless_force(tmp_path: Path):
    sweep_file = tmp_path / "s.toml"
    sweep_file.write_text(
        '[base]\nduration = "1s"\n[base.bottleneck]\nrate = "10Mbps"\n'
        '[[base.flows]]\nrtt = "20ms"\n[grid]\n"flows[0].rtt" = ["10ms", "20ms"]\n'
    )
    out = tmp_path / "out"
    ccsim.sweep(sweep_file, out, jobs=1)
    manifest = json.loads((out / "sweep.json").read_text())
    manifest["format"] = "ccsim-sweep/1"
    (out / "sweep.json").write_text(json.dumps(manifest))
    result = run_cli("sweep", sweep_file, "-o", out)
    assert result.returncode == 2 and len(result.stderr_lines) == 1
    assert "older layout" in result.stderr and "--force" in result.stderr
    result = run_cli("sweep", sweep_file, "-o", out, "--force", "--quiet")
    assert result.returncode == 0, result.stderr
    assert json.loads((out / "sweep.json").read_text())["format"] == sweep_store.FORMAT
    assert read_results(out).num_rows == 2
