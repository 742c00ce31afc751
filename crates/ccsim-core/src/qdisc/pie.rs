//! PIE (Proportional Integral controller Enhanced), three variants behind one controller.
//!
//! **`variant = "rfc8033"` (default)**: RFC 8033 as Linux implements it
//! (`net/sched/sch_pie.c`, `include/net/pie.h`, which cite RFC 8033):
//! - Enqueue (`pie_qdisc_enqueue`, `pie_drop_early`; RFC 8033 §4.1, §5.1, §5.4): tail
//!   drop at `limit` (and `accu_prob = 0`); no early drop while burst allowance is left,
//!   nor when `qdelay < target/2 and p < 20%`, nor when the backlog is below 2 MTU;
//!   `p` is scaled by `size/MTU` in byte mode; de-randomisation accumulates `p` per
//!   packet: no drop below 0.85, drop at ≥ 8.5, else a coin with `p` (which resets the
//!   accumulator when it drops). A packet chosen for drop is CE-marked instead when
//!   `ecn` is on, the packet is ECT and `p ≤ 10%` (`ecn_drop_threshold`); otherwise it
//!   is dropped and the accumulator reset.
//! - Delay (`pie_process_dequeue`; RFC 8033 §4.3, §5.2): by default the sojourn time of
//!   the last dequeued packet (0 when the queue is left empty), with the burst allowance
//!   reduced by the time between dequeues; with `dq_rate_estimator = true`, Little's law
//!   `backlog/avg_dq_rate` where the departure rate is measured over ≥ `dq_threshold`
//!   (16 KiB) departures while the backlog is ≥ `dq_threshold`, averaged with weight
//!   1/8 (first sample taken as is), and the burst allowance reduced by each
//!   measurement's duration. The rate path reproduces Linux's integer arithmetic
//!   (64 ns psched ticks, rate in bytes/tick << 8, `u32` truncations).
//! - Every `tupdate` (`pie_calculate_probability`; RFC 8033 §4.2, §5.5): α and β are
//!   scaled by the auto-tuning table (p < 10⁻⁶: /2048, < 10⁻⁵: /512, < 10⁻⁴: /128,
//!   < 10⁻³: /32, < 10⁻²: /8, < 10⁻¹: /2, else 1);
//!   `Δ = α(qdelay − target) + β(qdelay − qdelay_old)`; Δ is capped at 2% when
//!   `p ≥ 10%`; 2% is added when `qdelay > 250 ms`; p saturates at 0 (and, in Linux, at
//!   2⁶⁴/2⁵⁶ = 256 since `MAX_PROB = 2⁵⁶ − 1` lives in a `u64`: p may exceed 1);
//!   when both delays are 0 (and not "qdelay 0 with a backlog"), `p −= p/64`; when both
//!   delays are below target/2 and p = 0, the state is re-initialised (burst allowance
//!   back to `max_burst`).
//! - The first update runs 500 ms after creation (`mod_timer(jiffies + HZ/2)` in
//!   `pie_init`), then every `tupdate`.
//!
//! **`variant = "pie2013"`**: exactly Pan et al., "PIE: A Lightweight Control Scheme to
//! Address the Bufferbloat Problem", HPSR 2013 (ccsim paper 002):
//! - §III-A: every arrival is dropped (or marked, §III-B last paragraph: "the drop
//!   probability p could simply mean marking probability") with probability p, unless
//!   burst allowance is left (§III-D); tail drop at `limit`.
//! - §III-B: every `T_update`, `cur_del = qlen/avg_drate` (Little's law),
//!   three-tier auto-tuning (p < 1%: α/8, β/8; p < 10%: α/2, β/2; else α, β),
//!   `p += α(cur_del − ref_del) + β(cur_del − old_del)`, `old_del = cur_del`.
//! - §III-C: a departure leaving `qlen > dq_threshold` starts a measurement cycle;
//!   departures add to `dq_count`; once `dq_count > dq_threshold`:
//!   `dq_rate = dq_count/dq_int`, `avg_drate = (1−ε)·avg_drate + ε·dq_rate`, and the
//!   cycle restarts (`start = now`, `dq_count = 0`) if `qlen > dq_threshold`, else ends.
//!   A cycle, once started, runs to its `dq_threshold` bytes even if the queue dips
//!   meanwhile: the paper's "decide to be in a measurement cycle if qlen > dq_threshold"
//!   leaves this open, and both of its authors' codes do so (first Linux `sch_pie.c`,
//!   `pie_process_dequeue`: `dq_count` is set valid at `qlen >= QUEUE_THRESHOLD` and
//!   only invalidated after a measurement with `qlen < QUEUE_THRESHOLD`; ns-2 `pie.cc`
//!   `PIEQueue::deque`: `in_measurement` likewise).
//! - §III-D: on each `dq_rate` update `burst_allow −= dq_int`, and `burst_allow` is reset
//!   to `max_burst` when `p = 0` and both `cur_del` and `old_del` are below `ref_del/2`.
//! - §IV parameters (the defaults of this variant), quoted: "Unless otherwise stated
//!   the PIE parameters are configured as follow: ref_del = 20ms, T_update = 15ms,
//!   α = 0.25Hz, β = 2.5Hz, dq_threshold = 4500B, max_burst = 50ms". (§III-C
//!   recommends a 5 KB threshold and §III-D calls 100 ms the default max_burst; §IV's
//!   values are the ones its experiments use. §V: α = 0.25 and β = 2.5 are chosen "so
//!   that multiplications can be done using simple adds and shifts".)
//!
//! **`variant = "ns2"`**: the authors' ns-2 `queue/pie.cc` (Natarajan, Pan, Piglione,
//! White, Hayakawa; Cisco/CableLabs © 2013-2014, non-DOCSIS path), which paper 002's and
//! paper 003's simulations ran. Defaults as `pie2013` (paper 002 §IV); where it differs:
//! - Burst allowance: 0 at creation; the first arrival after a quiet spell arms it
//!   (`NO_BURST` → `IN_BURST_PROTECTING`, allowance = `max_burst`) and goes on to the
//!   coin; while any is left the update holds p at 0; every update spends `tupdate` of
//!   it; after p = 0 with both delays below `target/2` and no allowance, the state
//!   moves to `IN_BURST` and, after more than 1.5 s / `tupdate` such updates in a row
//!   (`BURST_RESET_TIMEOUT`), back to `NO_BURST`.
//! - Rate: a cycle starts when the backlog after a departure is ≥ `dq_threshold`, ends
//!   when its count is ≥ `dq_threshold` (`pie2013`: >), weight 1/2.
//! - Update: the six-tier table (/32 below 0.1 %, /8 below 1 %, /2 below 10 %, ×2 below
//!   1, ×8 below 10, ×32 beyond), the 2 % cap at p ≥ 10 %, then `p ×= 0.98` when both
//!   delays are 0 or `+2 %` when the delay is above 200 ms; p ≥ 0 but not bounded by 1;
//!   quiet updates (both delays below target/2, p = 0, a rate known) restart the rate
//!   estimate.
//! - Arrival: no early drop when the *previous* delay is below `target/2` and p < 20 %,
//!   or with at most 2 packets of `mtu` queued; then a plain coin (no
//!   de-randomisation); with `ecn` a selected ECT packet is marked, below
//!   `ecn_threshold` only when that is given (ns-2's `use_mark_p`/`mark_p`).
//! - Departures from ns-2: a rate cycle under way when the estimate is restarted goes
//!   on from 0 bytes (ns-2: from -1); `limit` counts packets (ns-2: `qlim × mean_pktsize`
//!   bytes).
//!
//! Units: `alpha` and `beta` are in Hz (probability per second of delay error), as the
//! paper and RFC write them; Linux's `tc` integers are 16× these (alpha 2 = 0.125 Hz).
//!
//! **Presets** (`preset = ...`; explicit parameters override them):
//! - `"pie2013"`: `variant = "pie2013"` with the §IV values above, run as its authors'
//!   code runs it. The paper's §III gives "the basis of the PIE algorithm"; every
//!   implementation by its authors adds the same safeguards, and its DOCSIS experiments
//!   (§IV) are unstable without them (in ccsim the bare algorithm drives p to 0.6–0.8
//!   when the 10 MB token bucket empties, keeps dropping arrivals to an empty queue
//!   while p decays at α·ref_del per update, and the flows time out). The preset turns
//!   them on as the first Linux PIE has them (`net/sched/sch_pie.c` as merged in
//!   Linux 3.14 by V. Subramanian and M. Prabhu — a paper author — citing this paper;
//!   read at `nathanchance/angler`, commit a847067; ns-2 `pie.cc` by Natarajan, Pan,
//!   Piglione, White and Hayakawa, © 2013-2014, has each of them too, with the
//!   variations noted):
//!   - `early_drop_guard`: no early drop while `cur_del < ref_del/2` and `p < 20%`, nor
//!     while the backlog is below 2 MTU (`drop_early`; ns-2 uses `old_del` and
//!     `qlen ≤ 2·mean_pktsize`);
//!   - `cap_increase`: at `p ≥ 10%` one update raises p by at most 2%
//!     (`calculate_probability`: "to ensure we increase probability in steps of no more
//!     than 2%"; ns-2 the same);
//!   - `high_delay_boost`: +2% when `cur_del > 250 ms` (ns-2: 200 ms);
//!   - `idle_decay = 0.02`: `p = p·98/100` when `cur_del = old_del = 0` (ns-2 the same);
//!   - `quiet_reset`: when, after an update, `p = 0` and both delays are below
//!     `ref_del/2` with a rate estimate in hand, restart the estimate (`avg_drate = 0`,
//!     no cycle; the next sample is taken as is) and re-arm the burst allowance
//!     (`pie_vars_init`; ns-2 resets `avg_dq_rate` the same way).
//! - `"abe-linux"`: the PIE of the ABE paper (ccsim paper 003 §IV-A: "the code that was
//!   shipped with Linux 3.17.4 ... target and tupdate were set to 20 ms and 30 ms. PIE's
//!   alpha is 0.125 and beta is 1.25 ... max_burst ... 100 ms ... hard coded"; §IV-B/§B:
//!   the 10% mark-to-drop switch disabled). Linux 3.17's `sch_pie.c` (the first mainline
//!   version, read at `nathanchance/angler`) differs from today's and the preset encodes
//!   that: departure-rate delay with `QUEUE_THRESHOLD = 10000` B, three-tier tuning,
//!   decay `p·98/100`, no de-randomisation, p held in a `u32` (≤ 1), limit 1000. ECN
//!   marking is on and `ecn_drop_threshold` off.
//!
//! **Parameters**: [`TABLE`] (`ccsim algorithms pie`), with each variant's and preset's
//! defaults.
//!
//! Departures:
//! - `tupdate` is exact; Linux rounds it to jiffies (15 ms → 16 ms at HZ = 250: set
//!   `tupdate = "16ms"` to reproduce such a kernel).
//! - Probabilities and α/β are `f64` rather than Linux's 2⁵⁶-scaled integers (relative
//!   differences ~10⁻¹⁰; Linux 3.17's u32 α/β truncation, up to 7% at the lowest tier, is
//!   not reproduced); the timestamp delay is in ns, not 64 ns ticks.
//! - pie2013: the paper leaves open ε (taken as 1/8, from the first Linux PIE by the
//!   same authors), the first `avg_drate` (the first sample is taken as is, as Linux does;
//!   the paper's formula from 0 would under-estimate the rate 8× at start), when a
//!   measurement cycle starts and ends (as the authors' code, above; a cycle counts the
//!   departure that starts it, as Linux does), the delay before any rate sample (0),
//!   the clamp of p to [0, 1], and the first update time (one `T_update` after
//!   creation; the first Linux PIE waits 500 ms, ns-2 a configurable `sUpdate_`).
//! - pie2013 preset: Linux's integer arithmetic (u32 p, 64 ns ticks, α/β truncation) is
//!   not reproduced; ε stays 1/8 (Linux; ns-2 `pie.cc` uses 1/2) and the burst
//!   allowance follows §III-D (checked at every rate sample) as well as the re-arming
//!   by `quiet_reset`; the other parameters are §IV's, not Linux's defaults.
//! - The qdisc is assumed created at simulated time 0 (first update at `first_update`).

