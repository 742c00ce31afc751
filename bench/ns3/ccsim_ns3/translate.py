"""A :class:`~ccsim_ns3.model.Scenario` as ccsim's scenario dict and as dumbbell.cc's
configuration text: a dumbbell (``[bottleneck]``), or a parking lot (``[network] kind =
"parking_lot"`` in ccsim, ``hop`` lines for dumbbell.cc's RunParkingLot)."""

from __future__ import annotations

from pathlib import Path

from .model import (
    CODEL_MIN_BYTES,
    FQ_FLOWS,
    PPP_HEADER_BYTES,
    WIRE_PACKET_BYTES,
    FlowGroup,
    Queue,
    Scenario,
    flow_list,
    hop_span,
    limit_bytes,
)


def ccsim_queue(q: Queue) -> dict:
    """ccsim's ``queue`` table for ``q``."""
    if q.kind == "droptail":
        return {"kind": "droptail", "limit": q.limit}
    if q.kind == "pie":
        return {"kind": "pie", "limit": q.limit, "ecn": q.ecn}
    if q.kind == "codel":
        return {
            "kind": "codel",
            "limit": q.limit,
            "ecn": q.ecn,
            "target": f"{q.target_ms}ms",
            "interval": f"{q.interval_ms}ms",
        }
    if q.kind == "red_step":
        return {
            "kind": "red",
            "mode": "step",
            "threshold": f"{q.threshold_p}p",
            "ecn": q.ecn,
            "limit": q.limit,
        }
    if q.kind == "fq_codel":
        return {
            "kind": "fq_codel",
            "limit": q.limit,
            "ecn": q.ecn,
            "target": f"{q.target_ms}ms",
            "interval": f"{q.interval_ms}ms",
            "flows": FQ_FLOWS,
            "quantum": f"{WIRE_PACKET_BYTES}B",
            "hash_seed": q.hash_seed,
        }
    raise ValueError(q.kind)  # pragma: no cover - the matrix is fixed


def ccsim_scenario(sc: Scenario, quick: bool) -> dict:
    """The ccsim scenario dict. Each flow starts one base RTT after its ns-3 twin opens
    its connection, when ns-3 sends its first data segment (ccsim has no handshake)."""
    duration, m0, m1 = sc.timing(quick)
    q = sc.queue
    queue = ccsim_queue(q)
    flows = [
        {
            "cc": g.cc,
            "rtt": f"{g.rtt_ms}ms",
            "ecn": g.ecn or g.cc == "dctcp",
            "start": f"{start + g.rtt_ms / 1000:.9f}s",
            "initial_window": 10,
            "delayed_ack": True,
            "min_rto": "200ms",
            "mss": 1448,
            "sack": True,
            "rack": False,
            "tlp": False,  # ns-3 3.44 has neither (classic/PRR recovery only)
            **_ccsim_endpoints(sc, g),
        }
        for g, start in flow_list(sc)
    ]
    bottleneck: dict = {"rate": f"{sc.rate_mbps}Mbps", "queue": queue}
    if q.shaper_mbps:
        bottleneck["shaper"] = {
            "sustained": f"{q.shaper_mbps}Mbps",
            "burst": f"{q.shaper_burst_bytes}B",
        }
    out = {
        "duration": f"{duration}s",
        "seed": sc.seed,
        "stats_interval": "1s",
        "measure": {"start": f"{m0}s", "end": f"{m1}s"},
        "bottleneck": bottleneck,
        "flows": flows,
    }
    if sc.hops:
        del out["bottleneck"]
        out["network"] = {
            "kind": "parking_lot",
            "hops": [
                {
                    "rate": f"{h.rate_mbps}Mbps",
                    "delay": f"{h.delay_ms}ms",
                    "queue": ccsim_queue(h.queue),
                }
                for h in sc.hops
            ],
        }
    if sc.udp:
        out["udp"] = [
            {
                "rate": f"{u.rate_mbps}Mbps",
                "pattern": "poisson",
                "packet_size": f"{u.packet_bytes}B",
                "rtt": f"{u.rtt_ms}ms",
                "start": f"{u.start_s:.9f}s",
            }
            for u in sc.udp
        ]
    return out


def _ccsim_endpoints(sc: Scenario, g: FlowGroup) -> dict:
    """A parking-lot group's hosts (routers r0..rN: hop i joins r(i-1) to r(i)); none in a
    dumbbell."""
    if not sc.hops:
        return {}
    first, last = hop_span(sc, g)
    return {"from": f"r{first - 1}", "to": f"r{last}"}


NS3_CC = {
    "newreno": "ns3::TcpLinuxReno",
    "cubic": "ns3::TcpCubic",
    "dctcp": "ns3::TcpDctcp",
    "bbr": "ns3::TcpBbr",
}


