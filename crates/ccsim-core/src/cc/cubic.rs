//! CUBIC congestion control, as Linux `net/ipv4/tcp_cubic.c` ("CUBIC v2.3" with HyStart).
//!
//! References: Linux `net/ipv4/tcp_cubic.c` (`bictcp_update`, `cubictcp_recalc_ssthresh`,
//! `cubictcp_cong_avoid`, `cubictcp_state`, `cubictcp_cwnd_event`, `cubictcp_acked`,
//! `hystart_update`); RFC 9438 (CUBIC) for the equations and the options below; RFC 8511
//! for ABE.
//!
//! What Linux does, and ccsim with it:
//! - Window growth (`bictcp_update`, congestion avoidance, per ACK while cwnd-limited):
//!   at the start of an epoch `K = cbrt((W_max - cwnd) / C)` (0 and origin = cwnd when
//!   cwnd >= W_max); the target is the curve **one minimum RTT ahead**,
//!   `W(t + min_rtt) = C (t + min_rtt - K)^3 + W_max`, truncated to whole packets; then
//!   `cnt = cwnd / (target - cwnd)` (or `100 cwnd` when the target is not above cwnd),
//!   capped at 20 while no loss has been seen (`W_max == 0`, about 5 %/RTT), and never below
//!   2 (at most x1.5 per RTT); cwnd grows by one packet per `cnt` packets ACKed
//!   (`tcp_cong_avoid_ai`). `cnt` is recomputed at most once per jiffy, and not at all
//!   within HZ/32 while cwnd is unchanged.
//! - Reno-friendly region (`tcp_friendliness`): a Reno estimate `tcp_cwnd` starts at cwnd
//!   with each epoch and grows by one packet per `(cwnd * beta_scale) >> 3` packets ACKed,
//!   `beta_scale = 8 (1 + beta) / 3 / (1 - beta)` in integer arithmetic (15 for beta =
//!   717/1024: 0.533 packets per RTT, RFC 9438's `3 (1 - beta) / (1 + beta)`); when it is
//!   above cwnd, `cnt <= cwnd / (tcp_cwnd - cwnd)`.
//! - On a reduction (`ssthresh` hook, loss or ECN alike): the epoch ends; `W_max = cwnd
//!   (1 + beta) / 2` if cwnd < W_max and fast convergence is on, else `W_max = cwnd`;
//!   `ssthresh = max(cwnd * beta, 2)`.
//! - Entering Loss (RTO): full reset (`bictcp_reset`: W_max = 0, minimum delay forgotten,
//!   HyStart re-armed).
//! - After idle (`CA_EVENT_TX_START`): the epoch start moves forward by the time since the
//!   last transmission (never past now), so idle time does not count on the curve.
//! - RTT samples (`pkts_acked`): ignored within 1 s (HZ jiffies) of an epoch start; the
//!   minimum delay (µs, at least 1) is the all-time minimum; HyStart runs in slow start
//!   until it fires once.
//! - HyStart (`hystart_update`, cwnd >= `hystart_low_window`): a round starts when snd_una
//!   passes the previous round's snd_nxt. ACK train: ACKs closer than `hystart_ack_delta`
//!   extend the train; once it spans more than `(delay_min + cushion) / 2` (unpaced
//!   socket; cushion = min(1 ms, 4 x 64 KiB / pacing rate)) slow start ends. Delay: after 8
//!   samples in a round, the round's minimum RTT above `delay_min + clamp(delay_min / 8,
//!   4 ms, 16 ms)` ends slow start. Ending slow start means `ssthresh = cwnd`.
//!
//! Parameters: [`TABLE`] (`ccsim algorithms cubic`): Linux's module parameters with their
//! defaults (`hz` is CONFIG_HZ: jiffies are `hz` ticks per second of simulated time from
//! the start of the run), then options beyond Linux whose defaults are Linux:
//! `rfc9438_friendly_alpha` (the Reno estimate grows by 1 packet per RTT instead of 0.53
//! once it has reached `cwnd_prior`, the cwnd when ssthresh was last set, RFC 9438 §4.3;
//! before any reduction it grows by 1 per RTT) and ABE's (see [`super::abe`], `beta_ecn`
//! 0.85 per RFC 8511 §3.1). With ABE an ECN reduction updates W_max (and fast convergence)
//! exactly as a loss does and only the ssthresh factor changes — RFC 8511 changes only the
//! multiplicative decrease, and neqo's CUBIC (the one ABE implementation for CUBIC read)
//! does the same; the next epoch's K then comes from the smaller drop.
//!
//! Runtime changes take effect from the next ACK. Changing `c` ends the current epoch (a
//! new curve starts from the current cwnd with the new C); `hz` rescales the stored jiffy
//! times; the others are read on every use, as Linux reads its module parameters.
//!
//! Departures from Linux:
//! - The cubic curve is evaluated in exact floating point (K, t and C(t-K)^3 in seconds)
//!   instead of Linux's 2^-10 s fixed point with a table-based cube root (about 0.2 %
//!   error); the curve's offset is still truncated to whole packets and `cnt` is still an
//!   integer division, as in Linux. Jiffies are emulated exactly (1 ms at HZ = 1000,
//!   `usecs_to_jiffies` rounding up).
//! - HyStart halves the ACK-train threshold for unpaced flows (`SK_PACING_NONE`, a Linux
//!   host without fq) and not for `pacing = true` flows, as Linux does; the pacing rate in
//!   the cushion is recomputed as `tcp_update_pacing_rate` does (200 %/120 % of
//!   cwnd x mss / srtt).
//! - Linux's `initial_ssthresh` module parameter (used only with HyStart off) is not
//!   offered. The Reno-estimate increment is kept at least 1 packet (Linux would loop
//!   forever for beta close to 0).
//! - The ccsim sender calls `set_state` only when the state changes, so a repeated RTO
//!   does not reset CUBIC again (Linux calls `cubictcp_state(Loss)` on every RTO).