use super::common::{resolve_limit, Limit, POSITIVE_MTU};
use super::fifo::{fifo_occupancy, PacketFifo};
use super::{LinkInfo, QdiscCtx, QueueDisc};
use crate::engine::rng::SimRng;
use crate::net::packet::PacketId;
use crate::params::{
    Algorithm, Family, Kind, Param, Reader, ANY_DURATION, POSITIVE_DURATION, PROBABILITY,
};
use crate::scenario::{AlgoSpec, QueueLimit, ScenarioError};

/// Which PIE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// RFC 8033 as in Linux `sch_pie.c`.
    Rfc8033,
    /// Pan et al., HPSR 2013 (paper 002).
    Pie2013,
    /// The authors' ns-2 `queue/pie.cc` (Cisco/CableLabs 2013-2014), which papers 002
    /// and 003 ran.
    Ns2,
}

/// ns-2 `pie.cc`'s burst-allowance states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BurstState {
    NoBurst,
    Protecting,
    InBurst,
}

/// ns-2 `pie.h` `BURST_RESET_TIMEOUT`: quiet time before the allowance can be re-armed.
const NS2_BURST_RESET_NS: u64 = 1_500_000_000;
/// ns-2 `pie.cc`: `p += 0.02` above this delay (Linux: 250 ms).
const NS2_BOOST_DELAY_NS: u64 = 200_000_000;

/// The auto-tuning table of α and β.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Autotune {
    /// RFC 8033 §4.2 / Linux: seven tiers down to /2048.
    Rfc8033,
    /// Paper 002 §III-B / Linux 3.14–3.x: three tiers (/8, /2, 1).
    Pie2013,
    /// ns-2 `pie.cc` `calculate_p`: /32 below 0.1 %, /8 below 1 %, /2 below 10 %, then
    /// ×2 below 1, ×8 below 10, ×32 (p is not bounded by 1 there).
    Ns2,
}

impl Autotune {
    /// The factor applied to α and β at drop probability `p`.
    pub fn scale(self, p: f64) -> f64 {
        match self {
            Autotune::Rfc8033 => {
                if p >= 0.1 {
                    return 1.0;
                }
                // Linux: halve, then quarter while p < 1/power, power = 100 .. 10^6.
                let mut s = 0.5;
                let mut power = 100.0;
                while p < 1.0 / power && power <= 1_000_000.0 {
                    s *= 0.25;
                    power *= 10.0;
                }
                s
            }
            Autotune::Pie2013 => {
                if p < 0.01 {
                    0.125
                } else if p < 0.1 {
                    0.5
                } else {
                    1.0
                }
            }
            Autotune::Ns2 => {
                if p < 0.001 {
                    1.0 / 32.0
                } else if p < 0.01 {
                    0.125
                } else if p < 0.1 {
                    0.5
                } else if p < 1.0 {
                    2.0
                } else if p < 10.0 {
                    8.0
                } else {
                    32.0
                }
            }
        }
    }
}

