//! What a run will cost, estimated from the scenario before building it: events, wall
//! time, memory and output rows. `ccsim validate` prints it; `ccsim run` refuses a run
//! whose memory estimate exceeds what the process may use (free memory, capped by its
//! address-space limit), and warns about long ones.
//!
//! The constants are calibrated on `examples/*.toml` (2 cores, 2026-11): 3.8 to 7.9
//! events per packet leaving the bottleneck (5.1 for bulk TCP, more with UDP, shapers
//! and short transfers), 7 to 19 million events per second, about 5.7 KB per flow
//! built (measured on 10^5 flows), and each output row costs its columns in Rust,
//! again as Python `bytes`, and again in Arrow. They are upper-leaning: a saturated
//! bottleneck of full-size packets for the whole run.
//!
//! Beyond the bottleneck's capacity the estimate counts (issue 33) the work that does
//! not scale with it: packets offered above the bottleneck's rate (UDP sources send at
//! their own rate whatever the queue does, and each TCP transfer sends its initial window
//! and a few retransmission timeouts however many flows share the link), the disciplines' update
//! timers (`tupdate`), the stats ticks, and every link of a `[network]`. The traces
//! whose length cannot be known (`qdisc_state` per update, `queue_events`) are counted
//! at their row budget at most ([`crate::trace::TRACE_ROWS_BUDGET`]), which bounds what
//! they can hold.

use crate::scenario::{AlgoSpec, Network, ParamValue, QdiscStateMode, Scenario, SimDuration};
use crate::trace::TRACE_ROWS_BUDGET;

/// Events per packet that crosses the bottleneck (upper end of the examples' 3.8-7.9).
const EVENTS_PER_PACKET: f64 = 7.0;
/// Events per packet a source offers beyond what the bottleneck carries (sent, crosses
/// the access link, arrives at the queue and is dropped there: fewer than a delivered
/// packet's).
const EVENTS_PER_OFFERED: f64 = 5.0;
/// Retransmission timeouts a flow starved by many others takes before its exponential
/// backoff (doubling from `min_rto`) outlasts a run of seconds.
const RTO_RETRIES: f64 = 4.0;
/// A TCP flow's minimum window (Linux `tcp_cwnd_min`: 2 segments).
const MIN_WINDOW_PKTS: f64 = 2.0;
/// Events per second of wall time (lower end of the examples' 7-19 million).
const EVENTS_PER_SECOND: f64 = 8.0e6;
/// Output rows built per second (summing, columns, conversion).
const ROWS_PER_SECOND: f64 = 1.0e7;
/// Wall seconds per pair of flows: building and summarising a run grows with the square
/// of its flow count (measured 2026-11 with PIE at 10 Mbit/s for 0.5 s: 25 k flows 4.5 s,
/// 50 k 12.7 s, 100 k 52 s, of which the simulation itself 0.8 / 2.3 / - s); until that
/// is found and made linear, the estimate says so (100,001 flows were estimated at
/// 0.087 s and took 145 s, issue 33).
const SECONDS_PER_FLOW_PAIR: f64 = 6.0e-9;
/// Bytes per flow built (endpoints, access links, routes, counters).
const BYTES_PER_FLOW: f64 = 6_000.0;
/// Bytes per output row over its life (Rust columns, Python bytes, Arrow).
const BYTES_PER_ROW: f64 = 200.0;
/// Bytes per captured packet in a pcap (headers and block framing; 19.5 M packets
/// used 3.0 GB, issue 33).
const BYTES_PER_CAPTURED: f64 = 160.0;
/// Bytes per packet the event queue and packet pool hold while a run keeps a standing
/// queue (a full-size packet's slot and its pending events).
const BYTES_PER_QUEUED: f64 = 300.0;
/// Baseline: the simulator's own tables and buffers.
const BASE_BYTES: f64 = 50.0e6;
/// `qdisc_state` rows per discipline update (PIE's and DualPI2's state has 4 to 8 names).
const QDISC_STATE_ROWS_PER_UPDATE: f64 = 8.0;
/// Full-size packet on the wire, bytes.
const FULL_PACKET_BYTES: f64 = 1500.0;