use super::abe::{self, Abe, HasAbe};
use super::{reno, CaEvent, CaState, CcState, CongestionControl, ReductionCause};
use crate::cc::AckSample;
use crate::params::{self, Algorithm, Family, Kind, Param, Settable, OPEN_UNIT};
use crate::scenario::{ParamValue, ScenarioError};

/// Linux `HYSTART_ACK_TRAIN`.
const HYSTART_ACK_TRAIN: u32 = 1;
/// Linux `HYSTART_DELAY`.
const HYSTART_DELAY: u32 = 2;
/// Linux `HYSTART_MIN_SAMPLES`.
const HYSTART_MIN_SAMPLES: u8 = 8;
/// Linux `HYSTART_DELAY_MIN` / `HYSTART_DELAY_MAX` (µs).
const HYSTART_DELAY_MIN_US: u32 = 4000;
const HYSTART_DELAY_MAX_US: u32 = 16000;
/// `sk_gso_max_size` of a Linux host (GSO_LEGACY_MAX_SIZE).
const GSO_MAX_SIZE: u64 = 65536;

/// CUBIC's parameters (Linux's module parameters, then the options beyond Linux).
pub const TABLE: Algorithm<Settable<Cubic>> = Algorithm {
    name: "cubic",
    aliases: &[],
    family: Family::CongestionControl,
    summary: "CUBIC with HyStart, as Linux's default congestion control",
    reference: "Linux net/ipv4/tcp_cubic.c (CUBIC v2.3); RFC 9438; ABE: RFC 8511",
    params: &[
        Settable {
            param: Param {
                name: "beta",
                kind: OPEN_UNIT,
                default: "717/1024 (0.7002)",
                help: "multiplicative decrease (Linux `beta`)",
            },
            set: |c, v| {
                c.cfg.beta = v.number();
                c.cfg.beta_scale = beta_scale(c.cfg.beta);
            },
        },
        Settable {
            param: Param {
                name: "c",
                kind: Kind::Number {
                    what: "a positive number",
                    ok: |c| c > 0.0,
                },
                default: "410/1024 (0.4004)",
                help: "cubic scaling constant C (Linux `bic_scale` 41); a change starts a new curve from the current cwnd",
            },
            set: |c, v| {
                c.cfg.c = v.number();
                // A new curve from the next ACK (last_cwnd = 0 defeats the HZ/32 hold).
                c.epoch_start = None;
                c.last_cwnd = 0;
            },
        },
        Settable {
            param: Param {
                name: "fast_convergence",
                kind: Kind::Bool,
                default: "true",
                help: "`W_max = cwnd (1 + beta) / 2` when cwnd is below the previous `W_max`",
            },
            set: |c, v| c.cfg.fast_convergence = v.boolean(),
        },
        Settable {
            param: Param {
                name: "tcp_friendliness",
                kind: Kind::Bool,
                default: "true",
                help: "Reno-friendly region (a Reno estimate growing 3(1 − β)/(1 + β) packets per RTT)",
            },
            set: |c, v| c.cfg.tcp_friendliness = v.boolean(),
        },
        Settable {
            param: Param {
                name: "hystart",
                kind: Kind::Bool,
                default: "true",
                help: "HyStart in slow start",
            },
            set: |c, v| c.cfg.hystart = v.boolean(),
        },
        Settable {
            param: Param {
                name: "hystart_detect",
                kind: Kind::Integer { lo: 0, hi: 3 },
                default: "3",
                help: "HyStart signals: 1 ACK train, 2 delay, 3 both",
            },
            set: |c, v| c.cfg.hystart_detect = v.int() as u32,
        },
        Settable {
            param: Param {
                name: "hystart_low_window",
                kind: Kind::Integer {
                    lo: 0,
                    hi: u32::MAX as u64,
                },
                default: "16",
                help: "cwnd (packets) below which HyStart does not run",
            },
            set: |c, v| c.cfg.hystart_low_window = v.int() as u32,
        },
        Settable {
            param: Param {
                name: "hystart_ack_delta",
                kind: Kind::Duration {
                    what: Some("a duration like \"2ms\""),
                    ok: |_| true,
                },
                default: "\"2ms\"",
                help: "ACKs closer than this extend an ACK train",
            },
            set: |c, v| c.cfg.hystart_ack_delta_us = v.ns() / 1000,
        },
        Settable {
            param: Param {
                name: "hz",
                kind: Kind::Integer {
                    lo: 1,
                    hi: 1_000_000,
                },
                default: "1000",
                help: "kernel `CONFIG_HZ`: jiffies per simulated second",
            },
            set: |c, v| c.rescale_jiffies(v.int()),
        },
        Settable {
            param: Param {
                name: "rfc9438_friendly_alpha",
                kind: Kind::Bool,
                default: "false",
                help: "`true`: the Reno estimate grows 1 packet per RTT once it reaches the cwnd of the last reduction (RFC 9438 §4.3)",
            },
            set: |c, v| c.cfg.rfc9438_friendly_alpha = v.boolean(),
        },
        abe::abe_switch(),
        abe::beta_ecn("0.85"),
        abe::in_slow_start(),
    ],
};

