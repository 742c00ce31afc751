"""The simulator-neutral scenario both simulators are built from: a dumbbell, or a
parking lot (``Scenario.hops``)."""

from __future__ import annotations

from dataclasses import dataclass

WIRE_PACKET_BYTES = 1500  # MSS 1448 + 52 B of TCP/IP/timestamp headers
FQ_FLOWS = 1024  # FQ-CoDel buckets (Linux and ns-3 default)
# ns-3's CoDel stays out of the dropping state while the backlog after the dequeue is
# `< MinBytes`; Linux (`codel_should_drop`: `backlog <= mtu`) and ccsim also while it is
# exactly one MTU. One byte more makes ns-3's test Linux's (cause `ns3-codel-minbytes`).
CODEL_MIN_BYTES = WIRE_PACKET_BYTES + 1
PPP_HEADER_BYTES = 2  # ns-3's point-to-point header


@dataclass(frozen=True)
class FlowGroup:
    """``count`` identical bulk TCP flows."""

    cc: str  # ccsim name: newreno, cubic, dctcp
    rtt_ms: float
    count: int = 1
    ecn: bool = False
    # In a parking lot: the hops the group's flows cross, first and last (from 1, as
    # ccsim's hop1..hopN); 0: from the first, to the last hop (a long flow).
    first_hop: int = 0
    last_hop: int = 0


@dataclass(frozen=True)
class Queue:
    """The bottleneck queue discipline, with explicit limits (no BDP left to resolve)."""

    kind: str  # droptail, pie, codel, red_step, fq_codel
    limit: str  # "83p" or "125000B"
    ecn: bool = False
    target_ms: float = 0.0  # codel, fq_codel
    interval_ms: float = 0.0  # codel, fq_codel
    threshold_p: int = 0  # red_step
    # fq_codel: ccsim's hash seed, chosen so that no two flows share a bucket (ns-3 uses
    # its set-associative hash, which gives every flow its own queue too).
    hash_seed: int = 0
    # A token-bucket shaper in front of the discipline (0: none): sustained rate and
    # bucket depth; the link rate is the peak rate.
    shaper_mbps: float = 0.0
    shaper_burst_bytes: int = 0


@dataclass(frozen=True)
class Hop:
    """One hop of a parking lot: ccsim's ``hop<i>`` (its ACK direction ``hop<i>-reverse``
    has the same rate and delay and an ample DropTail)."""

    rate_mbps: float
    delay_ms: float
    queue: Queue


