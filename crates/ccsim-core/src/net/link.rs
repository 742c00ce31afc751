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
use crate::engine::serialisation_ns;
use crate::net::packet::PacketId;
use crate::qdisc::Qdisc;
use crate::stats::QueueStats;

/// Index of a link.
pub type LinkId = u32;

/// A link and its queue.
///
/// Laid out by hand (`repr(C)`, cache-line aligned) so that what every packet touches,
/// the transmitter state, the discipline and the departure counters, fills the first
/// three cache lines and the rest (name, random stream, timer, the link models and the
/// re-timing state) comes after: a scenario with thousands of access links cannot keep
/// them all in cache, so each traversal should miss as few lines as possible. A plain
/// link (no loss, jitter or rate change: `models == 0`) touches nothing past the
/// departure counters; a modelled one goes through `datapath`'s out-of-line path.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Link {
    pub rate_bps: u64,
    pub delay_ns: u64,
    /// The transmitter is busy until this time.
    pub busy_until_ns: u64,
    /// A zero-delay link's packet on the wire (its `id` is [`NO_PACKET`] when there is
    /// none; see [`Link::in_flight`]): it reaches the far end when its transmission ends,
    /// at the `LinkTxDone` event that frees the transmitter, so such a link costs one
    /// event per packet instead of a transmit-done and a line arrival. Not an `Option`:
    /// its 8 bytes of tag would push `in_service_bytes` out of this cache line.
    pub in_flight_entry: LineEntry,
    /// The [`DelayLine`] this link propagates through (unused by zero-delay links).
    pub line: u32,
    /// Size of the packet last put on the transmitter: with `busy_until_ns` and the
    /// (constant) rate it tells exactly how much of it is still unsent, so a plain link
    /// keeps no [`InService`] record per packet.
    pub in_service_bytes: u32,
    /// The pcapng interface this link's departures are captured on, or [`NO_PCAP`].
    pub pcap_iface: u32,
    /// A `LinkTxDone` event is scheduled.
    pub tx_pending: bool,
    /// The discipline uses timers (`QueueDisc::uses_timer`), and its timer.
    pub qdisc_uses_timer: bool,
    /// What the link does beyond a constant-rate wire ([`MODEL_LOSS`], [`MODEL_JITTER`],
    /// [`MODEL_RETIMED`]); 0 keeps every packet on the plain path.
    pub models: u8,
    pub qdisc: Qdisc,
    pub stats: QueueStats,
    pub qdisc_timer: crate::engine::Timer,
    /// The discipline's random stream.
    pub rng: SimRng,
    pub name: String,
    pub from: u32,
    pub to: u32,
    /// Random loss on the wire, if the scenario gives the link one.
    pub loss: Option<crate::net::link_model::LinkLoss>,
    /// The packet on the transmitter, as a rate change re-times it (kept only on a link
    /// with [`MODEL_RETIMED`] or another model; see [`Link::unsent_bits_e9`]).
    pub service: InService,
    /// The capacity offered so far (for utilisation under rate changes and outages).
    pub offered: OfferedCapacity,
    /// Delay jitter, if the scenario gives the link one: its packets propagate through a
    /// delay line of the link's own, even with no propagation delay.
    pub jitter: Option<crate::net::link_model::LinkJitter>,
    /// A Mahimahi trace that decides when packets leave instead of the rate
    /// ([`crate::net::link_model::mahimahi`]); `rate_bps` stays the nominal rate the queue
    /// discipline and BDP-sized limits use.
    pub trace: Option<Box<crate::net::link_model::mahimahi::TraceService>>,
}

/// [`Link::models`]: the link loses packets on the wire.
pub const MODEL_LOSS: u8 = 1;
/// [`Link::models`]: the link jitters its packets' delay.
pub const MODEL_JITTER: u8 = 2;
/// [`Link::models`]: the link's rate changes during the run (its packet on the
/// transmitter may be re-timed, so it is recorded in [`Link::service`]).
pub const MODEL_RETIMED: u8 = 4;
/// [`Link::models`]: the link delivers at a trace's opportunities ([`Link::trace`]).
pub const MODEL_TRACE: u8 = 8;

/// No packet on a zero-delay link's wire ([`Link::in_flight_entry`]).
pub const NO_LINE_ENTRY: LineEntry = LineEntry {
    arrive_ns: 0,
    id: NO_PACKET,
    next: Next(0),
};