/// The estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    pub flows: u64,
    /// Packets the bottleneck can carry in the run (full-size, saturated), plus what
    /// its smaller UDP packets add.
    pub bottleneck_packets: f64,
    /// Packets offered beyond what the bottleneck carries (dropped somewhere).
    pub offered_packets: f64,
    /// Timer events of the disciplines' periodic updates.
    pub qdisc_updates: f64,
    pub events: f64,
    pub wall_s: f64,
    /// Rows of the time-series tables (the other tables are per flow or per transfer).
    pub series_rows: f64,
    /// Rows of each opt-in trace, `(scenario key, rows)`, budgeted ones at their budget
    /// at most.
    pub trace_rows: Vec<(&'static str, f64)>,
    pub memory_bytes: f64,
    /// The scenario key that costs the most memory, and its bytes: what a refusal names.
    pub largest: (&'static str, f64),
}

/// A duration parameter of a discipline, if given as a valid duration.
fn duration_param(spec: &AlgoSpec, name: &str) -> Option<u64> {
    match spec.params.get(name)? {
        ParamValue::Str(s) => SimDuration::parse(s).ok().map(|d| d.ns),
        _ => None,
    }
}

/// The period of a discipline's update timer, if it has one (defaults as the
/// disciplines' own: PIE 15 ms, DualPI2 16 ms, CSAQM 1 ms; the shortest preset's).
fn update_period_ns(spec: &AlgoSpec) -> Option<u64> {
    let (name, default_ns) = match spec.kind.as_str() {
        "pie" | "pvpie" => ("tupdate", 15_000_000),
        "dualpi2" => ("tupdate", 16_000_000),
        "csaqm" => ("t_update", 1_000_000),
        _ => return None,
    };
    Some(duration_param(spec, name).unwrap_or(default_ns).max(1))
}

/// Every queueing link: (rate bps, discipline).
fn links(sc: &Scenario) -> Vec<(f64, &AlgoSpec)> {
    match &sc.network {
        Some(Network::Graph { links, .. }) => links
            .iter()
            .flat_map(|l| {
                let n = if l.both_ways { 2 } else { 1 };
                std::iter::repeat_n((l.rate.bps as f64, &l.queue), n)
            })
            .collect(),
        Some(Network::ParkingLot { hops }) => hops
            .iter()
            .flat_map(|h| std::iter::repeat_n((h.rate.bps as f64, &h.queue), 2))
            .collect(),
        Some(Network::LeafSpine(f)) => {
            let host_links = 2 * f.leaves as usize * f.hosts_per_leaf as usize;
            let fabric_links = 2 * f.leaves as usize * f.spines as usize;
            let host = (f.host_link.rate.bps as f64, &f.host_link.queue);
            let fabric = (f.fabric_link.rate.bps as f64, &f.fabric_link.queue);
            std::iter::repeat_n(host, host_links)
                .chain(std::iter::repeat_n(fabric, fabric_links))
                .collect()
        }
        None => Vec::new(),
    }
}

/// Estimate the cost of running `sc` (cheap: no building, no drawing).
pub fn estimate(sc: &Scenario) -> Estimate {
    let duration_ns = sc.duration.ns;
    let duration_s = duration_ns as f64 * 1e-9;
    let flows: u64 = sc.flows.iter().map(|g| u64::from(g.count)).sum::<u64>()
        + sc.udp.iter().map(|g| u64::from(g.count)).sum::<u64>();
    let rate_bps = sc
        .bottleneck
        .rate_changes
        .iter()
        .map(|c| c.rate.bps)
        .chain([sc.bottleneck.rate.bps])
        .max()
        .unwrap_or(0) as f64;
    let reverse_bps = sc
        .bottleneck
        .reverse_rate
        .map_or(rate_bps, |r| r.bps as f64);
    // Data one way, the other way's data or ACKs: at most both links full; with a
    // [network], every link full (a packet crossing several links is counted at each).
    let network = links(sc);
    let capacity_bps = if network.is_empty() {
        rate_bps + reverse_bps
    } else {
        network.iter().map(|(bps, _)| bps).sum()
    };
    let full_packets = capacity_bps * duration_s / (8.0 * FULL_PACKET_BYTES);
    // UDP: what each source offers over its active time; the share of it the links carry
    // in smaller packets adds to their packet count, the rest is dropped on the way.
    let mut udp_carried = 0.0;
    let mut offered = 0.0;
    for g in &sc.udp {
        let size = g.packet_size.bytes.max(1) as f64;
        let end_ns = g.stop.map_or(duration_ns, |s| s.ns.min(duration_ns));
        let sent: f64 = g
            .drawn
            .iter()
            .map(|d| d.rate.bps as f64 * end_ns.saturating_sub(d.start.ns) as f64 * 1e-9)
            .sum::<f64>()
            / (8.0 * size);
        let carried = sent.min(capacity_bps * duration_s / (8.0 * size));
        udp_carried += carried;
        offered += sent - carried.min(sent);
    }
    // TCP: each transfer sends its initial window whatever its share of the link, and a
    // flow that loses it retries a few times before its backoff outlasts the run (5,000
    // flows on 10 Mbit/s: 113 thousand events, the capacity alone gives 70 thousand).
    for g in &sc.flows {
        for d in &g.drawn {
            let transfers = d.sizes.len().max(1) as f64;
            offered += (f64::from(g.initial_window) + RTO_RETRIES) * transfers;
        }
    }
    let bottleneck_packets = full_packets + udp_carried;
    // The disciplines' update timers: the bottleneck's (and the reverse queue's), or
    // every link's in a [network].
    let period_updates =
        |spec: &AlgoSpec| update_period_ns(spec).map_or(0.0, |p| duration_ns as f64 / p as f64);
    let qdisc_updates: f64 = if network.is_empty() {
        period_updates(&sc.bottleneck.queue)
            + sc.bottleneck
                .reverse_queue
                .as_ref()
                .map_or(0.0, period_updates)
    } else {
        network.iter().map(|(_, q)| period_updates(q)).sum()
    };
    let ticks = (duration_ns / sc.stats_interval.ns.max(1)) as f64;
    let traced: u64 = sc
        .flows
        .iter()
        .filter(|g| g.trace)
        .map(|g| u64::from(g.count))
        .sum();
    let rows_per_tick =
        flows as f64 + (sc.flows.len() + sc.udp.len()) as f64 + 8.0 + 8.0 * traced as f64;
    let series_rows = ticks * rows_per_tick;
    let events = EVENTS_PER_PACKET * bottleneck_packets
        + EVENTS_PER_OFFERED * offered
        + qdisc_updates
        + ticks;
    let budget = TRACE_ROWS_BUDGET as f64;
    let mut trace_rows = Vec::new();
    if sc.trace.qdisc_state == QdiscStateMode::Updates {
        let rows = QDISC_STATE_ROWS_PER_UPDATE * (qdisc_updates + ticks);
        trace_rows.push(("trace.qdisc_state", rows.min(budget)));
    }
    if sc.trace.queue_events {
        // at most one row per packet arriving at the watched queue
        trace_rows.push((
            "trace.queue_events",
            (bottleneck_packets + offered).min(budget),
        ));
    }
    if sc.trace.rtt_samples && traced > 0 {
        // at most one sample per ACK of a traced flow: its share of the packets
        let share = traced as f64 / flows.max(1) as f64;
        trace_rows.push(("trace.rtt_samples", share * (bottleneck_packets + offered)));
    }
    let captured = if sc.trace.pcap.is_empty() {
        0.0
    } else {
        ((bottleneck_packets + offered) * sc.trace.pcap.len() as f64)
            .min(sc.trace.pcap_max_packets as f64)
    };
    // Each flow's state, plus a standing queue of every flow's minimum window (bounded
    // by what is offered beyond the links' capacity).
    let flow_bytes = BYTES_PER_FLOW * flows as f64
        + BYTES_PER_QUEUED * (MIN_WINDOW_PKTS * flows as f64).min(offered);
    let parts = [
        ("flows", flow_bytes),
        ("stats_interval", BYTES_PER_ROW * series_rows),
        ("trace.pcap_max_packets", BYTES_PER_CAPTURED * captured),
    ];
    let mut memory_bytes = BASE_BYTES + parts.iter().map(|(_, b)| b).sum::<f64>();
    let mut largest = parts[0];
    for &(key, bytes) in &parts[1..] {
        if bytes > largest.1 {
            largest = (key, bytes);
        }
    }
    for &(key, rows) in &trace_rows {
        let bytes = BYTES_PER_ROW * rows;
        memory_bytes += bytes;
        if bytes > largest.1 {
            largest = (key, bytes);
        }
    }
    let trace_total: f64 = trace_rows.iter().map(|(_, r)| r).sum();
    Estimate {
        flows,
        bottleneck_packets,
        offered_packets: offered,
        qdisc_updates,
        events,
        wall_s: events / EVENTS_PER_SECOND
            + (series_rows + trace_total) / ROWS_PER_SECOND
            + SECONDS_PER_FLOW_PAIR * (flows as f64).powi(2),
        series_rows,
        trace_rows,
        memory_bytes,
        largest,
    }
}
