//! PVPIE: PIE's controller driving a packet-value threshold (Laki, Gombos, Nádas,
//! Turányi, "Take Your Own Share of the PIE", ANRW 2017; the baseline of ccsim paper 001,
//! whose §2 describes it: "it also uses a controller to determine the drop probability
//! from the current and target queuing delay values, but instead of applying packet
//! drops uniformly at random, the calculated probability is transformed to a CTV by
//! taking the empirical probability distribution of PVs carried by the packets observed
//! in a given time frame. Then all the packets with PV less than this CTV are dropped").
//!
//! - The drop probability `p` comes from [`super::pie::PieController`] with all of PIE's
//!   parameters (same names and defaults as `kind = "pie"`, variant `rfc8033` unless
//!   given; `preset` works too), updated every `tupdate`.
//! - After each update the congestion threshold value is recomputed as the p-quantile of
//!   the coded values of the packets that arrived in the last `window`:
//!   with the `n` values sorted `x₁ ≤ … ≤ xₙ`, `CTV = x_k`, `k = ⌈p·n⌉` (`CTV = 0`
//!   when `p = 0` or no arrivals; all packets when `k > n`, only possible if p > 1).
//!   Dropping `PV < CTV` then drops a fraction just under `p` of recent arrivals (ties
//!   at `CTV` are kept: a drop fraction of at most `p`).
//! - An arrival is exempt while PIE's guards hold (burst allowance, early-drop guard);
//!   otherwise a packet with coded value `< CTV` is CE-marked if ECT and marking is
//!   allowed (`ecn`, and `ecn_drop_threshold` if set), else dropped. Tail drop at
//!   `limit`.
//!
//! Choices where the papers leave details open:
//! - `window` = 100 ms of arrivals (the length used by the one public PVPIE model the
//!   fact sheet describes), counted per packet, not per byte, so that the dropped
//!   fraction matches PIE's per-packet p.
//! - Every arrival enters the window, including those that are then dropped (they are
//!   "packets observed").
//! - The CTV is recomputed at each probability update, not per packet.
//! - Comparison is `PV < CTV` → drop (the fact sheet notes that the public ns-3 module
//!   drops `PV ≥ CTV`, which inverts the policy; not reproduced).
//! - Defaults that differ from `kind = "pie"`: `ecn = true` (paper 001 runs PVPIE with
//!   ECN-capable CUBIC and DCTCP; "it is trivial to extend its behavior to ECN marking"),
//!   `ecn_drop_threshold = false`, `clamp_prob = true` (p is a quantile level in [0, 1]).
//!   PIE's `bytemode` and `derandomize` do not apply (the decision is deterministic).

use std::collections::VecDeque;

use super::codel::positive_duration;
use super::fifo::{fifo_occupancy, PacketFifo};
use super::pie::{parse_pie_config, PieConfig, PieController, PIE_KEYS};
use super::{LinkInfo, Params, QdiscCtx, QueueDisc};
use crate::net::packet::PacketId;
use crate::scenario::{AlgoSpec, ScenarioError, SimDuration};

const BLOCK: usize = 256;
const CODES: usize = 65536;

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

/// PVPIE.
#[derive(Debug)]
pub struct PvPie {
    ctrl: PieController,
    window_ns: u64,
    arrivals: VecDeque<(u64, u16)>,
    hist: ValueHist,
    /// Packets with coded value below this are dropped or marked (65536 = all).
    ctv: u32,
    fifo: PacketFifo,
}

impl PvPie {
    pub fn new(cfg: PieConfig, window_ns: u64) -> Self {
        PvPie {
            ctrl: PieController::new(cfg),
            window_ns,
            arrivals: VecDeque::new(),
            hist: ValueHist::new(),
            ctv: 0,
            fifo: PacketFifo::default(),
        }
    }

    pub fn from_spec(spec: &AlgoSpec, path: &str, link: LinkInfo) -> Result<Self, ScenarioError> {
        let mut p = Params::new(spec, path);
        let cfg = parse_pie_config(spec, path, &mut p, link, true)?;
        let window = p.parsed("window", SimDuration { ns: 100_000_000 }, positive_duration)?;
        let keys: Vec<&str> = PIE_KEYS
            .iter()
            .copied()
            .filter(|k| !matches!(*k, "bytemode" | "derandomize"))
            .chain(std::iter::once("window"))
            .collect();
        p.finish(&keys)?;
        Ok(PvPie::new(cfg, window.ns))
    }