/// The packet on the transmitter, kept so that a rate change can re-time it as a real
/// link would: the bits already sent at the old rate count, the rest go at the new one,
/// and at zero rate (an outage) it waits. Without this the packet kept the serialisation
/// time of the rate it started at (seconds, after a step down to a low rate).
#[derive(Debug, Default)]
pub struct InService {
    /// The packet, or [`NO_PACKET`] when it was lost on the wire (it still occupies the
    /// transmitter, but no delay-line entry follows its end).
    pub id: PacketId,
    /// Since when the rate now in force has been sending it, and the bits left to send
    /// then, times 10^9 (bit-nanoseconds per second: exact, so that a re-timing loses no
    /// fraction of a bit and the end it computes equals the serialisation time's).
    pub since_ns: u64,
    pub unsent_bits_e9: u128,
    /// Its delay-line entry while an outage holds it (out of the line: its arrival time
    /// is unknown until the link comes back).
    pub held: Option<LineEntry>,
    /// Times of transmit-done events that a re-timing superseded: ignored when they fire.
    pub stale_tx_done_ns: Vec<u64>,
}

/// The capacity a link offered since the run began, integrated over its rate changes and
/// outages: `offered_bits_e9` up to `since_ns` (when the rate last changed), in bits times
/// 10^9; the rate in force since adds the rest.
#[derive(Debug, Default)]
pub struct OfferedCapacity {
    pub since_ns: u64,
    pub offered_bits_e9: u128,
    /// The rate changes during the run (set when the changes are scheduled, and by any
    /// change): utilisation comes from [`CapacityMeter`]s (a constant-rate link keeps its
    /// historical float formula).
    pub rate_changed: bool,
}

/// What a link had carried and offered from time 0 to a moment, exactly, in bits times
/// 10^9 (integers: the utilisation between two meters is one rounding of a ratio of
/// integers whose numerator cannot exceed its denominator, so it cannot exceed 1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CapacityMeter {
    pub carried_bits_e9: u128,
    pub offered_bits_e9: u128,
}

impl CapacityMeter {
    /// Bits carried over bits offered from `self` to `later` (0 when nothing was offered:
    /// the whole interval an outage).
    pub fn utilisation_to(self, later: CapacityMeter) -> f64 {
        let offered = later.offered_bits_e9 - self.offered_bits_e9;
        if offered == 0 {
            return 0.0;
        }
        // A re-timing never lowers the carried count (exact arithmetic), and the carried
        // count grows no faster than the rate: carried <= offered.
        (later.carried_bits_e9 - self.carried_bits_e9) as f64 / offered as f64
    }
}

/// No packet: the one on the transmitter was lost on the wire.
pub const NO_PACKET: PacketId = PacketId::MAX;

/// The transmitter's end time while an outage holds its packet.
pub const HELD_NS: u64 = u64::MAX;

/// A link whose packets are not captured.
pub const NO_PCAP: u32 = u32::MAX;

impl Link {
    /// Nothing on the wire, nothing pending, not in an outage: a packet arriving `now`
    /// can start at once.
    #[inline]
    pub fn is_idle(&self, now: u64) -> bool {
        !self.tx_pending && !self.has_in_flight() && now >= self.busy_until_ns && self.rate_bps > 0
    }

    /// A zero-delay link's packet on the wire, if any.
    #[inline]
    pub fn in_flight(&self) -> Option<LineEntry> {
        self.has_in_flight().then_some(self.in_flight_entry)
    }

    /// Whether a zero-delay link has a packet on the wire.
    #[inline]
    pub fn has_in_flight(&self) -> bool {
        self.in_flight_entry.id != NO_PACKET
    }

    /// Take a zero-delay link's packet off the wire.
    #[inline]
    pub fn take_in_flight(&mut self) -> Option<LineEntry> {
        let e = self.in_flight();
        self.in_flight_entry.id = NO_PACKET;
        e
    }

    /// The link models flags its loss and jitter call for (set once the link is built).
    pub fn sync_models(&mut self) {
        let mut m = self.models & MODEL_RETIMED;
        if self.loss.is_some() {
            m |= MODEL_LOSS;
        }
        if self.jitter.is_some() {
            m |= MODEL_JITTER;
        }
        if self.trace.is_some() {
            m |= MODEL_TRACE;
            // Utilisation against the opportunities offered ([`Link::capacity_meter`]).
            self.offered.rate_changed = true;
        }
        self.models = m;
    }

