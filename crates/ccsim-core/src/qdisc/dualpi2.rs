//! DualPI2 (the L4S DualQ Coupled AQM) and PI2 (its single-queue parent), one PI core.
//!
//! **`kind = "dualpi2"`**: Linux `net/sched/sch_dualpi2.c` (mainline, Linux 6.17+; read at
//! its merged version with `dualpi2_qdisc_enqueue`/`dualpi2_qdisc_dequeue`, authors De
//! Schepper, Albisser, Steen, Tilmans, Chang), which implements RFC 9332 (DualQ Coupled
//! AQM, §2.4 and Appendix A, the DualPI2 example) with the L4S identifier of RFC 9331:
//! - Classification (`dualpi2_skb_classify`): a packet whose ECN field ANDed with
//!   `ecn_mask` is non-zero goes to the L queue; with the default mask `l4s_ect` (1) that
//!   is ECT(1) and CE (RFC 9331 §5.1), everything else (Not-ECT, ECT(0)) to the C queue.
//!   `cla_ect` (2) takes ECT(0) and CE, `any_ect` (3) every ECT packet.
//! - Enqueue (`dualpi2_enqueue_skb`): tail drop when the two queues hold `limit`
//!   packets, or when the bytes held plus the arrival exceed `memory_limit`
//!   (default `limit x 2 x mtu`, Linux `get_memory_limit`). With `drop_early = true` the
//!   AQM decision below is taken here (`must_drop` at enqueue) instead of at dequeue.
//! - The PI core (`calculate_probability`, every `tupdate` from creation): with
//!   `qdelay = max(delay_L, delay_C)`, each the sojourn time so far of the queue's head
//!   packet (0 when empty; `get_queue_delays`),
//!   `p' += alpha (qdelay - target) + beta (qdelay - qdelay_old)`, bounded to [0, 1]
//!   (and to 1/k when `drop_overload = false`). RFC 9332 §2.4: `p_C = p'^2`,
//!   `p_CL = k p'`.
//! - Marking at dequeue (`must_drop`, `dualpi2_classic_marking`,
//!   `dualpi2_scalable_marking`): nothing while fewer than 2 MTU stay queued (the
//!   backlog after taking the packet out). A C packet is hit with probability `p'^2`
//!   (two independent draws against p', as Linux): a Not-ECT packet is dropped, an ECT
//!   one CE-marked (classic ECN, RFC 9332 §2.5.1.1); when `k p' > 1` (overload) every hit
//!   C packet is dropped. An L packet is marked with probability `p_CL = k p'` (a Not-ECT
//!   packet put in L by the mask is dropped instead); on overload it is dropped with
//!   probability `p'^2` when `drop_overload` and otherwise marked.
//! - The native L4S AQM (`do_step_aqm`): after the coupled decision, an L packet whose
//!   sojourn exceeds `step_thresh` (default 1 ms; a packet count `"Np"` compares the L
//!   queue length left behind) is CE-marked (dropped if Not-ECT); with at least
//!   `min_qlen_step` packets in L at its arrival (default 0: always). So the L marking
//!   probability is `max(p_CL, step)` (RFC 9332 §2.5.1.1, "p_L = max(p'_L, p_CL)").
//! - Scheduling (`dequeue_packet`): weighted round robin on a byte credit, Linux's
//!   "C-queue starvation protection". With `c_protection = wc` %, `wl = 100 - wc`, the
//!   credit starts at `mtu (wc - wl)` (negative: L first) and returns there whenever
//!   both queues are empty. L is served when it has a packet and C is empty or the credit
//!   is `<= 0`; serving L with C backlogged adds `wc x size`, serving C with L backlogged
//!   subtracts `wl x size`. The credit changes only for packets that leave (not for
//!   those the AQM drops). RFC 9332 §2.4 allows this WRR scheduler or a time-shifted
//!   FIFO; Linux and ccsim use the WRR.
//! - Parameters: [`DUALPI2`] (`ccsim algorithms dualpi2`), with Linux's defaults
//!   (`dualpi2_reset_default`). `alpha`/`beta` are given in Hz and, as
//!   `tc` passes them, converted to 1/256 Hz (`round(256 x alpha)`, at least 1); the kernel
//!   then scales them to its integer form (`dualpi2_scale_alpha_beta`: alpha 41 becomes
//!   44 units of 2^-32 per 64 ns, i.e. 0.16007 Hz, beta 819 becomes 879, 3.1977 Hz),
//!   and ccsim computes p' with exactly that integer arithmetic (p' in units of
//!   2^-32, `MAX_PROB = 2^32 - 1`, `delta / 64` truncated toward zero). A roll succeeds
//!   when a uniform 32-bit draw is `<= p` (`dualpi2_roll`).
//!
//! **`kind = "pi2"`**: PI2 in one queue, De Schepper, Bondarenko, Tsang, Briscoe, "PI2: A
//! Linearized AQM for both Classic and Scalable TCP", ACM CoNEXT 2016 (§3: the PI output
//! p' squared for Classic traffic; §5: Scalable traffic uses the linear p' without the
//! squaring, with the coupling that RFC 9332 §2.1 writes `p_C = (p_CL / k)^2`). ccsim
//! runs it as DualPI2 with a single FIFO: the same PI core (on the head sojourn of the
//! one queue), the same classification of each packet by `ecn_mask` (for its marking
//! only: every packet waits in the same queue), C packets hit with `p'^2` and L packets
//! with `min(k p', 1)`, no step marking, no scheduler.
//!
//! **Statistics**: the link's queue tables (`queue_series`, `sojourn_cdf`, the summary's
//! sojourn percentiles) count both queues together, as they do for every discipline.
//! The per-class view is in `qdisc_state` (see [`DualPi2::state`]): Linux's
//! `tc -s qdisc` figures (p', head delays, queue lengths, credit, mark counters) and,
//! over the departures since the previous `qdisc_state` row, each class's departure
//! count and sojourn mean, median, p99 and maximum.
//!
//! Departures:
//! - Sizes are wire sizes: `memory_limit` counts them, not Linux's `skb->truesize`.
//! - No GSO (every packet is one segment, as after Linux's default `split_gso`); no
//!   `tc` filters, so Linux's third class (`DUALPI2_C_LLLL`, L queue without AQM) and
//!   classification by `skb->priority` do not arise.
//! - The PI update saturates p' at 0 and `MAX_PROB`; Linux truncates a step larger than
//!   2^32 units to 32 bits first (only for a delay error of seconds).
//! - The timer runs exactly every `tupdate` from time 0 (Linux re-arms it `tupdate`
//!   after each run, so it drifts by the handler's latency).
//! - `pi2`: the defaults are sch_dualpi2's, not the values of the paper's experiments;
//!   like sch_dualpi2 (and unlike the paper's PIE-derived code, which drops at
//!   enqueue) the decision is taken at dequeue unless `drop_early = true`, and the
//!   2-MTU guard applies.