/// PIE's configuration (every knob; see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct PieConfig {
    pub variant: Variant,
    pub target_ns: u64,
    pub tupdate_ns: u64,
    pub first_update_ns: u64,
    pub alpha: f64,
    pub beta: f64,
    pub max_burst_ns: u64,
    pub limit: Limit,
    pub ecn: bool,
    pub ecn_drop_threshold: bool,
    pub ecn_threshold: f64,
    pub bytemode: bool,
    pub dq_rate_estimator: bool,
    pub dq_threshold_bytes: u64,
    pub rate_ewma: f64,
    pub autotune: Autotune,
    pub idle_decay: f64,
    pub cap_increase: bool,
    pub high_delay_boost: bool,
    pub early_drop_guard: bool,
    pub derandomize: bool,
    pub clamp_prob: bool,
    pub quiet_reset: bool,
    pub mtu_bytes: u64,
}

/// Linux `MAX_PROB` is 2⁵⁶ − 1 in a `u64`: p can grow to 2⁶⁴/2⁵⁶ before wrapping.
const LINUX_PROB_CEIL: f64 = 256.0;
/// Linux psched ticks are 64 ns (`PSCHED_SHIFT = 6`).
const PSCHED_SHIFT: u32 = 6;
/// Linux `PIE_SCALE`.
const PIE_SCALE: u32 = 8;

/// PIE's control state and the parts of the algorithm that do not depend on what the
/// queue does with a packet selected for dropping (shared with PVPIE).
#[derive(Debug, Clone)]
pub struct PieController {
    pub cfg: PieConfig,
    /// Drop probability.
    prob: f64,
    accu_prob: f64,
    /// Current and previous delay estimates, ns.
    qdelay_ns: u64,
    qdelay_old_ns: u64,
    /// Burst allowance left, ns.
    burst_ns: u64,
    /// Timestamp mode: time of the last dequeue (ns). Linux rate mode: start of the
    /// measurement (psched ticks). pie2013: start of the measurement (ns).
    dq_tstamp: Option<u64>,
    /// Bytes counted in the current measurement (`None` = no measurement running).
    dq_count: Option<u64>,
    /// Linux rate mode: bytes per psched tick << 8 (`u32`).
    avg_dq_rate_linux: u32,
    /// pie2013 and ns2: bytes per ns.
    avg_drate: f64,
    next_update_ns: u64,
    /// ns2: the burst-allowance state machine and its quiet-update count.
    burst_state: BurstState,
    burst_reset: u64,
}

impl PieController {
    pub fn new(cfg: PieConfig) -> Self {
        // ns-2 arms the allowance at the first arrival, not at creation.
        let burst = if cfg.variant == Variant::Ns2 {
            0
        } else {
            cfg.max_burst_ns
        };
        let first = cfg.first_update_ns;
        PieController {
            cfg,
            prob: 0.0,
            accu_prob: 0.0,
            qdelay_ns: 0,
            qdelay_old_ns: 0,
            burst_ns: burst,
            dq_tstamp: None,
            dq_count: None,
            avg_dq_rate_linux: 0,
            avg_drate: 0.0,
            next_update_ns: first,
            burst_state: BurstState::NoBurst,
            burst_reset: 0,
        }
    }

