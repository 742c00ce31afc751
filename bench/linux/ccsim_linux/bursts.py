"""``python -m ccsim_linux.bursts DIR [DIR...] [--from S] [--to S] [--gap-us US]``: how a
sender's data packets bunch on each captured link of a run's ``trace.pcapng``, simulated
(``ccsim run``) or emulated (``ccsim emulate``, the kernel's real packets), captured at the
same point (the start of transmission on the link).

A burst is a run of data packets (TCP with payload) each starting within ``--gap-us`` of
the previous one on the same link: on an access link (10x the bottleneck's rate by
default) packets sent back to back start one access serialisation time apart, paced ones
much further. Prints, per link, the packets, the bursts and the distribution of burst
sizes in the time window; this is what the notes of bench/LINUX.md on BBR's TSO-sized
bursts and on random-26's post-drain bursts quote.
"""

from __future__ import annotations

import argparse
import collections
import struct
import sys
from pathlib import Path


def read_pcapng(data: bytes) -> tuple[list[str], list[tuple[int, int, bytes]]]:
    """Interface names and ``(interface, time ns, captured frame)`` of a little-endian
    pcapng file (pcapng specification §4: block type, total length, body, length)."""
    names: list[str] = []
    packets: list[tuple[int, int, bytes]] = []
    pos = 0
    while pos + 12 <= len(data):
        kind, total = struct.unpack_from("<II", data, pos)
        body = data[pos + 8 : pos + total - 4]
        if kind == 1:  # Interface Description Block: options from byte 8
            opt = 8
            while opt + 4 <= len(body):
                code, length = struct.unpack_from("<HH", body, opt)
                if code == 0:
                    break
                if code == 2:
                    names.append(body[opt + 4 : opt + 4 + length].decode())
                opt += 4 + length + (-length) % 4
        elif kind == 6:  # Enhanced Packet Block
            iface, hi, lo, cap_len = struct.unpack_from("<IIII", body)
            packets.append((iface, hi << 32 | lo, body[20 : 20 + cap_len]))
        pos += total
    return names, packets


def is_data(frame: bytes) -> bool:
    """An Ethernet/IPv4 frame carrying a TCP segment with payload."""
    ip = frame[14:]
    if len(ip) < 20 or ip[9] != 6:
        return False
    ihl = (ip[0] & 15) * 4
    if len(ip) < ihl + 13:
        return False
    total = struct.unpack_from(">H", ip, 2)[0]
    return total > ihl + (ip[ihl + 12] >> 4) * 4


def burst_sizes(times_ns: list[int], gap_ns: int) -> list[int]:
    """Sizes of the runs of times each within ``gap_ns`` of the previous one."""
    sizes: list[int] = []
    for k, t in enumerate(times_ns):
        if k and t - times_ns[k - 1] < gap_ns:
            sizes[-1] += 1
        else:
            sizes.append(1)
    return sizes


def summarise(path: Path, start_s: float, end_s: float, gap_us: float) -> list[str]:
    names, packets = read_pcapng((path / "trace.pcapng").read_bytes())
    lines = []
    for k, name in enumerate(names):
        times = [
            t for i, t, f in packets if i == k and start_s * 1e9 <= t < end_s * 1e9 and is_data(f)
        ]
        sizes = burst_sizes(times, int(gap_us * 1000))
        dist = sorted(collections.Counter(sizes).items())
        lines.append(
            f"{path} {name}: {len(times)} data packets in {len(sizes)} bursts; sizes "
            + ", ".join(f"{s}x{n}" for s, n in dist)
        )
    return lines


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="ccsim_linux.bursts")
    p.add_argument("dirs", nargs="+", type=Path, help="result directories with trace.pcapng")
    p.add_argument("--from", dest="start_s", type=float, default=0.0)
    p.add_argument("--to", dest="end_s", type=float, default=float("inf"))
    p.add_argument("--gap-us", type=float, default=150.0)
    args = p.parse_args(argv)
    for d in args.dirs:
        for line in summarise(d, args.start_s, args.end_s, args.gap_us):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
