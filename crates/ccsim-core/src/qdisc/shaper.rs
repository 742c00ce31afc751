//! A token-bucket shaper in front of any discipline (DOCSIS 3.0 service-flow QoS
//! parameters "Maximum Sustained Traffic Rate", "Peak Traffic Rate", "Maximum Traffic
//! Burst"; ccsim paper 002 §IV: upstream 5 Mbps sustained, 20 Mbps peak, 10 MB burst;
//! downstream 20 Mbps / 50 Mbps / 20 MB).
//!
//! Model: two token buckets on departures, as Linux `net/sched/sch_tbf.c` with
//! `peakrate` (and the dual bucket of DOCSIS):
//! - the sustained bucket fills at `sustained_bps` up to `burst_bytes`;
//! - the peak bucket fills at `peak_bps` up to `peak_burst_bytes` (default 1522 B, the
//!   DOCSIS peak-rate bucket of one maximum Ethernet frame — second-hand, fact sheet
//!   §10.1; Linux tbf calls it `mtu`/minburst);
//! - the head packet (of `size` bytes) may leave when each bucket holds at least
//!   `min(size, depth)` bytes; leaving takes `size` bytes from both (a bucket may go
//!   negative when a packet is larger than its depth or when the inner discipline
//!   returns a larger packet than the one it showed with `peek`).
//!
//! Both buckets **start full** (fact sheet §10.2/§11 trap 20: the CableLabs model's MTB
//! bucket starts full, "which creates a large initial burst" — paper 002 Fig. 3's peak-rate
//! phase). While tokens are short, `dequeue` returns `None` and `next_ready_ns` gives
//! the time the head packet will conform; the link then retries. `peek`, `len_*`,
//! `held` and the timer hooks delegate to the inner discipline. Token arithmetic is
//! exact (integers in 1/(8·10⁹) byte units).
//!
//! Departures from DOCSIS: the shaper limits departures, not bandwidth *requests*, and
//! there is no request–grant MAC (no MAP intervals, grant jitter or fragmentation; fact
//! sheet §10.2). Departure from Linux tbf: the inner discipline's dequeue (and so
//! CoDel's drop decision and PIE's delay sample) runs when the shaper releases the
//! packet, not when tbf first peeks it.

use super::{Qdisc, QdiscCtx, QueueDisc};
use crate::net::packet::PacketId;

/// Token units per byte: tokens are counted in 1/(8·10⁹) byte, so a rate of `r` bps
/// adds exactly `r` units per nanosecond.
const UNITS_PER_BYTE: i128 = 8_000_000_000;

/// The DOCSIS peak-rate bucket depth (one maximum Ethernet frame with VLAN tag).
pub const DEFAULT_PEAK_BURST_BYTES: u64 = 1522;

#[derive(Debug, Clone, Copy)]
struct Bucket {
    rate_bps: u64,
    depth: i128,
    tokens: i128,
}

impl Bucket {
    fn new(rate_bps: u64, depth_bytes: u64) -> Self {
        let depth = depth_bytes as i128 * UNITS_PER_BYTE;
        Bucket {
            rate_bps,
            depth,
            tokens: depth,
        }
    }
    fn at(&self, elapsed_ns: u64) -> i128 {
        (self.tokens + elapsed_ns as i128 * self.rate_bps as i128).min(self.depth)
    }
    /// Nanoseconds from the last refill until `size` bytes conform.
    fn ready_after(&self, size: u64) -> u64 {
        let need = (size as i128 * UNITS_PER_BYTE).min(self.depth);
        if self.tokens >= need {
            0
        } else {
            let d = need - self.tokens;
            let r = self.rate_bps as i128;
            ((d + r - 1) / r) as u64
        }
    }
}

/// A shaper holding an inner discipline.
#[derive(Debug)]
pub struct Shaped {
    inner: Qdisc,
    sustained: Bucket,
    peak: Option<Bucket>,
    last_ns: u64,
    /// Size of the head packet the last `dequeue` held back (for `next_ready_ns`, which
    /// has no access to the packet pool).
    blocked_size: Option<u64>,
}

