"""Link models on the links of a `[network]` (issues 30 and 31): a Mahimahi trace and rate
changes (outages included) on any `[[network.links]]` entry, checked against the trace
format's semantics and against the same model on the dumbbell's bottleneck."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ccsim
from helpers import EXAMPLES, assert_run_refused, run_cli

CONSTANT_12 = EXAMPLES / "traces" / "constant-12mbps.trace"

CHAIN = """duration = "20s"
measure = {{ start = "5s" }}
stats_interval = "100ms"
[network]
[[network.links]]
name = "ab"
from = "a"
to = "b"
rate = "12Mbps"
delay = "10ms"
both_ways = true
queue = {{ kind = "codel" }}
{ab}
[[network.links]]
name = "bc"
from = "b"
to = "c"
rate = "100Mbps"
delay = "5ms"
both_ways = true
{bc}
[[flows]]
cc = "cubic"
from = "a"
to = "c"
rtt = "50ms"
count = 2
"""


def _per_link(run: ccsim.RunResult, link: str) -> dict[str, np.ndarray]:
    table = run.tables["queue_series"].to_pydict()
    rows = np.array([name == link for name in table["queue"]])
    return {k: np.asarray(v)[rows] for k, v in table.items() if k != "queue"}


def _goodput(summary: dict) -> float:
    return sum(f["goodput_mbps"] for f in summary["flows"])


def test_a_trace_on_a_network_link_carries_as_its_rate() -> None:
    """One opportunity per ms on link `ab` carries as a fixed 12 Mbit/s `ab` does (goodput
    and utilisation within 1 %), and no tick carries more than its opportunities."""
    fixed = ccsim.run(CHAIN.format(ab="", bc=""))
    traced = ccsim.run(CHAIN.format(ab=f'trace = "{CONSTANT_12}"', bc=""))
    assert _goodput(traced.summary) == pytest.approx(_goodput(fixed.summary), rel=0.01)
    util = [{x["name"]: x["utilisation"] for x in r.summary["links"]} for r in (fixed, traced)]
    assert util[1]["ab"] == pytest.approx(util[0]["ab"], rel=0.01)
    assert all(u <= 1.0 for u in util[1].values())
    ab = _per_link(traced, "ab")
    assert (ab["departed_bytes"] <= 100 * 1500).all()  # 100 opportunities per 100 ms tick


def test_the_reverse_direction_follows_its_own_trace(tmp_path: Path) -> None:
    """`reverse_trace` drives `ab-reverse` (the ACKs' way here): a trace of one
    opportunity per 200 ms carries at most 5 x 1500 bytes of ACKs a second (about 140
    ACKs), which caps the data near 3.4 Mbit/s."""
    sparse = tmp_path / "sparse.trace"
    sparse.write_text("200\n")
    free = ccsim.run(CHAIN.format(ab="", bc=""))
    capped = ccsim.run(CHAIN.format(ab=f'reverse_trace = "{sparse}"', bc=""))
    back = _per_link(capped, "ab-reverse")
    # 100 opportunities in 20 s; a packet counts whole when its last byte leaves, so an
    # ACK split across two opportunities may land in the later tick: one ACK of slack.
    assert back["departed_bytes"].sum() <= 100 * 1500 + 52
    util = back["utilisation"][~np.isnan(back["utilisation"])]
    assert util.max() <= 1.0
    assert _goodput(capped.summary) < 0.5 * _goodput(free.summary)


def test_an_outage_on_a_network_link_holds_its_packets() -> None:
    """`bc` at zero from 8 s to 10 s: nothing crosses it then, its queue grows, and its
    utilisation is against the capacity offered outside the outage (never above 1)."""
    outage = 'rate_changes = [{ at = "8s", rate = "0Mbps" }, { at = "10s", rate = "100Mbps" }]'
    run = ccsim.run(CHAIN.format(ab="", bc=outage))
    bc = _per_link(run, "bc")
    t = bc["time_s"]
    inside = (t > 8.05) & (t < 9.95)
    assert inside.sum() >= 15
    assert (bc["departed_bytes"][inside] == 0).all()
    assert bc["qlen_pkts"][inside].max() > 0
    assert (bc["departed_bytes"][(t > 10.2) & (t < 12)] > 0).all()
    links = {x["name"]: x for x in run.summary["links"]}
    window_s = 15.0 - 2.0  # measured 5-20 s, 2 s of it in the outage
    expected = links["bc"]["bytes_departed"] * 8 / (100e6 * window_s)
    assert links["bc"]["utilisation"] == pytest.approx(expected, rel=1e-6)
    assert all(x["utilisation"] <= 1.0 for x in links.values())


def test_a_relative_trace_on_a_network_link_is_read_from_the_files_directory(
    tmp_path: Path,
) -> None:
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "t.trace").write_text("1\n")
    scenario = tmp_path / "s.toml"
    scenario.write_text(CHAIN.format(ab='trace = "traces/t.trace"', bc=""))
    result = run_cli("validate", scenario)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("ab", "message"),
    [
        ('trace = "missing.trace"', "network.links[0].trace: expected a Mahimahi trace file"),
        (
            f'trace = "{CONSTANT_12}"\nrate_changes = [{{ at = "1s", rate = "5Mbps" }}]',
            "network.links[0].trace: a trace and rate_changes",
        ),
        ('trace_dequeue = "link_free"', "network.links[0].trace_dequeue: only with a trace"),
        (
            f'trace = "{CONSTANT_12}"\ntrace_dequeue = "later"',
            "network.links[0].trace_dequeue",
        ),
        (
            'rate_changes = [{ at = "30s", rate = "5Mbps" }]',
            "network.links[0].rate_changes[0].at: must lie inside the run",
        ),
        ('rate_changes = [{ at = "1s", rate = "-5Mbps" }]', "network.links[0].rate_changes"),
    ],
)
def test_bad_link_models_on_a_network_link_are_refused(
    tmp_path: Path, ab: str, message: str
) -> None:
    assert_run_refused(tmp_path, CHAIN.format(ab=ab, bc=""), message)


def test_a_reverse_trace_needs_both_ways(tmp_path: Path) -> None:
    text = CHAIN.format(ab="", bc="").replace(
        'delay = "5ms"\nboth_ways = true', f'delay = "5ms"\nreverse_trace = "{CONSTANT_12}"'
    )
    text = text.replace('to = "c"\nrate', 'to = "c"\nrate', 1)
    # `bc` one way only: flows' ACKs come back over a c-b link of their own.
    text += '[[network.links]]\nfrom = "c"\nto = "b"\nrate = "100Mbps"\n'
    assert_run_refused(tmp_path, text, "network.links[1].reverse_trace: only with both_ways")


@pytest.mark.parametrize("network", [False, True])
def test_a_packet_held_by_an_outage_is_counted_in_the_network(network: bool) -> None:
    """An outage that lasts to the end holds the packet that was on the transmitter (in
    no queue and no delay line): `flow_packets` still balances, sent = arrived + dropped
    + in_network, for every flow (one packet went missing before)."""
    outage = 'rate_changes = [{ at = "1s", rate = "0Mbps" }]'
    if network:
        text = CHAIN.format(ab=outage, bc="").replace('duration = "20s"', 'duration = "2s"')
    else:
        text = f"""duration = "2s"
[bottleneck]
rate = "10Mbps"
delay = "5ms"
{outage}
[[flows]]
cc = "cubic"
rtt = "20ms"
count = 2
[[udp]]
rate = "3Mbps"
rtt = "20ms"
"""
    text = text.replace('measure = { start = "5s" }\n', "")
    packets = ccsim.run(text).tables["flow_packets"].to_pydict()
    rows = zip(
        packets["sent"], packets["arrived"], packets["dropped"], packets["in_network"], strict=True
    )
    assert all(s == a + d + n for s, a, d, n in rows), packets
    assert sum(packets["in_network"]) > 0


PARKING_LOT = """duration = "5s"
[network]
kind = "parking_lot"
hops = [
  {{ rate = "10Mbps", delay = "5ms", queue = "codel", {hop1} }},
  {{ rate = "15Mbps", delay = "5ms", queue = "codel" }},
]
[[flows]]
cc = "cubic"
from = "r0"
to = "r2"
rtt = "60ms"
count = 2
"""


def test_a_parking_lot_hops_models_are_its_data_directions() -> None:
    """`loss` on hop 1 loses data packets there only (not on its ACK direction, not on
    hop 2), about the probability given; an outage on hop 1 stops everything crossing."""
    run = ccsim.run(PARKING_LOT.format(hop1="loss = 0.02"))
    links = {x["name"]: x for x in run.summary["links"]}
    assert links["hop1"]["losses"] > 0
    assert links["hop1-reverse"].get("losses", 0) == links["hop2"].get("losses", 0) == 0
    lost = links["hop1"]["losses"] / links["hop1"]["departures"]
    assert 0.01 < lost < 0.03
    out = 'rate_changes = [{ at = "2s", rate = "0Mbps" }, { at = "3s", rate = "10Mbps" }]'
    hop1 = _per_link(ccsim.run(PARKING_LOT.format(hop1=out)), "hop1")
    t = hop1["time_s"]
    assert (hop1["departed_bytes"][(t > 2.05) & (t < 2.95)] == 0).all()


def test_leaf_spine_fabric_links_take_the_models_of_their_kind() -> None:
    text = """duration = "0.05s"
[network]
kind = "leaf_spine"
spines = 2
leaves = 2
hosts_per_leaf = 2
host_link = { rate = "10Gbps", delay = "1us" }
fabric_link = { rate = "10Gbps", delay = "1us", loss = 0.01 }
[[flows]]
cc = "dctcp"
from = "host0"
to = "host3"
rtt = "20us"
"""
    links = ccsim.run(text).summary["links"]
    fabric = [x for x in links if "spine" in x["name"]]
    hosts = [x for x in links if "spine" not in x["name"]]
    assert sum(x.get("losses", 0) for x in fabric) > 0
    assert sum(x.get("losses", 0) for x in hosts) == 0


@pytest.mark.parametrize(
    ("hop1", "message"),
    [
        ("loss = 2", "network.hops[0].loss"),
        ('trace = "missing.trace"', "network.hops[0].trace: expected a Mahimahi trace file"),
        ('rate_changes = [{ at = "9s", rate = "1Mbps" }]', "network.hops[0].rate_changes[0].at"),
        ('trace_dequeue = "link_free"', "network.hops[0].trace_dequeue: only with a trace"),
    ],
)
def test_bad_hop_models_are_refused(tmp_path: Path, hop1: str, message: str) -> None:
    assert_run_refused(tmp_path, PARKING_LOT.format(hop1=hop1), message)
