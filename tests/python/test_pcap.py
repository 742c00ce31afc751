"""`[trace] pcap`: pcapng captures that Wireshark reads as real TCP/IP traffic.

The checks against tshark need it on the PATH (Debian package `tshark`; .ci/run installs
it when it can); without it they are skipped with that reason, and the structural check
of the file, which needs nothing, still runs.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import tomllib

import ccsim

REPO = Path(__file__).resolve().parents[2]
TSHARK = shutil.which("tshark")
needs_tshark = pytest.mark.skipif(
    TSHARK is None, reason="tshark is not installed (Debian package tshark)"
)

#: single_newreno.toml captured at the sender's access link (interface 0), the
#: bottleneck (1) and the ACK direction of the bottleneck (2).
LINKS = ["tcp0.0-access-up", "bottleneck", "bottleneck-reverse"]


def scenario(path: str, links: list[str], **trace: object) -> dict:
    doc = tomllib.loads((REPO / path).read_text("utf-8"))
    doc["trace"] = {**doc.get("trace", {}), "pcap": links, **trace}
    return doc


@pytest.fixture(scope="module")
def newreno(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pcap") / "run"
    ccsim.run(scenario("examples/single_newreno.toml", LINKS)).write(out)
    return out


def blocks(data: bytes) -> list[tuple[int, bytes]]:
    """(block type, body) of every pcapng block, checking each length field."""
    out, at = [], 0
    while at < len(data):
        kind, total = struct.unpack_from("<II", data, at)
        assert total % 4 == 0 and total >= 12, f"block at {at}: length {total}"
        (trailer,) = struct.unpack_from("<I", data, at + total - 4)
        assert trailer == total, f"block at {at}: trailing length {trailer} != {total}"
        out.append((kind, data[at + 8 : at + total - 4]))
        at += total
    return out


def test_the_capture_is_well_formed_pcapng(newreno: Path) -> None:
    bs = blocks((newreno / "trace.pcapng").read_bytes())
    assert bs[0][0] == 0x0A0D0D0A and bs[0][1][:4] == struct.pack("<I", 0x1A2B3C4D)
    idbs = [b for k, b in bs if k == 1]
    assert len(idbs) == len(LINKS)
    assert all(struct.unpack_from("<H", b)[0] == 1 for b in idbs), "Ethernet link type"
    epbs = [b for k, b in bs if k == 6]
    stamps = [struct.unpack_from("<III", b) for b in epbs]
    assert {s[0] for s in stamps} == {0, 1, 2}
    times = [(hi << 32) | lo for _, hi, lo in stamps]
    assert times == sorted(times), "packets in time order"
    # Every departure of the bottleneck is in the capture.
    queues = pq.read_table(newreno / "queues.parquet").to_pylist()
    bottleneck = next(q for q in queues if q["queue"] == "bottleneck")
    assert sum(1 for s in stamps if s[0] == 1) == bottleneck["departures"]


def test_unknown_link_is_named() -> None:
    with pytest.raises(ccsim.ScenarioError, match=r"trace\.pcap\[0\]: no link named \"bottlenek\""):
        ccsim.validate(scenario("examples/single_newreno.toml", ["bottlenek"]))


def tshark(capture: Path, interface: int, display: str, *fields: str) -> list[str]:
    """tshark's two-pass analysis of one interface's packets (a flow captured on several
    links would otherwise look retransmitted at each), the rows matching ``display``."""
    args = [
        TSHARK or "tshark",
        "-r",
        str(capture),
        "-2",
        "-R",
        f"frame.interface_id == {interface}",
    ]
    args += ["-Y", display, "-T", "fields", *(a for f in fields for a in ("-e", f))]
    done = subprocess.run(args, capture_output=True, text=True, check=True, timeout=300)
    return [line for line in done.stdout.splitlines() if line.strip()]


@needs_tshark
def test_tshark_finds_no_malformed_packet(newreno: Path) -> None:
    for interface in range(len(LINKS)):
        bad = tshark(
            newreno / "trace.pcapng",
            interface,
            "_ws.malformed || _ws.expert.severity == error",
            "frame.number",
        )
        assert bad == [], f"interface {interface}: malformed frames {bad[:5]}"


@needs_tshark
def test_tshark_sees_the_retransmissions_ccsim_counted(newreno: Path) -> None:
    flow = pq.read_table(newreno / "flow_packets.parquet").to_pylist()[0]
    # At the sender's access link every transmission passes; Wireshark calls a resent
    # segment a (fast) retransmission, or out-of-order when it follows the original
    # within its RTT heuristics.
    resent = tshark(
        newreno / "trace.pcapng",
        0,
        "tcp.analysis.retransmission || tcp.analysis.out_of_order",
        "frame.number",
    )
    assert flow["retransmits"] > 100
    assert len(resent) == flow["retransmits"]


@needs_tshark
def test_bytes_acknowledged_match_ccsim_delivered(newreno: Path) -> None:
    flow = pq.read_table(newreno / "flow_packets.parquet").to_pylist()[0]
    acks = tshark(newreno / "trace.pcapng", 2, "tcp.flags.ack == 1", "tcp.ack")
    # The last ACK to leave the bottleneck's reverse link before the run ended
    # acknowledges every byte delivered in order (relative numbers: first byte 1), but
    # for what the receiver's delayed ACK still held or had not yet sent through the
    # reverse path at the end: less than two full segments (it ACKs every second one).
    unacked = flow["bytes_delivered"] - (max(int(a) for a in acks) - 1)
    assert 0 <= unacked < 2 * 1448, unacked
    sent = tshark(newreno / "trace.pcapng", 0, "tcp.len > 0", "tcp.seq", "tcp.len")
    highest = max(int(s) + int(n) - 1 for s, n in (row.split("\t") for row in sent))
    assert highest >= flow["bytes_delivered"]


@needs_tshark
def test_ecn_marks_are_in_the_ip_header(tmp_path: Path) -> None:
    doc = scenario("examples/single_newreno.toml", ["bottleneck"])
    doc["flows"][0]["ecn"] = True
    doc["bottleneck"]["queue"] = {"kind": "codel", "ecn": True}
    doc["duration"] = "10s"
    ccsim.run(doc).write(tmp_path / "ecn")
    capture = tmp_path / "ecn" / "trace.pcapng"
    marked = tshark(capture, 0, "ip.dsfield.ecn == 3", "frame.number")
    ect = tshark(capture, 0, "ip.dsfield.ecn == 2", "frame.number")
    queues = pq.read_table(tmp_path / "ecn" / "queues.parquet").to_pylist()
    bottleneck = next(q for q in queues if q["queue"] == "bottleneck")
    assert bottleneck["marks"] > 0
    assert len(marked) == bottleneck["marks"]
    assert len(ect) > 1000


@needs_tshark
def test_data_segments_echo_the_peers_tsval(newreno: Path) -> None:
    """RFC 7323 §3-4 as Linux (tcp_options_write): data segments carry ts_recent, so
    only the initial window, sent before any ACK, echoes 0 (no handshake simulated)."""
    rows = tshark(
        newreno / "trace.pcapng", 0, "tcp.len > 0", "tcp.options.timestamp.tsecr"
    )
    echoes = [int(r) for r in rows]
    zeros = sum(1 for e in echoes if e == 0)
    assert len(echoes) > 100 and zeros <= 10, (len(echoes), zeros)
    assert echoes == sorted(echoes), "the echo never goes back"