impl Shaped {
    /// `burst_bytes` and `peak_burst_bytes` are bucket depths; both buckets start full.
    pub fn new(
        inner: Qdisc,
        sustained_bps: u64,
        burst_bytes: u64,
        peak_bps: Option<u64>,
        peak_burst_bytes: u64,
    ) -> Result<Shaped, String> {
        if sustained_bps == 0 {
            return Err("sustained: expected a positive rate like \"5Mbps\", got 0".into());
        }
        if burst_bytes == 0 {
            return Err("burst: expected a positive size like \"10MB\", got 0".into());
        }
        if let Some(p) = peak_bps {
            if p < sustained_bps {
                return Err(format!(
                    "peak: must be at least the sustained rate ({sustained_bps} bps), got {p} bps"
                ));
            }
            if peak_burst_bytes == 0 {
                return Err("peak_burst: expected a positive size like \"1522B\", got 0".into());
            }
        }
        Ok(Shaped {
            inner,
            sustained: Bucket::new(sustained_bps, burst_bytes),
            peak: peak_bps.map(|p| Bucket::new(p, peak_burst_bytes)),
            last_ns: 0,
            blocked_size: None,
        })
    }

    /// The discipline behind the shaper.
    pub fn inner(&self) -> &Qdisc {
        &self.inner
    }

    pub fn inner_mut(&mut self) -> &mut Qdisc {
        &mut self.inner
    }

    /// Tokens (bytes) in the sustained bucket at `now_ns` (for traces and tests).
    pub fn sustained_tokens_bytes(&self, now_ns: u64) -> f64 {
        self.sustained.at(now_ns.saturating_sub(self.last_ns)) as f64 / UNITS_PER_BYTE as f64
    }

    fn refill(&mut self, now: u64) {
        let dt = now.saturating_sub(self.last_ns);
        self.sustained.tokens = self.sustained.at(dt);
        if let Some(p) = self.peak.as_mut() {
            p.tokens = p.at(dt);
        }
        self.last_ns = self.last_ns.max(now);
    }

    /// Nanoseconds after `last_ns` until `size` bytes conform to both buckets.
    fn wait_ns(&self, size: u64) -> u64 {
        let s = self.sustained.ready_after(size);
        let p = self.peak.map_or(0, |b| b.ready_after(size));
        s.max(p)
    }
}

/// Wrap `inner` in a shaper (the scenario's `[bottleneck] shaper = { sustained, peak,
/// burst }`): sustained rate, optional peak rate (peak bucket depth
/// [`DEFAULT_PEAK_BURST_BYTES`]) and burst (sustained bucket depth), both buckets full
/// at start.
pub fn build_shaped(
    inner: Qdisc,
    sustained_bps: u64,
    peak_bps: Option<u64>,
    burst_bytes: u64,
) -> Result<Qdisc, String> {
    Shaped::new(
        inner,
        sustained_bps,
        burst_bytes,
        peak_bps,
        DEFAULT_PEAK_BURST_BYTES,
    )
    .map(|s| Qdisc::Shaped(Box::new(s)))
}

impl QueueDisc for Shaped {
    #[inline]
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx<'_>) {
        self.inner.enqueue(id, ctx);
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx<'_>) -> Option<PacketId> {
        let head = self.inner.peek()?;
        self.refill(ctx.now_ns);
        let size = ctx.pool.get(head).size_bytes as u64;
        if self.wait_ns(size) > 0 {
            self.blocked_size = Some(size);
            return None;
        }
        self.blocked_size = None;
        let id = self.inner.dequeue(ctx)?;
        let sent = ctx.pool.get(id).size_bytes as i128 * UNITS_PER_BYTE;
        self.sustained.tokens -= sent;
        if let Some(p) = self.peak.as_mut() {
            p.tokens -= sent;
        }
        Some(id)
    }

    fn peek(&self) -> Option<PacketId> {
        self.inner.peek()
    }

    fn len_packets(&self) -> usize {
        self.inner.len_packets()
    }

    fn len_bytes(&self) -> u64 {
        self.inner.len_bytes()
    }

    fn next_ready_ns(&self, now_ns: u64) -> Option<u64> {
        match self.blocked_size {
            Some(size) if self.inner.len_packets() > 0 => {
                Some((self.last_ns + self.wait_ns(size)).max(now_ns))
            }
            _ => self.inner.next_ready_ns(now_ns),
        }
    }

    fn held(&self) -> Vec<PacketId> {
        self.inner.held()
    }

    fn uses_timer(&self) -> bool {
        self.inner.uses_timer()
    }

    fn timer_deadline(&self) -> Option<u64> {
        self.inner.timer_deadline()
    }

    fn on_timer(&mut self, ctx: &mut QdiscCtx<'_>) {
        self.inner.on_timer(ctx);
    }
}
