//! TCP Prague, the L4S reference congestion control, as the L4S team's kernel has it.
//!
//! Reference: `net/ipv4/tcp_prague.c` of `L4STeam/linux` (module version 0.6; Tilmans,
//! De Schepper, Briscoe), read at commit 02573a2; the ECN semantics are RFC 9331's
//! (ECT(1) identifies an L4S packet, §4 the "Prague L4S requirements"). Where that
//! snapshot leaves the fractional window behind in slow start, the later
//! `minuscat/l4steam-6.6.y` version's `frac_cwnd = snd_cwnd << CWND_UNIT` is used.
//!
//! - Packets: every data packet (retransmissions too) is ECT(1)
//!   ([`CongestionControl::ecn_codepoint`]; Linux `tp->ecn_flags |= TCP_ECN_ECT_1`).
//! - Feedback: Prague needs AccECN (`TCP_CONG_NEEDS_ACCECN`), i.e. the number of
//!   CE-marked packets. ccsim reuses the per-packet CE echo it has for DCTCP
//!   ([`CongestionControl::needs_accurate_ecn`]; the receiver's ECE follows the CE state
//!   of the last data segment and sends an ACK at each change, so the packets a sender
//!   counts as delivered with ECE are those that arrived CE). Simplification: no AccECN
//!   option or ACE counter, so an ACK lost on the way back loses its marks (AccECN's
//!   counter would carry them), and there is no AccECN negotiation: with `ecn = false`
//!   on the flow Prague is Linux's fallback "prague-reno" (Reno growth, halving, Reno
//!   undo, no ECT).
//! - Window: kept as `frac_cwnd` in 2^-20 packets (`CWND_UNIT`). Every ACK, the packets
//!   newly delivered minus those delivered CE (`acked - ece_delta`) grow it, in every
//!   congestion state except loss recovery ("Additive Increase uses unsaturated
//!   marking"): in slow start by one packet each (`tcp_slow_start`), else by
//!   `ai_ack_increase / cwnd` each (`prague_update_cwnd`), only while cwnd-limited.
//!   Outside reductions cwnd follows `ceil(frac_cwnd)` one packet per ACK (the
//!   "step-wise" adjust; a decrease also sets ssthresh = cwnd).
//! - α (`prague_update_alpha`), in 2^-20 and stored x16 (`upscaled_alpha`), from 1:
//!   once per round trip (the first ACK at or beyond `snd_nxt` of the previous update)
//!   and only after a first CE has been seen (`saw_ce`),
//!   `α ← α − α/16 + F/16` with `F = delivered_ce / delivered` over the round (g = 1/16).
//! - ECN echo (`prague_enter_cwr`, once per CWR, i.e. at most once per round trip):
//!   `frac_cwnd −= (α frac_cwnd + 2^20) >> 21`, i.e. `cwnd · α/2`; no halving.
//! - Loss (`prague_enter_loss`, fast recovery and RTO): `frac_cwnd` halved, as Reno; no
//!   growth until the state is Open again; undo restores the larger of the window before
//!   and now (`prague_cwnd_undo`).
//! - RTT independence (`prague_rtt_scaling`, default `rate` as the module's; `none`,
//!   `rate`, `scalable`, `additive`), active after `rtt_transition` (500) rounds out of
//!   slow start: the additive increase per ACKed packet is scaled, with RTTs in 128 µs
//!   units (`RTT_UNIT`) and the target `rtt_target` (25 ms): `rate`: (srtt/target)^2
//!   when srtt < target (one packet per target RTT at the rate of a flow with that
//!   RTT); `scalable`: `(R0/8 + clamp(srtt − R1, 0, R0)) · srtt / R0^2` with R0 = 16 ms,
//!   R1 = 1.5 ms; `additive`: as `rate` with the target `rtt_target + srtt`. While
//!   active, α is updated only once `target` has elapsed since the last update, and an
//!   ECN echo reduces only once `target` has elapsed since the last reduction.
//!
//! Parameters: [`TABLE`] (`ccsim algorithms prague`), Linux's module parameters.
//!
//! Departures:
//! - The CWR reduction goes through the sender's PRR (as for every ccsim controller)
//!   towards `ceil(frac_cwnd)`, and that target keeps following the additive increase
//!   during CWR; Linux steps cwnd down by one packet per ACK towards it.
//! - Pacing: as Linux Prague, always on, at `max(cwnd, in flight) · MSS / srtt`
//!   (100 %), doubled while `cwnd < ssthresh/2`; there is no GSO, so Linux's bound on
//!   GSO bursts (250 µs) has nothing to bound: packets leave one by one.
//! - Not modelled: the classic-ECN-AQM detection and fallback (`prague_ecn_fallback`,
//!   off by default in the reference), the later versions' rate-based mode for
//!   windows below 4 MTU, MTU adaptation and ±3 % pacing offsets (6.6 branch).
//! - `ai_ack_increase` is recomputed on every ACK from the current srtt (Linux: at
//!   each round and cwnd change).

