//! Deadline-aware less-than-best-effort (DA-LBE): a finite transfer that stays as
//! low-priority as its soft deadline allows, and competes harder only as much as it must.
//!
//! Paper 000 (Tangenes, Hayes, Petlund, Ros, §V) shows that CDG's backoff scale G tunes
//! how much capacity a CDG flow leaves to others (Table I: 1-49 % of a 10 Mbit/s link) and
//! asks for a controller that sets that knob from a transfer's deadline. The same idea,
//! as a price on congestion signals, is Hayes, Ros, Alay et al., "A framework for
//! less than best effort congestion control with soft deadlines" (IFIP Networking 2017);
//! neither gives a control law to copy, so this one is ccsim's and is stated here.
//!
//! # Control law
//! The transfer of `size` bytes starts at `t0` with deadline `t0 + within`. It plans to
//! finish `margin x within` early, at `t_plan = t0 + (1 - margin) within`, at the constant
//! rate that needs: the least peak share a transfer can take and still finish. Every
//! `interval` Δ from `t0` on, with `B` bytes not yet acknowledged and `A` acknowledged:
//!
//! 1. achieved rate over the last interval `r = 8 (A - A_prev) / Δ` (bit/s), smoothed
//!    `r̂ = r` at the first tick, else `r̂ = (r̂ + r) / 2` (about two intervals of memory:
//!    one CDG backoff cycle must not swing the knob);
//! 2. required rate `r_req = 8 B / (t_plan - now)`;
//! 3. integral step on the logarithms: `ln k <- ln k + gain x ln(r_req / max(r̂, 1 bit/s))`,
//!    clamped to `[ln low, ln high]`. The knob moves by ratios because its effect does:
//!    paper 000's share rises about as `G^0.3` over G = 0.1-120 (Fig. 3), so a rate short
//!    by a factor x needs G larger by a factor of about `x^3`; the default `gain = 0.5`
//!    closes about a sixth of that per interval, so a step change settles within ten or
//!    so intervals without chasing CUBIC's and CDG's sawtooth (on `examples/dalbe_cdg.toml`
//!    gain 1 moved ln G by 0.19 per interval against 0.08 at 0.5, for the same outcome). At `r̂ = r_req` the knob rests: the transfer runs at the planned rate;
//!    ahead of plan (`r̂ > r_req`) it lowers the knob and gives capacity back.
//! 4. `now >= t_plan` (late in the plan) sets the knob to `high` at once.
//! 5. Escalation (optional, `escalate = "cubic"`) judges the trend, not one interval:
//!    `r̄`, the achieved rate averaged with weight `Δ/τ` per interval over `τ = max(4 s,
//!    20 SRTT)`. When the knob is at `high` and `r̄ < r_req` for three intervals in a
//!    row (a projected miss even at the most aggressive setting), or `t_plan` has passed
//!    with bytes left, the flow switches to the given congestion control (Linux
//!    `tcp_reinit_congestion_control`: cwnd and ssthresh are kept, the new algorithm's
//!    `init` runs). The trend restarts when the knob reaches `high`, so the top is
//!    judged by what it achieves, not by the ramp before it. The flow switches back,
//!    knob at `high`, when for three intervals before `t_plan` it is well ahead
//!    (`r̄ > 1.5 r_req`) and its own algorithm at `high` did achieve `r_req` (the trend
//!    recorded when it escalated is above `r_req`): otherwise it would fall short again
//!    at once (000:dalbe saw LEDBAT escalate and return 10 times a run). An earlier rule (two
//!    intervals of the short average at `high`) escalated on CUBIC's transient dips at
//!    200 ms RTTs and never returned: 000:dalbe found the transfer then finishing at
//!    100 s of a 480 s deadline, taking more than fixed G = 120 would.
//!
//! The knob starts at `low` (pure LBE) when the transfer starts. A deadline is soft:
//! the transfer always runs to completion, and the `transfers` table reports it met,
//! missed (with its lateness) or unfinished.
//!
//! The controller is algorithm-agnostic: the knob is any parameter the congestion
//! control accepts through `set_param` with a positive value (a number, or a duration
//! such as LEDBAT's `target`, handled in nanoseconds); each algorithm declares its LBE
//! knob and range ([`crate::cc::CongestionControl::lbe_knob`]), which a scenario may
//! override.

pub use crate::cc::knob::{Knob, KnobUnit};

