//! DropTail (FIFO with a tail-drop limit in packets or bytes).
//!
//! Reference: Linux `net/sched/sch_fifo.c`: `pfifo` admits a packet while
//! `qlen < limit`, `bfifo` while `backlog + len <= limit`. Departures from the
//! reference: none. A `"1bdp"` limit is converted to packets of `mtu_bytes`
//! (rounded, at least 1), as papers quote buffers in packets (e.g. paper 003's
//! "BDP of 83 packets" at 10 Mbps x 100 ms).

pub use super::common::{bdp_packets, resolve_limit, Limit};
use super::fifo::{fifo_occupancy, PacketFifo};
use super::{LinkInfo, QdiscCtx, QueueDisc};
use crate::net::packet::PacketId;
use crate::params::{Algorithm, Family, Kind, Param, Reader};
use crate::scenario::{AlgoSpec, QueueLimit, ScenarioError};

/// DropTail's parameters.
pub const TABLE: Algorithm = Algorithm {
    name: "droptail",
    aliases: &["pfifo", "bfifo", "fifo"],
    family: Family::QueueDiscipline,
    summary: "FIFO with tail drop at a packet or byte limit",
    reference: "Linux net/sched/sch_fifo.c (pfifo, bfifo)",
    params: &[Param {
        name: "limit",
        kind: Kind::Limit,
        default: "\"1bdp\"",
        help: "packets (`\"100p\"`: admit while `qlen < limit`) or bytes (`\"150KB\"`: admit while `backlog + size ≤ limit`)",
    }],
};

/// FIFO queue with tail drop.
#[derive(Debug)]
pub struct DropTail {
    limit: Limit,
    fifo: PacketFifo,
}

impl DropTail {
    pub fn new(limit: Limit) -> Self {
        DropTail {
            limit,
            fifo: PacketFifo::default(),
        }
    }

    pub fn from_spec(spec: &AlgoSpec, path: &str, link: LinkInfo) -> Result<Self, ScenarioError> {
        let r = Reader::new(&TABLE, spec, path);
        let limit = r.limit("limit")?.unwrap_or(QueueLimit::Bdp(1.0));
        r.finish()?;
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
