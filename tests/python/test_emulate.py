"""``ccsim emulate``: refusals (always), and short real emulations where this machine can
emulate (root and /dev/net/tun; skipped with the reason otherwise): outputs and timing
written, and no namespace, link or traffic process of the run left behind after a normal
exit, Ctrl-C, SIGTERM or a crashed traffic program.

Each emulated run lasts 3-6 s of wall-clock time; the checks are tolerant (a loaded
2-core machine shares its cores with the emulator).
"""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ccsim.emulate import checks, traffic

SHORT = """
duration = "{duration}"
seed = 1
measure = {{ start = "1s" }}
[bottleneck]
rate = "10Mbps"
queue = {{ kind = "{queue}", limit = "1bdp" }}
[[flows]]
cc = "{cc}"
rtt = "20ms"
trace = true
"""

CAN_EMULATE = checks.cap_net_admin() and os.path.exists("/dev/net/tun")
needs_emulation = pytest.mark.skipif(
    not CAN_EMULATE, reason="emulation needs root (CAP_NET_ADMIN) and /dev/net/tun"
)


def _plan(**over: object) -> list[dict]:
    flow = {
        "group": 0,
        "cc": "cubic",
        "cc_params": [],
        "start_s": 0.0,
        "stop_s": None,
        "rtt_ms": 20.0,
        "sizes_bytes": [],
        "ecn": False,
        "sack": True,
        "delayed_ack": True,
        "pacing": False,
        "mss": 1448,
        "initial_window": 10,
        "deadline": False,
        "ppv": False,
        "changes": 0,
    }
    flow.update(over)
    return [flow]


def test_refusals_name_the_key_and_what_the_kernel_has() -> None:
    with pytest.raises(
        checks.Refusal, match=r"flows\[0\]\.cc: 'ledbat' is ccsim's only.*reno cubic"
    ):
        checks.check_plan(_plan(cc="ledbat"), ["reno", "cubic"])
    with pytest.raises(
        checks.Refusal, match=r"flows\[0\]\.cc: the kernel has no 'cdg' \(available: reno\)"
    ):
        checks.check_plan(_plan(cc="cdg"), ["reno"])
    with pytest.raises(checks.Refusal, match=r"flows\[0\]\.deadline"):
        checks.check_plan(_plan(deadline=True), ["cubic"])
    settings, warnings = checks.check_plan(_plan(cc="newreno", cc_params=["beta"]), ["reno"])
    assert settings["mss"] == 1448 and "cc.beta ignored" in warnings[0]


def test_cli_refuses_without_cap_net_admin_in_one_line(tmp_path: Path, monkeypatch) -> None:
    from ccsim import cli

    monkeypatch.setattr(checks, "cap_net_admin", lambda: False)
    scenario = tmp_path / "s.toml"
    scenario.write_text(SHORT.format(duration="2s", queue="droptail", cc="cubic"))
    out = tmp_path / "out"
    assert cli.main(["emulate", str(scenario), "-o", str(out), "--quiet"]) == 2
    assert not out.exists()


def test_tcp_info_layout_matches_the_kernel_header() -> None:
    # include/uapi/linux/tcp.h: tcpi_delivery_rate (the field after tcpi_data_segs_out)
    # is at byte 160, tcpi_snd_cwnd at 80, tcpi_rtt at 68.
    assert traffic.TCP_INFO_BYTES == 160
    offsets = {}
    pos = 0
    for name, code in zip(
        traffic.TCP_INFO_FIELDS, "B" * 8 + "I" * 24 + "Q" * 4 + "I" * 6, strict=True
    ):
        pos += (-pos) % struct.calcsize(code)
        offsets[name] = pos
        pos += struct.calcsize(code)
    assert (offsets["snd_cwnd"], offsets["rtt"], offsets["bytes_acked"]) == (80, 68, 120)


def _leftovers(tag: str) -> list[str]:
    """Namespaces, links and traffic processes of the run with this tag."""
    found = []
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    found += [line for line in netns.splitlines() if line.startswith(tag)]
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    found += [line for line in links.splitlines() if f" {tag}" in line]
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if f"ccsim-emulate-{tag}-" in cmd:
                found.append(cmd)
    return found


def _start(scenario: Path, out: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ccsim.cli", "emulate", str(scenario), "-o", str(out), "--no-plots"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _tag(proc: subprocess.Popen[str]) -> str:
    return f"ccs{proc.pid % 100000}"


ECN_CODEL = """
duration = "3s"
seed = 1
measure = { start = "1s" }
[bottleneck]
rate = "10Mbps"
queue = { kind = "codel", limit = "1000pkts", ecn = true }
[[flows]]
cc = "cubic"
rtt = "20ms"
ecn = true
"""


@needs_emulation
def test_emulation_writes_tables_and_timing_and_leaves_nothing(tmp_path: Path) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(ECN_CODEL)
    out = tmp_path / "out"
    proc = _start(scenario, out)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "timing error" in err
    summary = json.loads((out / "summary.json").read_text())
    t = summary["emulation"]
    assert t["releases"] > 1000 and t["injected"] >= t["releases"]
    assert 0 <= t["p50_us"] <= t["p99_us"] <= t["max_us"]
    # No offload merged segments: every packet at most one MTU (1448 + 52 bytes).
    assert 0 < t["max_packet_bytes"] <= 1500
    flow = summary["flows"][0]
    assert flow["algorithm"] == "cubic (linux)"
    # One flow alone at 10 Mbit/s over 2 s of measurement: most of the link (tolerant).
    assert 5 < flow["goodput_mbps"] <= 10
    assert summary["bottleneck"]["utilisation"] > 0.5
    # CoDel marks instead of dropping, and the kernel sees the CE the emulator wrote into
    # the IP header: its cwnd comes down without a loss. Were the mark lost on the way,
    # slow start would fill the 1000-packet queue and drop.
    assert summary["bottleneck"]["marks"] > 0
    assert summary["bottleneck"]["drops"] == 0 and flow["retransmits"] == 0
    assert (out / "cc_trace.parquet").exists() and (out / "queue_series.parquet").exists()
    assert _leftovers(_tag(proc)) == []


@needs_emulation
@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signals_stop_the_emulation_and_leave_nothing(
    tmp_path: Path, sig: int, status: int
) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(SHORT.format(duration="20s", queue="droptail", cc="reno"))
    out = tmp_path / "out"
    proc = _start(scenario, out)
    tag = _tag(proc)
    deadline = time.monotonic() + 20
    while not any("ccsim-emulate-" in x for x in _leftovers(tag)):  # traffic running
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.1)
    time.sleep(1.0)
    os.killpg(proc.pid, sig)  # as a terminal's Ctrl-C reaches the foreground group
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == status, err
    assert len(err.strip().splitlines()) == 1, err
    assert _leftovers(tag) == []
    assert not out.exists()


@needs_emulation
def test_a_crashed_traffic_program_stops_the_run_and_leaves_nothing(tmp_path: Path) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(SHORT.format(duration="20s", queue="droptail", cc="reno"))
    proc = _start(scenario, tmp_path / "out")
    tag = _tag(proc)
    deadline = time.monotonic() + 20
    victim = None
    while victim is None:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        for p in Path("/proc").iterdir():
            if p.name.isdigit():
                try:
                    cmd = (p / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                except OSError:
                    continue
                if f"ccsim-emulate-{tag}-" in cmd and " send " in cmd:
                    victim = int(p.name)
        time.sleep(0.1)
    time.sleep(1.0)
    os.kill(victim, signal.SIGKILL)
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == 1, err
    assert "send traffic program exited" in err
    assert _leftovers(tag) == []