def ns3_queue_attrs(q: Queue) -> tuple[str, list[tuple[str, str]]]:
    """The ns-3 queue disc and the attributes that make it behave as ccsim's."""
    if q.kind == "droptail":
        return "ns3::FifoQueueDisc", [("MaxSize", q.limit)]
    if q.kind == "pie":
        return "ns3::PieQueueDisc", [
            ("MaxSize", q.limit),  # ns-3 default 25p; Linux/ccsim 1000p
            ("QueueDelayReference", "15ms"),
            ("Tupdate", "15ms"),
            ("A", "0.125"),
            ("B", "1.25"),
            ("MaxBurstAllowance", "150ms"),
            ("UseDequeueRateEstimator", "false"),  # Linux default: timestamps
            ("UseCapDropAdjustment", "true"),
            ("UseDerandomization", "true"),  # ns-3 default false; Linux always on
            ("UseEcn", "true" if q.ecn else "false"),
            ("MarkEcnThreshold", "0.1"),
            ("MeanPktSize", str(WIRE_PACKET_BYTES)),
        ]
    if q.kind == "codel":
        return "ns3::CoDelQueueDisc", [
            ("MaxSize", q.limit),  # ns-3 default 1500000B; Linux/ccsim 1000p
            ("Target", f"{q.target_ms}ms"),
            ("Interval", f"{q.interval_ms}ms"),
            ("UseEcn", "true" if q.ecn else "false"),
            ("MinBytes", str(CODEL_MIN_BYTES)),
        ]
    if q.kind == "fq_codel":
        return "ns3::FqCoDelQueueDisc", [
            ("MaxSize", q.limit),
            ("Target", f"{q.target_ms}ms"),
            ("Interval", f"{q.interval_ms}ms"),
            ("UseEcn", "true" if q.ecn else "false"),  # ns-3 and Linux default: true
            ("Flows", str(FQ_FLOWS)),
            # One queue per flow, as ccsim's collision-free hash seed gives: ns-3's
            # 5-tuple hash modulo 1024 would put some of 50 flows together.
            ("EnableSetAssociativeHash", "true"),
            # Quantum: ns-3 takes the device MTU (1500), as ccsim its MTU; no attribute.
        ]
    if q.kind == "red_step":
        k = str(q.threshold_p)
        return "ns3::RedQueueDisc", [
            ("MaxSize", q.limit),
            ("MinTh", k),
            ("MaxTh", k),
            ("QW", "1"),  # instantaneous queue
            ("Gentle", "false"),  # ns-3 default true
            ("Wait", "false"),
            ("UseEcn", "true" if q.ecn else "false"),
            ("UseHardDrop", "false"),  # mark (not drop) ECT packets above K
            ("MeanPktSize", str(WIRE_PACKET_BYTES)),
        ]
    raise ValueError(q.kind)  # pragma: no cover


def ns3_fqcodel_total(sc: Scenario) -> bool:
    """ns-3's FQ-CoDel gets Linux's qdisc-wide backlog test (`ns3-fqcodel-flow-backlog`
    corrected): asked for, and with ECN, since ns-3's CoDel cannot drop a flow queue's
    last packet, which Linux's test allows (dumbbell.cc's FqTotalBacklog; with ECN the
    flows' packets are marked, not dropped)."""
    return sc.ns3_linux_fqcodel_backlog and sc.queue.kind == "fq_codel" and sc.queue.ecn


def _ns3_tcp_lines(sc: Scenario, buf: int) -> list[str]:
    """dumbbell.cc's TCP settings (ccsim's), and the corrections of ns-3 asked for."""
    return [
        "mss 1448",
        "initial_window 10",
        "delayed_ack 1",
        "delack_timeout_ns 40000000",  # ccsim's fixed delayed-ACK timeout (Linux ATO min)
        "min_rto_ns 200000000",
        f"prr64 {sc.ns3_prr}",
        f"rto_linux {int(sc.ns3_linux_rto)}",
        f"recovery_exit_linux {int(sc.ns3_linux_recovery_exit)}",
        f"reno_cnt_linux {int(sc.ns3_linux_reno_cnt)}",
        f"ce_quickack_linux {int(sc.ns3_linux_ce_quickack)}",
        f"device_pull {int(sc.ns3_device_pull)}",
        *([f"fqcodel_total_min_bytes {CODEL_MIN_BYTES}"] if ns3_fqcodel_total(sc) else []),
        *(["pie_accu_linux 1"] if sc.ns3_linux_pie_accu and sc.queue.kind == "pie" else []),
        f"ece_latch_linux {int(sc.ns3_linux_ece_latch)}",
        "conn_timeout_ns 1000000000",  # Linux's initial RTO (ns-3 default 3 s)
        f"buf_bytes {buf}",
        "ample_queue_packets 100000",
        # Every CoDel ns-3 creates, FQ-CoDel's per-flow ones included (no FQ-CoDel
        # attribute reaches them).
        f"default ns3::CoDelQueueDisc::MinBytes {CODEL_MIN_BYTES}",
    ]