impl HasAbe for Cubic {
    fn abe_mut(&mut self) -> &mut Abe {
        &mut self.cfg.abe
    }
}

/// CUBIC's configuration: the values of its [`TABLE`] (and `beta_scale`, derived from
/// `beta`), kept apart from the per-flow state as quinn's `congestion/cubic.rs` does.
#[derive(Debug, Clone)]
pub struct CubicConfig {
    beta: f64,
    c: f64,
    fast_convergence: bool,
    tcp_friendliness: bool,
    hystart: bool,
    hystart_detect: u32,
    hystart_low_window: u32,
    hystart_ack_delta_us: u64,
    hz: u64,
    rfc9438_friendly_alpha: bool,
    abe: Abe,
    /// Linux `beta_scale`, derived from `beta`.
    beta_scale: u32,
}

/// CUBIC: its configuration and the state of Linux's `struct bictcp`.
#[derive(Debug, Clone)]
pub struct Cubic {
    /// The parameters ([`TABLE`]).
    cfg: CubicConfig,

    // ----- Linux struct bictcp
    cnt: u32,
    last_max_cwnd: u32,
    last_cwnd: u32,
    /// Jiffies.
    last_time: u64,
    origin_point: u32,
    /// K in seconds.
    k_s: f64,
    /// Minimum RTT in µs (0 = none yet).
    delay_min_us: u32,
    /// Jiffies; `None` = no epoch (Linux's 0).
    epoch_start: Option<u64>,
    ack_cnt: u32,
    tcp_cwnd: u32,
    sample_cnt: u8,
    found: bool,
    round_start_us: u64,
    end_seq: u64,
    last_ack_us: u64,
    curr_rtt_us: u32,