    /// The link's rate will change during the run: record its packet on the transmitter
    /// for re-timing, and measure its utilisation against the capacity offered from the
    /// start (its every interval, before the first change too).
    pub fn expect_rate_changes(&mut self) {
        self.models |= MODEL_RETIMED;
        self.offered.rate_changed = true;
    }

    /// Bytes this link has serialised by `now_ns`. A departure is booked whole when its
    /// transmission starts; the packet still on the wire counts only by the part already
    /// sent, so bytes over any interval never exceed what the rate allows (utilisation
    /// <= 1 at the window's and the ticks' edges).
    pub fn bytes_serialised(&self, now_ns: u64) -> f64 {
        if self.offered.rate_changed {
            // Exact, as the meter: after a re-timing `busy_until_ns` no longer tells how
            // much of the packet on the transmitter is sent (in an outage it is `HELD_NS`).
            return (self.stats.bytes_departed as u128 * 8 * E9 - self.unsent_bits_e9(now_ns))
                as f64
                / 8e9;
        }
        let unsent_ns = self.busy_until_ns.saturating_sub(now_ns);
        self.stats.bytes_departed as f64 - unsent_ns as f64 * self.rate_bps as f64 / 8e9
    }
}

const E9: u128 = 1_000_000_000;

impl Link {
    /// Bits of the packet on the transmitter still to send at `now_ns`, times 10^9 (0 when
    /// it is all sent).
    pub fn unsent_bits_e9(&self, now_ns: u64) -> u128 {
        if self.models == 0 {
            // A plain link's rate never changed: its packet started `serialisation_ns`
            // before `busy_until_ns`, which gives the same integers as the record a
            // modelled link keeps (`InService`), at no cost per packet.
            if now_ns >= self.busy_until_ns {
                return 0;
            }
            let bits_e9 = self.in_service_bytes as u128 * 8 * E9;
            let start_ns =
                self.busy_until_ns - serialisation_ns(self.in_service_bytes, self.rate_bps);
            let sent = (now_ns - start_ns) as u128 * self.rate_bps as u128;
            return bits_e9.saturating_sub(sent);
        }
        if let Some(trace) = &self.trace {
            // A trace link carries its packets opportunity by opportunity: what it has not
            // carried before `now_ns` is what opportunities at or after it take (whatever
            // the order of events at one instant), so the bits carried over any interval
            // never exceed the opportunities offered in it.
            return trace.pending_bytes(now_ns) as u128 * 8 * E9;
        }
        let s = &self.service;
        let sent = now_ns.saturating_sub(s.since_ns) as u128 * self.rate_bps as u128;
        s.unsent_bits_e9.saturating_sub(sent)
    }

    /// The link's carried and offered bits from time 0 to `now_ns`.
    pub fn capacity_meter(&self, now_ns: u64) -> CapacityMeter {
        let o = &self.offered;
        let offered_bits_e9 = match &self.trace {
            Some(t) => t.offered_bits_e9(now_ns),
            None => o.offered_bits_e9 + (now_ns - o.since_ns) as u128 * self.rate_bps as u128,
        };
        CapacityMeter {
            carried_bits_e9: self.stats.bytes_departed as u128 * 8 * E9
                - self.unsent_bits_e9(now_ns),
            offered_bits_e9,
        }
    }

    /// Utilisation between two moments: bits serialised (`serialised_bytes`, the
    /// difference of [`Link::bytes_serialised`]) over the capacity offered. A link whose
    /// rate changed (or stopped) uses the meters' exact ratio, which cannot exceed 1. A
    /// constant-rate link keeps the float formula of earlier releases, its rate times
    /// `interval_s`, byte for byte, except where that formula lands a few ulps above 1 on
    /// a link busy all interval (1 + 3e-14 seen in the examples' `queue_series`, 1 + 2e-16
    /// in summaries of the example sweeps): there the meters' exact ratio decides.
    pub fn utilisation(
        &self,
        serialised_bytes: f64,
        interval_s: f64,
        (m0, m1): (CapacityMeter, CapacityMeter),
    ) -> f64 {
        if !self.offered.rate_changed {
            let utilisation = serialised_bytes * 8.0 / (self.rate_bps as f64 * interval_s);
            // A link busy for the whole interval lands a few ulps above 1 in floating
            // point (1 + 2e-16 in a summary, 1 + 3e-14 in a series tick); the exact integer
            // ratio cannot exceed 1, so it decides there, and every other value keeps the
            // float formula's bytes (a NaN of an empty interval included).
            if utilisation <= 1.0 || utilisation.is_nan() {
                return utilisation;
            }
        }
        m0.utilisation_to(m1)
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
