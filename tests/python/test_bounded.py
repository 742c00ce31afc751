"""Bounded by construction (issue 33): every trace has a row budget the estimate counts,
the memory check honours ``ulimit -v``, the estimate counts offered load, timers and
per-flow work, and update periods with no physical meaning are refused."""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ccsim
from ccsim import estimate as est
from ccsim.api import ScenarioSource
from helpers import run_cli

PIE_UPDATES = """
duration = "{duration}"
[bottleneck]
rate = "10Mbps"
queue = {{ kind = "pie", tupdate = "{tupdate}" }}
[[flows]]
rtt = "10ms"
[trace]
qdisc_state = "updates"
"""


def _cost(text: str) -> dict:
    return est.estimate(ScenarioSource(text, "toml", "t.toml"))


def test_a_pie_update_period_below_one_microsecond_is_refused_in_one_line(tmp_path: Path):
    """The issue's first example (``tupdate = "10ns"``) ran out of memory after 8 s;
    Linux takes the period in whole microseconds, so a shorter one is refused."""
    path = tmp_path / "pie.toml"
    path.write_text(PIE_UPDATES.format(duration="1.2s", tupdate="10ns"))
    done = run_cli("run", path, "-o", tmp_path / "out")
    assert done.returncode == 2, done.stderr
    assert len(done.stderr_lines) == 1, done.stderr
    assert "bottleneck.queue.tupdate" in done.stderr and "at least 1us" in done.stderr
    assert not (tmp_path / "out").exists()


def test_qdisc_state_per_update_stops_at_its_budget_with_a_warning(tmp_path: Path):
    """PIE updates about every 1.7 us here, 4 rows each: 3 s would be 7 million
    rows; the trace stops at its budget and the summary, the CLI and the report say so."""
    text = PIE_UPDATES.format(duration="3s", tupdate="1us")
    cost = _cost(text)
    budget = 5_000_000
    assert cost["trace_rows"]["trace.qdisc_state"] == budget
    assert cost["events"] >= 1.2e6  # the update timer alone
    result = ccsim.run(text)
    table = result.tables["qdisc_state"]
    assert 0.99 * budget <= table.num_rows <= budget
    (warning,) = result.summary["warnings"]
    assert warning.startswith("qdisc_state: stopped recording at t = ")
    assert "budget of 5000000 rows" in warning
    assert result.summary["events"] <= cost["events"]


def test_the_estimate_counts_udp_offered_above_the_bottleneck_rate():
    """1 s of 10 Gbit/s of 64-byte UDP into 10 Mbit/s was estimated at 11.7 thousand
    events and took 57.9 million (issue 33): a tenth of it here."""
    text = """
duration = "0.2s"
[bottleneck]
rate = "10Mbps"
[[udp]]
rate = "1Gbps"
packet_size = "64B"
rtt = "10ms"
access_rate = "1Gbps"
"""
    cost = _cost(text)
    events = ccsim.run(text).summary["events"]
    assert events <= cost["events"] <= 10 * events, (events, cost["events"])


def test_the_estimate_counts_each_flows_initial_window():
    """Many flows on a slow link each send their initial window and a few timeouts
    beyond what the link's capacity gives (100,001 flows over DualPI2 were estimated at
    0.087 s); a smaller case of the same shape."""
    text = """
duration = "6s"
[bottleneck]
rate = "10Mbps"
queue = "dualpi2"
[[flows]]
count = 5000
rtt = "10ms"
"""
    cost = _cost(text)
    events = ccsim.run(text).summary["events"]
    assert events <= cost["events"] <= 10 * events, (events, cost["events"])