    // ----- extensions
    /// cwnd when ssthresh was last set (RFC 9438 `cwnd_prior`).
    cwnd_prior: u32,
}

impl Default for Cubic {
    fn default() -> Self {
        let beta = 717.0 / 1024.0;
        Cubic {
            cfg: CubicConfig {
                beta,
                c: 410.0 / 1024.0,
                fast_convergence: true,
                tcp_friendliness: true,
                hystart: true,
                hystart_detect: HYSTART_ACK_TRAIN | HYSTART_DELAY,
                hystart_low_window: 16,
                hystart_ack_delta_us: 2000,
                hz: 1000,
                rfc9438_friendly_alpha: false,
                abe: Abe::new(0.85),
                beta_scale: beta_scale(beta),
            },
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            origin_point: 0,
            k_s: 0.0,
            delay_min_us: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            sample_cnt: 0,
            found: false,
            round_start_us: 0,
            end_seq: 0,
            last_ack_us: 0,
            curr_rtt_us: u32::MAX,
            cwnd_prior: 0,
        }
    }
}

/// Linux `beta_scale = 8 * (1024 + beta) / 3 / (1024 - beta)` (integer divisions); for
/// beta = b/1024 the nested floors equal the floor of the real quotient.
fn beta_scale(beta: f64) -> u32 {
    let v = 8.0 * (1.0 + beta) / (3.0 * (1.0 - beta));
    ((v + 1e-9).floor() as u32).max(1)
}

impl Cubic {
    /// Jiffies at `ns` of simulated time.
    #[inline]
    fn jiffies(&self, ns: u64) -> u64 {
        (ns as u128 * self.cfg.hz as u128 / 1_000_000_000) as u64
    }

    /// Linux `usecs_to_jiffies()` (rounds up).
    #[inline]
    fn usecs_to_jiffies(&self, us: u32) -> u64 {
        (us as u64 * self.cfg.hz).div_ceil(1_000_000)
    }

    /// The W_max the next epoch aims at (0 before the first reduction).
    pub fn w_max(&self) -> u32 {
        self.last_max_cwnd
    }