use std::cell::RefCell;
use std::collections::VecDeque;

use hdrhistogram::Histogram;

use super::common::{bdp_packets, POSITIVE_MTU};
use super::{LinkInfo, QdiscCtx, QueueDisc};
use crate::net::packet::{Ecn, PacketId};
use crate::params::{self, Algorithm, Family, Kind, Param, Reader, Value, POSITIVE_DURATION};
use crate::scenario::{AlgoSpec, ParamValue, QueueLimit, ScenarioError};

/// Linux `MAX_PROB` (`U32_MAX`): p' = 1.
pub const MAX_PROB: u32 = u32::MAX;
/// Linux `ALPHA_BETA_SHIFT - ALPHA_BETA_GRANULARITY`.
const ALPHA_BETA_SCALING: u32 = 2;
/// Linux `ALPHA_BETA_GRANULARITY`: the PI step is divided by 2^6.
const ALPHA_BETA_GRANULARITY: u32 = 6;
/// Linux `ALPHA_BETA_MAX`, in 1/256 Hz.
const ALPHA_BETA_MAX: u64 = (1 << 31) - 1;
/// Linux `MAX_WC`.
const MAX_WC: i64 = 100;

/// Linux `dualpi2_scale_alpha_beta`: a gain in 1/256 Hz (as `tc` passes it) to units of
/// 2^-32 probability per 64 ns of delay error.
pub fn scale_alpha_beta(param_256hz: u32) -> u32 {
    // At most (2^31 - 1) x 2^32 / 4 / 10^9 < 2^32: the result fits, as Linux relies on.
    (((param_256hz as u64 * MAX_PROB as u64) >> ALPHA_BETA_SCALING) / 1_000_000_000) as u32
}

