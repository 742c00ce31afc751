//! A unidirectional link: an egress queue discipline, a transmitter of `rate_bps` and a
//! propagation delay.
//!
//! A packet is dequeued when the transmitter is free, occupies it for its serialisation
//! time, then propagates for `delay_ns`. Packets in propagation wait in a FIFO line
//! (constant delay keeps it ordered), so a link needs one arrival event for the head of
//! the line only, and one transmit-done event only while packets are queued behind the
//! one on the wire: an uncongested link costs one event per packet.

use std::collections::VecDeque;

use crate::engine::rng::SimRng;
use crate::net::packet::PacketId;
use crate::qdisc::Qdisc;
use crate::stats::QueueStats;

/// Index of a link.
pub type LinkId = u32;

/// A link and its queue.
#[derive(Debug)]
pub struct Link {
    pub name: String,
    pub from: u32,
    pub to: u32,
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub qdisc: Qdisc,
    /// The discipline's random stream.
    pub rng: SimRng,
    /// The transmitter is busy until this time.
    pub busy_until_ns: u64,
    /// A `LinkTxDone` event is scheduled.
    pub tx_pending: bool,
    /// A `LinkArrive` event is scheduled for the head of `line`.
    pub arrive_pending: bool,
    /// Packets propagating: (arrival time at `to`, packet).
    pub line: VecDeque<(u64, PacketId)>,
    pub stats: QueueStats,
}
