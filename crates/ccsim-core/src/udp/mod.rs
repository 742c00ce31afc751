//! UDP traffic sources: constant bit rate or Poisson (exponential inter-departure times).
//!
//! A source ignores congestion signals entirely (it is "non-responsive"); with `ecn` on
//! its packets are ECT(0), so an AQM marks rather than drops them. The sink at the far end
//! only counts what arrives.

use crate::engine::rng::SimRng;
use crate::engine::NS_PER_SEC;
use crate::scenario::UdpPattern;

/// One UDP source and its sink's counters.
#[derive(Debug, Clone)]
pub struct UdpSource {
    pub flow: u32,
    pub route: u32,
    pub rate_bps: u64,
    pub packet_size: u32,
    pub pattern: UdpPattern,
    pub ecn: bool,
    pub start_ns: u64,
    pub stop_ns: u64,
    pub rng: SimRng,
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
}

impl UdpSource {
    /// Mean gap between packets at the configured rate.
    pub fn mean_gap_ns(&self) -> f64 {
        self.packet_size as f64 * 8.0 * NS_PER_SEC as f64 / self.rate_bps as f64
    }

    /// Gap to the next packet: fixed for CBR, exponential for Poisson.
    pub fn next_gap_ns(&mut self) -> u64 {
        let mean = self.mean_gap_ns();
        let gap = match self.pattern {
            UdpPattern::Cbr => mean,
            UdpPattern::Poisson => self.rng.exponential(mean),
        };
        (gap.round() as u64).max(1)
    }
}