    pub fn controller(&self) -> &PieController {
        &self.ctrl
    }

    pub fn controller_mut(&mut self) -> &mut PieController {
        &mut self.ctrl
    }

    /// The current congestion threshold value (coded; 65536 means every packet).
    pub fn ctv(&self) -> u32 {
        self.ctv
    }

    fn expire(&mut self, now: u64) {
        while let Some(&(t, v)) = self.arrivals.front() {
            if t + self.window_ns > now {
                break;
            }
            self.arrivals.pop_front();
            self.hist.sub(v, 1);
        }
    }

    /// Recompute the CTV as the p-quantile of the window (at `now`).
    pub fn recompute_ctv(&mut self, now: u64) {
        self.expire(now);
        let p = self.ctrl.prob();
        let n = self.hist.total();
        self.ctv = if p <= 0.0 || n == 0 {
            0
        } else {
            let k = (p * n as f64).ceil() as u64;
            if k > n {
                CODES as u32
            } else {
                self.hist.kth_smallest(k.max(1)) as u32
            }
        };
    }
}

impl QueueDisc for PvPie {
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx<'_>) {
        let now = ctx.now_ns;
        let pkt = ctx.pool.get(id);
        let (size, v) = (pkt.size_bytes as u64, pkt.value);
        self.expire(now);
        self.arrivals.push_back((now, v));
        self.hist.add(v, 1);
        if !self
            .ctrl
            .cfg
            .limit
            .admits(self.fifo.len(), self.fifo.bytes(), size)
        {
            ctx.drop_packet(id);
            return;
        }
        let act = !self.ctrl.exempt(self.fifo.bytes()) && (v as u32) < self.ctv;
        if !act || (self.ctrl.may_mark() && ctx.mark_ce(id)) {
            self.fifo.push(id, size);
        } else {
            ctx.drop_packet(id);
        }
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx<'_>) -> Option<PacketId> {
        self.ctrl.dequeue_from(&mut self.fifo, ctx)
    }

    fifo_occupancy!(fifo);

    fn uses_timer(&self) -> bool {
        true
    }

    fn timer_deadline(&self) -> Option<u64> {
        Some(self.ctrl.next_update_ns())
    }

    fn state(&self, _now_ns: u64, out: &mut Vec<(&'static str, f64)>) {
        self.ctrl.state(out);
        // The coded threshold value (packets below it are dropped or marked; 65536 = all).
        out.push(("ctv", f64::from(self.ctv)));
    }
    fn on_timer(&mut self, ctx: &mut QdiscCtx<'_>) {
        self.ctrl.update(self.fifo.bytes());
        self.recompute_ctv(ctx.now_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_queries() {
        let mut h = ValueHist::new();
        for v in [5u16, 300, 300, 7000, 65535] {
            h.add(v, 1);
        }
        assert_eq!(h.kth_smallest(1), 5);
        assert_eq!(h.kth_smallest(2), 300);
        assert_eq!(h.kth_smallest(3), 300);
        assert_eq!(h.kth_smallest(4), 7000);
        assert_eq!(h.kth_smallest(5), 65535);
        assert_eq!(h.smallest_nonzero_below(5), None);
        assert_eq!(h.smallest_nonzero_below(6), Some(5));
        h.sub(5, 1);
        assert_eq!(h.smallest_nonzero_below(301), Some(300));
        // Suffix sums from the top: Σ_{i≥v} is 1 for v in 7001..=65535, 2 for
        // 301..=7000, 4 for 0..=300; the answer is the smallest v with the sum ≤ l.
        assert_eq!(h.suffix_threshold(0), 65536);
        assert_eq!(h.suffix_threshold(1), 7001);
        assert_eq!(h.suffix_threshold(2), 301);
        assert_eq!(h.suffix_threshold(3), 301);
        assert_eq!(h.suffix_threshold(4), 0);
    }
}
