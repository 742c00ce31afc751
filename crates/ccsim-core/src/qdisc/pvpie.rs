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

use super::common::{ValueHist, CODES};
use super::fifo::{fifo_occupancy, PacketFifo};
use super::pie::{self, read_pie_config, PieConfig, PieController};
use super::{LinkInfo, QdiscCtx, QueueDisc};
use crate::net::packet::PacketId;
use crate::params::{Algorithm, Family, Kind, Param, Reader, POSITIVE_DURATION};
use crate::scenario::{AlgoSpec, ScenarioError};

/// PVPIE's parameters: PIE's (without `bytemode` and `derandomize`, with the defaults
/// PVPIE gives them) and the value window.
pub const TABLE: Algorithm = Algorithm {
    name: "pvpie",
    aliases: &[],
    family: Family::QueueDiscipline,
    summary: "PIE's controller turned into a packet-value threshold (drops the lowest values)",
    reference: "Laki et al., \"Take Your Own Share of the PIE\", ANRW 2017; paper 001 §2",
    params: &[
        Param {
            kind: Kind::Keyword {
                values: &["rfc8033", "pie2013"],
                unknown: "unknown PIE variant {got} (known: {known})",
                trim: false,
            },
            help: "PIE's controller as RFC 8033 (Linux) or paper 002 has it",
            ..pie::VARIANT
        },
        pie::PRESET,
        pie::TARGET,
        pie::TUPDATE,
        pie::FIRST_UPDATE,
        pie::ALPHA,
        pie::BETA,
        pie::MAX_BURST,
        pie::LIMIT,
        Param {
            default: "true",
            ..pie::ECN
        },
        Param {
            default: "false",
            ..pie::ECN_DROP_THRESHOLD
        },
        pie::ECN_THRESHOLD,
        pie::DQ_RATE_ESTIMATOR,
        pie::DQ_THRESHOLD,
        pie::RATE_EWMA,
        pie::AUTOTUNE,
        pie::IDLE_DECAY,
        pie::CAP_INCREASE,
        pie::HIGH_DELAY_BOOST,
        pie::EARLY_DROP_GUARD,
        Param {
            default: "true",
            help: "p is a quantile level in [0, 1]",
            ..pie::CLAMP_PROB
        },
        pie::QUIET_RESET,
        pie::MTU,
        Param {
            name: "window",
            kind: POSITIVE_DURATION,
            default: "\"100ms\"",
            help: "arrivals (counted per packet, dropped ones included) over which the quantile is taken",
        },
    ],
};

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
        let r = Reader::new(&TABLE, spec, path);
        let cfg = read_pie_config(&r, link, true)?;
        let window_ns = r.ns("window", 100_000_000)?;
        r.finish()?;
        Ok(PvPie::new(cfg, window_ns))
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
