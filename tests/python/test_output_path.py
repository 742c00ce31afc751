"""An unusable output path is refused before simulating: exit 2, one line, nothing written
(issue 17, item 11). The scenario would run for months, so a check that came only after
simulating would hit the subprocess timeout."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import SLOW_SCENARIO, run_cli


@pytest.mark.parametrize(
    ("out", "expected"),
    [
        ("/proc/ccsim-out", "cannot write there"),
        ("x" * 300, "too long"),
        ("", "empty path"),
    ],
)
@pytest.mark.parametrize("command", ["run", "sweep"])
def test_unusable_output_path_is_refused_before_simulating(
    tmp_path: Path, out: str, expected: str, command: str
):
    scenario = tmp_path / "slow.toml"
    scenario.write_text(SLOW_SCENARIO)
    target = scenario
    if command == "sweep":
        target = tmp_path / "sweep.toml"
        target.write_text('base = "slow.toml"\n')
    result = run_cli(command, target, "-o", out, cwd=tmp_path, timeout=60)
    assert result.returncode == 2, result
    assert len(result.stderr_lines) == 1 and result.stderr.startswith("error: "), result.stderr
    if command == "run" or out:
        assert expected in result.stderr, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted({scenario.name, target.name})
