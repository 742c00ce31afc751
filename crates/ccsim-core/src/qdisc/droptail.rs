//! DropTail (FIFO with a tail-drop limit in packets or bytes).
//!
//! Reference: Linux `net/sched/sch_fifo.c`: `pfifo` admits a packet while
//! `qlen < limit`, `bfifo` while `backlog + len <= limit`. Departures from the
//! reference: none. A `"1bdp"` limit is converted to packets of `mtu_bytes`
//! (rounded, at least 1), as papers quote buffers in packets (e.g. paper 003's
//! "BDP of 83 packets" at 10 Mbps x 100 ms).

use super::fifo::{fifo_occupancy, PacketFifo};
use super::{LinkInfo, Params, QdiscCtx, QueueDisc};
use crate::net::packet::PacketId;
use crate::scenario::{AlgoSpec, QueueLimit, ScenarioError};

/// The tail-drop limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

impl Limit {
    /// Whether a queue of `len` packets and `bytes` can take a packet of `size` bytes.
    #[inline]
    pub fn admits(self, len: usize, bytes: u64, size: u64) -> bool {
        match self {
            Limit::Packets(n) => (len as u64) < n,
            Limit::Bytes(b) => bytes + size <= b,
        }
    }
}

/// FIFO queue with tail drop.
#[derive(Debug)]
pub struct DropTail {
    limit: Limit,
    fifo: PacketFifo,
}

/// Resolve a [`QueueLimit`] at a link.
pub fn resolve_limit(limit: QueueLimit, link: LinkInfo) -> Limit {
    match limit {
        QueueLimit::Packets(n) => Limit::Packets(n),
        QueueLimit::Bytes(b) => Limit::Bytes(b),
        QueueLimit::Bdp(f) => Limit::Packets(bdp_packets(f, link)),
    }
}

/// `f` bandwidth-delay products in whole MTU-sized packets (at least one).
pub fn bdp_packets(f: f64, link: LinkInfo) -> u64 {
    ((f * link.bdp_bytes) / link.mtu_bytes as f64)
        .round()
        .max(1.0) as u64
}

impl DropTail {
    pub fn new(limit: Limit) -> Self {
        DropTail {
            limit,
            fifo: PacketFifo::default(),
        }
    }

    pub fn from_spec(spec: &AlgoSpec, path: &str, link: LinkInfo) -> Result<Self, ScenarioError> {
        let mut p = Params::new(spec, path);
        let limit = p.parsed("limit", QueueLimit::Bdp(1.0), QueueLimit::parse)?;
        p.finish(&["limit"])?;
        Ok(DropTail::new(resolve_limit(limit, link)))
    }

    pub fn limit(&self) -> Limit {
        self.limit
    }

    /// Whether a packet of `size_bytes` arriving now fits under the limit.
    #[inline]
    pub fn admits(&self, size_bytes: u64) -> bool {
        self.limit
            .admits(self.fifo.len(), self.fifo.bytes(), size_bytes)
    }
}

impl QueueDisc for DropTail {
    #[inline]
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx<'_>) {
        let size = ctx.pool.get(id).size_bytes as u64;
        if self.admits(size) {
            self.fifo.push(id, size);
        } else {
            ctx.drop_packet(id);
        }
    }

    #[inline]
    fn dequeue(&mut self, ctx: &mut QdiscCtx<'_>) -> Option<PacketId> {
        let id = self.fifo.pop(ctx.pool)?;
        Some(id)
    }

    fifo_occupancy!(fifo);
}