@dataclass(frozen=True)
class UdpSource:
    """One Poisson UDP background source (not ECN-capable), packets of ``packet_bytes``
    on the wire, starting at ``start_s`` in both simulators (UDP has no handshake)."""

    rate_mbps: float
    rtt_ms: float
    packet_bytes: int = 1500
    start_s: float = 0.0


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    rate_mbps: float
    queue: Queue
    flows: tuple[FlowGroup, ...]
    duration_s: float
    measure: tuple[float, float]
    quick_duration_s: float
    quick_measure: tuple[float, float]
    start_spread_s: float = 1.0  # flow i starts at i * spread / n (ns-3 SYN time)
    seed: int = 1
    scale: bool = False  # the scale case (speed target 300x)
    udp: tuple[UdpSource, ...] = ()
    # ns-3's TCP corrected where it departs from Linux (bench/ns3/dumbbell.cc), set by the
    # random scenarios; the matrix's RESULTS.md was made without these:
    # ns3_prr: 0 = ns-3 3.44's PRR; 1 = its 32-bit overflow fixed (TcpPrrRecovery64, ns-3
    # issue #1282, fixed after 3.44; cause `ns3-prr-overflow`); 2 = also Linux's
    # DeliveredData, no extra segment per SACKed duplicate ACK (cause `ns3-prr-dupack`).
    ns3_prr: int = 0
    # Linux's RTO, SRTT + max(4 RTTVAR, rto_min), instead of RFC 6298's (cause `ns3-rto`).
    ns3_linux_rto: bool = False
    # Linux's cwnd growth on the ACK that ends fast recovery: by the newly delivered
    # segments, not every segment the ACK covers (cause `ns3-recovery-exit`; needs ns3_prr).
    ns3_linux_recovery_exit: bool = False
    # Reno's growth counter cleared on entering CWR, recovery or loss, as Linux clears
    # snd_cwnd_cnt (dumbbell.cc's TcpLinuxRenoCnt; cause `ns3-reno-cwnd-cnt`).
    ns3_linux_reno_cnt: bool = False
    # Receivers ACK the first CE segment and the next at once, as Linux's
    # tcp_enter_quickack_mode(sk, 2) (dumbbell.cc's TcpSocketCeQuickAck; cause
    # `ns3-ce-delayed-ack`).
    ns3_linux_ce_quickack: bool = False
    # The bottleneck device takes a packet from the queue disc only when the wire frees, as
    # ccsim's link (dumbbell.cc's device_pull; cause `ns3-device-slot`): ns-3's device
    # queue otherwise holds one packet more, waiting while another is on the wire.
    ns3_device_pull: bool = False
    # FQ-CoDel's minimum-backlog test on the whole qdisc's bytes, as Linux's fq_codel
    # (dumbbell.cc's fqcodel_total_min_bytes; cause `ns3-fqcodel-flow-backlog`), instead of
    # each flow queue's own: with ECN only (see ns3_fqcodel_total).
    ns3_linux_fqcodel_backlog: bool = False
    # PIE clears its accumulated drop probability when its coin toss picks a packet to
    # mark, as Linux's pie_drop_early (dumbbell.cc's pie_accu_linux; cause
    # `ns3-pie-accu-prob`): ns-3 clears it on drops only, so under ECN it marks every
    # packet once the accumulator passes 8.5.
    ns3_linux_pie_accu: bool = False
    # Receivers echo ECE exactly while Linux's latch is set: a CWR segment ends the echo
    # even right after a CE segment whose ACK is delayed (dumbbell.cc's ece_latch_linux;
    # cause `ns3-ece-latch`; needs ns3_linux_ce_quickack, whose socket keeps the latch).
    ns3_linux_ece_latch: bool = False
    # A parking lot (ccsim's `[network] kind = "parking_lot"`): its hops in order; then
    # `rate_mbps` and `queue` are the first hop's (ccsim's summary `bottleneck` is its
    # first link). Empty: the dumbbell.
    hops: tuple[Hop, ...] = ()

    def n_flows(self) -> int:
        return sum(g.count for g in self.flows)

    def timing(self, quick: bool) -> tuple[float, float, float]:
        if quick:
            return self.quick_duration_s, *self.quick_measure
        return self.duration_s, *self.measure


def flow_list(sc: Scenario) -> list[tuple[FlowGroup, float]]:
    """Every flow with its group and the time its ns-3 application opens the connection."""
    n = sc.n_flows()
    out: list[tuple[FlowGroup, float]] = []
    for g in sc.flows:
        for _ in range(g.count):
            i = len(out)
            out.append((g, sc.start_spread_s * i / n if n > 1 else 0.0))
    return out


def limit_bytes(limit: str) -> float:
    if limit.endswith("p"):
        return float(limit[:-1]) * WIRE_PACKET_BYTES
    return float(limit[:-1])


def group_info(sc: Scenario) -> tuple[list[int], list[str]]:
    groups: list[int] = []
    names: list[str] = []
    for gi, g in enumerate(sc.flows):
        names.append(
            f"{g.cc}" + (f" {g.rtt_ms:g} ms" if len({x.rtt_ms for x in sc.flows}) > 1 else "")
        )
        groups += [gi] * g.count
    return groups, names


def hop_span(sc: Scenario, g: FlowGroup) -> tuple[int, int]:
    """The first and last hop (from 1) a parking-lot group's flows cross."""
    return g.first_hop or 1, g.last_hop or len(sc.hops)