    /// Current drop probability (Linux may let it exceed 1).
    pub fn prob(&self) -> f64 {
        self.prob
    }
    /// The controller's state for the `qdisc_state` trace: the drop probability and the
    /// delay estimates the last update used (RFC 8033 §4.2's `p`, `qdelay`, `qdelay_old`).
    pub fn state(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("drop_prob", self.prob));
        out.push(("qdelay_ms", self.qdelay_ns as f64 / 1e6));
        out.push(("qdelay_old_ms", self.qdelay_old_ns as f64 / 1e6));
        out.push(("burst_allowance_ms", self.burst_ns as f64 / 1e6));
    }
    /// Burst allowance left, ns.
    pub fn burst_allowance_ns(&self) -> u64 {
        self.burst_ns
    }
    /// The current delay estimate, ns.
    pub fn qdelay_ns(&self) -> u64 {
        self.qdelay_ns
    }
    /// The previous delay estimate, ns.
    pub fn qdelay_old_ns(&self) -> u64 {
        self.qdelay_old_ns
    }
    /// The averaged departure rate in bits per second (0 before the first sample or
    /// in timestamp mode).
    pub fn avg_dq_rate_bps(&self) -> f64 {
        match self.cfg.variant {
            Variant::Pie2013 | Variant::Ns2 => self.avg_drate * 8e9,
            Variant::Rfc8033 => {
                self.avg_dq_rate_linux as f64 / (1u64 << PIE_SCALE) as f64 * 8e9
                    / (1u64 << PSCHED_SHIFT) as f64
            }
        }
    }
    /// Set the drop probability (tests and hand-worked traces).
    #[doc(hidden)]
    pub fn force_prob(&mut self, p: f64) {
        self.prob = p;
    }
    /// Set the burst allowance (tests and hand-worked traces).
    #[doc(hidden)]
    pub fn force_burst_ns(&mut self, ns: u64) {
        self.burst_ns = ns;
    }

    /// Linux `pie_vars_init` (re-initialisation at the end of an update).
    fn vars_init(&mut self) {
        self.burst_ns = self.cfg.max_burst_ns;
        self.dq_tstamp = None;
        self.accu_prob = 0.0;
        self.dq_count = None;
        self.avg_dq_rate_linux = 0;
    }

    /// The guards that exempt an arrival from early dropping (burst allowance, low
    /// delay with low p, backlog below 2 MTU). `backlog` excludes the arrival.
    pub fn exempt(&self, backlog_bytes: u64) -> bool {
        if self.burst_ns > 0 {
            return true;
        }
        if self.cfg.early_drop_guard {
            if self.qdelay_ns < self.cfg.target_ns / 2 && self.prob < 0.2 {
                return true;
            }
            if backlog_bytes < 2 * self.cfg.mtu_bytes {
                return true;
            }
        }
        false
    }

    /// Linux `pie_drop_early` (and paper 002 §III-A): whether to drop (or mark) an
    /// arriving packet of `size` bytes with `backlog` bytes queued before it.
    pub fn drop_early(&mut self, backlog_bytes: u64, size: u64, rng: &mut SimRng) -> bool {
        if self.cfg.variant == Variant::Ns2 {
            return self.drop_early_ns2(backlog_bytes, rng);
        }
        if self.exempt(backlog_bytes) {
            return false;
        }
        let local = if self.cfg.bytemode && size <= self.cfg.mtu_bytes {
            size as f64 * self.prob / self.cfg.mtu_bytes as f64
        } else {
            self.prob
        };
        if self.cfg.derandomize {
            if local == 0.0 {
                self.accu_prob = 0.0;
            } else {
                self.accu_prob += local;
            }
            if self.accu_prob < 0.85 {
                return false;
            }
            if self.accu_prob >= 8.5 {
                return true;
            }
        }
        if rng.uniform() < local {
            self.accu_prob = 0.0;
            return true;
        }
        false
    }

    /// ns-2 `PIEQueue::drop_early` (non-DOCSIS): the allowance is armed by the first
    /// arrival after a quiet spell (and the same arrival goes on to the coin); the guard
    /// tests the previous delay estimate; no de-randomisation.
    fn drop_early_ns2(&mut self, backlog_bytes: u64, rng: &mut SimRng) -> bool {
        if self.burst_ns > 0 {
            return false;
        }
        if self.burst_state == BurstState::NoBurst {
            self.burst_state = BurstState::Protecting;
            self.burst_ns = self.cfg.max_burst_ns;
        }
        let u = rng.uniform();
        if self.qdelay_old_ns < self.cfg.target_ns / 2 && self.prob < 0.2 {
            return false;
        }
        if backlog_bytes <= 2 * self.cfg.mtu_bytes {
            return false;
        }
        u <= self.prob
    }

    /// Whether a packet selected for dropping may be CE-marked instead (before asking
    /// whether it is ECT).
    pub fn may_mark(&self) -> bool {
        self.cfg.ecn && (!self.cfg.ecn_drop_threshold || self.prob <= self.cfg.ecn_threshold)
    }

    /// A packet was dropped at enqueue (Linux resets the accumulator at `out:`).
    pub fn on_drop(&mut self) {
        self.accu_prob = 0.0;
    }

    /// Linux `pie_process_dequeue` / paper 002 §III-C, §III-D: a packet of `size` bytes
    /// that waited `sojourn_ns` left, leaving `backlog_after` bytes queued.
    /// Take the head packet of `fifo` and account its departure ([`Self::on_dequeue`]):
    /// the dequeue of every discipline driven by this controller.
    pub fn dequeue_from(
        &mut self,
        fifo: &mut PacketFifo,
        ctx: &mut QdiscCtx<'_>,
    ) -> Option<PacketId> {
        let id = fifo.pop(ctx.pool)?;
        let p = ctx.pool.get(id);
        let sojourn = ctx.now_ns.saturating_sub(p.enqueue_ns);
        self.on_dequeue(ctx.now_ns, sojourn, p.size_bytes as u64, fifo.bytes());
        Some(id)
    }

    pub fn on_dequeue(&mut self, now: u64, sojourn_ns: u64, size: u64, backlog_after: u64) {
        match self.cfg.variant {
            Variant::Pie2013 => self.on_dequeue_2013(now, size, backlog_after),
            Variant::Ns2 => self.on_dequeue_ns2(now, size, backlog_after),
            Variant::Rfc8033 if !self.cfg.dq_rate_estimator => {
                self.qdelay_ns = sojourn_ns;
                let dtime = self.dq_tstamp.map_or(0, |t| now - t);
                self.dq_tstamp = Some(now);
                if backlog_after == 0 {
                    self.qdelay_ns = 0;
                }
                if dtime == 0 {
                    return;
                }
                self.burst_ns = self.burst_ns.saturating_sub(dtime);
            }
            Variant::Rfc8033 => {
                let th = self.cfg.dq_threshold_bytes;
                let now_ticks = now >> PSCHED_SHIFT;
                if backlog_after >= th && self.dq_count.is_none() {
                    self.dq_tstamp = Some(now_ticks);
                    self.dq_count = Some(0);
                }
                let Some(count) = self.dq_count.as_mut() else {
                    return;
                };
                *count += size;
                if *count < th {
                    return;
                }
                let scaled = (*count << PIE_SCALE) as u32;
                let start = self.dq_tstamp.unwrap_or(now_ticks);
                let dtime = now_ticks.wrapping_sub(start) as u32;
                if dtime == 0 {
                    return;
                }
                let rate = scaled / dtime;
                self.avg_dq_rate_linux = if self.avg_dq_rate_linux == 0 {
                    rate
                } else {
                    self.avg_dq_rate_linux - (self.avg_dq_rate_linux >> 3) + (rate >> 3)
                };
                if backlog_after < th {
                    self.dq_count = None;
                } else {
                    self.dq_count = Some(0);
                    self.dq_tstamp = Some(now_ticks);
                }
                let dtime_ns = (dtime as u64) << PSCHED_SHIFT;
                self.burst_ns = self.burst_ns.saturating_sub(dtime_ns);
            }
        }
    }

    fn on_dequeue_2013(&mut self, now: u64, size: u64, backlog_after: u64) {
        let th = self.cfg.dq_threshold_bytes;
        if self.dq_count.is_none() {
            if backlog_after <= th {
                return;
            }
            // A departure leaving more than dq_threshold queued starts a cycle.
            self.dq_tstamp = Some(now);
            self.dq_count = Some(0);
        }
        let start = self.dq_tstamp.unwrap_or(now);
        let count = self.dq_count.get_or_insert(0);
        *count += size;
        if *count <= th {
            return;
        }
        let dq_int = now - start;
        if dq_int == 0 {
            return;
        }
        let dq_rate = *count as f64 / dq_int as f64;
        self.avg_drate = if self.avg_drate == 0.0 {
            dq_rate
        } else {
            (1.0 - self.cfg.rate_ewma) * self.avg_drate + self.cfg.rate_ewma * dq_rate
        };
        // Restart the cycle while enough data is queued, else leave it.
        if backlog_after > th {
            self.dq_tstamp = Some(now);
            self.dq_count = Some(0);
        } else {
            self.dq_tstamp = None;
            self.dq_count = None;
        }
        self.burst_ns = self.burst_ns.saturating_sub(dq_int);
        let half = self.cfg.target_ns / 2;
        if self.prob == 0.0 && self.qdelay_ns < half && self.qdelay_old_ns < half {
            self.burst_ns = self.cfg.max_burst_ns;
        }
    }

    /// ns-2 `PIEQueue::deque` (byte mode): a cycle starts when the backlog after a
    /// departure is at least `dq_threshold` (that departure counted), ends once
    /// `dq_count >= dq_threshold`, averages with weight 1/2, and restarts while more
    /// than `dq_threshold` is queued. No burst accounting here (it is per update).
    fn on_dequeue_ns2(&mut self, now: u64, size: u64, backlog_after: u64) {
        let th = self.cfg.dq_threshold_bytes;
        if backlog_after >= th && self.dq_count.is_none() {
            self.dq_tstamp = Some(now);
            self.dq_count = Some(0);
        }
        let Some(count) = self.dq_count.as_mut() else {
            return;
        };
        *count += size;
        if *count < th {
            return;
        }
        let start = self.dq_tstamp.unwrap_or(now);
        let dq_int = now - start;
        if dq_int > 0 {
            let dq_rate = *count as f64 / dq_int as f64;
            self.avg_drate = if self.avg_drate == 0.0 {
                dq_rate
            } else {
                0.5 * self.avg_drate + 0.5 * dq_rate
            };
        }
        if backlog_after > th {
            self.dq_tstamp = Some(now);
            self.dq_count = Some(0);
        } else {
            self.dq_tstamp = None;
            self.dq_count = None;
        }
    }

    /// ns-2 `PIEQueue::calculate_p` (non-DOCSIS).
    fn update_ns2(&mut self, backlog_bytes: u64) {
        let cfg = &self.cfg;
        let missing_init = self.avg_drate <= 0.0;
        let qdelay = if missing_init {
            0
        } else {
            (backlog_bytes as f64 / self.avg_drate).round() as u64
        };
        let old = self.qdelay_old_ns;
        let secs = |ns: u64| ns as f64 * 1e-9;
        if self.burst_ns > 0 {
            self.prob = 0.0;
        } else {
            let mut delta = cfg.alpha * (secs(qdelay) - secs(cfg.target_ns))
                + cfg.beta * (secs(qdelay) - secs(old));
            delta *= Autotune::Ns2.scale(self.prob);
            if self.prob >= 0.1 && delta > 0.02 {
                delta = 0.02;
            }
            let mut p = self.prob + delta;
            if qdelay == 0 && old == 0 {
                p *= 0.98;
            } else if qdelay > NS2_BOOST_DELAY_NS {
                p += 0.02;
            }
            self.prob = p.max(0.0);
        }
        self.burst_ns = self.burst_ns.saturating_sub(cfg.tupdate_ns);
        let half = cfg.target_ns / 2;
        let quiet = qdelay < half && old < half && self.prob == 0.0;
        if quiet && !missing_init {
            // ns-2 sets dq_count = -1 and avg_dq_rate = 0; a cycle under way goes on
            // counting (from -1 byte there, from 0 here).
            if self.dq_count.is_some() {
                self.dq_count = Some(0);
            }
            self.avg_drate = 0.0;
        }
        if quiet && self.burst_ns == 0 {
            match self.burst_state {
                BurstState::Protecting => {
                    self.burst_state = BurstState::InBurst;
                    self.burst_reset = 0;
                }
                BurstState::InBurst => {
                    self.burst_reset += 1;
                    // `int burst_reset_limit = BURST_RESET_TIMEOUT / tUpdate`.
                    if self.burst_reset > NS2_BURST_RESET_NS / cfg.tupdate_ns.max(1) {
                        self.burst_reset = 0;
                        self.burst_state = BurstState::NoBurst;
                    }
                }
                BurstState::NoBurst => {}
            }
        } else if self.burst_state == BurstState::InBurst {
            self.burst_reset = 0;
        }
        self.qdelay_ns = qdelay;
        self.qdelay_old_ns = qdelay;
    }

    /// When the next probability update is due.
    pub fn next_update_ns(&self) -> u64 {
        self.next_update_ns
    }

    /// Run the periodic update (Linux `pie_timer` → `pie_calculate_probability`; paper
    /// 002 §III-B) with `backlog` bytes queued, and schedule the next one.
    pub fn update(&mut self, backlog_bytes: u64) {
        self.next_update_ns += self.cfg.tupdate_ns;
        if self.cfg.variant == Variant::Ns2 {
            self.update_ns2(backlog_bytes);
            return;
        }
        let cfg = &self.cfg;
        let rate_mode = cfg.variant == Variant::Pie2013 || cfg.dq_rate_estimator;
        let (qdelay, qdelay_old) = if rate_mode {
            let old = self.qdelay_ns;
            self.qdelay_old_ns = old;
            let q = match cfg.variant {
                Variant::Pie2013 | Variant::Ns2 => {
                    if self.avg_drate > 0.0 {
                        (backlog_bytes as f64 / self.avg_drate).round() as u64
                    } else {
                        0
                    }
                }
                Variant::Rfc8033 => {
                    if self.avg_dq_rate_linux > 0 {
                        ((backlog_bytes << PIE_SCALE) / self.avg_dq_rate_linux as u64)
                            << PSCHED_SHIFT
                    } else {
                        0
                    }
                }
            };
            (q, old)
        } else {
            (self.qdelay_ns, self.qdelay_old_ns)
        };
        let mut update_prob = !(qdelay == 0 && backlog_bytes != 0);
        let s = cfg.autotune.scale(self.prob);
        let (alpha, beta) = (cfg.alpha * s, cfg.beta * s);
        let secs = |ns: u64| ns as f64 * 1e-9;
        let mut delta =
            alpha * (secs(qdelay) - secs(cfg.target_ns)) + beta * (secs(qdelay) - secs(qdelay_old));
        if cfg.cap_increase && delta > 0.02 && self.prob >= 0.1 {
            delta = 0.02;
        }
        if cfg.high_delay_boost && qdelay > 250_000_000 {
            delta += 0.02;
        }
        let ceil = if cfg.clamp_prob { 1.0 } else { LINUX_PROB_CEIL };
        self.prob += delta;
        if delta > 0.0 {
            if self.prob > ceil {
                self.prob = ceil;
                update_prob = false;
            }
        } else if self.prob < 0.0 {
            self.prob = 0.0;
        }
        if qdelay == 0 && qdelay_old == 0 && update_prob {
            self.prob -= self.prob * cfg.idle_decay;
        }
        self.qdelay_ns = qdelay;
        if cfg.variant == Variant::Pie2013 && cfg.quiet_reset {
            let half = cfg.target_ns / 2;
            if self.qdelay_ns < half
                && self.qdelay_old_ns < half
                && self.prob == 0.0
                && self.avg_drate > 0.0
            {
                self.burst_ns = cfg.max_burst_ns;
                self.dq_tstamp = None;
                self.dq_count = None;
                self.avg_drate = 0.0;
            }
        }
        if cfg.variant == Variant::Rfc8033 {
            let half = cfg.target_ns / 2;
            if self.qdelay_ns < half
                && self.qdelay_old_ns < half
                && self.prob == 0.0
                && (!cfg.dq_rate_estimator || self.avg_dq_rate_linux > 0)
            {
                self.vars_init();
            }
        }
        if !rate_mode {
            self.qdelay_old_ns = qdelay;
        }
    }
}