use super::reno;
use super::{AckFlags, CaEvent, CaState, CcState, CongestionControl, ReductionCause};
use crate::net::packet::Ecn;
use crate::params::{self, Algorithm, Family, Kind, Param, Settable, Value};
use crate::scenario::{ParamValue, ScenarioError, SimDuration};

/// Linux `PRAGUE_ALPHA_BITS`, `PRAGUE_MAX_ALPHA`, `PRAGUE_SHIFT_G`, `CWND_UNIT`.
const ALPHA_BITS: u32 = 20;
const MAX_ALPHA: u64 = 1 << ALPHA_BITS;
const SHIFT_G: u32 = 4;
const CWND_UNIT: u32 = 20;
const ONE_CWND: u64 = 1 << CWND_UNIT;
/// Linux `MIN_CWND`.
const MIN_CWND: u32 = 2;
/// Linux `RTT_UNIT`: RTTs in 128 µs.
const RTT_UNIT: u32 = 7;
/// Linux `MAX_SCALED_RTT` (100 ms in µs, compared there with an RTT in 128 µs units).
const MAX_SCALED_RTT: u64 = 100_000;

/// prague's parameters.
pub const TABLE: Algorithm<Settable<Prague>> = Algorithm {
    name: "prague",
    aliases: &[],
    family: Family::CongestionControl,
    summary: "TCP Prague: the L4S scalable congestion control (ECT(1), DCTCP-like response)",
    reference: "L4STeam/linux net/ipv4/tcp_prague.c (v0.6, commit 02573a2); RFC 9331 §4",
    params: &[
        Settable {
            param: Param {
                name: "rtt_scaling",
                kind: Kind::Keyword {
                    values: &["none", "rate", "scalable", "additive"],
                    unknown:
                        "expected one of \"none\", \"rate\", \"scalable\", \"additive\", got {got}",
                    trim: false,
                },
                default: "\"rate\"",
                help: "RTT-independence heuristic: Linux `prague_rtt_scaling` (`RTT_CONTROL_*`)",
            },
            set: |c, v| {
                c.cfg.rtt_scaling = match v.word() {
                    "none" => RttScaling::None,
                    "rate" => RttScaling::Rate,
                    "scalable" => RttScaling::Scalable,
                    _ => RttScaling::Additive,
                }
            },
        },
        Settable {
            param: Param {
                name: "rtt_target",
                kind: Kind::Custom {
                    unit: "duration",
                    accepts: "a duration from \"128us\" to \"100ms\"",
                    read: rtt_target,
                },
                default: "\"25ms\"",
                help: "Linux `prague_rtt_target`, kept in 128 µs units",
            },
            set: |c, v| c.cfg.rtt_target = (v.ns() / 1000) >> RTT_UNIT,
        },
        Settable {
            param: Param {
                name: "rtt_transition",
                kind: Kind::Integer {
                    lo: 0,
                    hi: u32::MAX as u64,
                },
                default: "500",
                help: "rounds after slow start before RTT independence applies",
            },
            set: |c, v| c.cfg.rtt_transition = v.int() as u32,
        },
    ],
};

/// `rtt_target`: Linux keeps it in 128 µs units; at least one unit, at most 100 ms (the
/// scaled increase overflows beyond, tcp_prague.c).
fn rtt_target(value: &ParamValue) -> Result<Value, String> {
    match value {
        ParamValue::Str(s) => match SimDuration::parse(s) {
            Ok(d) if (128_000..=100_000_000).contains(&d.ns) => Ok(Value::Ns(d.ns)),
            _ => Err(format!(
                "expected a duration from \"128us\" to \"100ms\", got {}",
                params::shown(value)
            )),
        },
        other => Err(format!(
            "expected a duration like \"25ms\", got {}",
            params::shown(other)
        )),
    }
}

/// Linux's RTT scaling heuristics (`RTT_CONTROL_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RttScaling {
    None,
    Rate,
    Scalable,
    Additive,
}