/// Whether the L queue and the scheduler exist (DualPI2) or one FIFO holds every packet
/// (PI2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Dual,
    Single,
}

/// The step threshold of the L queue's native AQM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Sojourn time above this many ns (Linux default, 1 ms).
    Time(u64),
    /// More than this many packets left in the L queue.
    Packets(u64),
}

/// DualPI2 / PI2 parameters (Linux units: p in 2^-32, gains in Linux's scaled form).
#[derive(Debug, Clone)]
pub struct DualPi2Config {
    pub mode: Mode,
    /// Packets in both queues together.
    pub limit: u64,
    pub memory_limit: u64,
    pub target_ns: u64,
    pub tupdate_ns: u64,
    /// The gains as `tc` gives them (1/256 Hz) and as the kernel uses them.
    pub alpha_256: u32,
    pub beta_256: u32,
    pub alpha: u32,
    pub beta: u32,
    pub step: Step,
    pub min_qlen_step: u64,
    pub coupling: u8,
    pub drop_early: bool,
    pub drop_overload: bool,
    /// C queue weight in % (Linux `c_protection_wc`).
    pub c_protection_wc: u8,
    /// ECN bits that send a packet to L (1: ECT(1) and CE).
    pub ecn_mask: u8,
    pub mtu: u64,
}

/// One class's queue: packet, whether it is L4S (for PI2's one queue) and whether the
/// step applies (Linux `dualpi2_skb_cb::apply_step`).
#[derive(Debug, Clone, Copy)]
struct Entry {
    id: PacketId,
    l4s: bool,
    apply_step: bool,
}

#[derive(Debug, Default)]
struct SubQueue {
    q: VecDeque<Entry>,
    bytes: u64,
    /// Enqueue time of the head packet (Linux `l_head_ts` / `c_head_ts`).
    head_ts: Option<u64>,
}

/// Departures of one class since the previous `qdisc_state` row.
#[derive(Debug)]
struct ClassWindow {
    count: u64,
    sum_ns: u128,
    max_ns: u64,
    hist: Histogram<u64>,
}

impl ClassWindow {
    fn new() -> Self {
        ClassWindow {
            count: 0,
            sum_ns: 0,
            max_ns: 0,
            // 1 ns .. 1 h at 2 significant digits (about 30 KB).
            hist: Histogram::new_with_bounds(1, 3_600_000_000_000, 2).expect("valid bounds"),
        }
    }

    fn record(&mut self, sojourn_ns: u64) {
        self.count += 1;
        self.sum_ns += sojourn_ns as u128;
        self.max_ns = self.max_ns.max(sojourn_ns);
        self.hist.saturating_record(sojourn_ns);
    }

    /// Push the window's figures under the given names and start a new window.
    fn drain(&mut self, names: [&'static str; 5], out: &mut Vec<(&'static str, f64)>) {
        let ms = |ns: f64| ns / 1e6;
        out.push((names[0], self.count as f64));
        if self.count == 0 {
            for n in &names[1..] {
                out.push((n, f64::NAN));
            }
        } else {
            out.push((names[1], ms(self.sum_ns as f64 / self.count as f64)));
            out.push((names[2], ms(self.hist.value_at_quantile(0.5) as f64)));
            out.push((names[3], ms(self.hist.value_at_quantile(0.99) as f64)));
            out.push((names[4], ms(self.max_ns as f64)));
        }
        self.count = 0;
        self.sum_ns = 0;
        self.max_ns = 0;
        self.hist.reset();
    }
}

/// The DualPI2 / PI2 queue.
#[derive(Debug)]
pub struct DualPi2 {
    cfg: DualPi2Config,
    /// L queue (empty in PI2 mode) and C queue (every packet in PI2 mode).
    l: SubQueue,
    c: SubQueue,
    /// p' in 2^-32 (Linux `pi2_prob`) and the delay of the last update.
    prob: u32,
    last_qdelay_ns: u64,
    next_update_ns: u64,
    credit: i64,
    credit_init: i64,
    /// Counters as Linux's `tc -s` (cumulative).
    packets_in_l: u64,
    packets_in_c: u64,
    ecn_marks: u64,
    step_marks: u64,
    /// Per-class sojourn since the previous `qdisc_state` row (reset when read).
    window: RefCell<[ClassWindow; 2]>,
}

/// What the coupled AQM decides for one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Mark,
    Drop,
}

