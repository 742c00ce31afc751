"""The kernel's traffic for ``ccsim emulate``: a receiver and a sender program, one per
network namespace, run as ``python traffic.py {send,recv} CONFIG.json OUT.json``.

Standard library only (it starts in the namespaces in a fraction of a second). Times are
``time.monotonic()`` (``CLOCK_MONOTONIC``, shared with the emulator): flow ``i`` starts at
``t0 + start_s`` and its data goes to the receiver's port ``base_port + i``.

- ``recv`` listens on every flow's port and counts the bytes each flow delivers in each
  stats interval (goodput as the application sees it) and when a finite transfer's last
  byte arrived;
- ``send`` opens each flow's connection at its start time with the flow's congestion
  control set on the socket (``TCP_CONGESTION``), writes a bulk stream until the flow's
  stop (or the run's end) or its finite transfer, and samples ``TCP_INFO`` every
  interval (cwnd, ssthresh, srtt, packets in flight, total retransmissions, segments sent,
  bytes acknowledged, RTO expirations ``tcpi_total_rto``, and the congestion state
  ``tcpi_ca_state``).

UDP sources (``udp`` in the config, when the kernel plays them): source ``u`` sends
datagrams of ``packet_size - 28`` bytes (IP packets of ``packet_size``, the size a
simulated source's packets have on the wire) to port ``udp_base_port + u`` from
``start_s`` to ``stop_s`` (or the run's end), at the times a simulated source would: every
``packet_size * 8 / rate`` seconds (CBR) or after exponential gaps of that mean (Poisson),
each time taken from the schedule, not from the previous send, so a late wake-up sends
what fell due at once rather than lowering the rate; ECT(0) in ``IP_TOS`` for an ECN
source. The receiver counts each source's IP bytes (datagram + 28) per stats interval.
"""

from __future__ import annotations

import errno
import json
import os
import random
import selectors
import socket
import struct
import sys
import threading
import time

# struct tcp_info (include/uapi/linux/tcp.h) up to tcpi_total_rto_time (Linux 6.7+): 8 u8,
# 24 u32, 4 u64, 6 u32 (to tcpi_data_segs_out), then tcpi_delivery_rate .. tcpi_rehash
# and the RTO counters (2 u16, 1 u32). An older kernel returns less; the rest reads 0.
TCP_INFO_FORMAT = "8B24I4Q6I" + "4Q2I2Q6I2HI"
TCP_INFO_FIELDS = (
    "state",
    "ca_state",
    "retransmits",
    "probes",
    "backoff",
    "options",
    "wscale",
    "app_limited",
    "rto",
    "ato",
    "snd_mss",
    "rcv_mss",
    "unacked",
    "sacked",
    "lost",
    "retrans",
    "fackets",
    "last_data_sent",
    "last_ack_sent",
    "last_data_recv",
    "last_ack_recv",
    "pmtu",
    "rcv_ssthresh",
    "rtt",
    "rttvar",
    "snd_ssthresh",
    "snd_cwnd",
    "advmss",
    "reordering",
    "rcv_rtt",
    "rcv_space",
    "total_retrans",
    "pacing_rate",
    "max_pacing_rate",
    "bytes_acked",
    "bytes_received",
    "segs_out",
    "segs_in",
    "notsent_bytes",
    "min_rtt",
    "data_segs_in",
    "data_segs_out",
    "delivery_rate",
    "busy_time",
    "rwnd_limited",
    "sndbuf_limited",
    "delivered",
    "delivered_ce",
    "bytes_sent",
    "bytes_retrans",
    "dsack_dups",
    "reord_seen",
    "rcv_ooopack",
    "snd_wnd",
    "rcv_wnd",
    "rehash",
    "total_rto",
    "total_rto_recoveries",
    "total_rto_time",
)
TCP_INFO_BYTES = struct.calcsize(TCP_INFO_FORMAT)
CHUNK = 1 << 16
SO_MAX_PACING_RATE = 47  # include/uapi/asm-generic/socket.h
#: IPv4 + UDP headers: a datagram of n bytes is an IP packet of n + 28.
UDP_IP_HEADER_BYTES = 28
#: ECT(0) in the IP header's ECN field (RFC 3168 §5), set on a UDP socket through IP_TOS.
ECT0 = 2