/// The controller's settings (from the scenario's `deadline` and `deadline_control`).
#[derive(Debug, Clone, PartialEq)]
pub struct DeadlineParams {
    /// The soft deadline, counted from the transfer's start.
    pub within_ns: u64,
    pub knob: Knob,
    /// Control period Δ.
    pub interval_ns: u64,
    /// Integral gain on the log rate error (> 0).
    pub gain: f64,
    /// Fraction of `within` kept in reserve: the plan finishes this much early (0..1).
    pub margin: f64,
    /// Switch to another congestion control when even `high` falls short.
    pub escalate: bool,
    /// Turn the knob at all; false keeps only the deadline, whose outcome the
    /// `transfers` table reports (a baseline run with the algorithm as configured).
    pub retune: bool,
}

/// One decision, as the `deadline_control` table records it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision {
    pub time_ns: u64,
    pub bytes_left: u64,
    /// Time to the planned finish (negative once it has passed), seconds.
    pub plan_left_s: f64,
    pub rate_required_bps: f64,
    pub rate_achieved_bps: f64,
    /// The knob's new value (in its unit; nanoseconds for a duration).
    pub knob: f64,
    /// The long-term achieved rate `r̄` that escalation judges, bit/s.
    pub rate_trend_bps: f64,
    /// The flow runs the escalation congestion control after this decision.
    pub escalated: bool,
    /// It switched to it at this decision.
    pub escalate_now: bool,
    /// It switched back to its own congestion control at this decision.
    pub deescalate_now: bool,
}

/// Floor of the achieved rate in the log error, bit/s: a tick with nothing acknowledged
/// (a retransmission timeout) pushes the knob up hard but finitely.
const MIN_RATE_BPS: f64 = 1.0;
/// Intervals in a row of a projected miss at `high` before escalating, and of being
/// well ahead before switching back.
const TICKS_TO_SWITCH: u32 = 3;
/// "Well ahead": the trend exceeds the required rate by this factor.
const AHEAD_FACTOR: f64 = 1.5;
/// The trend's time constant: at least this, and at least `TREND_RTTS` smoothed RTTs.
const TREND_MIN_NS: u64 = 4_000_000_000;
const TREND_RTTS: u64 = 20;

/// The DA-LBE controller of one flow (see the module documentation).
#[derive(Debug, Clone)]
pub struct DeadlineController {
    pub params: DeadlineParams,
    start_ns: u64,
    size_bytes: u64,
    ln_knob: f64,
    last_tick_ns: u64,
    last_acked: u64,
    rate_bps: Option<f64>,
    trend_bps: Option<f64>,
    /// The knob sat at `high` after the last decision.
    at_top: bool,
    /// The trend the flow's own algorithm reached at `high` when it escalated.
    own_top_bps: f64,
    short_ticks: u32,
    ahead_ticks: u32,
    escalated: bool,
    /// When the next decision is due; an event for another time is stale (a transfer
    /// that ended and a new one that started).
    pub next_tick_ns: u64,
}

impl DeadlineController {
    pub fn new(params: DeadlineParams) -> Self {
        let ln_knob = params.knob.low.ln();
        DeadlineController {
            params,
            start_ns: 0,
            size_bytes: 0,
            ln_knob,
            last_tick_ns: 0,
            last_acked: 0,
            rate_bps: None,
            trend_bps: None,
            at_top: false,
            own_top_bps: 0.0,
            short_ticks: 0,
            ahead_ticks: 0,
            escalated: false,
            next_tick_ns: u64::MAX,
        }
    }

    /// A transfer of `size_bytes` starts at `start_ns`: reset, and return the knob's
    /// starting value (`low`). The first decision is due one interval later.
    pub fn begin(&mut self, start_ns: u64, size_bytes: u64) -> f64 {
        *self = DeadlineController::new(self.params.clone());
        self.start_ns = start_ns;
        self.size_bytes = size_bytes;
        self.last_tick_ns = start_ns;
        self.next_tick_ns = start_ns.saturating_add(self.params.interval_ns);
        self.params.knob.low
    }

    /// The transfer has ended: no more decisions until the next `begin`.
    pub fn end(&mut self) {
        self.next_tick_ns = u64::MAX;
    }

    /// The absolute deadline of the current transfer.
    pub fn deadline_ns(&self) -> u64 {
        self.start_ns.saturating_add(self.params.within_ns)
    }