/// Prague's configuration: the values of its [`TABLE`], kept apart from the per-flow state
/// (as quinn's `congestion/cubic.rs` does).
#[derive(Debug, Clone)]
pub struct PragueConfig {
    rtt_scaling: RttScaling,
    /// `prague_rtt_target` in 128 µs units (Linux `US2RTT`).
    rtt_target: u64,
    rtt_transition: u32,
}

/// TCP Prague state (Linux `struct prague`) and parameters.
#[derive(Debug, Clone)]
pub struct Prague {
    /// The parameters ([`TABLE`]).
    cfg: PragueConfig,
    upscaled_alpha: u64,
    frac_cwnd: u64,
    loss_frac_cwnd: u64,
    loss_cwnd: u32,
    alpha_stamp_ns: u64,
    cwr_stamp_ns: u64,
    old_delivered: u64,
    old_delivered_ce: u64,
    next_seq: u64,
    round: u32,
    saw_ce: bool,
    in_loss: bool,
    /// Delivered counts at the previous ACK, for the per-ACK deltas (`acked_sacked`,
    /// `ece_delta`).
    last_delivered: u64,
    last_delivered_ce: u64,
    /// ECN not negotiated: Linux's "prague-reno".
    reno_fallback: bool,
}

impl Default for Prague {
    fn default() -> Self {
        Prague {
            cfg: PragueConfig {
                rtt_scaling: RttScaling::Rate,
                rtt_target: 25_000 >> RTT_UNIT,
                rtt_transition: 500,
            },
            upscaled_alpha: MAX_ALPHA << SHIFT_G,
            frac_cwnd: 10 * ONE_CWND,
            loss_frac_cwnd: 0,
            loss_cwnd: 0,
            alpha_stamp_ns: 0,
            cwr_stamp_ns: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            next_seq: 0,
            round: 0,
            saw_ce: false,
            in_loss: false,
            last_delivered: 0,
            last_delivered_ce: 0,
            reno_fallback: false,
        }
    }
}

/// 128 µs units to ns (Linux `RTT2US`, then µs to ns).
fn rtt_units_to_ns(r: u64) -> u64 {
    (r << RTT_UNIT) * 1000
}

impl Prague {
    /// α as a fraction.
    pub fn alpha(&self) -> f64 {
        (self.upscaled_alpha >> SHIFT_G) as f64 / MAX_ALPHA as f64
    }

    /// The fractional window in packets.
    pub fn frac_cwnd(&self) -> f64 {
        self.frac_cwnd as f64 / ONE_CWND as f64
    }

    /// Linux `prague_frac_cwnd_to_snd_cwnd`.
    /// tcp_prague.c (v0.6) `prague_update_pacing_rate`: `mtu · max(cwnd, in flight) /
    /// srtt` — 100 % during additive increase, where Linux's generic pacing uses 120 % —
    /// doubled while `cwnd < ssthresh / 2`. The sender spaces payload bytes at this
    /// rate, so the MSS stands for the MTU here: one full segment every `srtt / W`, as
    /// Linux spaces one MTU-sized packet. Until the first RTT sample the sender's own
    /// rate applies (rate 0).
    fn update_pacing_rate(tp: &mut CcState) {
        if tp.srtt_ns == 0 {
            return;
        }
        let max_inflight = u128::from(tp.cwnd.max(tp.in_flight));
        let mut rate = u128::from(tp.mss) * 1_000_000_000 * max_inflight / u128::from(tp.srtt_ns);
        if tp.cwnd < tp.ssthresh / 2 {
            rate *= 2;
        }
        tp.pacing_rate = u64::try_from(rate).unwrap_or(u64::MAX).max(1);
    }

    fn frac_to_cwnd(&self) -> u32 {
        (((self.frac_cwnd + ONE_CWND - 1) >> CWND_UNIT) as u32).max(1)
    }

    fn srtt_units(tp: &CcState) -> u64 {
        (tp.srtt_ns / 1000) >> RTT_UNIT
    }

    /// Linux `prague_is_rtt_indep`.
    fn is_rtt_indep(&self, tp: &CcState) -> bool {
        self.cfg.rtt_scaling != RttScaling::None
            && !tp.in_slow_start()
            && self.round >= self.cfg.rtt_transition
    }

    /// Linux `prague_target_rtt`, in 128 µs units.
    fn target_rtt(&self, tp: &CcState) -> u64 {
        match self.cfg.rtt_scaling {
            RttScaling::Additive => self.cfg.rtt_target + Self::srtt_units(tp),
            _ => self.cfg.rtt_target,
        }
    }

