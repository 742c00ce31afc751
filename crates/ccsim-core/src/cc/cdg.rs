//! CDG (CAIA Delay-Gradient), as Linux `net/ipv4/tcp_cdg.c`.
//!
//! References: Linux `net/ipv4/tcp_cdg.c` (`tcp_cdg_acked`, `tcp_cdg_grad`,
//! `tcp_cdg_backoff`, `tcp_cdg_cong_avoid`, `tcp_cdg_ssthresh`, `tcp_cdg_cwnd_event`,
//! `tcp_cdg_hystart_update`); Hayes & Armitage, "Revisiting TCP congestion control using
//! delay gradients" (IFIP Networking 2011); paper 000 (Tangenes et al.) Section II for G.
//!
//! - RTT gathering (`pkts_acked`, µs): the minimum and maximum RTT of each round (a round
//!   ends when snd_una passes the snd_nxt recorded at its start). Delayed-ACK filter (only
//!   with nothing SACKed): after ACKs covering several packets, up to 5 following
//!   single-packet ACKs may only lower an existing minimum.
//! - Per round (in `cong_avoid`, never during CWR/Recovery): the gradients `g_min =
//!   min_n - min_{n-1}` and `g_max = max_n - max_{n-1}` enter a moving window of `window`
//!   rounds whose **sums** (not means) are used; `grad = sum g_min if > 0, else sum g_max`,
//!   extrapolated as `grad * window / filled` until the window has filled once.
//! - Backoff with probability `1 - exp(-grad[µs] * backoff_factor * 1e-6)` when grad > 0:
//!   `tcp_enter_cwr()` (here `tp.request_cwr`) with `ssthresh = max(2, cwnd *
//!   backoff_beta)`, no growth on that ACK. With the window full and a constant per-round
//!   gradient ḡ this is paper 000's `P = 1 - exp(-ḡ/G)` with
//!   `backoff_factor = 1000 / (G_ms * window)`.
//! - Ineffectual backoff (`use_ineff`): every backoff decision counts; beyond `use_ineff` in
//!   a row without a summed gradient <= -32 µs, backoffs are skipped.
//! - Shadow window (`use_shadow`): grows with cwnd's Reno increments, is raised to cwnd at
//!   a backoff, limited to cwnd when not cwnd-limited; on loss `shadow = min(shadow / 2,
//!   cwnd)` and `ssthresh = max(2, shadow, cwnd / 2)` (plain `max(2, cwnd / 2)` without it).
//! - Loss tolerance (`use_tolerance`): the sums rounded to 1/64 classify the queue; a loss
//!   with a non-full queue does not reduce.
//! - CDG's own HyStart (`hystart_detect`, at any cwnd while cwnd < ssthresh): ACK train
//!   (ACKs < 3 ms apart spanning more than max(delay_min / 2, 125 µs)) and delay (after 8
//!   calls in a round, the round's minimum above max(9/8 delay_min, 125 µs)); either sets
//!   `ssthresh = cwnd`.
//! - Growth is Reno's; undo is Reno's (`max(cwnd, prior_cwnd)`).
//!
//! Parameters: [`TABLE`] (`ccsim algorithms cdg`), Linux's module parameters with their
//! defaults (`backoff_beta` 0.7071 x 1024 = 724/1024) and three additions: `g` (paper 000's
//! G in ms; the factor `1000 / (g * window)` is rounded as an integer module parameter
//! holds it: G = 3 gives 41.7 -> 42, Linux's default, G = 100 and 120 both give 1, and a
//! factor rounded to 0 disables the delay backoff as `backoff_factor = 0` does in Linux),
//! `exact_factor` and the `coexistence` shorthand. `g` and `backoff_factor` cannot both be
//! given in one scenario table; at run time the one set last wins.
//!
//! Runtime changes take effect from the next ACK: `g` or `window` recompute the factor;
//! a new `window` also restarts the gradient window (Linux only allows it at load time).
//!
//! Departures from Linux:
//! - Linux draws `prandom_u32()` against `nexp_u32()`, a table approximation of
//!   `exp(-x) * (2^32 - 1)` that is exactly 0 for grad x factor >= 2^24; ccsim compares a
//!   uniform draw with the exact `exp(-grad x factor x 1e-6)` (same cut-off in the
//!   integer-factor mode). The draw comes from the controller's own seeded stream
//!   ([`Cdg::seed_rng`]).
//! - grad x factor is computed in 32 bits and wraps as in Linux (only with the integer
//!   factor); the 16-bit `backoff_cnt` wraps too.
//! - The µs clock is 64-bit (Linux keeps 32-bit µs stamps that wrap after 71 minutes).