// PIE's parameters, shared with PVPIE.
pub(crate) const VARIANT: Param = Param {
    name: "variant",
    kind: Kind::Keyword {
        values: &["rfc8033", "pie2013", "ns2"],
        unknown: "unknown PIE variant {got} (known: {known})",
        trim: false,
    },
    default: "\"rfc8033\" (\"pie2013\" with preset pie2013)",
    help: "RFC 8033 as Linux has it, paper 002's 2013 PIE, or ns-2's pie.cc",
};
pub(crate) const PRESET: Param = Param {
    name: "preset",
    kind: Kind::Keyword {
        values: &["pie2013", "abe-linux"],
        unknown: "unknown PIE preset {got} (known: {known})",
        trim: false,
    },
    default: "none",
    help: "a set of defaults; explicit parameters override it",
};
pub(crate) const TARGET: Param = Param {
    name: "target",
    kind: POSITIVE_DURATION,
    default: "\"15ms\" (rfc8033); \"20ms\" (pie2013, ns2, presets)",
    help: "reference delay",
};
pub(crate) const TUPDATE: Param = Param {
    name: "tupdate",
    kind: crate::params::UPDATE_PERIOD,
    default: "\"15ms\" (preset abe-linux: \"30ms\")",
    help: "probability update period",
};
pub(crate) const FIRST_UPDATE: Param = Param {
    name: "first_update",
    kind: ANY_DURATION,
    default: "\"500ms\" (rfc8033); tupdate (pie2013, ns2)",
    help: "time of the first update (Linux: HZ/2 after creation)",
};
pub(crate) const ALPHA: Param = Param {
    name: "alpha",
    kind: Kind::Number {
        what: "a non-negative number",
        ok: |x| x >= 0.0,
    },
    default: "0.125 (rfc8033, abe-linux); 0.25 (pie2013, ns2)",
    help: "α, Hz (Linux tc: 16 x this)",
};
pub(crate) const BETA: Param = Param {
    name: "beta",
    kind: Kind::Number {
        what: "a non-negative number",
        ok: |x| x >= 0.0,
    },
    default: "1.25 (rfc8033, abe-linux); 2.5 (pie2013, ns2)",
    help: "β, Hz (Linux tc: 16 x this)",
};
pub(crate) const MAX_BURST: Param = Param {
    name: "max_burst",
    kind: ANY_DURATION,
    default: "\"150ms\" (rfc8033); \"50ms\" (pie2013, ns2); \"100ms\" (abe-linux)",
    help: "burst allowance: no early drop while it lasts",
};
pub(crate) const LIMIT: Param = Param {
    name: "limit",
    kind: Kind::Limit,
    default: "\"1000p\"",
    help: "tail-drop limit (packets, bytes or BDPs)",
};
pub(crate) const ECN: Param = Param {
    name: "ecn",
    kind: Kind::Bool,
    default: "false (abe-linux: true)",
    help: "CE-mark ECT packets instead of dropping",
};
pub(crate) const ECN_DROP_THRESHOLD: Param = Param {
    name: "ecn_drop_threshold",
    kind: Kind::Bool,
    default: "true (rfc8033); false otherwise",
    help: "mark only while p ≤ `ecn_threshold`, drop above",
};
pub(crate) const ECN_THRESHOLD: Param = Param {
    name: "ecn_threshold",
    kind: PROBABILITY,
    default: "0.1",
    help: "the probability above which ECN packets are dropped",
};
pub(crate) const BYTEMODE: Param = Param {
    name: "bytemode",
    kind: Kind::Bool,
    default: "false",
    help: "scale p by size/MTU",
};
pub(crate) const DQ_RATE_ESTIMATOR: Param = Param {
    name: "dq_rate_estimator",
    kind: Kind::Bool,
    default: "false (rfc8033); true (pie2013, ns2, abe-linux)",
    help: "delay from the departure rate (Little's law) instead of timestamps",
};
pub(crate) const DQ_THRESHOLD: Param = Param {
    name: "dq_threshold",
    kind: Kind::Size {
        what: Some("a positive size like \"16KiB\""),
        ok: |b| b > 0,
    },
    default: "\"16384B\" (rfc8033); \"4500B\" (pie2013, ns2); \"10000B\" (abe-linux)",
    help: "bytes queued (and departed) for a rate measurement",
};
pub(crate) const RATE_EWMA: Param = Param {
    name: "rate_ewma",
    kind: PROBABILITY,
    default: "0.125 (pie2013 only; ns2: 0.5)",
    help: "ε of the departure-rate EWMA; `pie2013` only",
};
pub(crate) const AUTOTUNE: Param = Param {
    name: "autotune",
    kind: Kind::Keyword {
        values: &["rfc8033", "pie2013"],
        unknown: "unknown auto-tuning table {got} (known: {known})",
        trim: false,
    },
    default: "\"rfc8033\" (7 tiers; rfc8033 without preset); \"pie2013\" (3 tiers) otherwise",
    help: "α/β scaling: `\"rfc8033\"` 7 tiers (/2048 … 1), `\"pie2013\"` 3 tiers (p < 1 %: /8, < 10 %: /2)",
};
pub(crate) const IDLE_DECAY: Param = Param {
    name: "idle_decay",
    kind: Kind::Number {
        what: "a fraction in [0, 1]",
        ok: |x| (0.0..=1.0).contains(&x),
    },
    default: "1/64 (rfc8033); 0 (pie2013); 0.02 (preset pie2013, abe-linux)",
    help: "fraction of p removed per update when both delays are 0 (RFC 8033 §4.2 uses 0.02)",
};
pub(crate) const CAP_INCREASE: Param = Param {
    name: "cap_increase",
    kind: Kind::Bool,
    default: "true (rfc8033, preset pie2013); false (pie2013)",
    help: "cap Δp at 2 % when p ≥ 10 %",
};
pub(crate) const HIGH_DELAY_BOOST: Param = Param {
    name: "high_delay_boost",
    kind: Kind::Bool,
    default: "true (rfc8033, preset pie2013); false (pie2013)",
    help: "add 2 % when the delay exceeds 250 ms",
};
pub(crate) const EARLY_DROP_GUARD: Param = Param {
    name: "early_drop_guard",
    kind: Kind::Bool,
    default: "true (rfc8033, preset pie2013); false (pie2013)",
    help: "no early drop when qdelay < target/2 and p < 20 %, or backlog < 2 MTU",
};
pub(crate) const DERANDOMIZE: Param = Param {
    name: "derandomize",
    kind: Kind::Bool,
    default: "true (rfc8033); false otherwise",
    help: "Linux's accumulated-probability de-randomisation",
};
pub(crate) const CLAMP_PROB: Param = Param {
    name: "clamp_prob",
    kind: Kind::Bool,
    default: "false (rfc8033); true otherwise",
    help: "keep p ≤ 1 (`false`: p may grow to 256 as in Linux, whose `MAX_PROB` lives in a u64)",
};
pub(crate) const QUIET_RESET: Param = Param {
    name: "quiet_reset",
    kind: Kind::Bool,
    default: "false (pie2013 only; preset pie2013: true)",
    help: "`pie2013` only: at an update with p = 0 and both delays below target/2, also reset the burst allowance, abandon the rate measurement and forget the averaged rate (`rfc8033` always re-initialises, as Linux)",
};
pub(crate) const MTU: Param = Param {
    name: "mtu",
    kind: POSITIVE_MTU,
    default: "the link's MTU",
    help: "size for `bytemode` and the 2-MTU guard",
};

