"""Running sweeps on local threads: results, failed runs, resuming, bad input, the example."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import ccsim
from ccsim.sweeps import execution
from ccsim.sweeps.store import read_results, read_series
from helpers import EXAMPLES, run_cli, snapshot, tables_equal

SWEEP = """\
repetitions = 2

[base]
duration = "2s"
seed = 3

[base.bottleneck]
rate = "10Mbps"
queue = {{ kind = "droptail", limit = "1bdp" }}

[[base.flows]]
cc = "newreno"
rtt = "20ms"

[[base.udp]]
rate = "1Mbps"
pattern = "poisson"
rtt = "30ms"

[grid]
"flows[0].cc.beta" = {betas}
buffer = {{ path = "bottleneck.queue.limit", values = [0.5, 1.0], format = "{{}}bdp" }}
"""


def write_sweep(directory: Path, betas: str = "[0.5, 0.7]", name: str = "s.toml") -> Path:
    path = directory / name
    path.write_text(SWEEP.format(betas=betas))
    return path


def test_sweep_writes_tidy_results_and_series(tmp_path: Path):
    report = ccsim.sweep(write_sweep(tmp_path), tmp_path / "out", jobs=2)
    assert (report.total, report.ran, report.failed, report.exit_status) == (8, 8, 0, 0)
    table = pq.read_table(tmp_path / "out" / "results.parquet")
    assert table.column("run").to_pylist() == list(range(8))
    assert set(table.column("status").to_pylist()) == {"ok"}
    assert table.column("flows[0].cc.beta").to_pylist() == [0.5] * 4 + [0.7] * 4
    assert table.column("buffer").to_pylist()[:4] == [0.5, 0.5, 1.0, 1.0]
    assert table.column("repetition").to_pylist() == [0, 1] * 4
    seeds = table.column("seed").to_pylist()
    assert seeds[0] == 3 and seeds[1] != 3 and seeds[0] == seeds[2]
    for name in ("utilisation", "jain_index", "sojourn_p50_ms", "drop_probability"):
        assert None not in table.column(name).to_pylist()
    goodput = table.column("flow_goodput_mbps").to_pylist()
    assert all(len(g) == 2 for g in goodput)  # one TCP flow + one UDP source
    # the per-run parts read as one table too
    parts = ds.dataset(tmp_path / "out" / "runs").to_table().sort_by("run")
    assert parts.column("utilisation").equals(table.column("utilisation"))
    # per-run series, partitioned by run
    series = read_series(tmp_path / "out", "flow_series")
    assert sorted(set(series.column("run").to_pylist())) == list(range(8))
    assert {"time_s", "flow_id", "goodput_mbps"} <= set(series.column_names)


def test_failed_runs_are_recorded_and_do_not_stop_the_sweep(tmp_path: Path):
    sweep_file = write_sweep(tmp_path, betas="[0.5, 1.5]")
    result = run_cli("sweep", sweep_file, "-o", tmp_path / "out", "--jobs", "2")
    # 1.5 is outside (0, 1): its 4 runs fail: exit status 3 (not 2, bad input, nor 1, a
    # failed plot, whatever the count), the count in the last line and in sweep.json
    assert result.returncode == 3, result.stderr
    assert result.stderr_lines[-1].startswith("error: 4 of 8 runs failed"), result.stderr
    manifest = json.loads((tmp_path / "out" / "sweep.json").read_text())
    assert manifest["status"] == {"runs": 8, "done": 8, "failed": 4}
    table = read_results(tmp_path / "out")
    assert table.num_rows == 8
    statuses = table.column("status").to_pylist()
    assert statuses == ["ok"] * 4 + ["failed"] * 4
    errors = table.column("error").to_pylist()
    assert errors[:4] == [None] * 4
    assert all("flows[0].cc.beta" in e and "1.5" in e for e in errors[4:])
    assert table.column("utilisation").to_pylist()[4:] == [None] * 4
    assert "failed runs" in result.stdout
    # nothing more to do on a second run; still reports the failures
    again = run_cli("sweep", sweep_file, "-o", tmp_path / "out")
    assert again.returncode == 3
    assert "already done" in again.stdout


def test_an_exception_from_the_core_is_a_failed_run(tmp_path: Path, monkeypatch):
    class FakePanic(BaseException):  # like pyo3's PanicException: not an Exception
        pass

    real = execution.simulate

    def flaky(text, series, progress=None):
        if '"beta":0.7' in text:
            raise FakePanic("index out of bounds")
        return real(text, series, progress)

    monkeypatch.setattr(execution, "simulate", flaky)
    report = ccsim.sweep(write_sweep(tmp_path), tmp_path / "out", jobs=2)
    assert report.failed == 4 and report.exit_status == 3
    errors = [e for e in report.results.column("error").to_pylist() if e]
    assert errors == ["FakePanic: index out of bounds"] * 4


def runs_in(path: Path) -> list[int]:
    return pq.read_table(path, columns=["run"]).column("run").to_pylist()


def test_resume_skips_done_runs_and_a_changed_sweep_is_refused(tmp_path: Path):
    sweep_file = write_sweep(tmp_path)
    out = tmp_path / "out"
    # batches of 3, 3 and 2 runs (and none by time, however slow the machine)
    ccsim.sweep(sweep_file, out, jobs=2, flush_runs=3, flush_s=600)
    parts = sorted((out / "runs").glob("part-*.parquet"))
    assert [len(runs_in(p)) for p in parts] == [3, 3, 2]
    series_before = read_series(out, "flow_series")
    # lose a batch's rows, as if killed after writing its series: only its runs run again,
    # and its series parts (now orphans) are replaced, not duplicated
    lost = runs_in(parts[1])
    parts[1].unlink()
    before = {p.name: p.stat().st_mtime_ns for p in (out / "runs").iterdir()}
    report = ccsim.sweep(sweep_file, out, jobs=2, flush_runs=3)
    assert (report.skipped, report.ran) == (5, 3)
    after = {p.name: p.stat().st_mtime_ns for p in (out / "runs").iterdir()}
    assert all(after[name] == mtime for name, mtime in before.items())
    assert sorted(set(after) - set(before)) == ["part-000003.parquet"]
    assert sorted(runs_in(out / "runs" / "part-000003.parquet")) == sorted(lost)
    assert pq.read_table(out / "results.parquet").column("run").to_pylist() == list(range(8))
    assert not (out / "series" / "flow_series" / parts[1].name).exists()
    assert tables_equal(read_series(out, "flow_series"), series_before)

    # a different sweep against the same directory: exit 2, one line, nothing touched
    changed = write_sweep(tmp_path, betas="[0.5, 0.8]", name="changed.toml")
    files = snapshot(out)
    result = run_cli("sweep", changed, "-o", out)
    assert result.returncode == 2
    assert len(result.stderr_lines) == 1 and "different sweep" in result.stderr
    assert "--force" in result.stderr
    assert snapshot(out) == files
    # a figure of the earlier sweep in a vector format is ccsim's too: --force removes it
    (out / "sweep.pdf").write_bytes(b"%PDF- stale figure of the earlier sweep")
    result = run_cli("sweep", changed, "-o", out, "--force", "--quiet")
    assert result.returncode == 0, result.stderr
    assert read_results(out).column("flows[0].cc.beta").to_pylist()[-1] == 0.8
    assert not (out / "sweep.pdf").exists()


KILL_SWEEP = """\
[base]
duration = "200s"
[base.bottleneck]
rate = "10Mbps"
[[base.flows]]
rtt = "100ms"