use super::{reno, AckSample, CaEvent, CcState, CongestionControl, Knob, KnobUnit, ReductionCause};
use crate::engine::rng::{stream, SimRng, StreamKind};
use crate::params::{self, Algorithm, Family, Kind, Param, Settable};
use crate::scenario::{ParamValue, ScenarioError};

const HYSTART_ACK_TRAIN: u32 = 1;
const HYSTART_DELAY: u32 = 2;

/// cdg's parameters.
pub const TABLE: Algorithm<Settable<Cdg>> = Algorithm {
    name: "cdg",
    aliases: &[],
    family: Family::CongestionControl,
    summary: "CAIA Delay-Gradient: probabilistic backoff on a rising RTT gradient",
    reference: "Linux net/ipv4/tcp_cdg.c; Hayes & Armitage, IFIP Networking 2011; paper 000 §II for g",
    params: &[
        Settable {
            param: Param {
                name: "window",
                kind: Kind::Number { what: "a power of two in [1, 256]", ok: |w| w.fract() == 0.0 && (1.0..=256.0).contains(&w) && (w as u32).is_power_of_two() },
                default: "8",
                help: "rounds in the gradient window; a change restarts the window",
            },
            set: |c, v| {
                let w = v.number() as u32;
                if w != c.cfg.window {
                    c.cfg.window = w;
                    c.alloc_gradients();
                }
                c.recompute_factor();
            },
        },
        Settable {
            param: Param {
                name: "backoff_beta",
                kind: Kind::Number { what: "a number in [0, 1]", ok: |b| (0.0..=1.0).contains(&b) },
                default: "724/1024 (0.7070)",
                help: "multiplicative decrease of a delay backoff",
            },
            set: |c, v| c.cfg.backoff_beta = v.number(),
        },
        Settable {
            param: Param {
                name: "backoff_factor",
                kind: Kind::Number { what: "a number >= 0", ok: |f| f >= 0.0 },
                default: "42",
                help: "Linux's factor; rounded to an integer unless `exact_factor`; 0 disables the delay backoff",
            },
            set: |c, v| {
                c.cfg.factor_source = FactorSource::Factor(v.number());
                c.recompute_factor();
            },
        },
        Settable {
            param: Param {
                name: "g",
                kind: Kind::Number { what: "a positive number (milliseconds)", ok: |g| g > 0.0 },
                default: "none (backoff_factor applies)",
                help: "paper 000's G instead of `backoff_factor`: factor = round(1000 / (g · window)) (G = 3 gives 42; a G large enough to round to 0 disables the backoff)",
            },
            set: |c, v| {
                c.cfg.factor_source = FactorSource::G(v.number());
                c.recompute_factor();
            },
        },
        Settable {
            param: Param {
                name: "exact_factor",
                kind: Kind::Bool,
                default: "false",
                help: "keep the real-valued factor (no rounding, no 32-bit wrap of grad × factor)",
            },
            set: |c, v| {
                c.cfg.exact_factor = v.boolean();
                c.recompute_factor();
            },
        },
        Settable {
            param: Param {
                name: "hystart_detect",
                kind: Kind::Integer { lo: 0, hi: 3 },
                default: "3",
                help: "CDG's HyStart: 1 ACK train, 2 delay, 3 both",
            },
            set: |c, v| c.cfg.hystart_detect = v.int() as u32,
        },
        Settable {
            param: Param {
                name: "use_ineff",
                kind: Kind::Integer { lo: 0, hi: u32::MAX as u64 },
                default: "5",
                help: "backoffs in a row without a falling gradient after which backoff is skipped (0: off)",
            },
            set: |c, v| c.cfg.use_ineff = v.int() as u32,
        },
        Settable {
            param: Param {
                name: "use_shadow",
                kind: Kind::Bool,
                default: "true",
                help: "shadow window: on loss `ssthresh = max(2, shadow, cwnd/2)` with `shadow = min(shadow/2, cwnd)` (without it `max(2, cwnd/2)`)",
            },
            set: |c, v| c.cfg.use_shadow = v.boolean(),
        },
        Settable {
            param: Param {
                name: "use_tolerance",
                kind: Kind::Bool,
                default: "false",
                help: "a loss with a non-full queue does not reduce",
            },
            set: |c, v| c.cfg.use_tolerance = v.boolean(),
        },
        Settable {
            param: Param {
                name: "coexistence",
                kind: Kind::Bool,
                default: "true",
                help: "shorthand: `false` sets `use_shadow = false`, `use_ineff = 0` (paper 000's \"co-existence heuristics disabled\"); `true` restores `true`, `5`",
            },
            set: |c, v| {
                let on = v.boolean();
                c.cfg.use_shadow = on;
                c.cfg.use_ineff = if on { 5 } else { 0 };
            },
        },
    ],
};

