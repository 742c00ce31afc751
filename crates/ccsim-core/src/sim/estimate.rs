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
//! The links carry at most what the flows can send: a finite transfer its bytes, a
//! bulk flow no more than slow start from its initial window allows (the window at
//! most doubles per base RTT) or its access link serialises; on the fuzz corpus the
//! capacity alone was within 10x of the events for 72 % of the runs, with this cap 99 %.
//!
//! Beyond the bottleneck's capacity the estimate counts (issue 33) the work that does
//! not scale with it: packets offered above the bottleneck's rate (UDP sources send at
//! their own rate whatever the queue does, and each TCP transfer sends its initial window
//! and a few retransmission timeouts however many flows share the link), the disciplines' update
//! timers (`tupdate`), the stats ticks, and every link of a `[network]`. The traces
//! whose length cannot be known (`qdisc_state` per update, `queue_events`,
//! `rtt_samples`, `cc_reductions`, `deadline_control`) are counted at their row budget
//! at most ([`crate::trace::TRACE_ROWS_BUDGET`]), which bounds what they can hold; the
//! series (`flow_series`, `cc_trace`, `cc_vars`, ...) are known before the run and
//! bounded by the scenario's check of `stats_interval`.

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
/// Output rows built and written per second (summing, columns, conversion, Parquet and
/// the plots: `ccsim run` wrote 1.35 million rows in 14.5 s, 2026-11; the 10 million
/// this was let 1 us stats intervals outlive the fuzzer's deadline, issue 33).
const ROWS_PER_SECOND: f64 = 1.0e5;
/// Wall seconds per flow of building, summarising and writing a run beyond its events
/// (`ccsim run` with its plots, PIE at 10 Mbit/s for 0.5 s, 2026-11: 25 k flows 10 s,
/// 100 k 35 s, 20 k finite transfers 15 s; `ccsim.run` alone 2.7 s, 8.9 s, and 200 k
/// 18.8 s). It is linear: the
/// square law this replaced (25 k 4.5 s, 50 k 12.7 s, 100 k 52 s, measured on an
/// earlier version) no longer holds, and it put 200 k flows at 241 s.
const SECONDS_PER_FLOW: f64 = 1.0e-3;
/// Bytes per flow built (endpoints, access links, routes, counters).
const BYTES_PER_FLOW: f64 = 6_000.0;
/// Bytes per output row over its life (Rust columns, Python bytes, Arrow): 1.35 million
/// rows peaked at 432 MB in `ccsim run` (2026-11; 200 let a 1.25 GB estimate use 2.07 GB).
const BYTES_PER_ROW: f64 = 300.0;
/// Bytes per captured packet in a pcap (headers and block framing; 19.5 M packets
/// used 3.0 GB, issue 33).
const BYTES_PER_CAPTURED: f64 = 160.0;
/// Bytes per packet the event queue and packet pool hold while a run keeps a standing
/// queue (a full-size packet's slot and its pending events).
const BYTES_PER_QUEUED: f64 = 300.0;
/// Baseline: the simulator's own tables and buffers.
const BASE_BYTES: f64 = 50.0e6;
/// `qdisc_state` rows per record of the discipline's state (DualPI2 reports 22 names:
/// its own 12 and its two queues' window statistics; PIE 4, CoDel 3).
const QDISC_STATE_ROWS_PER_UPDATE: f64 = 24.0;
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

