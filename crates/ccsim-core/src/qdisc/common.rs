//! Helpers shared by several queue disciplines: queue limits resolved at a link, the
//! coded-value histogram of the value-aware disciplines (PVPIE, CSAQM), and the parameter
//! kinds their tables share.

use super::LinkInfo;
use crate::params::Kind;
use crate::scenario::QueueLimit;

/// A positive size, as the "backlog below 2 MTU" guards of PIE and DualPI2 take `mtu`.
pub const POSITIVE_MTU: Kind = Kind::Size {
    what: Some("a positive size like \"1500B\""),
    ok: |b| b > 0,
};

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

const BLOCK: usize = 256;
pub(crate) const CODES: usize = 65536;

/// A histogram of coded values with per-block sums for fast quantiles.
#[derive(Debug, Clone)]
pub(crate) struct ValueHist {
    counts: Vec<u64>,
    blocks: Vec<u64>,
    total: u64,
}

impl ValueHist {
    pub(crate) fn new() -> Self {
        ValueHist {
            counts: vec![0; CODES],
            blocks: vec![0; CODES / BLOCK],
            total: 0,
        }
    }
    #[inline]
    pub(crate) fn add(&mut self, v: u16, w: u64) {
        self.counts[v as usize] += w;
        self.blocks[v as usize / BLOCK] += w;
        self.total += w;
    }
    #[inline]
    pub(crate) fn sub(&mut self, v: u16, w: u64) {
        self.counts[v as usize] -= w;
        self.blocks[v as usize / BLOCK] -= w;
        self.total -= w;
    }
    #[inline]
    pub(crate) fn get(&self, v: u16) -> u64 {
        self.counts[v as usize]
    }
    pub(crate) fn total(&self) -> u64 {
        self.total
    }
    /// The smallest code `v` with `Σ_{i ≤ v} counts[i] ≥ k` (k ≥ 1, k ≤ total).
    pub(crate) fn kth_smallest(&self, k: u64) -> u16 {
        let mut acc = 0;
        for (b, &s) in self.blocks.iter().enumerate() {
            if acc + s >= k {
                for v in b * BLOCK..(b + 1) * BLOCK {
                    acc += self.counts[v];
                    if acc >= k {
                        return v as u16;
                    }
                }
            }
            acc += s;
        }
        u16::MAX
    }
    /// The smallest non-empty code below `below`, if any.
    pub(crate) fn smallest_nonzero_below(&self, below: u32) -> Option<u16> {
        for (b, &s) in self.blocks.iter().enumerate() {
            if (b * BLOCK) as u32 >= below {
                return None;
            }
            if s == 0 {
                continue;
            }
            for v in b * BLOCK..((b + 1) * BLOCK).min(below as usize) {
                if self.counts[v] > 0 {
                    return Some(v as u16);
                }
            }
        }
        None
    }
    /// `argmin_v Σ_{i=v}^{65535} counts[i] ≤ l` (65536 if even the top code exceeds l).
    pub(crate) fn suffix_threshold(&self, l: u64) -> u32 {
        let mut acc = 0u64;
        for b in (0..self.blocks.len()).rev() {
            let s = self.blocks[b];
            if acc + s <= l {
                acc += s;
                continue;
            }
            for v in (b * BLOCK..(b + 1) * BLOCK).rev() {
                acc += self.counts[v];
                if acc > l {
                    return v as u32 + 1;
                }
            }
        }
        0
    }
}