/// Linux `struct cdg_minmax` (µs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct MinMax {
    min: i32,
    max: i32,
}

impl MinMax {
    /// Linux `v64 != 0`.
    fn is_set(self) -> bool {
        self.min != 0 || self.max != 0
    }
}

/// Linux `enum cdg_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Unknown,
    NonFull,
    Full,
    Backoff,
}

/// Where the backoff factor comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
enum FactorSource {
    /// `backoff_factor` as given.
    Factor(f64),
    /// Paper 000's G in milliseconds.
    G(f64),
}

/// Linux `min_not_zero()`.
fn min_not_zero(a: i32, b: i32) -> i32 {
    match (a, b) {
        (0, b) => b,
        (a, 0) => a,
        (a, b) => a.min(b),
    }
}

/// Linux `DIV_ROUND_CLOSEST()` for a positive divisor.
fn div_round_closest(x: i32, d: i32) -> i32 {
    if x > 0 {
        (x + d / 2) / d
    } else {
        (x - d / 2) / d
    }
}

/// CDG's configuration: the values of its [`TABLE`], kept apart from the per-flow state
/// (as quinn's `congestion/cubic.rs` does).
#[derive(Debug, Clone)]
pub struct CdgConfig {
    window: u32,
    backoff_beta: f64,
    factor_source: FactorSource,
    exact_factor: bool,
    /// Effective factor (an integer unless `exact_factor`).
    factor: f64,
    hystart_detect: u32,
    use_ineff: u32,
    use_shadow: bool,
    use_tolerance: bool,
}

/// CDG state (Linux `struct cdg`) and parameters.
#[derive(Debug, Clone)]
pub struct Cdg {
    /// The parameters ([`TABLE`]).
    cfg: CdgConfig,

    // ----- Linux struct cdg
    rtt: MinMax,
    rtt_prev: MinMax,
    /// `window` slots when window > 1 (Linux allocates none for window 1).
    gradients: Vec<MinMax>,
    gsum: MinMax,
    gfilled: bool,
    tail: u32,
    state: State,
    delack: u8,
    rtt_seq: u64,
    shadow_wnd: u32,
    backoff_cnt: u16,
    sample_cnt: u16,
    delay_min: i32,
    /// µs.
    last_ack: u64,
    round_start: u64,

    rng: SimRng,
}

