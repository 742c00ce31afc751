//! Packets and the packet pool.
//!
//! Packets live in a pool and are passed around by [`PacketId`]; a freed slot is reused,
//! so the steady state allocates nothing per packet.

/// The IP ECN field (RFC 3168 §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Ecn {
    #[default]
    NotEct = 0,
    Ect1 = 1,
    Ect0 = 2,
    Ce = 3,
}

impl Ecn {
    /// ECN-capable transport (ECT(0), ECT(1), or already CE).
    #[inline]
    pub fn is_ect(self) -> bool {
        self != Ecn::NotEct
    }
}

/// What a packet carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum PacketKind {
    #[default]
    TcpData = 0,
    TcpAck = 1,
    Udp = 2,
}

/// TCP header flags we model.
pub mod tcp_flags {
    /// ECN-Echo (RFC 3168 §6.1).
    pub const ECE: u8 = 1;
    /// Congestion Window Reduced (RFC 3168 §6.1).
    pub const CWR: u8 = 2;
}

/// Maximum SACK blocks carried in one ACK (3 with the timestamp option, RFC 2018 §3).
pub const MAX_SACK_BLOCKS: usize = 3;

/// IPv4 (20) + TCP (20) + timestamp option (12) header bytes.
pub const TCP_IP_HEADER_BYTES: u32 = 52;

/// A packet. Sequence numbers count MSS-sized segments (segment `n` carries bytes
/// `[n*mss, (n+1)*mss)` of the flow), so SACK blocks and ACKs are in segments too.
///
/// Aligned to a cache line: at its natural 56-byte stride three of four packets in the
/// pool would straddle two lines, and a packet is touched at every hop, mostly after
/// waiting long enough in a queue or delay line to have left the cache.
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(64))]
pub struct Packet {
    /// Bytes on the wire (headers included).
    pub size_bytes: u32,
    /// Application payload bytes (0 for a pure ACK).
    pub payload_bytes: u32,
    /// Flow index (TCP flows first, then UDP sources).
    pub flow: u32,
    /// Route index and the hop the packet is on.
    pub route: u32,
    pub hop: u16,
    pub kind: PacketKind,
    pub ecn: Ecn,
    pub tcp_flags: u8,
    pub n_sack: u8,
    /// Per Packet Value (coded), set by an edge marker; 0 when unmarked.
    pub value: u16,
    /// TCP: the flow's connection number (closed-loop repeated transfers open a new
    /// connection each time; a late packet of an earlier one is discarded on arrival).
    pub conn: u32,
    /// Data: segment number. ACK: cumulative ACK (next expected segment).
    pub seq: u64,
    /// Timestamp option (RFC 7323): sender's clock and the echoed value, ns.
    pub ts_val: u64,
    pub ts_ecr: u64,
    /// When the packet entered the queue it is in (for sojourn time).
    pub enqueue_ns: u64,
}

/// SACK blocks `[start, end)` in segments, most recent first. Kept beside the packet
/// (only ACKs carry them) so that [`Packet`] stays within one cache line.
pub type SackBlocks = [(u64, u64); MAX_SACK_BLOCKS];

/// Index of a packet in the [`PacketPool`].
pub type PacketId = u32;

/// Slab of packets with a free list.
#[derive(Debug, Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    sacks: Vec<SackBlocks>,
    free: Vec<PacketId>,
    live: usize,
}

impl PacketPool {
    pub fn new() -> Self {
        Self::default()
    }

    /// Store `p` and return its id.
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        self.live += 1;
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = p;
            id
        } else {
            self.slots.push(p);
            self.sacks.push(SackBlocks::default());
            (self.slots.len() - 1) as PacketId
        }
    }

    /// Return a packet's slot to the pool.
    #[inline]
    pub fn free(&mut self, id: PacketId) {
        self.live -= 1;
        self.free.push(id);
    }

    /// Hint the CPU to load a packet that will be touched soon. Packets wait milliseconds
    /// in queues and propagation lines, so their first touch afterwards is a cache miss;
    /// the lines and queues know which packet comes next and prefetch it.
    #[inline]
    pub fn prefetch(&self, id: PacketId) {
        if let Some(p) = self.slots.get(id as usize) {
            prefetch_read(p);
        }
    }

    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id as usize]
    }

    /// The SACK blocks of an ACK (the first `n_sack` are valid).
    #[inline]
    pub fn sack(&self, id: PacketId) -> &SackBlocks {
        &self.sacks[id as usize]
    }

    #[inline]
    pub fn sack_mut(&mut self, id: PacketId) -> &mut SackBlocks {
        &mut self.sacks[id as usize]
    }

    /// Packets currently allocated.
    pub fn live(&self) -> usize {
        self.live
    }
}

/// Ask the CPU to bring `value`'s cache line closer; a no-op off x86-64.
#[inline(always)]
pub fn prefetch_read<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: PREFETCHT0 is a hint: it never faults, reads no value into the program
        // and writes nothing, and SSE is part of the x86-64 baseline. The pointer comes
        // from a live reference, so it is valid anyway.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(value as *const T as *const i8) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
