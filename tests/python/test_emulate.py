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
import shutil
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
    # include/uapi/linux/tcp.h (Linux 6.7-6.18): tcpi_snd_cwnd at byte 80, tcpi_rtt at
    # 68, tcpi_delivery_rate (after tcpi_data_segs_out) at 160, tcpi_total_rto at 240, and
    # the struct ends after tcpi_total_rto_time at 248 (7.0's AccECN fields follow).
    assert traffic.TCP_INFO_BYTES == 248
    codes = "B" * 8 + "I" * 24 + "Q" * 4 + "I" * 6 + "Q" * 4 + "I" * 2 + "Q" * 2 + "I" * 6
    codes += "HHI"
    offsets = {}
    pos = 0
    for name, code in zip(traffic.TCP_INFO_FIELDS, codes, strict=True):
        pos += (-pos) % struct.calcsize(code)
        offsets[name] = pos
        pos += struct.calcsize(code)
    assert (offsets["snd_cwnd"], offsets["rtt"], offsets["bytes_acked"]) == (80, 68, 120)
    assert (offsets["delivery_rate"], offsets["total_rto"], pos) == (160, 240, 248)


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


# One short run serves the capture's and the kernel UDP source's tests: a CUBIC flow and
# a 2 Mbit/s CBR UDP source (kernel sockets both) over PIE, both directions of the
# bottleneck captured, the capture's budget (2000 packets) below what the run sends.
PIE_UDP_PCAP = """
duration = "3s"
seed = 1
measure = { start = "1s" }
[bottleneck]
rate = "10Mbps"
queue = { kind = "pie", limit = "1bdp" }
[[flows]]
cc = "cubic"
rtt = "20ms"
[[udp]]
rate = "2Mbps"
packet_size = "1000B"
rtt = "20ms"
start = "0.5s"
[trace]
pcap = ["bottleneck", "bottleneck-reverse"]
pcap_max_packets = 2000
"""


@pytest.fixture(scope="module")
def pie_udp_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """(result directory, the run's namespace tag, its stderr) of one emulation."""
    if not CAN_EMULATE:
        pytest.skip("emulation needs root (CAP_NET_ADMIN) and /dev/net/tun")
    tmp = tmp_path_factory.mktemp("pie-udp")
    scenario = tmp / "s.toml"
    scenario.write_text(PIE_UDP_PCAP)
    out = tmp / "out"
    proc = _start(scenario, out)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return out, _tag(proc), err


def _pcapng(data: bytes) -> tuple[list[str], list[tuple[int, int, int, bytes]]]:
    """Interface names and (interface, time ns, original length, captured bytes) of a
    little-endian pcapng file, read by the block layout of the pcapng specification
    (draft-ietf-opsawg-pcapng §4: type, total length, body, total length again)."""
    names: list[str] = []
    packets: list[tuple[int, int, int, bytes]] = []
    pos = 0
    while pos < len(data):
        kind, total = struct.unpack_from("<II", data, pos)
        assert total % 4 == 0 and total >= 12
        assert struct.unpack_from("<I", data, pos + total - 4)[0] == total
        body = data[pos + 8 : pos + total - 4]
        if kind == 0x0A0D0D0A:
            assert struct.unpack_from("<I", body)[0] == 0x1A2B3C4D
        elif kind == 1:  # Interface Description Block: options from byte 8
            opt = 8
            while opt + 4 <= len(body):
                code, length = struct.unpack_from("<HH", body, opt)
                if code == 2:
                    names.append(body[opt + 4 : opt + 4 + length].decode())
                opt += 4 + length + (-length) % 4
                if code == 0:
                    break
        elif kind == 6:  # Enhanced Packet Block
            iface, hi, lo, cap_len, orig_len = struct.unpack_from("<IIIII", body)
            packets.append((iface, hi << 32 | lo, orig_len, body[20 : 20 + cap_len]))
        pos += total
    return names, packets


@needs_emulation
def test_pcap_holds_the_kernels_packets_where_a_simulation_captures(
    pie_udp_run: tuple[Path, str, str],
) -> None:
    out, _, _ = pie_udp_run
    data = (out / "trace.pcapng").read_bytes()
    names, packets = _pcapng(data)
    assert names == ["bottleneck", "bottleneck-reverse"]
    # The run's ~4000 packets are cut at the scenario's budget, as a simulated capture is.
    assert len(packets) == 2000
    syn = data_segments = acks = datagrams = 0
    for iface, _, orig_len, frame in packets:
        assert frame[12:14] == b"\x08\x00"  # Ethernet II carrying IPv4
        ip = frame[14:]
        ihl, total = (ip[0] & 15) * 4, struct.unpack_from(">H", ip, 2)[0]
        assert orig_len == 14 + total
        if ip[9] == 6:
            doff = (ip[ihl + 12] >> 4) * 4
            assert len(ip) == ihl + doff  # headers only, as a simulated capture keeps
            flags, dport = ip[ihl + 13], struct.unpack_from(">H", ip, ihl + 2)[0]
            if flags & 0x12 == 0x02:
                syn += 1
                assert iface == 0 and dport == 5201
            elif total > ihl + doff:
                data_segments += 1
                assert iface == 0
            elif iface == 1:
                acks += 1
        elif ip[9] == 17:
            datagrams += 1
            assert iface == 0 and struct.unpack_from(">H", ip, ihl + 2)[0] == 5202
            assert total == 1000 and len(ip) == ihl + 8
    assert syn == 1 and data_segments > 500 and acks > 200 and datagrams > 50
    # Per interface, packets in order of their start of transmission.
    for k in (0, 1):
        times = [t for i, t, _, _ in packets if i == k]
        assert times == sorted(times)
    if shutil.which("tshark"):  # a reader we did not write, where installed
        shown = subprocess.run(
            ["tshark", "-r", str(out / "trace.pcapng"), "-Y", "tcp.flags.syn == 1"],
            capture_output=True,
            text=True,
        )
        assert shown.returncode == 0 and "[SYN]" in shown.stdout, shown.stderr


@needs_emulation
def test_kernel_udp_source_keeps_its_rate_and_leaves_nothing(
    pie_udp_run: tuple[Path, str, str],
) -> None:
    out, tag, _ = pie_udp_run
    summary = json.loads((out / "summary.json").read_text())
    t = summary["emulation"]
    assert t["udp"] == "kernel"
    # 2 Mbit/s of 1000-byte packets from 0.5 s to 3 s: 250 per second, 625 in all; the
    # Python sender catches up on late wake-ups, so a loaded machine bunches, not thins.
    (src,) = t["udp_sources"]
    assert 560 <= src["datagrams_sent"] <= 630
    assert src["datagrams_received"] >= 0.95 * src["datagrams_sent"]
    assert t["injected_udp"] >= 0.95 * src["datagrams_sent"]
    udp = summary["flows"][1]
    assert udp["protocol"] == "udp" and udp["algorithm"] == "cbr (linux)"
    assert 1.7 <= udp["goodput_mbps"] <= 2.3
    tcp = summary["flows"][0]
    # The TCP flow takes what the UDP source leaves (tolerant: 10 - 2 Mbit/s less slack).
    assert 4 < tcp["goodput_mbps"] <= 8.2
    assert _leftovers(tag) == []
