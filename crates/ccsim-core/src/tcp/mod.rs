//! The TCP endpoints: a Linux-like sender ([`sender`]) and receiver ([`receiver`]).
//!
//! Sequence numbers count MSS-sized segments (segment `n` carries bytes
//! `[n*mss, (n+1)*mss)`; only a finite transfer's last segment is shorter), so the
//! scoreboard is indexed by segment, like Linux's packet-counted `tcp_sock` fields.
//! The three-way handshake is not simulated: both ends know at configuration time whether
//! SACK and ECN are on, and the sender's RTT estimator is seeded with the path's base
//! RTT, as Linux seeds it from the SYN/SYN-ACK exchange. The receive window never limits
//! the sender (paper 003's model assumption (b); Linux autotunes it well past 1 BDP here).

pub mod rack;
pub mod rate;
pub mod receiver;
pub mod rtt;
pub mod sender;
pub mod tlp;

use crate::net::packet::{PacketId, PacketPool};

/// The timer type lives in [`crate::engine::timer`]; re-exported for the endpoints.
pub use crate::engine::timer::{Timer, TimerFire};

/// Per-flow TCP configuration (from the scenario's `[[flows]]` group).
#[derive(Debug, Clone)]
pub struct TcpConfig {
    pub mss: u32,
    pub initial_window: u32,
    pub sack: bool,
    pub ecn: bool,
    pub pacing: bool,
    /// cwnd growth on the ACK that ends fast recovery (Linux's unless asked for ns-3's).
    pub recovery_exit: crate::scenario::RecoveryExit,
    /// RACK time-based loss detection (RFC 8985 §6; Linux `tcp_recovery` bit 0, on by
    /// default); SACK flows only.
    pub rack: bool,
    /// Tail loss probes (RFC 8985 §7; Linux `tcp_early_retrans = 3`, on by default);
    /// SACK flows only.
    pub tlp: bool,
    /// Quick ACKs for two segments after the first CE mark and for a data segment with
    /// CWR (Linux; ns-3 has neither).
    pub ce_quickack: bool,
    pub min_rto_ns: u64,
    pub delayed_ack: bool,
    /// Bytes to transfer; `None` = greedy bulk sender.
    pub total_bytes: Option<u64>,
    /// The congestion controller needs ECT on every packet and a per-packet CE echo
    /// (DCTCP, Linux `TCP_CONG_NEEDS_ECN`); set from the controller at build time.
    pub accurate_ecn: bool,
}

impl TcpConfig {
    /// Number of segments of a finite transfer.
    pub fn total_segments(&self) -> Option<u64> {
        self.total_bytes.map(|b| b.div_ceil(self.mss as u64))
    }

    /// Payload bytes of segment `seg`.
    #[inline]
    pub fn payload_of(&self, seg: u64) -> u32 {
        match self.total_bytes {
            Some(total) => (total - seg * self.mss as u64).min(self.mss as u64) as u32,
            None => self.mss,
        }
    }
}

/// What an endpoint may use while handling an event: the clock, the packet pool and an
/// output list of packets to put on its route (the network sends them after the call).
pub struct TcpIo<'a> {
    pub now_ns: u64,
    pub pool: &'a mut PacketPool,
    pub out: &'a mut Vec<PacketId>,
}
