//! What a run will cost, estimated from the scenario before building it: events, wall
//! time, memory and output rows. `ccsim validate` prints it; `ccsim run` refuses a run
//! whose memory estimate exceeds what the machine has free, and warns about long ones.
//!
//! The constants are calibrated on `examples/*.toml` (2 cores, 2026-11): 3.8 to 7.9
//! events per packet leaving the bottleneck (5.1 for bulk TCP, more with UDP, shapers
//! and short transfers), 7 to 19 million events per second, about 5.7 KB per flow
//! built (measured on 10^5 flows), and each output row costs its columns in Rust,
//! again as Python `bytes`, and again in Arrow. They are upper-leaning: a saturated
//! bottleneck of full-size packets for the whole run.

use crate::scenario::Scenario;

/// Events per packet that crosses the bottleneck (upper end of the examples' 3.8-7.9).
const EVENTS_PER_PACKET: f64 = 7.0;
/// Events per second of wall time (lower end of the examples' 7-19 million).
const EVENTS_PER_SECOND: f64 = 8.0e6;
/// Bytes per flow built (endpoints, access links, routes, counters).
const BYTES_PER_FLOW: f64 = 6_000.0;
/// Bytes per output row over its life (Rust columns, Python bytes, Arrow).
const BYTES_PER_ROW: f64 = 200.0;
/// Bytes per captured packet in a pcap (headers and block framing).
const BYTES_PER_CAPTURED: f64 = 130.0;
/// Baseline: the simulator's own tables and buffers.
const BASE_BYTES: f64 = 50.0e6;

/// The estimate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub flows: u64,
    /// Packets the bottleneck can carry in the run (full-size, saturated).
    pub bottleneck_packets: f64,
    pub events: f64,
    pub wall_s: f64,
    /// Rows of the time-series tables (the other tables are per flow or per transfer).
    pub series_rows: f64,
    pub memory_bytes: f64,
}

/// Estimate the cost of running `sc` (cheap: no building, no drawing).
pub fn estimate(sc: &Scenario) -> Estimate {
    let duration_s = sc.duration.ns as f64 * 1e-9;
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
    // Data one way, the other way's data or ACKs: at most both links full.
    let bottleneck_packets = (rate_bps + reverse_bps) * duration_s / (8.0 * 1500.0);
    let events = EVENTS_PER_PACKET * bottleneck_packets;
    let traced: u64 = sc
        .flows
        .iter()
        .filter(|g| g.trace)
        .map(|g| u64::from(g.count))
        .sum();
    let ticks = (sc.duration.ns / sc.stats_interval.ns.max(1)) as f64;
    let rows_per_tick =
        flows as f64 + (sc.flows.len() + sc.udp.len()) as f64 + 8.0 + 8.0 * traced as f64;
    let series_rows = ticks * rows_per_tick;
    let captured = if sc.trace.pcap.is_empty() {
        0.0
    } else {
        (bottleneck_packets * sc.trace.pcap.len() as f64).min(sc.trace.pcap_max_packets as f64)
    };
    let memory_bytes = BASE_BYTES
        + BYTES_PER_FLOW * flows as f64
        + BYTES_PER_ROW * series_rows
        + BYTES_PER_CAPTURED * captured;
    Estimate {
        flows,
        bottleneck_packets,
        events,
        wall_s: events / EVENTS_PER_SECOND,
        series_rows,
        memory_bytes,
    }
}
