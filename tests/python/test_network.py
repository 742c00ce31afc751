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
    # Every hop is saturated under FQ-CoDel and drops: a section each, busiest first,
    # and none for the ACK directions; the links figure drawn.
    sections = [
        line.split()[2] for line in result.stdout.splitlines() if line.startswith("Congested link")
    ]
    assert sorted(sections) == ["hop1", "hop2", "hop3"], result.stdout
    drops = {q["name"]: q["drops"] for q in summary["links"]}
    assert [drops[n] for n in sections] == sorted(drops[n] for n in sections)[::-1]
    assert (out / "links.png").exists()
    # queue_series: a row per tick for every link that queued, named by the link; the
    # hops' panels in link_queues.
    import pyarrow.parquet as pq

    queue = pq.read_table(out / "queue_series.parquet")
    rows = queue.column("queue").to_pylist()
    assert {"hop1", "hop2", "hop3"} <= set(rows), set(rows)
    assert "bottleneck" not in rows
    assert len({rows.count(n) for n in set(rows)}) == 1  # every link every tick
    assert (out / "link_queues.png").exists()


def _link(drops: int = 0, marks: int = 0, p99_ms: float | None = 0.0) -> dict:
    # 10 Mbit/s fully used over a 1 s window: 1.25 MB departed.
    return {
        "name": "l",
        "drops": drops,
        "marks": marks,
        "sojourn_p99_ms": p99_ms,
        "utilisation": 1.0,
        "bytes_departed": 1_250_000,
    }


def test_a_link_is_congested_when_it_drops_marks_or_queues_ten_packets() -> None:
    from ccsim.links import congested_links, is_congested

    # Ten 1500-byte packets at 10 Mbit/s take 12 ms.
    assert not is_congested(_link(p99_ms=11.9), 1.0)
    assert is_congested(_link(p99_ms=12.1), 1.0)
    assert is_congested(_link(drops=1), 1.0)
    assert is_congested(_link(marks=1), 1.0)
    assert not is_congested(_link(p99_ms=None), 1.0)
    # The same p99 on a link ten times as fast is a hundred packets: congested at 1.2 ms.
    fast = {**_link(p99_ms=1.3), "bytes_departed": 12_500_000}
    assert is_congested(fast, 1.0)
    links = [
        {**_link(p99_ms=20.0), "name": "queued"},
        {**_link(marks=5), "name": "marked"},
        {**_link(drops=3), "name": "dropped"},
        {**_link(), "name": "idle"},
        {**_link(drops=9), "name": "worst"},
    ]
    summary = {"links": links, "measure_start_s": 0.0, "measure_end_s": 1.0}
    busiest = [q["name"] for q in congested_links(summary, all_links=True)]
    assert busiest == ["worst", "dropped", "marked", "queued"]
    assert len(congested_links(summary)) == 4


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