    /// Linux `bictcp_reset()`.
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.origin_point = 0;
        self.k_s = 0.0;
        self.delay_min_us = 0;
        self.epoch_start = None;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.found = false;
    }

    /// Linux `bictcp_hystart_reset()`.
    fn hystart_reset(&mut self, tp: &CcState) {
        let now_us = tp.now_ns / 1000;
        self.round_start_us = now_us;
        self.last_ack_us = now_us;
        self.end_seq = tp.snd_nxt;
        self.curr_rtt_us = u32::MAX;
        self.sample_cnt = 0;
    }

    /// Linux `bictcp_update()`: recompute `cnt`.
    fn update(&mut self, tp: &CcState, cwnd: u32, acked: u32) {
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);
        let now = self.jiffies(tp.now_ns);
        if self.last_cwnd == cwnd && now.saturating_sub(self.last_time) <= self.cfg.hz / 32 {
            return;
        }
        // The cubic function can update cnt at most once per jiffy.
        if !(self.epoch_start.is_some() && now == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = now;
            let epoch = match self.epoch_start {
                Some(e) => e,
                None => {
                    self.epoch_start = Some(now);
                    self.ack_cnt = acked;
                    self.tcp_cwnd = cwnd;
                    if self.last_max_cwnd <= cwnd {
                        self.k_s = 0.0;
                        self.origin_point = cwnd;
                    } else {
                        self.k_s = ((self.last_max_cwnd - cwnd) as f64 / self.cfg.c).cbrt();
                        self.origin_point = self.last_max_cwnd;
                    }
                    now
                }
            };
            // The target is the curve one minimum RTT ahead.
            let t_j = now.saturating_sub(epoch) + self.usecs_to_jiffies(self.delay_min_us);
            let t = t_j as f64 / self.cfg.hz as f64;
            let offs = (t - self.k_s).abs();
            let delta = (self.cfg.c * offs * offs * offs)
                .floor()
                .min(u32::MAX as f64) as u32;
            let target = if t < self.k_s {
                self.origin_point.saturating_sub(delta)
            } else {
                self.origin_point.saturating_add(delta)
            };
            self.cnt = if target > cwnd {
                cwnd / (target - cwnd)
            } else {
                cwnd.saturating_mul(100)
            };
            // Before the first loss, grow at most 5 % per RTT.
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        // Reno-friendly region.
        if self.cfg.tcp_friendliness {
            loop {
                let per_pkt =
                    if self.cfg.rfc9438_friendly_alpha && self.tcp_cwnd >= self.cwnd_prior {
                        cwnd
                    } else {
                        ((cwnd as u64 * self.cfg.beta_scale as u64) >> 3) as u32
                    }
                    .max(1);
                if self.ack_cnt <= per_pkt {
                    break;
                }
                self.ack_cnt -= per_pkt;
                self.tcp_cwnd += 1;
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                self.cnt = self.cnt.min(max_cnt);
            }
        }
        // At most one packet per two ACKed: x1.5 per RTT.
        self.cnt = self.cnt.max(2);
    }

    /// Linux `hystart_ack_delay()`: the ACK-train cushion in µs.
    fn hystart_ack_delay_us(&self, tp: &CcState) -> u64 {
        if tp.srtt_ns == 0 {
            return 0;
        }
        let ratio: u128 = if tp.cwnd < tp.ssthresh / 2 { 200 } else { 120 };
        // Bytes per second (tcp_update_pacing_rate).
        let rate = tp.mss as u128 * ratio * tp.cwnd.max(tp.packets_out) as u128 * 10_000_000
            / tp.srtt_ns as u128;
        if rate == 0 {
            return 0;
        }
        (1000u128).min(GSO_MAX_SIZE as u128 * 4 * 1_000_000 / rate) as u64
    }

    /// Linux `hystart_update()`.
    fn hystart_update(&mut self, tp: &mut CcState, delay_us: u32) {
        if tp.snd_una > self.end_seq {
            self.hystart_reset(tp);
        }
        if tp.cwnd < self.cfg.hystart_low_window {
            return;
        }
        if self.cfg.hystart_detect & HYSTART_ACK_TRAIN != 0 {
            let now = tp.now_ns / 1000;
            if now.saturating_sub(self.last_ack_us) <= self.cfg.hystart_ack_delta_us {
                self.last_ack_us = now;
                // Linux halves delay_min plus the cushion for unpaced sockets only.
                let mut threshold = self.delay_min_us as u64 + self.hystart_ack_delay_us(tp);
                if !tp.paced {
                    threshold >>= 1;
                }
                if now.saturating_sub(self.round_start_us) > threshold {
                    self.found = true;
                    self.cwnd_prior = tp.cwnd;
                    tp.ssthresh = tp.cwnd;
                }
            }
        }
        if self.cfg.hystart_detect & HYSTART_DELAY != 0 {
            self.curr_rtt_us = self.curr_rtt_us.min(delay_us);
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else {
                let thresh =
                    (self.delay_min_us >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US);
                if self.curr_rtt_us > self.delay_min_us.saturating_add(thresh) {
                    self.found = true;
                    self.cwnd_prior = tp.cwnd;
                    tp.ssthresh = tp.cwnd;
                }
            }
        }
    }

    /// Convert the stored jiffy times to a new HZ.
    fn rescale_jiffies(&mut self, new_hz: u64) {
        fn conv(j: u64, from: u64, to: u64) -> u64 {
            (j as u128 * to as u128 / from as u128) as u64
        }
        let old = self.cfg.hz;
        self.last_time = conv(self.last_time, old, new_hz);
        self.epoch_start = self.epoch_start.map(|e| conv(e, old, new_hz));
        self.cfg.hz = new_hz;
    }
}

