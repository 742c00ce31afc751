"""The ns-3 parking-lot comparison without ns-3 (bench/ns3/ccsim_ns3/parking_lot.py): the
translation of parking_lot.toml to both simulators, the metrics from synthetic raw
outputs, the agreement lines and the RESULTS.md section. Nothing here compiles or runs
ns-3."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ccsim
from ccsim_ns3 import agreement, matrix, parking_lot, report, translate


def _config_lines(cfg: str, key: str) -> list[list[str]]:
    return [line.split()[1:] for line in cfg.splitlines() if line.split()[0] == key]


@pytest.mark.parametrize("sc", matrix.PARKING_LOTS, ids=lambda s: s.name)
def test_parking_lot_translates_to_both_simulators_alike(sc, tmp_path: Path):
    scenario = translate.ccsim_scenario(sc, quick=True)
    ccsim.validate(scenario)
    assert "bottleneck" not in scenario
    assert scenario["network"]["kind"] == "parking_lot"
    cfg = translate.ns3_config(sc, True, tmp_path / "o.json", tmp_path / "o.bin")
    hops = _config_lines(cfg, "hop")
    assert len(hops) == len(sc.hops) == len(scenario["network"]["hops"])
    for line, h, hc in zip(hops, sc.hops, scenario["network"]["hops"], strict=True):
        assert int(line[0]) == round(h.rate_mbps * 1e6)
        assert hc["rate"] == f"{h.rate_mbps}Mbps"
        assert int(line[1]) == round(h.delay_ms * 1e6)
        assert hc["delay"] == f"{h.delay_ms}ms"
        assert line[2] == translate.ns3_queue_attrs(h.queue)[0]
    # the dumbbell's bottleneck keys are absent; access links at 10x the fastest hop
    assert not _config_lines(cfg, "qdisc") and not _config_lines(cfg, "rate_bps")
    fastest = max(h.rate_mbps for h in sc.hops) * 1e6
    assert int(_config_lines(cfg, "access_rate_bps")[0][0]) == round(10 * fastest)
    # every flow enters and leaves at the same routers in both, and the ns-3 sender's
    # access link (rtt/2 - the route's one-way delay) is non-negative
    ends = _config_lines(cfg, "flow_hops")
    flows = _config_lines(cfg, "flow")
    assert len(ends) == len(flows) == len(scenario["flows"]) == sc.n_flows()
    for f, (a, b), fl in zip(scenario["flows"], ends, flows, strict=True):
        assert (f["from"], f["to"]) == (f"r{a}", f"r{b}")
        one_way_ns = sum(round(h.delay_ms * 1e6) for h in sc.hops[int(a) : int(b)])
        assert int(fl[1]) // 2 - one_way_ns >= 0
    # ccsim routes them so: a short run's paths
    short = dict(scenario, duration="1.5s", stats_interval="0.5s")
    short["measure"] = {"start": "1s", "end": "1.5s"}
    paths = ccsim.run(short).summary["paths"]
    for p, (a, b) in zip(paths, ends, strict=True):
        assert p == [f"r{i}" for i in range(int(a), int(b) + 1)]


def test_parking_lots_cover_the_issue_configurations():
    lots = matrix.PARKING_LOTS
    assert 2 <= len(lots) <= 4
    assert {g.cc for sc in lots for g in sc.flows} >= {"newreno", "cubic"}
    assert {sc.queue.kind for sc in lots} >= {"droptail", "codel"}
    for sc in lots:
        assert len(sc.hops) == 2
        assert sc.rate_mbps == sc.hops[0].rate_mbps and sc.queue == sc.hops[0].queue
        spans = [(g.first_hop or 1, g.last_hop or 2) for g in sc.flows]
        assert (1, 2) in spans and (1, 1) in spans and (2, 2) in spans
        assert len({g.rtt_ms for g in sc.flows}) > 1  # different RTTs


def _ns3_out(tmp_path: Path, sent_bytes=(18_750_000, 27_000_000)) -> tuple[dict, Path]:
    out = {
        "wall_s": 2.0,
        "events": 1000,
        "hops": [
            {
                "window": {
                    "received": 10_000,
                    "dropped": 50,
                    "marked": 0,
                    "sent_packets": 9_950,
                    "sent_bytes": b,
                },
                "root_qdisc": "ns3::FifoQueueDisc",
                "device_queue_max": "1p",
                "device_queue_drops": 0,
                "sojourn_mismatch": 0,
            }
            for b in sent_bytes
        ],
        "checks": {"other_qdiscs": 0, "access_device_drops": 0},
        "flows": [
            {"rx_start": 0, "rx_end": x, "retransmissions": 1, "timeouts": 0, "cc": "TcpLinuxReno"}
            for x in (1_875_000, 7_500_000, 5_625_000, 3_750_000)
        ],
    }
    base = tmp_path / "o.sojourn"
    ms = 1_000_000  # ns
    (np.array([1, 2, 3, 4], dtype=np.int64) * ms).tofile(f"{base}.1")
    (np.array([10, 10, 30, 40], dtype=np.int64) * ms).tofile(f"{base}.2")
    return out, base


def test_ns3_parking_lot_metrics_by_hand(tmp_path: Path):
    sc = matrix.PARKING_LOTS[0]  # quick window 15 s; groups: long, hop1 cross, 2x hop2
    out, base = _ns3_out(tmp_path)
    m = parking_lot.ns3_network_metrics(sc, True, out, base)
    _, m0, m1 = sc.timing(True)
    w = m1 - m0
    # goodput per group: bytes * 8 / window; shares of the sum
    assert m["group_goodput_mbps"] == pytest.approx(
        [1_875_000 * 8 / w / 1e6, 7_500_000 * 8 / w / 1e6, 9_375_000 * 8 / w / 1e6]
    )
    assert m["group_share"] == pytest.approx([1 / 10, 4 / 10, 5 / 10])
    h1, h2 = m["hops"]
    assert h1["utilisation"] == pytest.approx(18_750_000 * 8 / (10e6 * w))
    assert h2["utilisation"] == pytest.approx(27_000_000 * 8 / (15e6 * w))
    assert h1["drop_probability"] == 50 / 10_000
    # the smallest value whose cumulative probability reaches q
    assert (h1["sojourn_p50_ms"], h1["sojourn_p90_ms"]) == (2.0, 4.0)
    assert (h2["sojourn_p50_ms"], h2["sojourn_p90_ms"], h2["sojourn_mean_ms"]) == (10.0, 40.0, 22.5)
    assert parking_lot.ns3_problems(sc, out) == []
    out["hops"][1]["root_qdisc"] = "ns3::FqCoDelQueueDisc"
    assert parking_lot.ns3_problems(sc, out) == [
        "hop2: root queue disc ns3::FqCoDelQueueDisc (wanted ns3::FifoQueueDisc)"
    ]


def test_lines_apply_the_rule_per_group_and_hop(tmp_path: Path):
    sc = matrix.PARKING_LOTS[0]
    out, base = _ns3_out(tmp_path)
    same = parking_lot.ns3_network_metrics(sc, True, out, base)
    # identical runs: every targeted figure within target, zero difference
    lines = parking_lot.compare(sc, [same] * 3, [same] * 3)
    judged = [ln for ln in lines if ln.entry is not None]
    assert {ln.entry["verdict"] for ln in judged} == {agreement.WITHIN}
    assert [ln.metric for ln in judged][:3] == [
        "goodput share long (60 ms)",
        "goodput share hop1 cross (20 ms)",
        "goodput share hop2 cross (2x 40 ms)",
    ]
    assert {"hop1 utilisation", "hop2 sojourn p90", "hop2 drop probability"} <= {
        ln.metric for ln in judged
    }
    # the long flow 20 % short in every ns-3 run (no spread): outside the 5 % target
    out2 = json.loads(json.dumps(out))
    out2["flows"][0]["rx_end"] = 1_500_000
    short = parking_lot.ns3_network_metrics(sc, True, out2, base)
    lines = parking_lot.compare(sc, [same] * 3, [short] * 3)
    long_line = lines[0]
    assert long_line.entry["verdict"] == agreement.OUTSIDE
    assert long_line.entry["half_width"] == pytest.approx(0.0)


def test_the_section_is_spliced_and_kept_by_the_matrix_writer(tmp_path: Path):
    results_md = tmp_path / "RESULTS.md"
    results_md.write_text("# dumbbell\n\nrows\n")
    sc = matrix.PARKING_LOTS[0]
    out, base = _ns3_out(tmp_path)
    m = parking_lot.ns3_network_metrics(sc, True, out, base)
    res = parking_lot.Result(sc, parking_lot.compare(sc, [m], [m]), [m], [m], 0.01, 2.0, [])
    section = parking_lot.write_section([res], {"mode": "quick (shortened runs)"}, results_md)
    text = results_md.read_text()
    assert text.startswith("# dumbbell\n\nrows\n")
    assert report.BEGIN in text and report.END in text
    assert "| **pl-reno-droptail** | goodput share long (60 ms) |" in text
    assert "200\u00d7 ✅ (10.0 ms / 2.00 s)" in text
    # a second run replaces the section, once
    parking_lot.write_section([res], {"mode": "quick (shortened runs)"}, results_md)
    assert results_md.read_text().count(report.BEGIN) == 1
    # the dumbbell matrix's writer rewrites its part and keeps the section
    report.write_markdown([], {"date": "x"}, results_md)
    text = results_md.read_text()
    assert text.startswith("# ccsim vs ns-3")
    assert section.strip() in text