/// PIE's parameters.
pub const TABLE: Algorithm = Algorithm {
    name: "pie",
    aliases: &[],
    family: Family::QueueDiscipline,
    summary: "Proportional Integral controller Enhanced: drop probability from the queue delay",
    reference: "RFC 8033 and Linux net/sched/sch_pie.c (rfc8033); paper 002, Pan et al. HPSR 2013 (pie2013); ns-2 pie.cc (ns2)",
    params: &[
        VARIANT,
        PRESET,
        TARGET,
        TUPDATE,
        FIRST_UPDATE,
        ALPHA,
        BETA,
        MAX_BURST,
        LIMIT,
        ECN,
        ECN_DROP_THRESHOLD,
        ECN_THRESHOLD,
        BYTEMODE,
        DQ_RATE_ESTIMATOR,
        DQ_THRESHOLD,
        RATE_EWMA,
        AUTOTUNE,
        IDLE_DECAY,
        CAP_INCREASE,
        HIGH_DELAY_BOOST,
        EARLY_DROP_GUARD,
        DERANDOMIZE,
        CLAMP_PROB,
        QUIET_RESET,
        MTU,
    ],
};

const MS: u64 = 1_000_000;

/// Read PIE's parameters (shared with PVPIE, whose own defaults `pvpie` selects). Returns
/// the configuration; the caller finishes `r`.
pub(crate) fn read_pie_config(
    r: &Reader<'_>,
    link: LinkInfo,
    pvpie: bool,
) -> Result<PieConfig, ScenarioError> {
    r.require_strings(&["preset", "variant", "autotune"])?;
    let preset = r.get("preset")?.map(|v| v.word());
    let default_variant = if preset == Some("pie2013") {
        "pie2013"
    } else {
        "rfc8033"
    };
    let variant = match r.word("variant", default_variant)? {
        "pie2013" => Variant::Pie2013,
        "ns2" => Variant::Ns2,
        _ => Variant::Rfc8033,
    };
    let ns2 = variant == Variant::Ns2;
    if ns2 {
        if preset.is_some() {
            return Err(r.error(
                "preset",
                "variant ns2 is ns-2's pie.cc as it is; it takes no preset",
            ));
        }
        // What ns-2's pie.cc fixes (or has no switch for).
        for key in [
            "rate_ewma",
            "autotune",
            "idle_decay",
            "cap_increase",
            "high_delay_boost",
            "early_drop_guard",
            "derandomize",
            "clamp_prob",
            "quiet_reset",
            "bytemode",
            "dq_rate_estimator",
            "ecn_drop_threshold",
        ] {
            if r.given(key) {
                return Err(r.error(key, "variant ns2 follows ns-2's pie.cc, which fixes this"));
            }
        }
    }
    // ns2 shares pie2013's defaults (paper 002 §IV) and its departure-rate delay.
    let v13 = variant == Variant::Pie2013 || ns2;
    let abe = preset == Some("abe-linux");
    let p13 = preset == Some("pie2013") || (preset.is_none() && v13);
    // The pie2013 preset adds the safeguards of its authors' first code (Linux 3.14
    // `sch_pie.c`; see the module documentation) to the paper's algorithm.
    let authors = preset == Some("pie2013") && v13;

    // Defaults: variant first, then the preset's values.
    let (mut target, mut tupdate, mut alpha, mut beta, mut max_burst) = if v13 {
        (20 * MS, 15 * MS, 0.25, 2.5, 50 * MS)
    } else {
        (15 * MS, 15 * MS, 0.125, 1.25, 150 * MS)
    };
    if p13 {
        (target, tupdate, alpha, beta, max_burst) = (20 * MS, 15 * MS, 0.25, 2.5, 50 * MS);
    }
    if abe {
        (target, tupdate, alpha, beta, max_burst) = (20 * MS, 30 * MS, 0.125, 1.25, 100 * MS);
    }
    let linux_now = !v13 && !abe;
    let target_ns = r.ns("target", target)?;
    let tupdate_ns = r.ns("tupdate", tupdate)?;
    let first_default = if v13 { tupdate_ns } else { 500 * MS };
    let first_update_ns = r.ns("first_update", first_default)?;
    let alpha = r.number("alpha", alpha)?;
    let beta = r.number("beta", beta)?;
    let max_burst_ns = r.ns("max_burst", max_burst)?;
    let limit = r.limit("limit")?.unwrap_or(QueueLimit::Packets(1000));
    let ecn = r.boolean("ecn", pvpie || abe)?;
    let ecn_drop_threshold = r.boolean("ecn_drop_threshold", linux_now && !pvpie)?;
    let ecn_threshold = r.number("ecn_threshold", 0.1)?;
    let bytemode = if pvpie {
        false
    } else {
        r.boolean("bytemode", false)?
    };
    let dq_rate_estimator = r.boolean("dq_rate_estimator", v13 || abe)?;
    if v13 && !dq_rate_estimator {
        return Err(r.error(
            "dq_rate_estimator",
            "variant pie2013 estimates the delay from the departure rate only (paper 002 §III-C); remove the key or use variant = \"rfc8033\"",
        ));
    }
    let dq_default = if v13 {
        4500
    } else if abe {
        10_000
    } else {
        16_384
    };
    let dq_threshold_bytes = r.bytes("dq_threshold", dq_default)?;
    let rate_ewma = if v13 {
        r.number("rate_ewma", 0.125)?
    } else {
        if r.given("rate_ewma") {
            return Err(r.error(
                "rate_ewma",
                "only variant pie2013 has a configurable rate weight (Linux fixes 1/8)",
            ));
        }
        0.125
    };
    let autotune = match r.word("autotune", if linux_now { "rfc8033" } else { "pie2013" })? {
        "rfc8033" => Autotune::Rfc8033,
        _ => Autotune::Pie2013,
    };
    let decay_default = if authors || abe {
        0.02
    } else if v13 {
        0.0
    } else {
        1.0 / 64.0
    };
    let idle_decay = r.number("idle_decay", decay_default)?;
    let cap_increase = r.boolean("cap_increase", !v13 || authors)?;
    let high_delay_boost = r.boolean("high_delay_boost", !v13 || authors)?;
    let early_drop_guard = r.boolean("early_drop_guard", !v13 || authors)?;
    let derandomize = if pvpie {
        false
    } else {
        r.boolean("derandomize", linux_now)?
    };
    let clamp_prob = r.boolean("clamp_prob", !linux_now || pvpie)?;
    let quiet_reset = if v13 {
        r.boolean("quiet_reset", authors)?
    } else {
        if r.given("quiet_reset") {
            return Err(r.error(
                "quiet_reset",
                "only variant pie2013 has this switch (variant rfc8033 always re-initialises, as Linux does)",
            ));
        }
        false
    };
    let mtu_bytes = r.bytes("mtu", link.mtu_bytes as u64)?;
    let limit = resolve_limit(limit, link);
    if ns2 {
        // Fixed by ns-2's pie.cc (see the module documentation).
        return Ok(PieConfig {
            variant,
            target_ns,
            tupdate_ns,
            first_update_ns,
            alpha,
            beta,
            max_burst_ns,
            limit,
            ecn,
            ecn_drop_threshold: r.given("ecn_threshold"),
            ecn_threshold,
            bytemode: false,
            dq_rate_estimator: true,
            dq_threshold_bytes,
            rate_ewma: 0.5,
            autotune: Autotune::Ns2,
            idle_decay: 0.02,
            cap_increase: true,
            high_delay_boost: true,
            early_drop_guard: true,
            derandomize: false,
            clamp_prob: false,
            quiet_reset: true,
            mtu_bytes,
        });
    }
    Ok(PieConfig {
        variant,
        target_ns,
        tupdate_ns,
        first_update_ns,
        alpha,
        beta,
        max_burst_ns,
        limit,
        ecn,
        ecn_drop_threshold,
        ecn_threshold,
        bytemode,
        dq_rate_estimator,
        dq_threshold_bytes,
        rate_ewma,
        autotune,
        idle_decay,
        cap_increase,
        high_delay_boost,
        early_drop_guard,
        derandomize,
        clamp_prob,
        quiet_reset,
        mtu_bytes,
    })
}

