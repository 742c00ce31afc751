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


def test_validate_prints_the_leaf_spine_fabric_and_its_congestion_candidates() -> None:
    result = run_cli("validate", EXAMPLES / "leaf_spine.toml")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    # 128 hosts, 8 leaves, 4 spines; 2 x 128 host links and 2 x 8 x 4 fabric links.
    assert "network: 140 nodes, 320 links, 8 flows; leaf oversubscription 1:1" in out
    candidates = out.split("congestion candidates")[1].split("other links")[0]
    # The incast's four senders share host20's downlink: 2.5 Gbit/s each in max-min.
    assert "leaf1-host20" in candidates and "fair share 2.5 Gbit/s" in candidates
    # The long flows' own uplinks fill (10 Gbit/s each, one flow each).
    assert "host0-leaf0" in candidates
    # 40 Gbit/s fabric links never fill with these eight flows.
    assert "leaf0-spine" not in candidates
