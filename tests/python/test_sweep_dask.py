"""Sweeps on a real dask.distributed LocalCluster: same results as local threads, a killed
worker loses nothing, an unreachable scheduler is a clear error."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import ccsim
from ccsim.sweeps.store import WALL_CLOCK_COLUMNS, read_series
from helpers import run_cli, tables_equal

distributed = pytest.importorskip("distributed")

# 3 betas x 2 buffers x 2 UDP patterns x 2 repetitions = 24 runs of 3 s at 10 Mbit/s;
# the Poisson source and the derived seeds make the seed matter.
SWEEP_24 = {
    "base": {
        "duration": "3s",
        "seed": 11,
        "bottleneck": {"rate": "10Mbps", "queue": {"kind": "droptail", "limit": "1bdp"}},
        "flows": [{"cc": "newreno", "rtt": "20ms"}, {"cc": "newreno", "rtt": "50ms"}],
        "udp": [{"rate": "1Mbps", "pattern": "poisson", "rtt": "30ms"}],
    },
    "repetitions": 2,
    "grid": {
        "flows[0].cc.beta": [0.5, 0.7, 0.9],
        "buffer_bdp": {
            "path": "bottleneck.queue.limit",
            "values": [0.5, 1.0],
            "format": "{}bdp",
        },
    },
    "zip": [{"udp[0].pattern": ["poisson", "cbr"], "udp[0].rate": ["1Mbps", "2Mbps"]}],
}


def without_wall_clock(path: Path):
    table = pq.read_table(path)
    return table.drop_columns(list(WALL_CLOCK_COLUMNS))


def test_local_and_dask_give_identical_results(tmp_path: Path):
    local = ccsim.sweep(SWEEP_24, tmp_path / "local", jobs=2)
    assert (local.total, local.failed) == (24, 0)
    dask = ccsim.sweep(SWEEP_24, tmp_path / "dask", dask="local:2")
    assert (dask.total, dask.ran, dask.failed) == (24, 24, 0)
    a = without_wall_clock(tmp_path / "local" / "results.parquet")
    b = without_wall_clock(tmp_path / "dask" / "results.parquet")
    assert a.num_rows == 24 and len(set(a.column("seed").to_pylist())) > 1
    assert a.schema == b.schema
    for name in a.column_names:  # the summary has no NaN (JSON), so == is exact
        assert a.column(name).to_pylist() == b.column(name).to_pylist(), name
    # the runs really were spread over two worker processes
    workers = pq.read_table(tmp_path / "dask" / "results.parquet").column("worker").to_pylist()
    assert len({w.split("/")[1] for w in workers}) == 2
    assert os.getpid() not in {int(w.split("/")[1]) for w in workers}
    for name in ("flow_series", "queue_series"):
        sa = read_series(tmp_path / "local", name).sort_by([("run", "ascending")])
        sb = read_series(tmp_path / "dask", name).sort_by([("run", "ascending")])
        assert tables_equal(sa, sb), name


KILL_SWEEP = {
    "base": {
        "duration": "200s",
        "bottleneck": {"rate": "10Mbps"},
        "flows": [{"rtt": "100ms"}],
    },
    "grid": {
        "flows[0].cc.beta": [0.5, 0.6, 0.7, 0.8, 0.9],
        "buffer": {
            "path": "bottleneck.queue.limit",
            "from": 0.25,
            "to": 2.0,
            "step": 0.25,
            "format": "{}bdp",
        },
    },
}


def test_a_killed_dask_worker_loses_no_run(tmp_path: Path):
    out = tmp_path / "out"
    total = 40
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.CRITICAL,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        pids = client.run(os.getpid)
        assert len(pids) == 2
        outcome: dict[str, object] = {}

        def work() -> None:
            try:
                outcome["report"] = ccsim.sweep(
                    KILL_SWEEP, out, dask=client, batch_size=2, flush_runs=2
                )
            except BaseException as exc:  # reported by the test
                outcome["error"] = exc

        thread = threading.Thread(target=work)
        thread.start()
        deadline = time.monotonic() + 60
        runs = out / "runs"
        while time.monotonic() < deadline and thread.is_alive():
            if runs.is_dir() and committed_runs(runs) >= 4:
                break
            time.sleep(0.01)
        done_at_kill = committed_runs(runs)
        victim = next(iter(pids.values()))
        os.kill(victim, signal.SIGKILL)
        thread.join(timeout=120)
        assert not thread.is_alive()
    assert "error" not in outcome, outcome.get("error")
    assert done_at_kill < total, "the sweep ended before a worker could be killed"
    report = outcome["report"]
    assert report.failed == 0
    table = pq.read_table(out / "results.parquet")
    assert sorted(table.column("run").to_pylist()) == list(range(total))  # each exactly once
    assert set(table.column("status").to_pylist()) == {"ok"}
    assert committed_runs(runs) == total


def committed_runs(runs: Path) -> int:
    count = 0
    for path in runs.glob("part-*.parquet"):
        with contextlib.suppress(OSError):
            count += pq.read_metadata(path).num_rows
    return count


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_scheduler_is_a_clear_error_within_10s(tmp_path: Path):
    sweep_file = tmp_path / "s.toml"
    sweep_file.write_text(
        '[base]\nduration = "1s"\n[base.bottleneck]\nrate = "10Mbps"\n'
        '[[base.flows]]\nrtt = "20ms"\n[grid]\n"flows[0].rtt" = ["10ms", "20ms"]\n'
    )
    start = time.monotonic()
    result = run_cli(
        "sweep", sweep_file, "-o", tmp_path / "out", "--dask", f"tcp://127.0.0.1:{_free_port()}"
    )
    elapsed = time.monotonic() - start
    assert result.returncode == 2, result
    assert len(result.stderr_lines) == 1
    assert result.stderr.startswith("error: cannot reach the Dask scheduler")
    assert elapsed < 10
    assert not (tmp_path / "out").exists()
