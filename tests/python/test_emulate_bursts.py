"""``bench/linux/ccsim_linux/bursts.py``, the capture reader behind bench/LINUX.md's notes
on senders' bursts: burst grouping worked by hand, and a simulated capture read back
(no root needed)."""

from __future__ import annotations

import sys
from pathlib import Path

import ccsim

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "linux"))

from ccsim_linux import bursts

BBR_CAPTURE = """
duration = "2s"
seed = 1
[bottleneck]
rate = "20Mbps"
queue = { kind = "droptail", limit = "1bdp" }
[[flows]]
cc = "bbr"
rtt = "20ms"
[trace]
pcap = ["tcp0.0-access-up", "bottleneck"]
"""


def test_burst_sizes_group_packets_closer_than_the_gap() -> None:
    # 0, 100, 200 µs are one burst (gaps of 100 < 150); 1000 starts a new one, 1100
    # joins it; 5000 is alone.
    us = [0, 100, 200, 1000, 1100, 5000]
    assert bursts.burst_sizes([t * 1000 for t in us], 150_000) == [3, 2, 1]
    assert bursts.burst_sizes([], 150_000) == []


def test_a_simulated_capture_reads_back_with_bbr_paced_packet_by_packet(tmp_path: Path) -> None:
    result = ccsim.run(BBR_CAPTURE)
    result.write(tmp_path, plots=False)
    names, packets = bursts.read_pcapng((tmp_path / "trace.pcapng").read_bytes())
    assert names == ["tcp0.0-access-up", "bottleneck"]
    data = [(i, t) for i, t, frame in packets if bursts.is_data(frame)]
    assert len(data) > 1000
    # ccsim paces BBR one packet at a time (cc/bbr.rs, "Departures from Linux"): past
    # STARTUP no two data packets leave the sender back to back (the access link is 10x
    # the bottleneck, 60 µs per packet; paced ones are >= 0.47 ms apart at 25 Mbit/s).
    after = [t for i, t in data if i == 0 and t > 1_000_000_000]
    assert set(bursts.burst_sizes(after, 150_000)) == {1}
    lines = bursts.summarise(tmp_path, 1.0, 2.0, 150.0)
    assert lines[0].startswith(f"{tmp_path} tcp0.0-access-up: {len(after)} data packets")