impl DualPi2 {
    pub fn new(cfg: DualPi2Config) -> Self {
        let wc = cfg.c_protection_wc as i64;
        let credit_init = cfg.mtu as i64 * (wc - (MAX_WC - wc));
        DualPi2 {
            next_update_ns: cfg.tupdate_ns,
            cfg,
            l: SubQueue::default(),
            c: SubQueue::default(),
            prob: 0,
            last_qdelay_ns: 0,
            credit: credit_init,
            credit_init,
            packets_in_l: 0,
            packets_in_c: 0,
            ecn_marks: 0,
            step_marks: 0,
            window: RefCell::new([ClassWindow::new(), ClassWindow::new()]),
        }
    }

    pub fn from_spec(
        spec: &AlgoSpec,
        path: &str,
        link: LinkInfo,
        mode: Mode,
    ) -> Result<Self, ScenarioError> {
        let table = if mode == Mode::Dual { &DUALPI2 } else { &PI2 };
        let r = Reader::new(table, spec, path);
        let cfg = read_config(&r, link, mode)?;
        r.finish()?;
        Ok(DualPi2::new(cfg))
    }

    pub fn config(&self) -> &DualPi2Config {
        &self.cfg
    }

    /// p' as a fraction.
    pub fn prob(&self) -> f64 {
        self.prob as f64 / MAX_PROB as f64
    }

    /// p' in Linux's units (2^-32).
    pub fn prob_raw(&self) -> u32 {
        self.prob
    }

    /// Set p' (tests and hand-worked traces).
    #[doc(hidden)]
    pub fn force_prob_raw(&mut self, p: u32) {
        self.prob = p;
    }

    /// The WRR credit in bytes (Linux `c_protection_credit`).
    pub fn credit(&self) -> i64 {
        self.credit
    }

    /// Packets CE-marked by the step (cumulative).
    pub fn step_marks(&self) -> u64 {
        self.step_marks
    }

    /// Whether a packet with ECN field `ecn` is L4S (Linux `cb->ect & q->ecn_mask`).
    pub fn classify(&self, ecn: Ecn) -> bool {
        (ecn as u8) & self.cfg.ecn_mask != 0
    }

    fn total_len(&self) -> usize {
        self.l.q.len() + self.c.q.len()
    }

    fn total_bytes(&self) -> u64 {
        self.l.bytes + self.c.bytes
    }

    /// Linux `calculate_probability`, run at `now` (the timer).
    pub fn update(&mut self, now: u64) {
        let delay = |s: &SubQueue| s.head_ts.map_or(0, |t| now.saturating_sub(t));
        let qdelay = delay(&self.l).max(delay(&self.c));
        let delta = (qdelay as i64 - self.cfg.target_ns as i64) * self.cfg.alpha as i64
            + (qdelay as i64 - self.last_qdelay_ns as i64) * self.cfg.beta as i64;
        self.last_qdelay_ns = qdelay;
        let step = delta.unsigned_abs() >> ALPHA_BETA_GRANULARITY;
        let mut new = if delta > 0 {
            (self.prob as u64 + step).min(MAX_PROB as u64) as u32
        } else {
            (self.prob as u64).saturating_sub(step) as u32
        };
        if !self.cfg.drop_overload {
            new = new.min(MAX_PROB / self.cfg.coupling as u32);
        }
        self.prob = new;
        self.next_update_ns += self.cfg.tupdate_ns;
    }

    /// Linux `dualpi2_roll`.
    #[inline]
    fn roll(prob: u32, rng: &mut crate::engine::rng::SimRng) -> bool {
        ((rng.next_u64() >> 32) as u32) <= prob
    }

    /// Linux `must_drop` with the classic/scalable marking: the verdict for a packet of
    /// class `l4s` and ECN field `ecn`, with `backlog` bytes queued (after the packet left,
    /// or before it arrived with `drop_early`).
    pub fn aqm_verdict(
        &self,
        l4s: bool,
        ecn: Ecn,
        backlog: u64,
        rng: &mut crate::engine::rng::SimRng,
    ) -> Verdict {
        if backlog < 2 * self.cfg.mtu {
            return Verdict::Pass;
        }
        let prob = self.prob;
        let local_l_prob = prob as u64 * self.cfg.coupling as u64;
        let overload = local_l_prob > MAX_PROB as u64;
        let not_ect = ecn == Ecn::NotEct;
        if !l4s {
            // dualpi2_classic_marking
            if Self::roll(prob, rng) && Self::roll(prob, rng) {
                return if overload || not_ect {
                    Verdict::Drop
                } else {
                    Verdict::Mark
                };
            }
            return Verdict::Pass;
        }
        // dualpi2_scalable_marking
        if overload {
            if !(self.cfg.drop_overload && Self::roll(prob, rng) && Self::roll(prob, rng)) {
                // `goto mark`: a Not-ECT packet stays unmarked.
                return if not_ect {
                    Verdict::Pass
                } else {
                    Verdict::Mark
                };
            }
            return Verdict::Drop;
        }
        if Self::roll(local_l_prob as u32, rng) {
            return if not_ect {
                Verdict::Drop
            } else {
                Verdict::Mark
            };
        }
        Verdict::Pass
    }