/// The period of a discipline's update timer and its first update, if it has one
/// (defaults as the disciplines' own: PIE 15 ms, DualPI2 16 ms, CSAQM 1 ms; the shortest
/// preset's). PIE's first update is 500 ms after creation as Linux's `pie_init`
/// (`mod_timer(jiffies + HZ/2)`), one period with a preset or variant that may start
/// earlier (`pie2013`, `ns2`): counting updates from 0 s estimated a half-second PIE run
/// of 1 us updates at 175 times its events.
fn update_timer_ns(spec: &AlgoSpec) -> Option<(u64, u64)> {
    let (name, default_ns) = match spec.kind.as_str() {
        "pie" | "pvpie" => ("tupdate", 15_000_000),
        "dualpi2" => ("tupdate", 16_000_000),
        "csaqm" => ("t_update", 1_000_000),
        _ => return None,
    };
    let period_ns = duration_param(spec, name).unwrap_or(default_ns).max(1);
    let mut first_ns = period_ns;
    if spec.kind == "pie" {
        let linux = !spec.params.contains_key("preset") && !spec.params.contains_key("variant");
        first_ns = duration_param(spec, "first_update").unwrap_or(if linux {
            500_000_000
        } else {
            period_ns
        });
    }
    Some((period_ns, first_ns))
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

/// TCP/IP header bytes on a data packet (20 + 20 + 12 of timestamps).
const HEADER_BYTES: u32 = 52;

/// Retransmission timeouts a flow active for `active_ns` can take at most: the timer
/// starts at `min_rto_ns` and doubles (RFC 6298 §5.5), at most [`RTO_RETRIES`].
fn rto_retries(active_ns: f64, min_rto_ns: u64) -> f64 {
    let first = min_rto_ns.max(1) as f64;
    (active_ns / first + 1.0)
        .log2()
        .floor()
        .clamp(0.0, RTO_RETRIES)
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
    // What the flows can send at most caps what they put through the links: the fuzz
    // corpus's finite transfers, runs shorter than an RTT and microsecond runs were
    // estimated 13 to 280 times their events from the capacity alone.
    let default_access_bps = sc
        .bottleneck
        .access_rate
        .map_or(10.0 * rate_bps, |r| r.bps as f64);
    let mut tcp_packets = 0.0;
    // in a [network] a packet may cross every link, and each counts it
    let hops = network.len().max(1) as f64;
    for g in &sc.flows {
        let access_bps = g.access_rate.map_or(default_access_bps, |r| r.bps as f64);
        let end_ns = g.stop.map_or(duration_ns, |s| s.ns.min(duration_ns));
        let window = f64::from(g.initial_window);
        let packet_bits = 8.0 * f64::from(g.mss.saturating_add(HEADER_BYTES).max(1));
        for d in &g.drawn {
            let active_ns = end_ns.saturating_sub(d.start.ns) as f64;
            // a packet must be serialised on the access link before it counts
            let wire = access_bps * active_ns * 1e-9 / packet_bits + 1.0;
            let timeouts = rto_retries(active_ns, g.min_rto.ns);
            let transfers = d.sizes.len().max(1) as f64;
            offered += (window + timeouts).min(wire) * transfers;
            let mut data = wire;
            if g.cc.kind != "policy" {
                // slow start at most doubles the window per round trip (RFC 5681 §3.1;
                // Linux `tcp_slow_start` adds the packets acknowledged): by time t a
                // flow has sent at most IW (2^(k+1) - 1) for k = floor(t / RTT), the
                // base RTT a lower bound on the real one (a policy sets its own window)
                let rounds = (active_ns / d.rtt.ns.max(1) as f64).floor().min(1000.0);
                data = data.min(window * (2f64.powf(rounds + 1.0) - 1.0) + timeouts);
            }
            if !d.sizes.is_empty() {
                // finite transfers: their bytes, twice over for retransmissions
                let bytes: u64 = d.sizes.iter().map(|b| b.bytes).sum();
                let sent =
                    2.0 * bytes as f64 / f64::from(g.mss.max(1)) + (window + timeouts) * transfers;
                data = data.min(sent);
            }
            // each data packet draws at most one ACK, none before half a round trip
            let acks = if active_ns * 2.0 > d.rtt.ns as f64 {
                1.0
            } else {
                0.0
            };
            tcp_packets += data * (1.0 + acks) * hops;
        }
    }
    // UDP only beyond TCP's: with no TCP flow the links carry only what UDP sends
    let bottleneck_packets = full_packets.min(tcp_packets) + udp_carried;
    // The disciplines' update timers: the bottleneck's (and the reverse queue's), or
    // every link's in a [network].
    let period_updates = |spec: &AlgoSpec| {
        update_timer_ns(spec).map_or(0.0, |(period, first)| {
            duration_ns.saturating_sub(first) as f64 / period as f64 + 1.0
        })
    };
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
    // A `[network]`'s `queue_series` has a row per tick for each link that queued: at
    // most every link.
    let rows_per_tick = flows as f64
        + (sc.flows.len() + sc.udp.len()) as f64
        + 8.0
        + network.len() as f64
        + (1 + crate::cc::MAX_DIAGNOSTICS) as f64 * traced as f64;
    let series_rows = ticks * rows_per_tick;
    let events = EVENTS_PER_PACKET * bottleneck_packets
        + EVENTS_PER_OFFERED * offered
        + qdisc_updates
        + ticks;
    let budget = TRACE_ROWS_BUDGET as f64;
    let mut trace_rows = Vec::new();
    // recorded at every stats tick, and with "updates" at every update too
    // (at every tick for each link of a `[network]`: each link's queue is recorded)
    let watched_links = network.len().max(1) as f64;
    let records = match sc.trace.qdisc_state {
        QdiscStateMode::Off => 0.0,
        QdiscStateMode::Updates => qdisc_updates + ticks * watched_links,
        QdiscStateMode::Interval => ticks * watched_links,
    };
    if records > 0.0 {
        let rows = QDISC_STATE_ROWS_PER_UPDATE * records;
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
        trace_rows.push((
            "trace.rtt_samples",
            (share * (bottleneck_packets + offered)).min(budget),
        ));
    }
    // `cc_reductions`: a traced flow reduces its window at most once per round trip
    // (recovery, CWR and delay backoffs each wait a window) and at each timeout.
    let reductions: f64 = sc
        .flows
        .iter()
        .filter(|g| g.trace)
        .flat_map(|g| g.drawn.iter())
        .map(|d| duration_ns as f64 / d.rtt.ns.max(1) as f64 + RTO_RETRIES)
        .sum();
    if reductions > 0.0 {
        trace_rows.push(("flows.trace", reductions.min(budget)));
    }
    // `deadline_control`: one decision per control interval of each flow with a deadline.
    let decisions: f64 = sc
        .flows
        .iter()
        .filter_map(|g| {
            let d = g.deadline.as_ref()?;
            Some(f64::from(g.count) * (duration_ns as f64 / d.interval.ns.max(1) as f64 + 1.0))
        })
        .sum();
    if decisions > 0.0 {
        trace_rows.push(("flows.deadline_control", decisions.min(budget)));
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
            + SECONDS_PER_FLOW * flows as f64,
        series_rows,
        trace_rows,
        memory_bytes,
        largest,
    }
}