def packets_in_flight(info: dict[str, int]) -> int:
    """The kernel's own in-flight estimate, ``tcp_packets_in_flight()`` (include/net/tcp.h):
    packets out, less those SACKed or marked lost, plus retransmissions in flight; the same
    quantity as ccsim's ``inflight_pkts`` (RFC 6675's pipe), where ``tcpi_unacked`` alone
    would count SACKed and lost packets as in flight."""
    return info["unacked"] - (info["sacked"] + info["lost"]) + info["retrans"]


def tcp_info(sock: socket.socket) -> dict[str, int]:
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_BYTES)
    raw = raw.ljust(TCP_INFO_BYTES, b"\0")
    return dict(zip(TCP_INFO_FIELDS, struct.unpack(TCP_INFO_FORMAT, raw), strict=True))


def sleep_until(t: float) -> None:
    while True:
        left = t - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(left, 0.05))


def receive(cfg: dict, out_path: str) -> None:
    t0, interval = cfg["t0"], cfg["interval_s"]
    end = t0 + cfg["duration_s"]
    n_bins = int(cfg["duration_s"] / interval) + 2
    sel = selectors.DefaultSelector()
    flows = cfg["flows"]
    bins = [[0] * n_bins for _ in flows]
    total = [0] * len(flows)
    done_at: list[float | None] = [None] * len(flows)
    for i, _ in enumerate(flows):
        ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind((cfg["receiver_ip"], cfg["base_port"] + i))
        ls.listen(4)
        ls.setblocking(False)
        sel.register(ls, selectors.EVENT_READ, ("listen", i))
    sources = cfg.get("udp", [])
    udp_bins = [[0] * n_bins for _ in sources]
    udp_datagrams = [0] * len(sources)
    for u, _ in enumerate(sources):
        us = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        # Room for a burst the selector loop has not drained yet (4 MB).
        us.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        us.bind((cfg["receiver_ip"], cfg["udp_base_port"] + u))
        us.setblocking(False)
        sel.register(us, selectors.EVENT_READ, ("udp", u))
    buf = bytearray(CHUNK)
    while time.monotonic() < end:
        for key, _ in sel.select(timeout=0.05):
            role, i = key.data
            if role == "udp":
                while True:
                    try:
                        n = key.fileobj.recv_into(buf)
                    except (BlockingIOError, InterruptedError):
                        break
                    b = int((time.monotonic() - t0) / interval)
                    if 0 <= b < n_bins:
                        udp_bins[i][b] += n + UDP_IP_HEADER_BYTES
                    udp_datagrams[i] += 1
                continue
            if role == "listen":
                conn, _ = key.fileobj.accept()
                conn.setblocking(False)
                sel.register(conn, selectors.EVENT_READ, ("data", i))
                continue
            try:
                n = key.fileobj.recv_into(buf)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                n = 0
            now = time.monotonic()
            if n == 0:
                sel.unregister(key.fileobj)
                key.fileobj.close()
                continue
            b = int((now - t0) / interval)
            if 0 <= b < n_bins:
                bins[i][b] += n
            total[i] += n
            size = flows[i]["size_bytes"]
            if size and done_at[i] is None and total[i] >= size:
                done_at[i] = now - t0
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(
            {
                "bins": bins,
                "total": total,
                "done_at": done_at,
                "udp_bins": udp_bins,
                "udp_datagrams": udp_datagrams,
            },
            f,
        )