def _socket_buffer_bytes(sc: Scenario, rate_bps: float, limit: str) -> int:
    """Socket buffers: ns-3's 128 KiB default would cap the window below one BDP; ccsim's
    receive window never limits. Each flow gets twice its share of the pipe (BDP +
    queue limit) plus 1 MiB: at least 25 times the mean window in every scenario, and
    not so much that ns-3's transmit-buffer lists grow long (their scans cost time)."""
    max_rtt = max(g.rtt_ms for g in sc.flows) / 1000
    pipe = rate_bps * max_rtt / 8 + limit_bytes(limit)
    return int(2 * pipe / sc.n_flows() + (1 << 20))


def _ns3_flow_line(g: FlowGroup, start: float) -> str:
    ecn = int(g.ecn or g.cc == "dctcp")
    return f"flow {NS3_CC[g.cc]} {round(g.rtt_ms * 1e6)} {ecn} {round(start * 1e9)}"


def ns3_config(sc: Scenario, quick: bool, out_json: Path, out_sojourn: Path) -> str:
    if sc.hops:
        return ns3_parking_lot_config(sc, quick, out_json, out_sojourn)
    duration, m0, m1 = sc.timing(quick)
    rate = int(sc.rate_mbps * 1e6)
    buf = _socket_buffer_bytes(sc, rate, sc.queue.limit)
    qdisc, attrs = ns3_queue_attrs(sc.queue)
    ns = 1_000_000_000
    lines = [
        f"seed {sc.seed}",
        f"duration_ns {round(duration * ns)}",
        f"measure_start_ns {round(m0 * ns)}",
        f"measure_end_ns {round(m1 * ns)}",
        f"rate_bps {rate}",
        f"reverse_rate_bps {rate}",
        f"access_rate_bps {10 * rate}",
        "bottleneck_delay_ns 0",
        f"wire_packet_bytes {WIRE_PACKET_BYTES}",
        f"ppp_header_bytes {PPP_HEADER_BYTES}",
        *_ns3_tcp_lines(sc, buf),
        f"qdisc {qdisc}",
        *(f"qattr {k} {v}" for k, v in attrs),
        *(
            [
                f"shaper_rate_bps {round(sc.queue.shaper_mbps * 1e6)}",
                f"shaper_burst_bytes {sc.queue.shaper_burst_bytes}",
            ]
            if sc.queue.shaper_mbps
            else []
        ),
        *(_ns3_flow_line(g, start) for g, start in flow_list(sc)),
        *(
            f"udp {round(u.rtt_ms * 1e6)} {round(u.rate_mbps * 1e6)} {u.packet_bytes} "
            f"{round(u.start_s * ns)}"
            for u in sc.udp
        ),
        f"out_json {out_json}",
        f"out_sojourn {out_sojourn}",
    ]
    return "\n".join(lines) + "\n"


def ns3_parking_lot_config(sc: Scenario, quick: bool, out_json: Path, out_sojourn: Path) -> str:
    """dumbbell.cc's configuration of a parking lot: a ``hop`` line per hop (rate, delay,
    queue disc) with its ``hattr`` attributes, a ``flow_hops FROM TO`` line (routers)
    after each flow; access links at 10 times the fastest hop, as ccsim's default. The
    sojourn samples of hop i go to ``out_sojourn``.i."""
    duration, m0, m1 = sc.timing(quick)
    fastest = max(int(h.rate_mbps * 1e6) for h in sc.hops)
    buf = max(_socket_buffer_bytes(sc, int(h.rate_mbps * 1e6), h.queue.limit) for h in sc.hops)
    ns = 1_000_000_000
    hop_lines: list[str] = []
    for h in sc.hops:
        qdisc, attrs = ns3_queue_attrs(h.queue)
        hop_lines.append(f"hop {int(h.rate_mbps * 1e6)} {round(h.delay_ms * 1e6)} {qdisc}")
        hop_lines += [f"hattr {k} {v}" for k, v in attrs]
    flow_lines: list[str] = []
    for g, start in flow_list(sc):
        first, last = hop_span(sc, g)
        flow_lines += [_ns3_flow_line(g, start), f"flow_hops {first - 1} {last}"]
    lines = [
        f"seed {sc.seed}",
        f"duration_ns {round(duration * ns)}",
        f"measure_start_ns {round(m0 * ns)}",
        f"measure_end_ns {round(m1 * ns)}",
        f"access_rate_bps {10 * fastest}",
        f"wire_packet_bytes {WIRE_PACKET_BYTES}",
        f"ppp_header_bytes {PPP_HEADER_BYTES}",
        *_ns3_tcp_lines(sc, buf),
        *hop_lines,
        *flow_lines,
        f"out_json {out_json}",
        f"out_sojourn {out_sojourn}",
    ]
    return "\n".join(lines) + "\n"
