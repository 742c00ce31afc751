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
