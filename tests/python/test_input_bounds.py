"""Unbounded input is refused in one line before it fills the memory (issue 17, item 6),
and a sweep whose base scenario is invalid on its own is bad input (item 8).

Files larger than 16 MB (and devices that never end, like /dev/zero) are not read whole;
a sweep's run count is the product of its axes' lengths times its repetitions, checked
before anything is expanded; runs are built one at a time when asked for.
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import pytest

import ccsim
from ccsim.scenario import MAX_INPUT_BYTES, SweepError
from ccsim.sweeps.spec import MAX_RUNS, expand, load_sweep
from helpers import EXAMPLES, run_cli, snapshot

NEWRENO = EXAMPLES / "single_newreno.toml"


def _one_line(result, status: int = 2) -> str:
    assert result.returncode == status, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


# --------------------------------------------------------------------------- file size


@pytest.mark.parametrize(
    "args",
    [
        ["validate", "/dev/zero"],
        ["run", "/dev/zero", "-o", "out"],
        ["sweep", "/dev/zero", "--dry-run"],
        ["sweep", "/dev/zero", "-o", "out"],
    ],
    ids=["validate", "run", "sweep-dry-run", "sweep"],
)
def test_a_file_that_never_ends_is_refused_in_one_line(tmp_path: Path, args: list[str]):
    start = time.monotonic()
    result = run_cli(*args, cwd=tmp_path, timeout=60)
    line = _one_line(result)
    assert line.startswith("error: /dev/zero: ") and "at most 16 MB" in line, line
    assert time.monotonic() - start < 30
    assert not any(tmp_path.iterdir()), "nothing written"


@pytest.mark.parametrize("command", ["validate", "sweep"])
def test_a_file_over_16_mb_is_refused_by_its_size(tmp_path: Path, command: str):
    big = tmp_path / "big.toml"
    with big.open("wb") as f:  # sparse: 17 MB without writing them
        f.truncate(17 * 1024 * 1024)
    args = ["validate", big] if command == "validate" else ["sweep", big, "--dry-run"]
    line = _one_line(run_cli(*args, cwd=tmp_path, timeout=60))
    assert f"{big}: " in line and "17.0 MB" in line and "at most 16 MB" in line, line
    assert snapshot(tmp_path).keys() == {"big.toml"}


def test_a_base_scenario_over_16_mb_is_refused(tmp_path: Path):
    big = tmp_path / "base.toml"
    big.write_text('duration = "1s"\n' + "#" * MAX_INPUT_BYTES + "\n")
    sweep = tmp_path / "sweep.toml"
    sweep.write_text('base = "base.toml"\n')
    line = _one_line(run_cli("sweep", sweep, "-o", tmp_path / "out", timeout=60))
    assert "base.toml: base scenario" in line and "at most 16 MB" in line, line
    assert not (tmp_path / "out").exists()


def test_the_python_api_raises_its_input_errors():
    with pytest.raises(ccsim.ScenarioError, match="at most 16 MB"):
        ccsim.validate("/dev/zero")
    with pytest.raises(SweepError, match="at most 16 MB"):
        load_sweep("/dev/zero")


def test_a_file_of_exactly_the_bound_is_read(tmp_path: Path):
    ok = tmp_path / "ok.toml"
    text = NEWRENO.read_text()
    ok.write_text(text + "#" * (MAX_INPUT_BYTES - len(text.encode()) - 1) + "\n")
    assert ok.stat().st_size == MAX_INPUT_BYTES
    ccsim.validate(ok)


# --------------------------------------------------------------------------- grid size


def _grid(tmp_path: Path, body: str) -> Path:
    sweep = tmp_path / "grid.toml"
    sweep.write_text(f'base = "{NEWRENO}"\n{body}')
    return sweep


NINE_MILLION = """
[grid]
a = { path = "flows[0].rtt", from = 1, to = 3000, step = 1, format = "{}ms" }
b = { path = "flows[0].cc.beta", from = 0.1, to = 0.9, count = 3000 }
"""


@pytest.mark.parametrize("dry_run", [True, False])
def test_a_grid_of_nine_million_runs_is_refused_in_one_line(tmp_path: Path, dry_run: bool):
    sweep = _grid(tmp_path, NINE_MILLION)
    out = tmp_path / "out"
    args = ["--dry-run"] if dry_run else ["-o", out]
    start = time.monotonic()
    result = run_cli("sweep", sweep, *args, timeout=60)
    took = time.monotonic() - start
    line = _one_line(result)
    assert result.stdout == ""
    assert f"a grid of 9,000,000 runs; at most {MAX_RUNS:,}" in line, line
    assert took < 20, f"{took:.1f} s"  # the imports; the grid itself is not expanded
    assert not out.exists()


def test_repetitions_count_towards_the_bound(tmp_path: Path):
    with pytest.raises(SweepError, match=r"a grid of 2,000,000,000,000 runs; at most"):
        load_sweep(
            _grid(
                tmp_path,
                'repetitions = 1000000000000\n[grid]\ns = { path = "seed", values = [1, 2] }\n',
            )
        )


def test_an_axis_of_a_billion_values_is_refused_before_it_is_built(tmp_path: Path):
    start = time.monotonic()
    with pytest.raises(SweepError, match=r"grid\.b: 1,000,000,000 values; at most 1,000,000"):
        load_sweep(
            _grid(tmp_path, '[grid]\nb = { path = "seed", from = 1, to = 1000000000, step = 1 }\n')
        )
    with pytest.raises(SweepError, match=r"grid\.b: 1,000,000,000 values"):
        load_sweep(
            _grid(tmp_path, '[grid]\nb = { path = "seed", from = 0, to = 1, count = 1000000000 }\n')
        )
    assert time.monotonic() - start < 2


def test_a_sweep_at_the_bound_loads_without_expanding(tmp_path: Path):
    """A million runs: counted, not built; any run is built when asked for."""
    body = """