    /// The planned finish: `margin x within` before the deadline.
    pub fn plan_ns(&self) -> u64 {
        let reserve = (self.params.margin * self.params.within_ns as f64).round() as u64;
        self.deadline_ns().saturating_sub(reserve)
    }

    /// The knob's current value (the range's ends exactly, not through `exp(ln x)`).
    pub fn knob(&self) -> f64 {
        let k = &self.params.knob;
        if self.ln_knob >= k.high.ln() {
            k.high
        } else if self.ln_knob <= k.low.ln() {
            k.low
        } else {
            self.ln_knob.exp()
        }
    }

    pub fn escalated(&self) -> bool {
        self.escalated
    }

    /// Decide at `now_ns` with `bytes_acked` of the transfer acknowledged and the
    /// flow's smoothed RTT; schedules the next decision (`next_tick_ns`).
    pub fn tick(&mut self, now_ns: u64, bytes_acked: u64, srtt_ns: u64) -> Decision {
        let p = &self.params;
        let (ln_low, ln_high) = (p.knob.low.ln(), p.knob.high.ln());
        let dt_ns = now_ns - self.last_tick_ns;
        let dt_s = dt_ns as f64 * 1e-9;
        let r = if dt_s > 0.0 {
            8.0 * bytes_acked.saturating_sub(self.last_acked) as f64 / dt_s
        } else {
            0.0
        };
        let rate = match self.rate_bps {
            None => r,
            Some(prev) => 0.5 * (prev + r),
        };
        let tau_ns = TREND_MIN_NS.max(TREND_RTTS.saturating_mul(srtt_ns));
        let w = (dt_ns as f64 / tau_ns as f64).min(1.0);
        let mut trend = match self.trend_bps {
            None => r,
            Some(prev) => (1.0 - w) * prev + w * r,
        };
        self.rate_bps = Some(rate);
        self.trend_bps = Some(trend);
        self.last_tick_ns = now_ns;
        self.last_acked = bytes_acked;
        self.next_tick_ns = now_ns.saturating_add(p.interval_ns);

        let bytes_left = self.size_bytes.saturating_sub(bytes_acked);
        let plan = self.plan_ns();
        let plan_left_s = (plan as f64 - now_ns as f64) * 1e-9;
        let was_escalated = self.escalated;
        let rate_required_bps;
        if now_ns >= plan {
            // Behind the plan's end: compete as hard as the knob allows (step 4).
            rate_required_bps = f64::INFINITY;
            self.ln_knob = ln_high;
            if p.escalate && bytes_left > 0 {
                self.escalated = true;
            }
        } else {
            rate_required_bps = 8.0 * bytes_left as f64 / plan_left_s;
            if self.escalated {
                // The knob waits at `high` for a switch back.
                self.ln_knob = ln_high;
                let ahead = trend > AHEAD_FACTOR * rate_required_bps
                    && rate_required_bps < self.own_top_bps;
                self.ahead_ticks = if ahead { self.ahead_ticks + 1 } else { 0 };
                if self.ahead_ticks >= TICKS_TO_SWITCH {
                    self.escalated = false;
                    self.ahead_ticks = 0;
                    self.short_ticks = 0;
                    self.at_top = true;
                }
            } else {
                let error = (rate_required_bps.max(MIN_RATE_BPS) / rate.max(MIN_RATE_BPS)).ln();
                self.ln_knob = (self.ln_knob + p.gain * error).clamp(ln_low, ln_high);
                let at_top = self.ln_knob >= ln_high;
                if at_top && !self.at_top {
                    // Judge the top by what it achieves: restart the trend there.
                    trend = rate;
                    self.trend_bps = Some(rate);
                }
                self.at_top = at_top;
                let short = at_top && trend < rate_required_bps;
                self.short_ticks = if short { self.short_ticks + 1 } else { 0 };
                if p.escalate && self.short_ticks >= TICKS_TO_SWITCH {
                    self.escalated = true;
                    self.own_top_bps = trend;
                    self.short_ticks = 0;
                }
            }
        }
        Decision {
            time_ns: now_ns,
            bytes_left,
            plan_left_s,
            rate_required_bps,
            rate_achieved_bps: rate,
            rate_trend_bps: trend,
            knob: self.knob(),
            escalated: self.escalated,
            escalate_now: self.escalated && !was_escalated,
            deescalate_now: was_escalated && !self.escalated,
        }
    }
}

#[cfg(test)]
mod tests;