    /// Linux `dequeue_packet`: which queue serves next (`true`: L), and the credit change
    /// in per-cent bytes per byte of the packet, or `None` when both are empty.
    pub fn select(&self) -> Option<(bool, i64)> {
        let l_len = self.l.q.len();
        let c_len = self.c.q.len();
        if l_len > 0 && (c_len == 0 || self.credit <= 0) {
            let change = if c_len > 0 {
                self.cfg.c_protection_wc as i64
            } else {
                0
            };
            Some((true, change))
        } else if c_len > 0 {
            let change = if l_len > 0 {
                -(MAX_WC - self.cfg.c_protection_wc as i64)
            } else {
                0
            };
            Some((false, change))
        } else {
            None
        }
    }

    fn pop(&mut self, from_l: bool, ctx: &mut QdiscCtx<'_>) -> Entry {
        let sq = if from_l { &mut self.l } else { &mut self.c };
        let e = sq.q.pop_front().expect("selected queue is non-empty");
        sq.bytes -= ctx.pool.get(e.id).size_bytes as u64;
        sq.head_ts = sq.q.front().map(|h| ctx.pool.get(h.id).enqueue_ns);
        e
    }

    fn mark(&mut self, id: PacketId, ctx: &mut QdiscCtx<'_>) {
        if ctx.mark_ce(id) {
            self.ecn_marks += 1;
        }
    }
}