impl CongestionControl for Cubic {
    fn init(&mut self, tp: &mut CcState) {
        self.reset();
        if self.cfg.hystart {
            self.hystart_reset(tp);
        }
    }

    fn ssthresh(&mut self, tp: &CcState, cause: ReductionCause) -> u32 {
        let cwnd = tp.cwnd;
        self.epoch_start = None;
        // W_max and fast convergence.
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.cfg.fast_convergence {
            (cwnd as f64 * (1.0 + self.cfg.beta) / 2.0) as u32
        } else {
            cwnd
        };
        self.cwnd_prior = cwnd;
        let beta = self.cfg.abe.beta_for(tp, cause).unwrap_or(self.cfg.beta);
        ((cwnd as f64 * beta) as u32).max(2)
    }

    fn cong_avoid(&mut self, tp: &mut CcState, acked: u32) {
        if !tp.is_cwnd_limited {
            return;
        }
        let mut acked = acked;
        if tp.in_slow_start() {
            acked = reno::slow_start(tp, acked);
            if acked == 0 {
                return;
            }
        }
        let cwnd = tp.cwnd;
        self.update(tp, cwnd, acked);
        reno::cong_avoid_ai(tp, self.cnt, acked);
    }

    fn pkts_acked(&mut self, tp: &mut CcState, sample: &AckSample) {
        let Some(rtt_ns) = sample.rtt_ns else {
            return;
        };
        // Discard delay samples right after a reduction.
        if let Some(epoch) = self.epoch_start {
            if self.jiffies(tp.now_ns).saturating_sub(epoch) < self.cfg.hz {
                return;
            }
        }
        let delay = ((rtt_ns / 1000).min(u32::MAX as u64) as u32).max(1);
        if self.delay_min_us == 0 || self.delay_min_us > delay {
            self.delay_min_us = delay;
        }
        if !self.found && tp.in_slow_start() && self.cfg.hystart {
            self.hystart_update(tp, delay);
        }
    }

    fn set_state(&mut self, tp: &mut CcState, new_state: CaState) {
        if new_state == CaState::Loss {
            self.reset();
            self.hystart_reset(tp);
        }
    }

    fn cwnd_event(&mut self, tp: &mut CcState, event: CaEvent) {
        if event == CaEvent::TxStart {
            let now = self.jiffies(tp.now_ns);
            let delta = now.saturating_sub(self.jiffies(tp.lsndtime_ns));
            // Idle for a while: shift the epoch to keep growth on the cubic curve.
            if let Some(e) = self.epoch_start {
                if delta > 0 {
                    self.epoch_start = Some((e + delta).min(now));
                }
            }
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