def send_udp(cfg: dict, u: int, sent: list[list[int]], errors: list[str | None]) -> None:
    """Play UDP source ``u`` of the config (see the module's docstring)."""
    src = cfg["udp"][u]
    t0 = cfg["t0"]
    end = t0 + cfg["duration_s"]
    stop = min(end, t0 + src["stop_s"]) if src["stop_s"] is not None else end
    gap = src["packet_size"] * 8 / src["rate_bps"]
    rng = random.Random(u)
    payload = b"\0" * max(0, src["packet_size"] - UDP_IP_HEADER_BYTES)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if src["ecn"]:
        s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, ECT0)
    dest = (cfg["receiver_ip"], cfg["udp_base_port"] + u)
    due = t0 + src["start_s"]
    while due < stop:
        left = due - time.monotonic()
        if left > 0:
            time.sleep(min(left, 0.05))
            continue
        try:
            s.sendto(payload, dest)
            sent[u][0] += 1
            sent[u][1] += src["packet_size"]
        except OSError as exc:
            # ENOBUFS/EAGAIN: the device's queue is full and the datagram is lost, as at a
            # full NIC ring; anything else is the sender's failure.
            if exc.errno not in (errno.ENOBUFS, errno.EAGAIN) and errors[u] is None:
                errors[u] = f"udp send: {exc}"
        due += gap if src["pattern"] == "cbr" else rng.expovariate(1.0 / gap)
    s.close()


def send(cfg: dict, out_path: str) -> None:
    t0, interval = cfg["t0"], cfg["interval_s"]
    end = t0 + cfg["duration_s"]
    flows = cfg["flows"]
    socks: list[socket.socket | None] = [None] * len(flows)
    errors: list[str | None] = [None] * len(flows)
    samples: list[list] = [[] for _ in flows]
    finals: list[dict | None] = [None] * len(flows)

    def run_flow(i: int) -> None:
        f = flows[i]
        stop = min(end, t0 + f["stop_s"]) if f["stop_s"] is not None else end
        sleep_until(t0 + f["start_s"])
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, f["cc"].encode())
        if f["pacing"]:
            # A finite SO_MAX_PACING_RATE turns on the kernel's internal pacing at the
            # rate it computes (net/core/sock.c: sk_pacing_status = SK_PACING_NEEDED).
            s.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, struct.pack("Q", 1 << 40))
        try:
            s.settimeout(max(0.1, stop - time.monotonic()))
            s.connect((cfg["receiver_ip"], cfg["base_port"] + i))
        except OSError as exc:
            errors[i] = f"connect: {exc}"
            return
        socks[i] = s
        left = f["size_bytes"] or None
        payload = b"\0" * CHUNK
        try:
            while time.monotonic() < stop and (left is None or left > 0):
                s.settimeout(max(0.01, min(0.1, stop - time.monotonic())))
                try:
                    n = s.send(payload if left is None else payload[: min(CHUNK, left)])
                except TimeoutError:
                    continue
                if left is not None:
                    left -= n
        except OSError as exc:
            errors[i] = f"send: {exc}"

    n_udp = len(cfg.get("udp", []))
    udp_sent = [[0, 0] for _ in range(n_udp)]
    udp_errors: list[str | None] = [None] * n_udp
    threads = [threading.Thread(target=run_flow, args=(i,), daemon=True) for i in range(len(flows))]
    threads += [
        threading.Thread(target=send_udp, args=(cfg, u, udp_sent, udp_errors), daemon=True)
        for u in range(n_udp)
    ]
    for t in threads:
        t.start()
    k = 1
    while True:
        sleep_until(t0 + k * interval)
        now = time.monotonic()
        for i, s in enumerate(socks):
            if s is None or s.fileno() < 0:
                continue
            try:
                info = tcp_info(s)
            except OSError:
                continue
            samples[i].append(
                [
                    now - t0,
                    info["snd_cwnd"],
                    info["snd_ssthresh"],
                    info["rtt"],
                    packets_in_flight(info),
                    info["total_retrans"],
                    info["data_segs_out"],
                    info["bytes_acked"],
                    info["total_rto"],
                    info["ca_state"],
                ]
            )
            finals[i] = info
        if now >= end:
            break
        k += 1
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(
            {
                "samples": samples,
                "final": finals,
                "errors": errors + udp_errors,
                "udp_sent": udp_sent,
            },
            f,
        )
    sys.stdout.flush()
    os._exit(0)  # the connections need no orderly close: the network goes away next


def main(argv: list[str]) -> int:
    role, cfg_path, out_path = argv
    with open(cfg_path, encoding="utf-8") as f:
        cfg = json.load(f)
    if role == "recv":
        receive(cfg, out_path)
    else:
        send(cfg, out_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
