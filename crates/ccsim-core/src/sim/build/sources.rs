//! Stage 4, traffic sources: the UDP sources (constant-rate or Poisson), flows
//! `first_flow..` after the TCP flows.

use crate::engine::rng::{stream, StreamKind};
use crate::scenario::Scenario;
use crate::udp::UdpSource;

/// The UDP sources in flow order, numbered from `first_flow`.
pub(super) fn udp_sources(sc: &Scenario, first_flow: u32) -> Vec<UdpSource> {
    let mut udp = Vec::with_capacity(sc.udp.iter().map(|g| g.count as usize).sum());
    for g in &sc.udp {
        for drawn in &g.drawn {
            let fid = first_flow + udp.len() as u32;
            udp.push(UdpSource {
                flow: fid,
                route: 2 * fid,
                rate_bps: drawn.rate.bps,
                packet_size: g.packet_size.bytes as u32,
                pattern: g.pattern,
                ecn: g.ecn,
                start_ns: drawn.start.ns,
                stop_ns: g.stop.map_or(u64::MAX, |s| s.ns),
                rng: stream(sc.seed, StreamKind::Udp, udp.len() as u64),
                packets_sent: 0,
                bytes_sent: 0,
                bytes_received: 0,
            });
        }
    }
    udp
}
