//! DCTCP (Data Center TCP), as Linux `net/ipv4/tcp_dctcp.c`.
//!
//! References: Linux `net/ipv4/tcp_dctcp.c` (`dctcp_init`, `dctcp_update_alpha`,
//! `dctcp_ssthresh`, `dctcp_state`, `dctcp_cwnd_event`, `dctcp_cwnd_undo`, the
//! `dctcp_reno` fallback ops) and `tcp_dctcp.h` (the receiver's CE echo, implemented in
//! [`crate::tcp::receiver`]); RFC 8257 §3.3–3.4.
//!
//! - Needs ECT on every packet and a per-packet CE echo (`TCP_CONG_NEEDS_ECN`):
//!   [`CongestionControl::needs_accurate_ecn`] is true.
//! - α (in 1/1024, starting at `alpha_on_init`) is updated once per window of data, on the
//!   first ACK with snd_una at or beyond the `snd_nxt` recorded at the previous update:
//!   from the packets delivered `D` and delivered with ECE `M` since then,
//!   `α -= min_not_zero(α, α >> g)`, then if M > 0 `α = min(α + (M << (10 - g)) / D, 1024)`
//!   (`α <- (1 - g) α + g M / D`, g = 2^-shift_g; α snaps to 0 once `α >> g` is 0).
//! - ECE (through the sender's CWR, at most once per window): `ssthresh = max(cwnd -
//!   (cwnd α >> 11), 2)`, i.e. cwnd (1 - α/2), reached through PRR.
//! - Loss: entering Recovery (`set_state`) and an RTO (`CA_EVENT_LOSS`) override ssthresh
//!   with `max(cwnd >> 1, 2)`; undo restores `max(cwnd, cwnd at the last reduction)`.
//! - Growth is Reno's (`tcp_reno_cong_avoid`).
//! - Without ECN on the flow (`tp.ecn_ok == false` at init) it is Linux's "dctcp-reno":
//!   Reno ssthresh, growth and undo, no α.
//!
//! Parameters: [`TABLE`] (`ccsim algorithms dctcp`). Changing `shift_g` mid-flow applies at
//! the next α update; `alpha_on_init` applies only when the flow (re)starts, as in Linux.
//!
//! Departures: none in the sender algorithm (Linux's packet counts, not RFC 8257's
//! bytes). PLB (path rehashing on persistent CE) is not modelled: ccsim has one path.

use super::{reno, CaEvent, CaState, CcState};
use super::{AckFlags, CongestionControl, ReductionCause};
use crate::params::{self, Algorithm, Family, Kind, Param, Settable};
use crate::scenario::{ParamValue, ScenarioError};

/// Linux `DCTCP_MAX_ALPHA`.
const MAX_ALPHA: u32 = 1024;

/// dctcp's parameters.
pub const TABLE: Algorithm<Settable<Dctcp>> = Algorithm {
    name: "dctcp",
    aliases: &[],
    family: Family::CongestionControl,
    summary: "Data Center TCP: window cut in proportion to the fraction of CE-marked packets",
    reference: "Linux net/ipv4/tcp_dctcp.c; RFC 8257 §3.3-3.4",
    params: &[
        Settable {
            param: Param {
                name: "shift_g",
                kind: Kind::Integer { lo: 0, hi: 10 },
                default: "4",
                help: "estimation gain g = 2^−shift_g (1/16); a change applies at the next α update",
            },
            set: |c, v| c.cfg.shift_g = v.int() as u32,
        },
        Settable {
            param: Param {
                name: "alpha_on_init",
                kind: Kind::Number {
                    what: "a number in [0, 1]",
                    ok: |a| (0.0..=1.0).contains(&a),
                },
                default: "1.0",
                help: "α when the flow (re)starts (Linux 1024/1024); a change applies only at a (re)start",
            },
            set: |c, v| c.cfg.alpha_on_init = (v.number() * MAX_ALPHA as f64).round() as u32,
        },
    ],
};

/// DCTCP's configuration: the values of its [`TABLE`], kept apart from the per-flow state
/// (as quinn's `congestion/cubic.rs` does).
#[derive(Debug, Clone)]
pub struct DctcpConfig {
    shift_g: u32,
    alpha_on_init: u32,
}