repetitions = 10
[grid]
rtt = { path = "flows[0].rtt", from = 1, to = 1000, step = 1, format = "{}ms" }
beta = { path = "flows[0].cc.beta", from = 0.05, to = 0.95, count = 100 }
"""
    start = time.monotonic()
    sweep = load_sweep(_grid(tmp_path, body))
    assert len(sweep.runs) == MAX_RUNS
    last = sweep.runs[-1]
    assert time.monotonic() - start < 5
    assert last.run == MAX_RUNS - 1 and last.repetition == 9
    assert last.axis_values == (1000, 0.95)
    assert last.scenario["flows"][0]["rtt"] == "1000ms"
    assert sweep.runs[12345] == next(itertools.islice(sweep.runs, 12345, None))
    assert sweep.runs[12345].axis_values[0] == 13 and sweep.runs[12345].repetition == 5
    with pytest.raises(IndexError):
        sweep.runs[MAX_RUNS]


def test_runs_by_index_are_the_runs_in_order():
    base = {
        "duration": "2s",
        "seed": 5,
        "bottleneck": {"rate": "10Mbps"},
        "flows": [{"rtt": "20ms"}, {"rtt": "40ms"}],
    }
    sweep = load_sweep(
        {
            "base": base,
            "repetitions": 3,
            "grid": {"flows[0].rtt": ["10ms", "20ms"], "s": {"path": "seed", "values": [7, 8]}},
            "zip": [{"flows[1].rtt": ["30ms", "60ms", "90ms"], "flows[1].start": [0, 1, 2]}],
        }
    )
    expected = list(expand(sweep.base, sweep.dimensions, 3))
    assert len(sweep.runs) == len(expected) == 36
    assert list(sweep.runs) == expected
    assert [sweep.runs[i] for i in range(36)] == expected
    assert [sweep.runs[i] for i in range(-36, 0)] == expected
    assert sweep.runs[::3] == expected[::3] and sweep.runs[5:9] == expected[5:9]
    assert list(itertools.islice(sweep.runs, 4)) == expected[:4]


def test_the_dry_run_of_a_bad_run_reports_one_line(tmp_path: Path):
    """An error only some runs meet (a seed axis value out of range) is still found before
    the run list is printed."""
    result = run_cli(
        "sweep",
        _grid(tmp_path, '[grid]\ns = { path = "seed", values = [1, 2, -3] }\n'),
        "--dry-run",
    )
    line = _one_line(result)
    assert result.stdout == ""
    assert "seed: expected an integer >= 0, got -3" in line, line


# --------------------------------------------------------------------------- invalid base


def _sweep(tmp_path: Path, text: str) -> Path:
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(text)
    return sweep


@pytest.mark.parametrize("dry_run", [False, True])
def test_a_base_invalid_on_its_own_is_bad_input(tmp_path: Path, dry_run: bool):
    base = tmp_path / "base.toml"
    base.write_text(NEWRENO.read_text().replace('duration = "30s"', 'duration = "2"'))
    sweep = _sweep(tmp_path, 'base = "base.toml"\n[grid]\n"flows[0].cc.beta" = [0.5, 0.7]\n')
    out = tmp_path / "out"
    result = run_cli("sweep", sweep, *(["--dry-run"] if dry_run else ["-o", out]))
    line = _one_line(result)
    assert result.stdout == ""
    assert f"{base}: base scenario: duration: " in line and '"2"' in line, line
    assert not out.exists()


def test_a_set_that_makes_the_base_invalid_is_bad_input(tmp_path: Path):
    sweep = _sweep(
        tmp_path,
        f'base = "{NEWRENO}"\n[set]\nduration = "2"\n[grid]\n"flows[0].cc.beta" = [0.5, 0.7]\n',
    )
    out = tmp_path / "out"
    line = _one_line(run_cli("sweep", sweep, "-o", out))
    assert f"{sweep}: base scenario with [set]: duration: " in line, line
    assert not out.exists()


@pytest.mark.parametrize(
    "grid", ["", '[grid]\ns = { path = "seed", values = [1, 2] }\n'], ids=["one-run", "seed-axis"]
)
def test_an_empty_base_file_is_bad_input(tmp_path: Path, grid: str):
    sweep = _sweep(tmp_path, f'base = "/dev/null"\n{grid}')
    out = tmp_path / "out"
    line = _one_line(run_cli("sweep", sweep, "-o", out))
    assert "/dev/null: base scenario: duration: missing required key" in line, line
    assert not out.exists()


def test_an_inline_base_invalid_on_its_own_is_bad_input():
    with pytest.raises(SweepError, match=r"<dict> \[base\]: base scenario: duration: "):
        load_sweep(
            {
                "base": {"duration": "2", "bottleneck": {"rate": "10Mbps"}, "flows": [{}]},
                "grid": {"s": {"path": "seed", "values": [1, 2]}},
            }
        )


def test_a_base_the_axes_make_valid_is_not_refused():
    """The base alone lacks a duration; every run has one."""
    sweep = load_sweep(
        {
            "base": {"bottleneck": {"rate": "10Mbps"}, "flows": [{"rtt": "20ms"}]},
            "grid": {"duration": ["1s", "2s"]},
        }
    )
    assert len(sweep.runs) == 2


def test_runs_that_fail_for_their_axis_values_are_failed_runs_not_bad_input(tmp_path: Path):
    """The base is valid; every axis value is invalid in its own way: failed runs, exit 3."""
    sweep = _sweep(
        tmp_path,
        f'base = "{NEWRENO}"\n[set]\nduration = "1s"\n[grid]\n"flows[0].rtt" = ["2", "3"]\n',
    )
    out = tmp_path / "out"
    result = run_cli("sweep", sweep, "-o", out, "--quiet")
    assert result.returncode == 3, result.stderr
    assert "2 of 2 runs failed" in result.stderr
