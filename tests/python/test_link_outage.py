"""Outages in `rate_changes` (issue 31): a zero rate runs and utilisation stays against
the capacity offered (at most 1, every interval); a negative rate is one line naming the
key path (exit 2, nothing written)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from helpers import assert_run_refused, run_cli

SCENARIO = """\
duration = "6s"
[bottleneck]
rate = "10Mbps"
queue = { kind = "droptail", limit = "2bdp" }
rate_changes = [{ at = "2s", rate = "0Mbps" }, { at = "3s", rate = "10Mbps" }]
[[flows]]
cc = "cubic"
rtt = "40ms"
"""


def test_an_outage_runs_and_utilisation_stays_at_most_one(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO)
    out = tmp_path / "out"
    result = run_cli("run", path, "-o", out, "--no-plots", "--quiet")
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert 0.5 < summary["utilisation"] <= 1.0
    ticks = pq.read_table(out / "queue_series.parquet").column("utilisation").to_pylist()
    assert all(0.0 <= u <= 1.0 for u in ticks), ticks


def test_a_negative_rate_step_is_one_line_naming_the_key(tmp_path: Path) -> None:
    text = SCENARIO.replace('rate = "0Mbps"', 'rate = "-1Mbps"')
    assert_run_refused(tmp_path, text, "bottleneck.rate_changes[0].rate")
