//! The TCP endpoints: a Linux-like sender ([`sender`]) and receiver ([`receiver`]).
//!
//! Sequence numbers count MSS-sized segments (segment `n` carries bytes
//! `[n*mss, (n+1)*mss)`; only a finite transfer's last segment is shorter), so the
//! scoreboard is indexed by segment, like Linux's packet-counted `tcp_sock` fields.
//! The three-way handshake is not simulated: both ends know at configuration time whether
//! SACK and ECN are on, and the sender's RTT estimator is seeded with the path's base
//! RTT, as Linux seeds it from the SYN/SYN-ACK exchange. The receive window never limits
//! the sender (paper 003's model assumption (b); Linux autotunes it well past 1 BDP here).

pub mod rate;
pub mod receiver;
pub mod rtt;
pub mod sender;

use crate::net::packet::{PacketId, PacketPool};

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

/// A timer re-armed lazily: moving the deadline later schedules nothing; the pending
/// event notices the new deadline when it fires and re-schedules itself. This keeps the
/// event queue small although Linux re-arms the RTO on nearly every ACK.
#[derive(Debug, Clone, Copy, Default)]
pub struct Timer {
    deadline: Option<u64>,
    scheduled: Option<u64>,
}

/// What to do with a timer event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerFire {
    /// A superseded event: ignore.
    Stale,
    /// The deadline moved later: schedule an event at this time.
    Reschedule(u64),
    /// Due: run the handler.
    Fire,
}

impl Timer {
    #[inline]
    pub fn arm(&mut self, at_ns: u64) {
        self.deadline = Some(at_ns);
    }
    #[inline]
    pub fn cancel(&mut self) {
        self.deadline = None;
    }
    #[inline]
    pub fn is_armed(&self) -> bool {
        self.deadline.is_some()
    }
    pub fn deadline(&self) -> Option<u64> {
        self.deadline
    }
    /// After a handler ran: the time of an event to schedule, if one is needed.
    #[inline]
    pub fn sync(&mut self) -> Option<u64> {
        let d = self.deadline?;
        match self.scheduled {
            Some(s) if s <= d => None,
            _ => {
                self.scheduled = Some(d);
                Some(d)
            }
        }
    }
    /// An event for this timer fired at `now_ns`.
    #[inline]
    pub fn on_event(&mut self, now_ns: u64) -> TimerFire {
        if self.scheduled != Some(now_ns) {
            return TimerFire::Stale;
        }
        self.scheduled = None;
        match self.deadline {
            None => TimerFire::Stale,
            Some(d) if d > now_ns => {
                self.scheduled = Some(d);
                TimerFire::Reschedule(d)
            }
            Some(_) => {
                self.deadline = None;
                TimerFire::Fire
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_moves_later_without_new_events() {
        let mut t = Timer::default();
        t.arm(100);
        assert_eq!(t.sync(), Some(100));
        t.arm(150);
        assert_eq!(t.sync(), None, "a later deadline reuses the pending event");
        assert_eq!(t.on_event(100), TimerFire::Reschedule(150));
        assert_eq!(t.on_event(150), TimerFire::Fire);
        assert!(!t.is_armed());
    }

    #[test]
    fn timer_moved_earlier_schedules_again_and_old_event_is_stale() {
        let mut t = Timer::default();
        t.arm(100);
        assert_eq!(t.sync(), Some(100));
        t.arm(50);
        assert_eq!(t.sync(), Some(50));
        assert_eq!(t.on_event(50), TimerFire::Fire);
        assert_eq!(t.on_event(100), TimerFire::Stale);
    }

    #[test]
    fn cancelled_timer_does_not_fire() {
        let mut t = Timer::default();
        t.arm(10);
        t.sync();
        t.cancel();
        assert_eq!(t.on_event(10), TimerFire::Stale);
    }
}
