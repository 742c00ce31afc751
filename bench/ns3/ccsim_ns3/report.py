"""bench/RESULTS.md: the fixed matrix's agreement and speed tables."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .causes import cause_links
from .matrix import EXPLANATIONS
from .metrics import Check
from .model import Scenario
from .runner import CCSIM_REPEATS

#: the parking lots' section of RESULTS.md (parking_lot.py) lies between these markers:
#: the matrix's writer keeps it, the parking lots' replaces it
BEGIN = "<!-- parking-lot:begin -->"
END = "<!-- parking-lot:end -->"

SPEED_NOTE = (
    "Why ratios fall short: the row nearest 100x is usually the shaped 5 Mbit/s one with "
    "15 flows, where ccsim spends the most per bottleneck packet: seven events each, as a "
    "packet the token bucket holds back costs a second transmit attempt and fifteen "
    "flows' delayed-ACK timers fire often. All ratios move with this machine's speed, "
    "which drifts by up to 1.6x within minutes and differs between its cores (the same "
    "ccsim run took 0.033 s on one core and 0.046-0.058 s on the other within the same "
    "minute): both simulators run on one CPU and ccsim is timed on both sides of ns-3's "
    "run, but ns-3's single run still samples a different stretch of the drift. The "
    "scale case is the most exposed: its per-flow state and 2 000 access links do not "
    "fit in the core's cache, so ccsim moves fewer packets per second than on one flow "
    "and slows whenever the shared cache is contended, while ns-3 was given the settings "
    "below that keep its per-hop cost from growing with the number of router interfaces "
    "(with its default weak end-system model it took about twice as long). A ccsim built "
    "without the profile in pgo/ (see the header) is 1.2-1.5x slower."
)

# Defaults that could not be matched (written to RESULTS.md).
UNMATCHED = [
    "RTO: ns-3 `RttMeanDeviation` + `TcpSocketBase` compute RFC 6298 `max(MinRto, SRTT + "
    "4·RTTVAR)`; Linux (`tcp_set_rto`) and ccsim use `SRTT + max(mdev, rto_min)` (≈ SRTT "
    "+ 200 ms). No ns-3 attribute reproduces Linux's floor on the variance term.",
    "Delayed ACKs: ns-3 ACKs every 2nd segment or after `DelAckTimeout` (set to ccsim's "
    "fixed 40 ms); it has no quick-ACK mode (Linux/ccsim ACK the first 16 segments at "
    "once) and does not adapt the timeout (Linux's ATO 40-200 ms).",
    "Connection set-up: ns-3 runs the SYN handshake; ccsim has none, so each ccsim flow "
    "starts one base RTT after its ns-3 twin opens its connection.",
    "Loss recovery: neither has RACK-TLP; ns-3 uses its PRR (`TcpPrrRecovery`) with "
    "`LimitedTransmit` and `ReTxThreshold` 3; Linux/ccsim mark SACK holes lost by the "
    "`reordering` rule and reduce with PRR.",
    "NewReno: ns-3 `TcpLinuxReno` (Linux `tcp_reno_cong_avoid` / `max(cwnd/2, 2)`) is "
    "used; ns-3's `TcpNewReno` uses `BytesInFlight/2` and byte-counted increase.",
    "PIE (ns-3 `pie-queue-disc.cc`): the early-drop safeguard tests the previous update's "
    "delay (`m_qDelayOld`) instead of the current one; the idle decay is `p·0.98` "
    "(Linux `p - p/64`); no +2% above 250 ms; p clamped to 1; the first update runs at "
    "creation (Linux: after 500 ms); while burst allowance is left ns-3 forces p = 0, "
    "decrements the allowance by `Tupdate` per update and re-arms it only after "
    "`BURST_RESET_TIMEOUT` (1.5 s) of low delay (Linux: decrement by dequeue gaps, re-arm "
    "at once); the 2-MTU guard counts packets (`qSize <= 2`).",
    "Sojourn time: ns-3's queue discs see a packet leave when it moves to the one-packet "
    "device queue, one transmission time before it starts on the wire; AQMs therefore "
    "act on delays ~1 packet time shorter (0.6 ms at 20 Mbps). The reported sojourn is "
    "measured alike in both (queue-disc enqueue to start of transmission, `PhyTxBegin`).",
    "Point-to-point framing: ns-3 adds a 2-byte PPP header; every ns-3 link rate is "
    "scaled by 1502/1500 so a 1500-byte packet takes as long as in ccsim (a 52-byte ACK "
    "then takes 54/52 as long, on uncongested links).",
    "RED step marking: ns-3 RED with MinTh = MaxTh = K, QW = 1, Gentle off, UseHardDrop "
    'off is ccsim\'s `mode = "step"` (mark ECT, drop Not-ECT at ≥ K packets queued).',
    "CUBIC (ns-3 `tcp-cubic.cc`): HyStart parameters and `CntClamp` 20 as Linux; ns-3 "
    "works in segments with floating point, Linux/ccsim in jiffies-based fixed point.",
    "Recovery exit: ns-3 credits the ACK that ends fast recovery with every segment it "
    "covers, SACKed ones included (`TcpSocketBase::ProcessAck`), and grows cwnd by them "
    "right after setting it to ssthresh; Linux/ccsim count newly delivered packets only.",
    "ns-3 speed settings that do not change the model: `Ipv4::StrongEndSystemModel` on "
    "(a router checks a packet's destination against the addresses of its incoming "
    "interface only, instead of scanning its hundreds of interfaces: no packet is "
    "addressed to a router) and static routes with one aggregate per router. ns-3 is the "
    "wheel's build (release profile with logging and asserts compiled in).",
]


# ---------------------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------------------


@dataclass
class Row:
    scenario: Scenario
    checks: list[Check]
    ccsim: dict
    ns3: dict
    ratio: float
    notes: list[str] = field(default_factory=list)


def _fmt_rate(x: float) -> str:
    if not math.isfinite(x):
        return "n/a"
    if x >= 1e6:
        return f"{x / 1e6:.2f} M"
    if x >= 1e3:
        return f"{x / 1e3:.1f} k"
    return f"{x:.0f}"


def write_markdown(rows: Sequence[Row], header: dict, path: Path | None = None) -> str:
    """The RESULTS.md text (and the file, when ``path`` is given)."""
    L: list[str] = []
    L.append("# ccsim vs ns-3: validation and speed, side by side")
    L.append("")
    command = header.get("command", "python bench/compare.py")
    L.append(f"Generated by `{command}` — do not edit.")
    L.append("")
    for k in ("date", "machine", "load", "ccsim", "ns-3", "compiler", "python", "mode"):
        if k in header:
            L.append(f"- **{k}**: {header[k]}")
    L.append("")
    L.append(
        "Targets (issue 5): utilisation within 2 percentage points; goodput shares within "
        "5% relative; sojourn p50 and p90 within 15% or 2 ms, whichever is larger; drop and "
        "mark probability within 20% relative; ccsim ≥ 100\u00d7 faster than ns-3 "
        "(≥ 300\u00d7 on the scale case). ✅ within target, ❌ outside (see the explanation "
        "below the table), · reported without a target. Goodput shares are compared per "
        "group of identical flows (same CC, RTT and ECN): flows inside a group are "
        "interchangeable, so their spread is shown by Jain's index instead."
    )
    L.append("")
    L.append("## Agreement")
    L.append("")
    L.append("| scenario | metric | ccsim | ns-3 | ns-3 - ccsim | |")
    L.append("| --- | --- | ---: | ---: | ---: | :---: |")
    for r in rows:
        first = True
        for c in r.checks:
            mark = "·" if c.ok is None else ("✅" if c.ok else "❌")
            name = f"**{r.scenario.name}**" if first else ""
            first = False
            L.append(f"| {name} | {c.metric} | {c.ccsim} | {c.ns3} | {c.diff} | {mark} |")
    L.append("")
    L.append("## Speed")
    L.append("")
    L.append(
        "Simulation wall time only (ccsim: `summary.wall_s`; ns-3: `Simulator::Run()`), "
        "both measured in this run on this machine; events and bottleneck packets (queue "
        "departures) over the whole run."
    )
    L.append("")
    L.append(
        "| scenario | sim. time | ccsim wall | ns-3 wall | ns-3 / ccsim | target | "
        "ccsim events/s | ns-3 events/s | ccsim pkts/s | ns-3 pkts/s |"
    )
    L.append("| --- | ---: | ---: | ---: | ---: | :---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        target = 300 if r.scenario.scale else 100
        ok = "✅" if r.ratio >= target else "❌"
        L.append(
            f"| {r.scenario.name} | {r.ccsim.get('_duration_s', 0):g} s "
            f"| {r.ccsim['wall_s']:.3f} s | {r.ns3['wall_s']:.2f} s | {r.ratio:.0f}\u00d7 "
            f"| ≥ {target}\u00d7 {ok} | {_fmt_rate(r.ccsim['events_per_s'])} "
            f"| {_fmt_rate(r.ns3['events_per_s'])} | {_fmt_rate(r.ccsim['packets_per_s'])} "
            f"| {_fmt_rate(r.ns3['packets_per_s'])} |"
        )
    L.append("")
    slow = [r for r in rows if r.ratio < (300 if r.scenario.scale else 100)]
    if rows:
        cc_pps = [r.ccsim["packets_per_s"] for r in rows]
        ns_pps = [r.ns3["packets_per_s"] for r in rows]
        L.append(
            f"ccsim moved {min(cc_pps) / 1e6:.2f}-{max(cc_pps) / 1e6:.2f} M bottleneck "
            f"packets per second of wall time, ns-3 {min(ns_pps) / 1e3:.1f}-"
            f"{max(ns_pps) / 1e3:.1f} k. ccsim's wall time is the median of "
            f"{2 * CCSIM_REPEATS} identical runs (deterministic: same results), half "
            "before and half after ns-3's one run, all on the same CPU."
            + (
                f" Below the speed target: {', '.join(r.scenario.name for r in slow)}."
                if slow
                else ""
            )
        )
        L.append("")
        if slow:
            need = {r.scenario.scale: 0.0 for r in rows}
            for r in slow:
                target = 300 if r.scenario.scale else 100
                need[r.scenario.scale] = max(need[r.scenario.scale], target / r.ratio)
            parts = []
            if need.get(False):
                parts.append(f"{need[False]:.1f}\u00d7 faster on the worst small scenario")
            if need.get(True):
                parts.append(f"{need[True]:.1f}\u00d7 faster on the scale case")
            L.append(
                SPEED_NOTE + " Meeting the targets in this run would need ccsim "
                f"{' and '.join(parts)}."
            )
            L.append("")
    L.append("## Rows outside the targets")
    L.append("")
    any_bad = False
    for r in rows:
        bad = [c.metric for c in r.checks if c.ok is False]
        if not bad:
            continue
        any_bad = True
        keys, note = EXPLANATIONS.get(r.scenario.name, ((), ""))
        why = cause_links(keys) if keys else "not yet explained"
        if note:
            why += f". {note}"
        if header.get("mode", "").startswith("quick"):
            why = "(quick mode: shortened windows, see the full run) " + why
        L.append(f"- **{r.scenario.name}** ({', '.join(bad)}): {why}")
    if not any_bad:
        L.append("None.")
    else:
        L.append("")
        L.append(
            "Each cause is explained once, in [CAUSES.md](CAUSES.md) (shared with "
            "[DIFFERENTIAL.md](DIFFERENTIAL.md))."
        )
    L.append("")
    L.append("## Scenarios")
    L.append("")
    for r in rows:
        L.append(f"- **{r.scenario.name}**: {r.scenario.title}.")
        for note in r.notes:
            L.append(f"  - {note}")
    L.append("")
    L.append("## Configuration")
    L.append("")
    L.append(
        "Both simulators build the same dumbbell from the same parameters (see "
        "`ccsim_ns3/translate.py`): per-flow access links at 10\u00d7 the bottleneck rate "
        "carrying the base RTT, an uncongested reverse path at the bottleneck rate with an "
        "ample FIFO, MSS 1448 (1500-byte packets with timestamps), SACK on, initial window "
        "10, delayed ACKs (every 2nd segment, 40 ms timeout), minimum RTO 200 ms, initial "
        "RTO 1 s, ns-3 socket buffers of twice each flow's share of the pipe (BDP + queue "
        "limit) plus 1 MiB (ns-3's 128 KiB default would cap the window; ccsim's receive "
        "window never limits), the ns-3 device queue under the queue disc shrunk to one "
        "packet, and no queue disc (no default FQ-CoDel) on any other ns-3 device. ns-3: "
        "`TcpLinuxReno`, `TcpCubic`, `TcpDctcp` set per host (sender and receiver), ECN "
        "requested per socket (`UseEcn` On on ECN senders, AcceptOnly on receivers). "
        "Each run checks what ns-3 did: the root queue disc on the bottleneck, no other "
        "queue disc, the device queue size and its drops, ECN negotiated per flow."
    )
    L.append("")
    L.append("Defaults that could not be matched:")
    L.append("")
    for u in UNMATCHED:
        L.append(f"- {u}")
    L.append("")
    text = "\n".join(L)
    if path is not None:
        # the parking lots' section (parking_lot.py) is another run's: keep it
        kept = kept_section(path)
        path.write_text(text + ("\n" + kept if kept else ""))
    return text


def splice_section(text: str, section: str) -> str:
    """``text`` with its parking-lot section (between BEGIN and END) replaced by
    ``section``, or ``section`` appended."""
    if BEGIN in text and END in text:
        a = text.index(BEGIN)
        b = text.index(END) + len(END)
        return text[:a] + section.rstrip("\n") + text[b:]
    return text.rstrip("\n") + "\n\n" + section if text else section


def kept_section(path: Path | None) -> str:
    """The parking-lot section of ``path`` (RESULTS.md) as it stands (empty: none), for
    the dumbbell matrix's writer to keep."""
    if path is None or not path.exists():
        return ""
    text = path.read_text()
    if BEGIN in text and END in text:
        return text[text.index(BEGIN) : text.index(END) + len(END)] + "\n"
    return ""