/// The PIE queue: one FIFO, drops and marks at enqueue.
#[derive(Debug)]
pub struct Pie {
    ctrl: PieController,
    fifo: PacketFifo,
}

impl Pie {
    pub fn new(cfg: PieConfig) -> Self {
        Pie {
            ctrl: PieController::new(cfg),
            fifo: PacketFifo::default(),
        }
    }

    pub fn from_spec(spec: &AlgoSpec, path: &str, link: LinkInfo) -> Result<Self, ScenarioError> {
        let r = Reader::new(&TABLE, spec, path);
        let cfg = read_pie_config(&r, link, false)?;
        r.finish()?;
        Ok(Pie::new(cfg))
    }

    pub fn controller(&self) -> &PieController {
        &self.ctrl
    }

    pub fn controller_mut(&mut self) -> &mut PieController {
        &mut self.ctrl
    }
}

impl QueueDisc for Pie {
    /// Linux `sch_pie.c`: `.peek = qdisc_peek_dequeued`.
    fn peek_dequeues(&self) -> bool {
        true
    }
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx<'_>) {
        let size = ctx.pool.get(id).size_bytes as u64;
        if !self
            .ctrl
            .cfg
            .limit
            .admits(self.fifo.len(), self.fifo.bytes(), size)
        {
            self.ctrl.on_drop();
            ctx.drop_packet(id);
            return;
        }
        let enqueue = !self.ctrl.drop_early(self.fifo.bytes(), size, ctx.rng)
            || (self.ctrl.may_mark() && ctx.mark_ce(id));
        if enqueue {
            self.fifo.push(id, size);
        } else {
            self.ctrl.on_drop();
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
    }
    fn on_timer(&mut self, _ctx: &mut QdiscCtx<'_>) {
        self.ctrl.update(self.fifo.bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::ParamValue;

    /// RFC 8033 §4.2's table, as Linux computes it.
    #[test]
    fn seven_tier_table() {
        let t = Autotune::Rfc8033;
        let cases = [
            (0.0, 1.0 / 2048.0),
            (0.9e-6, 1.0 / 2048.0),
            (1e-6, 1.0 / 512.0),
            (5e-6, 1.0 / 512.0),
            (1e-5, 1.0 / 128.0),
            (5e-5, 1.0 / 128.0),
            (1e-4, 1.0 / 32.0),
            (5e-4, 1.0 / 32.0),
            (1e-3, 1.0 / 8.0),
            (5e-3, 1.0 / 8.0),
            (1e-2, 1.0 / 2.0),
            (0.05, 1.0 / 2.0),
            (0.1, 1.0),
            (0.5, 1.0),
        ];
        for (p, s) in cases {
            assert_eq!(t.scale(p), s, "p = {p}");
        }
    }

    /// ns-2 `pie.cc` `calculate_p`'s table.
    #[test]
    fn ns2_tier_table() {
        let t = Autotune::Ns2;
        let cases = [
            (0.0, 1.0 / 32.0),
            (0.000_99, 1.0 / 32.0),
            (0.001, 1.0 / 8.0),
            (0.0099, 1.0 / 8.0),
            (0.01, 0.5),
            (0.0999, 0.5),
            (0.1, 2.0),
            (0.99, 2.0),
            (1.0, 8.0),
            (9.9, 8.0),
            (10.0, 32.0),
        ];
        for (p, s) in cases {
            assert_eq!(t.scale(p), s, "p = {p}");
        }
    }

    fn ns2_controller() -> PieController {
        let spec = AlgoSpec {
            kind: "pie".into(),
            params: [
                ("variant", "ns2"),
                ("target", "20ms"),
                ("tupdate", "30ms"),
                ("max_burst", "100ms"),
                ("dq_threshold", "10000B"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), ParamValue::Str(v.to_owned())))
            .chain([
                ("alpha".to_owned(), ParamValue::Number(0.125)),
                ("beta".to_owned(), ParamValue::Number(1.25)),
            ])
            .collect(),
        };
        let link = LinkInfo {
            rate_bps: 10_000_000,
            bdp_bytes: 125_000.0,
            mtu_bytes: 1500,
        };
        let r = Reader::new(&TABLE, &spec, "q");
        PieController::new(read_pie_config(&r, link, false).unwrap())
    }

    /// ns-2 `pie.cc` worked by hand (α 0.125, β 1.25, target 20 ms, tupdate 30 ms,
    /// max_burst 100 ms). Rate: two 5000 B departures 4 µs apart with 20 kB left make a
    /// 10000 B cycle of 4 µs: 2.5 B/ns, so a backlog of B bytes is B/2.5 ns of delay.
    #[test]
    fn ns2_update_worked_by_hand() {
        let mut c = ns2_controller();
        let mut rng = crate::engine::rng::stream(1, crate::engine::rng::StreamKind::Qdisc, 0);
        assert_eq!(
            c.burst_allowance_ns(),
            0,
            "armed by the first arrival, not at creation"
        );
        assert!(!c.drop_early(0, 1500, &mut rng));
        assert_eq!(c.burst_allowance_ns(), 100_000_000);
        c.on_dequeue(0, 0, 5000, 20_000);
        c.on_dequeue(4_000, 0, 5000, 20_000);
        assert!((c.avg_dq_rate_bps() - 2.5 * 8e9).abs() < 1.0);
        // Updates 1-4 (40 ms of delay): p held at 0 while the allowance lasts, which
        // loses 30 ms per update: 100 → 70 → 40 → 10 → 0.
        for left in [70, 40, 10, 0] {
            c.update(100_000_000);
            assert_eq!(c.prob(), 0.0);
            assert_eq!(c.burst_allowance_ns(), left * 1_000_000);
        }
        // Update 5: Δ = 0.125 (0.040 - 0.020) + 1.25 (0.040 - 0.040) = 0.0025, /32 at
        // p < 0.1 %: p = 7.8125e-5.
        c.update(100_000_000);
        assert!((c.prob() - 7.8125e-5).abs() < 1e-12);
        // Update 6 (80 ms): Δ = 0.125 x 0.06 + 1.25 x 0.04 = 0.0575, /32: p = 0.001875.
        c.update(200_000_000);
        assert!((c.prob() - 0.001875).abs() < 1e-12);
        // Update 7 (300 ms): Δ = 0.125 x 0.28 + 1.25 x 0.22 = 0.31, /8 at p < 1 %:
        // 0.03875; above 200 ms (ns-2; Linux 250 ms) + 0.02: p = 0.060625.
        c.update(750_000_000);
        assert!((c.prob() - 0.060625).abs() < 1e-12);
        // At p = 0.5, Δ = 0.035 x 2 = 0.07 is capped at 0.02, + 0.02: 0.54; at p = 1.5
        // (ns-2 does not bound p by 1) Δ = 0.035 x 8, capped: 1.54.
        c.force_prob(0.5);
        c.update(750_000_000);
        assert!((c.prob() - 0.54).abs() < 1e-12);
        c.force_prob(1.5);
        c.update(750_000_000);
        assert!((c.prob() - 1.54).abs() < 1e-12);
        // The guard tests the previous delay (300 ms): every arrival drops at p > 1.
        assert!((0..100).all(|_| c.drop_early(10_000, 1500, &mut rng)));
        // Empty: Δ = 0.125 (0 - 0.02) + 1.25 (0 - 0.3) = -0.3775, x8 at p < 10: p = 0.
        c.update(0);
        assert_eq!(c.prob(), 0.0);
        // Quiet updates (both delays below 10 ms, p = 0, no allowance): the state
        // goes Protecting → InBurst, then 1.5 s / 30 ms = 50 more quiet updates are
        // needed (the 51st resets it) before an arrival re-arms the allowance.
        for _ in 0..51 {
            c.update(0);
            assert!(!c.drop_early(0, 1500, &mut rng));
            assert_eq!(c.burst_allowance_ns(), 0, "not re-armed yet");
        }
        c.update(0);
        assert!(!c.drop_early(0, 1500, &mut rng));
        assert_eq!(
            c.burst_allowance_ns(),
            100_000_000,
            "re-armed after 1.5 s quiet"
        );
    }

    #[test]
    fn ns2_refuses_the_knobs_it_fixes() {
        let link = LinkInfo {
            rate_bps: 10_000_000,
            bdp_bytes: 125_000.0,
            mtu_bytes: 1500,
        };
        let spec = |extra: (&str, &str), pvpie: bool| {
            let spec = AlgoSpec {
                kind: "pie".into(),
                params: [("variant", "ns2"), extra]
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), ParamValue::Str(v.to_owned())))
                    .collect(),
            };
            let table = if pvpie {
                &crate::qdisc::pvpie::TABLE
            } else {
                &TABLE
            };
            read_pie_config(&Reader::new(table, &spec, "q"), link, pvpie).map(|_| ())
        };
        let e = spec(("autotune", "rfc8033"), false).unwrap_err();
        assert_eq!(e.path, "q.autotune");
        assert!(e.message.contains("ns-2's pie.cc"), "{}", e.message);
        let e = spec(("target", "20ms"), true).unwrap_err();
        assert!(
            e.message.contains("known: rfc8033, pie2013)"),
            "{}",
            e.message
        );
        assert!(spec(("target", "20ms"), false).is_ok());
    }

    /// Paper 002 §III-B: p < 1% → /8, p < 10% → /2, else 1.
    #[test]
    fn three_tier_table() {
        let t = Autotune::Pie2013;
        assert_eq!(t.scale(0.0), 0.125);
        assert_eq!(t.scale(0.0099), 0.125);
        assert_eq!(t.scale(0.01), 0.5);
        assert_eq!(t.scale(0.0999), 0.5);
        assert_eq!(t.scale(0.1), 1.0);
    }
}