/// DCTCP state (Linux `struct dctcp`) and parameters.
#[derive(Debug, Clone)]
pub struct Dctcp {
    /// The parameters ([`TABLE`]).
    cfg: DctcpConfig,
    /// α in 1/1024.
    alpha: u32,
    next_seq: u64,
    old_delivered: u64,
    old_delivered_ce: u64,
    loss_cwnd: u32,
    /// ECN was not negotiated: behave as Linux's "dctcp-reno".
    reno_fallback: bool,
}

impl Default for Dctcp {
    fn default() -> Self {
        Dctcp {
            cfg: DctcpConfig {
                shift_g: 4,
                alpha_on_init: MAX_ALPHA,
            },
            alpha: MAX_ALPHA,
            next_seq: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            loss_cwnd: 0,
            reno_fallback: false,
        }
    }
}

impl Dctcp {
    /// The current α as a fraction.
    pub fn alpha(&self) -> f64 {
        self.alpha as f64 / MAX_ALPHA as f64
    }

    /// Linux `dctcp_reset()`: start a new observation window.
    fn reset_window(&mut self, tp: &CcState) {
        self.next_seq = tp.snd_nxt;
        self.old_delivered = tp.delivered;
        self.old_delivered_ce = tp.delivered_ce;
    }

    /// Linux `dctcp_react_to_loss()`.
    fn react_to_loss(&mut self, tp: &mut CcState) {
        self.loss_cwnd = tp.cwnd;
        tp.ssthresh = (tp.cwnd >> 1).max(2);
    }
}

impl CongestionControl for Dctcp {
    fn diagnostics(&self) -> Vec<(&'static str, f64)> {
        vec![("alpha", self.alpha as f64 / MAX_ALPHA as f64)]
    }

    fn init(&mut self, tp: &mut CcState) {
        self.reno_fallback = !tp.ecn_ok;
        if self.reno_fallback {
            return;
        }
        self.alpha = self.cfg.alpha_on_init.min(MAX_ALPHA);
        self.loss_cwnd = 0;
        self.reset_window(tp);
    }

    fn ssthresh(&mut self, tp: &CcState, _cause: ReductionCause) -> u32 {
        if self.reno_fallback {
            return (tp.cwnd >> 1).max(2);
        }
        self.loss_cwnd = tp.cwnd;
        let cut = ((tp.cwnd as u64 * self.alpha as u64) >> 11) as u32;
        (tp.cwnd - cut).max(2)
    }

    fn cong_avoid(&mut self, tp: &mut CcState, acked: u32) {
        reno::cong_avoid(tp, acked);
    }

    fn in_ack_event(&mut self, tp: &mut CcState, _flags: AckFlags) {
        if self.reno_fallback || tp.snd_una < self.next_seq {
            return;
        }
        // Expired RTT: one window of data since the last update.
        let delivered = tp.delivered - self.old_delivered;
        let mut delivered_ce = tp.delivered_ce - self.old_delivered_ce;
        let mut alpha = self.alpha;
        let decay = alpha >> self.cfg.shift_g;
        alpha -= if decay == 0 { alpha } else { decay };
        if delivered_ce > 0 {
            delivered_ce <<= 10 - self.cfg.shift_g;
            delivered_ce /= delivered.max(1);
            alpha = (alpha as u64 + delivered_ce).min(MAX_ALPHA as u64) as u32;
        }
        self.alpha = alpha;
        self.reset_window(tp);
    }

    fn set_state(&mut self, tp: &mut CcState, new_state: CaState) {
        // The sender calls this only on a change, as Linux's check requires.
        if !self.reno_fallback && new_state == CaState::Recovery {
            self.react_to_loss(tp);
        }
    }

    fn cwnd_event(&mut self, tp: &mut CcState, event: CaEvent) {
        // RTO: one loss adjustment (Recovery is handled in set_state).
        if !self.reno_fallback && event == CaEvent::Loss {
            self.react_to_loss(tp);
        }
    }

    fn undo_cwnd(&mut self, tp: &CcState) -> u32 {
        if self.reno_fallback {
            reno::undo_cwnd(tp)
        } else {
            tp.cwnd.max(self.loss_cwnd)
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

    fn needs_accurate_ecn(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests;