def _limit_address_space(limit_bytes: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    return apply


def test_the_memory_check_honours_ulimit_v(tmp_path: Path):
    """A run estimated at 5 GB under a 3 GB address-space limit is refused up front,
    naming the key that costs the memory, however much memory is free."""
    path = tmp_path / "rows.toml"
    path.write_text(
        'duration = "10s"\nstats_interval = "10us"\n[bottleneck]\nrate = "10Mbps"\n'
        '[[flows]]\nrtt = "10ms"\ncount = 10\n'
    )
    done = subprocess.run(
        [sys.executable, "-m", "ccsim", "run", str(path), "-o", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        preexec_fn=_limit_address_space(3 << 30),
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "stats_interval:" in lines[0] and "ulimit -v" in lines[0], lines[0]


@pytest.mark.parametrize("free", [None, 1 << 40])
def test_available_memory_is_the_smaller_of_free_memory_and_the_limit(monkeypatch, free):
    monkeypatch.setattr(est, "free_memory_bytes", lambda: free)
    monkeypatch.setattr(est, "address_space_left_bytes", lambda: 3 << 30)
    assert est.available_memory_bytes() == 3 << 30


def test_validating_three_million_flows_is_refused_not_aborted(tmp_path: Path):
    """``ccsim validate`` builds the network; 3 million flows aborted it at 7.7 GB. The
    memory check now comes before the build: under a 3 GB limit it is one line, exit 2."""
    path = tmp_path / "many.toml"
    path.write_text(
        'duration = "1s"\n[bottleneck]\nrate = "10Mbps"\n[[flows]]\nrtt = "10ms"\ncount = 3000000\n'
    )
    done = subprocess.run(
        [sys.executable, "-m", "ccsim", "validate", str(path)],
        capture_output=True,
        text=True,
        preexec_fn=_limit_address_space(3 << 30),
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "flows: this run needs about" in lines[0], done.stderr


def _groups(n: int) -> str:
    return 'duration = "1s"\n[bottleneck]\nrate = "10Mbps"\n' + '[[flows]]\nrtt = "10ms"\n' * n


def test_validation_is_linear_in_the_number_of_groups():
    """10 k / 80 k groups took 1.1 / 23.0 s (each group summed every earlier one);
    measured after the fix 0.8 / 3.4 s with the CLI's start-up."""
    seconds = []
    for n in (10_000, 80_000):
        text = _groups(n)
        started = time.monotonic()
        ccsim.validate(text)
        seconds.append(time.monotonic() - started)
    assert seconds[1] < 12 * seconds[0] + 0.5, seconds  # 8x the groups; quadratic is 64x


def test_tens_of_millions_of_flows_are_refused_before_they_are_drawn():
    """67 million flows: the series check came after drawing every flow (38 s, 7.9 GB);
    now before the group's values are drawn."""
    text = 'duration = "0.5s"\n[bottleneck]\nrate = "10Mbps"\n[[flows]]\nrtt = "20ms"\n'
    started = time.monotonic()
    with pytest.raises(ccsim.ScenarioError, match=r"^stats_interval: 5 intervals x at least"):
        ccsim.validate(text + "count = 67000000\n")
    assert time.monotonic() - started < 5


def test_the_series_bound_counts_every_cc_vars_row_of_a_traced_flow():
    """A traced flow adds one ``cc_trace`` row and one ``cc_vars`` row per diagnostic
    per interval: BBRv3 reports 16, and the estimate (and the series bound) counted 8."""
    text = """
duration = "1s"
stats_interval = "10ms"
[bottleneck]
rate = "10Mbps"
[[flows]]
cc = "bbr3"
rtt = "20ms"
trace = true
"""
    result = ccsim.run(text)
    series = ("flow_series", "group_series", "cc_trace", "cc_vars", "queue_series")
    rows = sum(result.tables[name].num_rows for name in series)
    assert result.tables["cc_vars"].num_rows >= 16 * 99  # 16 names from the first tick
    assert rows <= _cost(text)["series_rows"], rows


def test_per_flow_traces_are_estimated_at_their_budget_at_most():
    """``rtt_samples`` (one row per ACK), ``cc_reductions`` (one per round trip) and
    ``deadline_control`` (one per control interval) grow with the run: the estimate
    counts each at its row budget at most, as the run keeps it."""
    text = """
duration = "20000s"
[bottleneck]
rate = "1Gbps"
[[flows]]
count = 2
rtt = "1ms"
trace = true
[[flows]]
rtt = "1ms"
size = "1GB"
deadline = "20000s"
deadline_control = { interval = "1ms" }
cc = "cdg"
[trace]
rtt_samples = true
"""
    rows = _cost(text)["trace_rows"]
    assert rows["trace.rtt_samples"] == 5_000_000
    assert rows["flows.trace"] == 5_000_000  # 2 x 20 million round trips
    assert rows["flows.deadline_control"] == 5_000_000  # 20 million intervals