impl Cdg {
    /// CDG with Linux's defaults, drawing from a stream seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        let mut c = Cdg {
            cfg: CdgConfig {
                window: 8,
                backoff_beta: 724.0 / 1024.0,
                factor_source: FactorSource::Factor(42.0),
                exact_factor: false,
                factor: 42.0,
                hystart_detect: HYSTART_ACK_TRAIN | HYSTART_DELAY,
                use_ineff: 5,
                use_shadow: true,
                use_tolerance: false,
            },
            rtt: MinMax::default(),
            rtt_prev: MinMax::default(),
            gradients: Vec::new(),
            gsum: MinMax::default(),
            gfilled: false,
            tail: 0,
            state: State::Unknown,
            delack: 0,
            rtt_seq: 0,
            shadow_wnd: 0,
            backoff_cnt: 0,
            sample_cnt: 0,
            delay_min: 0,
            last_ack: 0,
            round_start: 0,
            rng: stream(seed, StreamKind::Tcp, 0),
        };
        c.alloc_gradients();
        c
    }

    /// Replace the random stream (one per flow, from the scenario seed).
    pub fn seed_rng(&mut self, rng: SimRng) {
        self.rng = rng;
    }

    /// The backoff factor in use.
    pub fn backoff_factor(&self) -> f64 {
        self.cfg.factor
    }

    fn alloc_gradients(&mut self) {
        self.gradients = if self.cfg.window > 1 {
            vec![MinMax::default(); self.cfg.window as usize]
        } else {
            Vec::new()
        };
        self.gsum = MinMax::default();
        self.gfilled = false;
        self.tail = 0;
    }

    fn recompute_factor(&mut self) {
        let raw = match self.cfg.factor_source {
            FactorSource::Factor(f) => f,
            FactorSource::G(g) => 1000.0 / (g * self.cfg.window as f64),
        };
        self.cfg.factor = if self.cfg.exact_factor {
            raw
        } else {
            raw.round().min(u32::MAX as f64)
        };
    }

    /// Linux `tcp_cdg_hystart_update()`.
    fn hystart_update(&mut self, tp: &mut CcState) {
        self.delay_min = min_not_zero(self.delay_min, self.rtt.min);
        if self.delay_min == 0 {
            return;
        }
        if self.cfg.hystart_detect & HYSTART_ACK_TRAIN != 0 {
            let now_us = tp.now_ns / 1000;
            if self.last_ack == 0 || !tp.is_cwnd_limited {
                self.last_ack = now_us;
                self.round_start = now_us;
            } else if now_us < self.last_ack + 3000 {
                let base_owd = ((self.delay_min as u32) / 2).max(125) as u64;
                self.last_ack = now_us;
                if now_us > self.round_start + base_owd {
                    tp.ssthresh = tp.cwnd;
                    return;
                }
            }
        }
        if self.cfg.hystart_detect & HYSTART_DELAY != 0 {
            if self.sample_cnt < 8 {
                self.sample_cnt += 1;
            } else {
                let dm = self.delay_min as u32;
                let thresh = (dm + dm / 8).max(125) as i32;
                if self.rtt.min > thresh {
                    tp.ssthresh = tp.cwnd;
                }
            }
        }
    }

    /// Linux `tcp_cdg_grad()`: the (summed, extrapolated) gradient of the round just ended.
    fn grad(&mut self) -> i32 {
        let mut gmin = self.rtt.min.wrapping_sub(self.rtt_prev.min);
        let mut gmax = self.rtt.max.wrapping_sub(self.rtt_prev.max);
        if !self.gradients.is_empty() {
            let slot = &mut self.gradients[self.tail as usize];
            self.gsum.min = self.gsum.min.wrapping_add(gmin.wrapping_sub(slot.min));
            self.gsum.max = self.gsum.max.wrapping_add(gmax.wrapping_sub(slot.max));
            *slot = MinMax {
                min: gmin,
                max: gmax,
            };
            self.tail = (self.tail + 1) & (self.cfg.window - 1);
            gmin = self.gsum.min;
            gmax = self.gsum.max;
        }
        // Sums over the window, not means: the division by window is in the factor.
        let mut grad = if gmin > 0 { gmin } else { gmax };
        // Extrapolate missing values in the gradient window.
        if !self.gfilled {
            if self.tail == 0 {
                self.gfilled = true;
            } else {
                grad = grad.wrapping_mul(self.cfg.window as i32) / self.tail as i32;
            }
        }
        // The backoff was effectual.
        if gmin <= -32 || gmax <= -32 {
            self.backoff_cnt = 0;
        }
        if self.cfg.use_tolerance {
            // Reduce small variations to zero.
            let m = div_round_closest(gmin, 64);
            let mx = div_round_closest(gmax, 64);
            if m > 0 && mx <= 0 {
                self.state = State::Full;
            } else if (m > 0 && mx > 0) || mx < 0 {
                self.state = State::NonFull;
            }
        }
        grad
    }

    /// Linux `tcp_cdg_backoff()`: back off with probability 1 - exp(-grad x factor x 1e-6).
    fn backoff(&mut self, tp: &mut CcState, grad: u32) -> bool {
        let p_keep = if self.cfg.exact_factor {
            (-(grad as f64) * self.cfg.factor * 1e-6).exp()
        } else {
            let u = grad.wrapping_mul(self.cfg.factor as u32);
            if u >= 1 << 24 {
                0.0
            } else {
                (-(u as f64) * 1e-6).exp()
            }
        };
        if self.rng.uniform() < p_keep {
            return false;
        }
        if self.cfg.use_ineff > 0 {
            self.backoff_cnt = self.backoff_cnt.wrapping_add(1);
            if self.backoff_cnt as u32 > self.cfg.use_ineff {
                return false;
            }
        }
        self.shadow_wnd = self.shadow_wnd.max(tp.cwnd);
        self.state = State::Backoff;
        tp.request_cwr = true;
        true
    }
}