impl QueueDisc for DualPi2 {
    /// Linux `sch_dualpi2.c`: `.peek = qdisc_peek_dequeued`.
    fn peek_dequeues(&self) -> bool {
        true
    }

    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx<'_>) {
        let (size, ecn, ts) = {
            let p = ctx.pool.get(id);
            (p.size_bytes as u64, p.ecn, p.enqueue_ns)
        };
        if self.total_len() as u64 >= self.cfg.limit
            || self.total_bytes() + size > self.cfg.memory_limit
        {
            ctx.drop_packet(id);
            return;
        }
        let l4s = self.classify(ecn);
        if self.cfg.drop_early {
            match self.aqm_verdict(l4s, ecn, self.total_bytes(), ctx.rng) {
                Verdict::Drop => {
                    ctx.drop_packet(id);
                    return;
                }
                Verdict::Mark => self.mark(id, ctx),
                Verdict::Pass => {}
            }
        }
        let dual = self.cfg.mode == Mode::Dual;
        let entry = Entry {
            id,
            l4s,
            apply_step: dual && l4s && self.l.q.len() as u64 >= self.cfg.min_qlen_step,
        };
        let sq = if dual && l4s {
            self.packets_in_l += 1;
            &mut self.l
        } else {
            self.packets_in_c += 1;
            &mut self.c
        };
        if sq.q.is_empty() {
            sq.head_ts = Some(ts);
        }
        sq.q.push_back(entry);
        sq.bytes += size;
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx<'_>) -> Option<PacketId> {
        let now = ctx.now_ns;
        loop {
            let Some((from_l, change)) = self.select() else {
                self.credit = self.credit_init;
                return None;
            };
            let e = self.pop(from_l, ctx);
            let (size, ecn, enq) = {
                let p = ctx.pool.get(e.id);
                (p.size_bytes as u64, p.ecn, p.enqueue_ns)
            };
            let mut marked = false;
            if !self.cfg.drop_early {
                match self.aqm_verdict(e.l4s, ecn, self.total_bytes(), ctx.rng) {
                    Verdict::Drop => {
                        ctx.drop_packet(e.id);
                        continue;
                    }
                    Verdict::Mark => {
                        self.mark(e.id, ctx);
                        marked = true;
                    }
                    Verdict::Pass => {}
                }
            }
            if from_l && e.apply_step {
                let over = match self.cfg.step {
                    Step::Time(th) => now.saturating_sub(enq) > th,
                    Step::Packets(th) => self.l.q.len() as u64 > th,
                };
                if over {
                    if ecn == Ecn::NotEct {
                        ctx.drop_packet(e.id);
                        continue;
                    }
                    // Linux counts a step mark even on a packet the coupled AQM marked;
                    // the link counts the packet once.
                    if marked {
                        self.ecn_marks += 1;
                    } else {
                        self.mark(e.id, ctx);
                    }
                    self.step_marks += 1;
                }
            }
            self.credit += change * size as i64;
            self.window.borrow_mut()[e.l4s as usize].record(now.saturating_sub(enq));
            return Some(e.id);
        }
    }

    fn peek(&self) -> Option<PacketId> {
        self.select().map(|(from_l, _)| {
            if from_l {
                self.l.q[0].id
            } else {
                self.c.q[0].id
            }
        })
    }

    fn len_packets(&self) -> usize {
        self.total_len()
    }

    fn len_bytes(&self) -> u64 {
        self.total_bytes()
    }

    fn held(&self) -> Vec<PacketId> {
        self.l
            .q
            .iter()
            .chain(self.c.q.iter())
            .map(|e| e.id)
            .collect()
    }

    fn uses_timer(&self) -> bool {
        true
    }

    fn timer_deadline(&self) -> Option<u64> {
        Some(self.next_update_ns)
    }

    fn on_timer(&mut self, ctx: &mut QdiscCtx<'_>) {
        self.update(ctx.now_ns);
    }

    /// `prob` (p'), `prob_c` (p'^2), `prob_l` (min(k p', 1)); Linux's `tc -s` figures
    /// `delay_c_ms`, `delay_l_ms` (the head packets' sojourn so far; PI2: `delay_ms`),
    /// `qlen_c_pkts`, `qlen_l_pkts`, `credit_bytes`, `packets_in_c`, `packets_in_l`,
    /// `ecn_marks`, `step_marks` (cumulative); then per class, over the departures since
    /// the previous row, `l_departures`, `l_sojourn_mean_ms`, `l_sojourn_p50_ms`,
    /// `l_sojourn_p99_ms`, `l_sojourn_max_ms` and the same for `c_` (NaN without departures). In PI2 mode the
    /// classes are the packets' (by `ecn_mask`), in one queue.
    fn state(&self, now_ns: u64, out: &mut Vec<(&'static str, f64)>) {
        let p = self.prob();
        out.push(("prob", p));
        out.push(("prob_c", p * p));
        out.push(("prob_l", (p * self.cfg.coupling as f64).min(1.0)));
        let delay = |s: &SubQueue| s.head_ts.map_or(0, |t| now_ns.saturating_sub(t)) as f64 / 1e6;
        if self.cfg.mode == Mode::Dual {
            out.push(("delay_c_ms", delay(&self.c)));
            out.push(("delay_l_ms", delay(&self.l)));
            out.push(("qlen_c_pkts", self.c.q.len() as f64));
            out.push(("qlen_l_pkts", self.l.q.len() as f64));
            out.push(("credit_bytes", self.credit as f64));
            out.push(("packets_in_c", self.packets_in_c as f64));
            out.push(("packets_in_l", self.packets_in_l as f64));
            out.push(("ecn_marks", self.ecn_marks as f64));
            out.push(("step_marks", self.step_marks as f64));
        } else {
            out.push(("delay_ms", delay(&self.c)));
            out.push(("ecn_marks", self.ecn_marks as f64));
        }
        let mut w = self.window.borrow_mut();
        w[1].drain(
            [
                "l_departures",
                "l_sojourn_mean_ms",
                "l_sojourn_p50_ms",
                "l_sojourn_p99_ms",
                "l_sojourn_max_ms",
            ],
            out,
        );
        w[0].drain(
            [
                "c_departures",
                "c_sojourn_mean_ms",
                "c_sojourn_p50_ms",
                "c_sojourn_p99_ms",
                "c_sojourn_max_ms",
            ],
            out,
        );
    }
}