    /// Linux `prague_ai_ack_increase`: the window increase per ACKed packet, times cwnd,
    /// in 2^-20 packets.
    pub fn ai_ack_increase(&self, tp: &CcState) -> u64 {
        let rtt = Self::srtt_units(tp);
        if self.cfg.rtt_scaling == RttScaling::None
            || self.round < self.cfg.rtt_transition
            || rtt == 0
            || rtt > MAX_SCALED_RTT
        {
            return ONE_CWND;
        }
        match self.cfg.rtt_scaling {
            RttScaling::None => ONE_CWND,
            RttScaling::Rate | RttScaling::Additive => {
                // prague_rate_scaled_ai_ack_increase
                let target = self.target_rtt(tp);
                if rtt >= target {
                    return ONE_CWND;
                }
                let divisor = target * target;
                (((rtt << CWND_UNIT) * rtt) + (divisor >> 1)) / divisor
            }
            RttScaling::Scalable => {
                // prague_scalable_ai_ack_increase: R0 ~ 16 ms, R1 ~ 1.5 ms.
                let r0 = (1u64 << 14) >> RTT_UNIT;
                let r1 = ((1u64 << 10) + (1 << 9)) >> RTT_UNIT;
                let mut inc = (ONE_CWND >> 3) * r0;
                inc += ONE_CWND * rtt.saturating_sub(r1).min(r0);
                inc *= rtt;
                let divisor = r0 * r0;
                (inc + (divisor >> 1)) / divisor
            }
        }
    }

    /// Linux `prague_new_round`.
    fn new_round(&mut self, tp: &CcState) {
        self.next_seq = tp.snd_nxt;
        self.old_delivered = tp.delivered;
        self.old_delivered_ce = tp.delivered_ce;
        if !tp.in_slow_start() {
            self.round = self.round.wrapping_add(1);
            if self.round == 0 {
                self.round = self.cfg.rtt_transition;
            }
        }
    }

    /// Linux `prague_should_update_ewma`.
    fn should_update_ewma(&self, tp: &CcState) -> bool {
        tp.snd_una >= self.next_seq
            && (!self.is_rtt_indep(tp)
                || rtt_units_to_ns(self.target_rtt(tp))
                    <= tp.now_ns.saturating_sub(self.alpha_stamp_ns))
    }

    /// Linux `prague_update_alpha`.
    fn update_alpha(&mut self, tp: &CcState) {
        if self.saw_ce {
            let mut ecn_segs = tp.delivered_ce - self.old_delivered_ce;
            if ecn_segs > 0 {
                let acked = (tp.delivered - self.old_delivered).max(1);
                ecn_segs = (ecn_segs << ALPHA_BITS) / acked;
            }
            let a = self.upscaled_alpha;
            let a = a - (a >> SHIFT_G) + ecn_segs;
            self.alpha_stamp_ns = tp.now_ns;
            self.upscaled_alpha = a.min(MAX_ALPHA << SHIFT_G);
        }
        self.new_round(tp);
    }

    /// Linux `prague_update_cwnd`'s growth: `acked` packets newly delivered, `ce` of them
    /// CE-marked.
    fn grow(&mut self, tp: &mut CcState, acked: u64, ce: u64) {
        if ce > 0 {
            self.saw_ce = true;
        }
        let mut acked = acked.saturating_sub(ce);
        if acked == 0 || self.in_loss || !tp.is_cwnd_limited {
            return;
        }
        let open = tp.ca_state < CaState::Cwr;
        if tp.in_slow_start() && open {
            let before = tp.cwnd;
            reno::slow_start(tp, acked.min(u32::MAX as u64) as u32);
            acked -= (tp.cwnd - before) as u64;
            self.frac_cwnd = (tp.cwnd as u64) << CWND_UNIT;
            if acked == 0 {
                return;
            }
        }
        let cwnd = self.frac_to_cwnd() as u64;
        let increase = (acked * self.ai_ack_increase(tp) + (cwnd >> 1)) / cwnd;
        self.frac_cwnd += increase.max(acked);
    }

    /// Linux `prague_enter_loss`.
    fn enter_loss(&mut self, tp: &CcState) {
        self.loss_cwnd = tp.cwnd;
        self.loss_frac_cwnd = self.frac_cwnd;
        self.frac_cwnd -= self.frac_cwnd >> 1;
        self.in_loss = true;
    }

    /// Linux `prague_enter_cwr`.
    fn enter_cwr(&mut self, tp: &CcState) {
        if self.is_rtt_indep(tp)
            && rtt_units_to_ns(self.target_rtt(tp)) > tp.now_ns.saturating_sub(self.cwr_stamp_ns)
        {
            return;
        }
        self.cwr_stamp_ns = tp.now_ns;
        let alpha = self.upscaled_alpha >> SHIFT_G;
        let reduction = (alpha * self.frac_cwnd + MAX_ALPHA) >> (ALPHA_BITS + 1);
        self.frac_cwnd -= reduction;
    }
}

