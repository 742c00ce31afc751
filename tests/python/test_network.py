"""Issue 30: a `[network]` scenario through the CLI: the parking-lot example runs and
reports every hop, and a bad network is one line on stderr, exit 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import EXAMPLES, run_cli


def test_parking_lot_example_runs_and_reports_each_hop(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run_cli("run", EXAMPLES / "parking_lot.toml", "-o", out)
    assert result.returncode == 0, result.stderr
    assert "Links (measurement window)" in result.stdout
    summary = json.loads((out / "summary.json").read_text())
    names = [q["name"] for q in summary["links"]]
    assert names[:3] == ["hop1", "hop1-reverse", "hop2"]
    assert summary["paths"][0] == ["r0", "r1", "r2", "r3"]


def test_link_to_unknown_node_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        'duration = "10s"\n[network]\nnodes = ["a", "b"]\n'
        'links = [{ from = "a", to = "c", rate = "10Mbps" }]\n'
        '[[flows]]\nfrom = "a"\nto = "b"\nrtt = "20ms"\n'
    )
    out = tmp_path / "out"
    result = run_cli("run", path, "-o", out)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "network.links[0].to" in lines[0], result.stderr
    assert not out.exists()