[grid]
"flows[0].cc.beta" = [0.5, 0.6, 0.7, 0.8, 0.9]
buffer = { path = "bottleneck.queue.limit", from = 0.25, to = 2.0, step = 0.25, format = "{}bdp" }
"""


def committed_runs(runs: Path) -> int:
    """Rows committed so far (a part may vanish or appear while the sweep runs)."""
    count = 0
    for path in runs.glob("part-*.parquet"):
        with contextlib.suppress(OSError):
            count += pq.read_metadata(path).num_rows
    return count


def test_killed_sweep_resumes_without_recomputing(tmp_path: Path):
    sweep_file = tmp_path / "kill.toml"
    sweep_file.write_text(KILL_SWEEP)
    out = tmp_path / "out"
    total = 40
    # batches of 2 runs, so that several are committed before the kill
    code = (
        "import sys, ccsim; "
        "ccsim.sweep(sys.argv[1], sys.argv[2], jobs=1, flush_runs=2, flush_s=0.5)"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, sweep_file, out],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    runs = out / "runs"
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            if runs.is_dir() and committed_runs(runs) >= 5:
                break
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    finished = {p.name: p for p in runs.glob("part-*.parquet")}
    done = committed_runs(runs)
    assert 5 <= done < total, "the sweep ended before it could be killed"
    assert not (out / "results.parquet").exists()
    before = {
        name: (
            p.stat().st_ino,
            p.stat().st_mtime_ns,
            pq.read_table(p, columns=["run", "started_at"]),
        )
        for name, p in finished.items()
    }

    result = run_cli("sweep", sweep_file, "-o", out, "--jobs", "2")
    assert result.returncode == 0, result.stderr
    assert re.search(rf"already done \(skipped\)\s*│\s*{done}\s*│", result.stdout)
    table = pq.read_table(out / "results.parquet")
    assert table.column("run").to_pylist() == list(range(total))  # each exactly once
    assert set(table.column("status").to_pylist()) == {"ok"}
    started_all = dict(
        zip(table.column("run").to_pylist(), table.column("started_at"), strict=True)
    )
    for name, (inode, mtime, rows) in before.items():
        path = runs / name
        assert (path.stat().st_ino, path.stat().st_mtime_ns) == (inode, mtime), name
        for run, started in zip(rows.column("run"), rows.column("started_at"), strict=True):
            assert started_all[run.as_py()] == started  # not run again
    # every run's series exactly once, and no temporary file is left behind
    series = read_series(out, "flow_series")
    assert sorted(set(series.column("run").to_pylist())) == list(range(total))
    assert series.num_rows == total * len(series.filter(pc.equal(series["run"], 0)))
    assert not [p for p in out.rglob(".*") if p.name != ".lock"]


BAD_INPUT = [
    ("unknown-key-path", '"flows[0].rttt" = ["1ms"]', "flows[0].rttt"),
    ("unknown-cc-parameter", '"flows[0].cc.bta" = [0.5]', "flows[0].cc.bta"),
    ("index-out-of-range", '"flows[3].rtt" = ["1ms"]', "flows[3].rtt"),
    ("empty-axis", '"flows[0].rtt" = []', "empty axis"),
    (
        "zip-unequal",
        '[[zip]]\n"flows[0].rtt" = ["1ms", "2ms"]\n"bottleneck.rate" = ["1Mbps"]',
        "equal lengths",
    ),
]


@pytest.mark.parametrize(
    ("axes", "expected"), [c[1:] for c in BAD_INPUT], ids=[c[0] for c in BAD_INPUT]
)
def test_bad_input_exits_2_with_one_line_and_writes_nothing(tmp_path: Path, axes, expected):
    text = SWEEP.format(betas="[0.5]").replace("[grid]\n", "[grid]\n" + axes + "\n", 1)
    if axes.startswith("[[zip]]"):
        text = SWEEP.format(betas="[0.5]") + "\n" + axes + "\n"
    path = tmp_path / "bad.toml"
    path.write_text(text)
    result = run_cli("sweep", path, "-o", tmp_path / "out")
    assert result.returncode == 2, result
    assert result.stdout == ""
    assert len(result.stderr_lines) == 1 and result.stderr.startswith("error: ")
    assert expected in result.stderr
    assert not (tmp_path / "out").exists()


def test_missing_sweep_file_and_non_sweep_directory(tmp_path: Path):
    result = run_cli("sweep", tmp_path / "nope.toml", "-o", tmp_path / "out")
    assert result.returncode == 2 and len(result.stderr_lines) == 1
    assert not (tmp_path / "out").exists()
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    result = run_cli("sweep", write_sweep(tmp_path), "-o", other)
    assert result.returncode == 2 and "not a ccsim sweep directory" in result.stderr
    assert sorted(p.name for p in other.iterdir()) == ["keep.txt"]


def test_example_sweep_and_its_plot(tmp_path: Path):
    """The README's example: the sweep and `--plot` (paper 003's Fig. 2 with its model is
    the experiment 003:fig2, tested in test_reproduce.py)."""
    out = tmp_path / "newreno-buffer"
    result = run_cli("sweep", EXAMPLES / "sweeps" / "newreno_buffer.toml", "-o", out, "--plot")
    assert result.returncode == 0, result.stderr
    table = pq.read_table(out / "results.parquet")
    assert table.num_rows == 20
    assert (out / "sweep.png").stat().st_size > 10_000
    b = table.column("buffer_bdp").to_pylist()
    util = table.column("utilisation").to_pylist()
    # utilisation grows with the buffer
    assert util[b.index(0.1)] < util[b.index(1.0)]


def test_retry_failed_runs_only_the_failed_ones(tmp_path: Path, monkeypatch):
    real = execution.simulate

    def broken(text, series, progress=None):
        if '"limit":"1.0bdp"' in text:
            raise RuntimeError("simulated crash")
        return real(text, series, progress)

    monkeypatch.setattr(execution, "simulate", broken)
    sweep_file = write_sweep(tmp_path)
    first = ccsim.sweep(sweep_file, tmp_path / "out", jobs=2)
    assert first.failed == 4
    monkeypatch.setattr(execution, "simulate", real)
    again = ccsim.sweep(sweep_file, tmp_path / "out", jobs=2)
    assert (again.ran, again.failed) == (0, 4)  # failed runs count as done...
    retried = ccsim.sweep(sweep_file, tmp_path / "out", jobs=2, retry_failed=True)
    assert (retried.ran, retried.failed, retried.exit_status) == (4, 0, 0)  # ...until retried
    assert set(read_results(tmp_path / "out").column("status").to_pylist()) == {"ok"}


def test_bench_reports_sweep_overhead_and_speedup():
    from rich.console import Console

    from ccsim import bench

    console = Console(record=True, width=200)
    found = bench.run_sweep_bench(console, quick=True)
    assert [r.name for r in found] == ["sweep-overhead", "sweep-speedup", "build"]
    overhead, speedup, build = found
    # build time of 10^5 flows: reported, not asserted
    assert build.unit == "s" and build.value > 0 and "<= 2" in console.export_text(clear=False)
    # the whole sweep minus the same runs alone, per run (no timing asserted)
    assert overhead.unit == "ms/run" and overhead.runs == 1000
    assert overhead.direct_wall_s is not None and overhead.direct_wall_s > 0
    assert overhead.value == pytest.approx(
        (overhead.wall_s[0] - overhead.direct_wall_s) / overhead.runs * 1e3
    )
    assert speedup.jobs == (1, 2) and speedup.value > 0 and speedup.reference > 0
    text = console.export_text()
    assert "sweep-overhead" in text and "sweep-speedup" in text and "<= 0.5" in text
    records = bench.sweep_records(found)
    assert records[0]["target"] == 0.5
    assert records[0]["overhead_ms_per_run"] == overhead.value
    assert "bare_run_speedup" in records[1]