impl CongestionControl for Prague {
    fn init(&mut self, tp: &mut CcState) {
        self.reno_fallback = !tp.ecn_ok;
        if self.reno_fallback {
            return;
        }
        // tcp_prague.c prague_init: Prague always paces (SK_PACING_NEEDED), at its own
        // rate (`update_pacing_rate`).
        tp.paced = true;
        self.alpha_stamp_ns = tp.now_ns;
        self.upscaled_alpha = MAX_ALPHA << SHIFT_G;
        self.frac_cwnd = (tp.cwnd as u64) << CWND_UNIT;
        self.loss_frac_cwnd = 0;
        self.round = 0;
        self.saw_ce = tp.delivered_ce > 0;
        self.in_loss = false;
        self.last_delivered = tp.delivered;
        self.last_delivered_ce = tp.delivered_ce;
        self.new_round(tp);
    }

    fn ssthresh(&mut self, tp: &CcState, cause: ReductionCause) -> u32 {
        if self.reno_fallback {
            return (tp.cwnd >> 1).max(2);
        }
        match cause {
            ReductionCause::Loss => {
                // Entering Recovery or Loss: the window before, then halved.
                if !self.in_loss {
                    self.enter_loss(tp);
                }
            }
            ReductionCause::Ecn | ReductionCause::Delay => self.enter_cwr(tp),
        }
        self.frac_to_cwnd().max(MIN_CWND)
    }

    fn cong_avoid(&mut self, tp: &mut CcState, acked: u32) {
        if self.reno_fallback {
            reno::cong_avoid(tp, acked);
            return;
        }
        // The growth happened in in_ack_event; move cwnd one packet towards frac_cwnd
        // (Linux's "adjust"), or to it at once in slow start, which grew both together.
        let target = self.frac_to_cwnd().min(tp.cwnd_clamp);
        if tp.cwnd > target && tp.cwnd > MIN_CWND {
            tp.cwnd -= 1;
            tp.ssthresh = tp.cwnd;
        } else if tp.cwnd < target {
            tp.cwnd = if tp.in_slow_start() {
                target
            } else {
                tp.cwnd + 1
            };
        }
    }

    fn in_ack_event(&mut self, tp: &mut CcState, _flags: AckFlags) {
        if self.reno_fallback {
            return;
        }
        let acked = tp.delivered - self.last_delivered;
        let ce = tp.delivered_ce - self.last_delivered_ce;
        self.last_delivered = tp.delivered;
        self.last_delivered_ce = tp.delivered_ce;
        self.grow(tp, acked, ce);
        if tp.ca_state == CaState::Cwr {
            // The reduction's end point follows the growth (see the module notes).
            tp.ssthresh = self.frac_to_cwnd().max(MIN_CWND);
        }
        Self::update_pacing_rate(tp);
        if self.should_update_ewma(tp) {
            self.update_alpha(tp);
        }
    }

    fn set_state(&mut self, tp: &mut CcState, new_state: CaState) {
        if self.reno_fallback {
            return;
        }
        match new_state {
            CaState::Recovery => {
                if !self.in_loss {
                    self.enter_loss(tp);
                }
                // Also when Recovery follows a CWR, whose ssthresh is still set.
                tp.ssthresh = self.frac_to_cwnd().max(MIN_CWND);
            }
            CaState::Open => self.in_loss = false,
            _ => {}
        }
    }

    fn cwnd_event(&mut self, tp: &mut CcState, event: CaEvent) {
        if !self.reno_fallback && event == CaEvent::Loss && !self.in_loss {
            self.enter_loss(tp);
        }
    }

    fn undo_cwnd(&mut self, tp: &CcState) -> u32 {
        if self.reno_fallback {
            return reno::undo_cwnd(tp);
        }
        self.in_loss = false;
        self.frac_cwnd = self.frac_cwnd.max(self.loss_frac_cwnd);
        self.loss_cwnd.max(tp.cwnd)
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

    fn ecn_codepoint(&self) -> Ecn {
        if self.reno_fallback {
            Ecn::Ect0
        } else {
            Ecn::Ect1
        }
    }

    fn diagnostics(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("alpha", self.alpha()),
            ("frac_cwnd", self.frac_cwnd()),
            ("round", self.round as f64),
        ]
    }
}

#[cfg(test)]
mod tests;
