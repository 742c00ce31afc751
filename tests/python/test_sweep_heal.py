"""A damaged batch (a truncated or empty part of ``runs/`` or ``series/``) no longer
blocks a sweep: on resume it is moved to ``damaged/`` with a one-line warning and its runs
run again, giving the same results as an undamaged sweep (issue 17, item 7)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ccsim
from ccsim.sweeps.store import WALL_CLOCK_COLUMNS, read_results, read_series
from helpers import run_cli, tables_equal

SWEEP = """
base = "base.toml"
repetitions = 2
series = ["flow_series"]
[grid]
"bottleneck.rate" = ["10Mbps", "20Mbps"]
"""

BASE = """
duration = "1s"
[bottleneck]
rate = "10Mbps"
[[flows]]
rtt = "20ms"
"""


def _sweep(tmp_path: Path) -> Path:
    (tmp_path / "base.toml").write_text(BASE)
    path = tmp_path / "sweep.toml"
    path.write_text(SWEEP)
    return path


@pytest.mark.parametrize(
    ("part", "damage"),
    [
        ("runs", "truncate"),
        ("runs", "empty"),
        ("series/flow_series", "truncate"),
    ],
)
def test_a_damaged_part_is_set_aside_and_its_runs_run_again(tmp_path: Path, part: str, damage: str):
    sweep = _sweep(tmp_path)
    reference = ccsim.sweep(sweep, tmp_path / "ref", jobs=1)
    out = tmp_path / "out"
    ccsim.sweep(sweep, out, jobs=2, flush_runs=2)  # two batches of two runs
    (out / "results.parquet").unlink()  # as a sweep killed before it ended
    victim = sorted((out / part).glob("part-*.parquet"))[-1]
    data = victim.read_bytes()
    victim.write_bytes(data[: len(data) // 2] if damage == "truncate" else b"")
    result = run_cli("sweep", sweep, "-o", out, "--jobs", "2")
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr_lines if line.startswith("warning: ")]
    assert len(warnings) == 1 and "damaged" in warnings[0], result.stderr
    assert "already done (skipped)" in result.stdout
    assert any((out / "damaged").iterdir())
    clock = list(WALL_CLOCK_COLUMNS)
    assert read_results(out).drop_columns(clock).equals(reference.results.drop_columns(clock))
    assert tables_equal(
        read_series(out, "flow_series"), read_series(tmp_path / "ref", "flow_series")
    )


def _flip(path: Path, count: int = 64) -> None:
    """Flip ``count`` bytes in the middle of ``path`` (inside the data pages: the footer
    stays intact, so the file still reads back as Parquet, with wrong values)."""
    data = bytearray(path.read_bytes())
    start = len(data) // 2 - count // 2
    for i in range(start, start + count):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("part", ["runs", "series/flow_series"])
def test_a_part_with_flipped_bytes_is_refused_on_read_and_repaired_on_resume(
    tmp_path: Path, part: str
):
    """Issue 33, item 6: 64 bytes flipped inside a part went unnoticed (the resumed sweep
    exited 0 and ``read_series`` returned rows with wrong values). Each part's SHA-256 is
    recorded when it is written: the readers refuse the part, a resumed sweep sets the
    batch aside and runs its runs again, giving the undamaged results."""
    sweep = _sweep(tmp_path)
    reference = ccsim.sweep(sweep, tmp_path / "ref", jobs=1)
    out = tmp_path / "out"
    ccsim.sweep(sweep, out, jobs=2, flush_runs=2)
    (out / "results.parquet").unlink()
    victim = sorted((out / part).glob("part-*.parquet"))[0]
    _flip(victim)
    reader = read_results if part == "runs" else lambda d: read_series(d, "flow_series")
    with pytest.raises(ccsim.SweepError, match=r"damaged \(its SHA-256 differs"):
        reader(out)
    result = run_cli("sweep", sweep, "-o", out, "--jobs", "2")
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr_lines if line.startswith("warning: ")]
    assert len(warnings) == 1 and "damaged" in warnings[0], result.stderr
    assert "already done (skipped)" in result.stdout
    clock = list(WALL_CLOCK_COLUMNS)
    assert read_results(out).drop_columns(clock).equals(reference.results.drop_columns(clock))
    assert tables_equal(
        read_series(out, "flow_series"), read_series(tmp_path / "ref", "flow_series")
    )


def test_flipped_bytes_in_results_parquet_are_rewritten_from_the_parts(tmp_path: Path):
    sweep = _sweep(tmp_path)
    out = tmp_path / "out"
    ccsim.sweep(sweep, out, jobs=1)
    good = read_results(out)
    _flip(out / "results.parquet")
    with pytest.raises(ccsim.SweepError, match=r"results\.parquet: damaged"):
        read_results(out)
    result = run_cli("sweep", sweep, "-o", out)
    assert result.returncode == 0, result.stderr
    assert read_results(out).equals(good)
