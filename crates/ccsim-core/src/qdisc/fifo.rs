//! The packet storage most disciplines share: a FIFO of packet ids with its byte count.

use std::collections::VecDeque;

use crate::net::packet::{PacketId, PacketPool};

/// A FIFO of packets and the bytes they hold.
#[derive(Debug, Default)]
pub struct PacketFifo {
    queue: VecDeque<PacketId>,
    bytes: u64,
}

impl PacketFifo {
    /// Append a packet of `size_bytes`.
    #[inline]
    pub fn push(&mut self, id: PacketId, size_bytes: u64) {
        self.queue.push_back(id);
        self.bytes += size_bytes;
    }

    /// Remove the head packet (its size is read from the pool).
    #[inline]
    pub fn pop(&mut self, pool: &PacketPool) -> Option<PacketId> {
        let id = self.queue.pop_front()?;
        self.bytes -= pool.get(id).size_bytes as u64;
        Some(id)
    }

    #[inline]
    pub fn peek(&self) -> Option<PacketId> {
        self.queue.front().copied()
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Every packet held, head first.
    pub fn held(&self) -> Vec<PacketId> {
        self.queue.iter().copied().collect()
    }
}

/// The occupancy methods of [`QueueDisc`](super::QueueDisc) (`peek`, `len_packets`,
/// `len_bytes`, `held`) for a discipline that keeps its packets in a [`PacketFifo`]
/// field: `fifo_occupancy!(fifo);` inside its `impl QueueDisc`.
macro_rules! fifo_occupancy {
    ($field:ident) => {
        fn peek(&self) -> Option<PacketId> {
            self.$field.peek()
        }

        fn len_packets(&self) -> usize {
            self.$field.len()
        }

        fn len_bytes(&self) -> u64 {
            self.$field.bytes()
        }

        fn held(&self) -> Vec<PacketId> {
            self.$field.held()
        }
    };
}
pub(crate) use fifo_occupancy;