const LIMIT: Param = Param {
    name: "limit",
    kind: Kind::Limit,
    default: "\"10000p\"",
    help: "packets in both queues (`\"Np\"` or a BDP multiple); a byte limit is refused (use `memory_limit`)",
};
const MEMORY_LIMIT: Param = Param {
    name: "memory_limit",
    kind: Kind::Size {
        what: Some("a positive size like \"30MB\""),
        ok: |b| b > 0,
    },
    default: "limit x 2 x mtu",
    help: "bytes in both queues (wire sizes; Linux counts `truesize`)",
};
const TARGET: Param = Param {
    name: "target",
    kind: POSITIVE_DURATION,
    default: "\"15ms\"",
    help: "PI target delay",
};
const TUPDATE: Param = Param {
    name: "tupdate",
    kind: crate::params::UPDATE_PERIOD,
    default: "\"16ms\"",
    help: "PI update period (the first update one `tupdate` after the start)",
};
/// A gain in Hz; `tc` passes 256 x the value, rounded, and Linux's netlink policy refuses
/// what falls outside [1, 2^31 - 1] (ALPHA_BETA_MAX).
const GAIN_256: Kind = Kind::Number {
    what: "a gain in Hz between 1/256 and 8388608 (tc passes 256 x the value, rounded, in [1, 2^31 - 1])",
    ok: |hz| {
        let v = (hz * 256.0).round();
        v >= 1.0 && v <= ALPHA_BETA_MAX as f64
    },
};
const ALPHA: Param = Param {
    name: "alpha",
    kind: GAIN_256,
    default: "41/256 (0.16)",
    help: "integral gain in Hz; passed as `tc` does, `round(256 × alpha)`",
};
const BETA: Param = Param {
    name: "beta",
    kind: GAIN_256,
    default: "819/256 (3.2)",
    help: "proportional gain in Hz; passed as `tc` does, `round(256 × beta)`",
};
const STEP_THRESH: Param = Param {
    name: "step_thresh",
    kind: Kind::Custom {
        unit: "duration or packets",
        accepts: "a duration like \"1ms\" or a packet count like \"5p\"",
        read: step_thresh,
    },
    default: "\"1ms\"",
    help: "L step threshold: a sojourn (`\"1ms\"`) or an L queue length (`\"5p\"`)",
};
const MIN_QLEN_STEP: Param = Param {
    name: "min_qlen_step",
    kind: Kind::Number {
        what: "a whole number of packets",
        ok: |n| n.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(&n),
    },
    default: "0",
    help: "step only for packets that found at least this many packets in L",
};
const COUPLING: Param = Param {
    name: "coupling",
    kind: Kind::Number {
        what: "an integer in [1, 255] (Linux u8, at least 1)",
        ok: |k| k.fract() == 0.0 && (1.0..=255.0).contains(&k),
    },
    default: "2",
    help: "coupling factor k",
};
const DROP_EARLY: Param = Param {
    name: "drop_early",
    kind: Kind::Bool,
    default: "false",
    help: "take the AQM decision at enqueue instead of dequeue",
};
const DROP_OVERLOAD: Param = Param {
    name: "drop_overload",
    kind: Kind::Bool,
    default: "true",
    help: "on overload drop (else mark L packets and let the queue grow to `limit`)",
};
const C_PROTECTION: Param = Param {
    name: "c_protection",
    kind: Kind::Number {
        what: "a whole percentage in [0, 100]",
        ok: |w| w.fract() == 0.0 && (0.0..=100.0).contains(&w),
    },
    default: "10",
    help: "C queue WRR weight in %",
};
const ECN_MASK: Param = Param {
    name: "ecn_mask",
    kind: Kind::Keyword {
        values: &["l4s_ect", "cla_ect", "any_ect"],
        unknown: "unknown ECN mask {got} (known: {known})",
        trim: false,
    },
    default: "\"l4s_ect\"",
    help: "`\"l4s_ect\"` (ECT(1), CE), `\"cla_ect\"` (ECT(0), CE), `\"any_ect\"`",
};
const MTU: Param = Param {
    name: "mtu",
    kind: POSITIVE_MTU,
    default: "the link's MTU",
    help: "for the credit, the `memory_limit` default and the 2-MTU guard",
};

