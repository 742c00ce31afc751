//! A unidirectional link: an egress queue discipline, a transmitter of `rate_bps` and a
//! propagation delay.
//!
//! A packet is dequeued when the transmitter is free, occupies it for its serialisation
//! time, then propagates for `delay_ns`. Propagation happens in a [`DelayLine`] shared by
//! every link with the same delay: packets leave a line in arrival-time order, so the
//! event queue holds one event per distinct delay rather than one per link (a dumbbell
//! with a thousand flows of equal RTT needs a handful). A link needs a transmit-done
//! event only while packets are queued behind the one on the wire: an uncongested link
//! costs one event per packet. A link without propagation delay skips the line: its
//! packet arrives when its transmission ends, at the transmit-done event, so a busy
//! zero-delay link (a bottleneck whose delay sits on the access links) also costs one
//! event per packet.

use std::collections::VecDeque;

use crate::engine::rng::SimRng;
use crate::net::packet::PacketId;
use crate::qdisc::Qdisc;
use crate::stats::QueueStats;

/// Index of a link.
pub type LinkId = u32;

/// A link and its queue.
///
/// Laid out by hand (`repr(C)`, cache-line aligned) so that what every packet touches,
/// the transmitter state, the discipline and the departure counters, fills the first
/// three cache lines and the rest (name, random stream, timer) comes after: a scenario
/// with thousands of access links cannot keep them all in cache, so each traversal
/// should miss as few lines as possible.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Link {
    pub rate_bps: u64,
    pub delay_ns: u64,
    /// The transmitter is busy until this time.
    pub busy_until_ns: u64,
    /// A zero-delay link's packet on the wire: it reaches the far end when its
    /// transmission ends, at the `LinkTxDone` event that frees the transmitter, so such a
    /// link costs one event per packet instead of a transmit-done and a line arrival.
    pub in_flight: Option<LineEntry>,
    /// The [`DelayLine`] this link propagates through (unused by zero-delay links).
    pub line: u32,
    /// A `LinkTxDone` event is scheduled.
    pub tx_pending: bool,
    /// The discipline uses timers (`QueueDisc::uses_timer`), and its timer.
    pub qdisc_uses_timer: bool,
    pub qdisc: Qdisc,
    pub stats: QueueStats,
    pub qdisc_timer: crate::engine::Timer,
    /// The discipline's random stream.
    pub rng: SimRng,
    pub name: String,
    pub from: u32,
    pub to: u32,
    /// The pcapng interface this link's departures are captured on, or [`NO_PCAP`].
    pub pcap_iface: u32,
    /// Random loss on the wire, if the scenario gives the link one.
    pub loss: Option<crate::net::link_model::LinkLoss>,
    /// Delay jitter, if the scenario gives the link one: its packets propagate through a
    /// delay line of the link's own, even with no propagation delay.
    pub jitter: Option<crate::net::link_model::LinkJitter>,
}

/// A link whose packets are not captured.
pub const NO_PCAP: u32 = u32::MAX;

impl Link {
    /// Nothing on the wire, nothing pending: a packet arriving `now` can start at once.
    #[inline]
    pub fn is_idle(&self, now: u64) -> bool {
        !self.tx_pending && self.in_flight.is_none() && now >= self.busy_until_ns
    }

    /// Bytes this link has serialised by `now_ns`. A departure is booked whole when its
    /// transmission starts; the packet still on the wire counts only by the part already
    /// sent, so bytes over any interval never exceed what the rate allows (utilisation
    /// <= 1 at the window's and the ticks' edges).
    pub fn bytes_serialised(&self, now_ns: u64) -> f64 {
        let unsent_ns = self.busy_until_ns.saturating_sub(now_ns);
        self.stats.bytes_departed as f64 - unsent_ns as f64 * self.rate_bps as f64 / 8e9
    }
}

/// Where a propagating packet goes at the far end: the next link on its route, or, with
/// [`Next::ENDPOINT`] set, the endpoint of flow `value & !ENDPOINT`. Recorded when the
/// packet enters the line so the line can prefetch what the arrival will touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Next(pub u32);

impl Next {
    pub const ENDPOINT: u32 = 1 << 31;
}

/// A packet in a delay line.
#[derive(Debug, Clone, Copy)]
pub struct LineEntry {
    pub arrive_ns: u64,
    pub id: PacketId,
    pub next: Next,
}

/// Packets propagating over every link with one delay value, in arrival-time order.
#[derive(Debug, Default)]
pub struct DelayLine {
    pub delay_ns: u64,
    /// Packets in arrival-time order.
    pub queue: VecDeque<LineEntry>,
    /// Time of the scheduled arrival event for the head, if any.
    pub event_at: Option<u64>,
}

impl DelayLine {
    /// Insert in arrival order. Entries come nearly sorted (they differ only by the
    /// links' serialisation times), so the backward scan is short; equal times keep
    /// insertion order. Returns true when the packet became the new head.
    #[inline]
    pub fn push(&mut self, e: LineEntry) -> bool {
        let mut pos = self.queue.len();
        while pos > 0 && self.queue[pos - 1].arrive_ns > e.arrive_ns {
            pos -= 1;
        }
        if pos == self.queue.len() {
            self.queue.push_back(e);
        } else {
            self.queue.insert(pos, e);
        }
        pos == 0
    }
}