impl CongestionControl for Cdg {
    /// Paper 000's G, over the range of its Fig. 3 (0.1 to 120): a larger G backs off
    /// less often and leaves less to others.
    fn lbe_knob(&self) -> Option<Knob> {
        Some(Knob {
            name: "g".to_owned(),
            low: 0.1,
            high: 120.0,
            unit: KnobUnit::Number,
        })
    }
    fn init(&mut self, tp: &mut CcState) {
        self.alloc_gradients();
        self.rtt_seq = tp.snd_nxt;
        self.shadow_wnd = tp.cwnd;
    }

    fn ssthresh(&mut self, tp: &CcState, _cause: ReductionCause) -> u32 {
        let cwnd = tp.cwnd;
        if self.state == State::Backoff {
            return ((cwnd as f64 * self.cfg.backoff_beta.min(1.0)) as u32).max(2);
        }
        if self.state == State::NonFull && self.cfg.use_tolerance {
            return cwnd;
        }
        self.shadow_wnd = (self.shadow_wnd >> 1).min(cwnd);
        if self.cfg.use_shadow {
            self.shadow_wnd.max(cwnd >> 1).max(2)
        } else {
            (cwnd >> 1).max(2)
        }
    }

    /// Not called in CWR or Recovery (the sender's rule, as Linux's).
    fn cong_avoid(&mut self, tp: &mut CcState, acked: u32) {
        if tp.in_slow_start() && self.cfg.hystart_detect != 0 {
            self.hystart_update(tp);
        }
        if tp.snd_una > self.rtt_seq && self.rtt.is_set() {
            let mut grad = 0;
            if self.rtt_prev.is_set() {
                grad = self.grad();
            }
            self.rtt_seq = tp.snd_nxt;
            self.rtt_prev = self.rtt;
            self.rtt = MinMax::default();
            self.last_ack = 0;
            self.sample_cnt = 0;
            if grad > 0 && self.backoff(tp, grad as u32) {
                return;
            }
        }
        if !tp.is_cwnd_limited {
            self.shadow_wnd = self.shadow_wnd.min(tp.cwnd);
            return;
        }
        let prior = tp.cwnd;
        reno::cong_avoid(tp, acked);
        let incr = tp.cwnd.saturating_sub(prior);
        self.shadow_wnd = self.shadow_wnd.max(self.shadow_wnd.saturating_add(incr));
    }

    fn pkts_acked(&mut self, tp: &mut CcState, sample: &AckSample) {
        let rtt_us = match sample.rtt_ns {
            Some(ns) if ns >= 1000 => (ns / 1000).min(i32::MAX as u64) as i32,
            _ => return,
        };
        // Hayes' delayed-ACK filter, only while nothing is SACKed (Linux sacked_out == 0).
        if tp.sacked_out == 0 {
            if sample.pkts_acked == 1 && self.delack > 0 {
                // A delayed ACK only lowers an existing minimum.
                self.rtt.min = self.rtt.min.min(rtt_us);
                self.delack -= 1;
                return;
            } else if sample.pkts_acked > 1 && self.delack < 5 {
                self.delack += 1;
            }
        }
        self.rtt.min = min_not_zero(self.rtt.min, rtt_us);
        self.rtt.max = self.rtt.max.max(rtt_us);
    }

    fn cwnd_event(&mut self, tp: &mut CcState, event: CaEvent) {
        match event {
            CaEvent::CwndRestart => {
                self.rtt = MinMax::default();
                self.rtt_prev = MinMax::default();
                self.alloc_gradients();
                self.state = State::Unknown;
                self.delack = 0;
                self.backoff_cnt = 0;
                self.sample_cnt = 0;
                self.delay_min = 0;
                self.last_ack = 0;
                self.round_start = 0;
                self.rtt_seq = tp.snd_nxt;
                self.shadow_wnd = tp.cwnd;
            }
            CaEvent::CompleteCwr => {
                self.state = State::Unknown;
                self.rtt_seq = tp.snd_nxt;
                self.rtt_prev = self.rtt;
                self.rtt = MinMax::default();
            }
            _ => {}
        }
    }

    fn set_param(
        &mut self,
        path: &str,
        name: &str,
        value: &ParamValue,
    ) -> Result<(), ScenarioError> {
        params::set(&TABLE, self, path, name, value)
    }
}

#[cfg(test)]
mod tests;