/// DualPI2's parameters.
pub const DUALPI2: Algorithm = Algorithm {
    name: "dualpi2",
    aliases: &[],
    family: Family::QueueDiscipline,
    summary: "the L4S DualQ Coupled AQM: an L4S queue and a classic queue, one PI core",
    reference: "Linux net/sched/sch_dualpi2.c; RFC 9332 §2.4 and Appendix A; RFC 9331",
    params: &[
        LIMIT,
        MEMORY_LIMIT,
        TARGET,
        TUPDATE,
        ALPHA,
        BETA,
        STEP_THRESH,
        MIN_QLEN_STEP,
        COUPLING,
        DROP_EARLY,
        DROP_OVERLOAD,
        C_PROTECTION,
        ECN_MASK,
        MTU,
    ],
};

/// PI2's parameters.
pub const PI2: Algorithm = Algorithm {
    name: "pi2",
    aliases: &[],
    family: Family::QueueDiscipline,
    summary: "PI2 in one queue: DualPI2's PI core, classic p'^2 and scalable k p'",
    reference:
        "RFC 9332 §2.4 (De Schepper et al., \"PI2\", CoNEXT 2016); Linux sch_dualpi2.c defaults",
    params: &[
        LIMIT,
        MEMORY_LIMIT,
        TARGET,
        TUPDATE,
        ALPHA,
        BETA,
        COUPLING,
        DROP_EARLY,
        DROP_OVERLOAD,
        ECN_MASK,
        MTU,
    ],
};

/// `"1ms"` (sojourn time, Linux `step_thresh_us`) or `"5p"` (L queue length, Linux
/// `step_thresh_pkts`).
fn step_thresh(value: &ParamValue) -> Result<Value, String> {
    let s = params::text(value)?;
    let bad =
        || format!("expected a duration like \"1ms\" or a packet count like \"5p\", got {s:?}");
    if let Some(n) = s.strip_suffix('p') {
        return n.parse::<u64>().map(Value::Packets).map_err(|_| bad());
    }
    crate::scenario::SimDuration::parse(s)
        .map(|d| Value::Ns(d.ns))
        .map_err(|_| bad())
}

fn read_config(r: &Reader<'_>, link: LinkInfo, mode: Mode) -> Result<DualPi2Config, ScenarioError> {
    let limit = match r.limit("limit")?.unwrap_or(QueueLimit::Packets(10_000)) {
        QueueLimit::Packets(n) => n,
        QueueLimit::Bdp(f) => bdp_packets(f, link),
        QueueLimit::Bytes(_) => {
            return Err(r.error(
                "limit",
                "counts packets (Linux sch->limit), like \"10000p\" or \"2bdp\"; a byte bound is memory_limit",
            ))
        }
    };
    let mtu = r.bytes("mtu", link.mtu_bytes as u64)?;
    let memory_limit = r.bytes("memory_limit", limit.saturating_mul(2 * mtu))?;
    let target = r.ns("target", 15_000_000)?;
    let tupdate = r.ns("tupdate", 16_000_000)?;
    let alpha = r.number("alpha", 41.0 / 256.0)?;
    let beta = r.number("beta", 819.0 / 256.0)?;
    let (alpha_256, beta_256) = (
        (alpha * 256.0).round() as u32,
        (beta * 256.0).round() as u32,
    );
    let coupling = r.number("coupling", 2.0)? as u8;
    let drop_early = r.boolean("drop_early", false)?;
    let drop_overload = r.boolean("drop_overload", true)?;
    let ecn_mask = match r.word("ecn_mask", "l4s_ect")? {
        "cla_ect" => 2,
        "any_ect" => 3,
        _ => 1,
    };
    let (step, min_qlen_step, wc) = if mode == Mode::Dual {
        let step = match r.get("step_thresh")? {
            None => Step::Time(1_000_000),
            Some(Value::Packets(n)) => Step::Packets(n),
            Some(v) => Step::Time(v.ns()),
        };
        let min_qlen_step = r.number("min_qlen_step", 0.0)? as u64;
        let wc = r.number("c_protection", 10.0)? as u8;
        (step, min_qlen_step, wc)
    } else {
        (Step::Time(u64::MAX), 0, 10)
    };
    Ok(DualPi2Config {
        mode,
        limit,
        memory_limit,
        target_ns: target,
        tupdate_ns: tupdate,
        alpha_256,
        beta_256,
        alpha: scale_alpha_beta(alpha_256),
        beta: scale_alpha_beta(beta_256),
        step,
        min_qlen_step,
        coupling,
        drop_early,
        drop_overload,
        c_protection_wc: wc,
        ecn_mask,
        mtu,
    })
}

#[cfg(test)]
mod tests;
