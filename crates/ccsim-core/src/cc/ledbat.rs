//! LEDBAT (Low Extra Delay Background Transport), RFC 6817.
//!
//! Reference: RFC 6817 §2.4 (sender pseudocode) and §2.4.2/§3 (constants); no Linux
//! mainline module exists.
//!
//! - Delay samples (one per ACK that carries an RTT sample): `update_base_delay` keeps
//!   `BASE_HISTORY` one-minute minima (a new bucket whenever the minute changes);
//!   `update_current_delay` keeps the last `CURRENT_FILTER` samples; `FILTER()` is their
//!   minimum, over samples no older than one (smoothed) RTT (§3.4.2's limit), the newest
//!   always included.
//! - Per ACK that acknowledges new data outside loss recovery (`cong_avoid`):
//!   `queuing_delay = FILTER(current_delays) - MIN(base_delays)`, `off_target = (TARGET -
//!   queuing_delay) / TARGET`, `cwnd += GAIN * off_target * bytes_newly_acked * MSS / cwnd`
//!   (in packets: `GAIN off_target acked / cwnd`), then `cwnd <= flightsize +
//!   ALLOWED_INCREASE` (flightsize = packets in flight before the ACK) and `cwnd >=
//!   MIN_CWND`. cwnd is kept as a real number and the sender sees its integer part.
//! - Loss (and ECN, treated alike): `cwnd = min(cwnd, max(cwnd / 2, MIN_CWND))` at most once
//!   per RTT — the sender's Recovery/CWR with `ssthresh = max(cwnd / 2, MIN_CWND)`.
//! - The window starts at INIT_CWND.
//!
//! Parameters: [`TABLE`] (`ccsim algorithms ledbat`), RFC 6817's names and recommended
//! values; its MUSTs (TARGET <= 100 ms, GAIN <= 1, ALLOWED_INCREASE > 0) are the accepted
//! ranges. `slow_start` (off: the RFC pseudocode has none) adds Reno slow start, as ns-3's
//! TcpLedbat offers. Changes apply from the next ACK; a smaller `base_history` or
//! `current_filter` drops the oldest entries.
//!
//! Departures: RFC 6817 measures one-way delay (receiver timestamps). ccsim's sender has
//! only RTT samples, so the delays here are RTTs: the queueing-delay estimate is `RTT -
//! min RTT`, which also counts queueing on the ACK path (none in a dumbbell whose reverse
//! direction is not congested). Samples come from the ACKed segment's RTT (Linux's
//! `ca_rtt`), one per ACK; the RFC allows several per ACK.

use std::collections::VecDeque;

use super::{reno, AckSample, CcState, CongestionControl, Knob, KnobUnit, ReductionCause};
use crate::params::{self, Algorithm, Family, Kind, Param, Settable};
use crate::scenario::{ParamValue, ScenarioError};

const MINUTE_NS: u64 = 60_000_000_000;

/// ledbat's parameters.
pub const TABLE: Algorithm<Settable<Ledbat>> = Algorithm {
    name: "ledbat",
    aliases: &[],
    family: Family::CongestionControl,
    summary: "LEDBAT: less-than-best-effort, yields when queueing delay nears a target",
    reference: "RFC 6817 §2.4 (sender pseudocode), §2.4.2 and §3 (constants)",
    params: &[
        Settable {
            param: Param {
                name: "target",
                kind: Kind::Duration { what: Some("a duration in (0, 100ms] like \"25ms\" (RFC 6817: TARGET MUST be 100 ms or less)"), ok: |ns| ns > 0 && ns <= 100_000_000 },
                default: "\"100ms\"",
                help: "TARGET queueing delay (the RFC: MUST be ≤ 100 ms)",
            },
            set: |c, v| c.cfg.target_ns = v.ns(),
        },
        Settable {
            param: Param {
                name: "gain",
                kind: Kind::Number { what: "a number in (0, 1] (RFC 6817: GAIN MUST be 1 or less)", ok: |g| g > 0.0 && g <= 1.0 },
                default: "1",
                help: "GAIN (the RFC: MUST be ≤ 1)",
            },
            set: |c, v| c.cfg.gain = v.number(),
        },
        Settable {
            param: Param {
                name: "allowed_increase",
                kind: Kind::Number { what: "a positive number of packets", ok: |a| a > 0.0 },
                default: "1",
                help: "ALLOWED_INCREASE, packets per RTT",
            },
            set: |c, v| c.cfg.allowed_increase = v.number(),
        },
        Settable {
            param: Param {
                name: "min_cwnd",
                kind: Kind::Integer { lo: 1, hi: u32::MAX as u64 },
                default: "2",
                help: "MIN_CWND, packets",
            },
            set: |c, v| c.cfg.min_cwnd = v.int() as u32,
        },
        Settable {
            param: Param {
                name: "init_cwnd",
                kind: Kind::Integer { lo: 0, hi: u32::MAX as u64 },
                default: "2",
                help: "INIT_CWND, packets; 0 keeps the flow's `initial_window`",
            },
            set: |c, v| c.cfg.init_cwnd = v.int() as u32,
        },
        Settable {
            param: Param {
                name: "base_history",
                kind: Kind::Integer { lo: 1, hi: 1_000_000 },
                default: "10",
                help: "BASE_HISTORY: one-minute minima kept",
            },
            set: |c, v| {
                c.cfg.base_history = v.int() as usize;
                while c.base_delays.len() > c.cfg.base_history {
                    c.base_delays.pop_front();
                }
            },
        },
        Settable {
            param: Param {
                name: "current_filter",
                kind: Kind::Integer { lo: 1, hi: 1_000_000 },
                default: "4",
                help: "CURRENT_FILTER: recent samples (no older than one RTT) whose minimum is the current delay",
            },
            set: |c, v| {
                c.cfg.current_filter = v.int() as usize;
                while c.current_delays.len() > c.cfg.current_filter {
                    c.current_delays.pop_front();
                }
            },
        },
        Settable {
            param: Param {
                name: "slow_start",
                kind: Kind::Bool,
                default: "false",
                help: "Reno slow start while cwnd < ssthresh (as ns-3's TcpLedbat; the RFC has none)",
            },
            set: |c, v| c.cfg.slow_start = v.boolean(),
        },
    ],
};

/// LEDBAT's configuration: the values of its [`TABLE`], kept apart from the per-flow state
/// (as quinn's `congestion/cubic.rs` does).
#[derive(Debug, Clone)]
pub struct LedbatConfig {
    target_ns: u64,
    gain: f64,
    allowed_increase: f64,
    min_cwnd: u32,
    init_cwnd: u32,
    base_history: usize,
    current_filter: usize,
    slow_start: bool,
}

/// LEDBAT state and parameters.
#[derive(Debug, Clone)]
pub struct Ledbat {
    /// The parameters ([`TABLE`]).
    cfg: LedbatConfig,
    /// One-minute minima, oldest first (ns).
    base_delays: VecDeque<u64>,
    /// Minute index of the last rollover (`None` = never, the RFC's -infinity).
    last_rollover_min: Option<u64>,
    /// (arrival time, delay) of the last samples, oldest first.
    current_delays: VecDeque<(u64, u64)>,
    /// The real-valued window and the integer value last written to `tp.cwnd`.
    cwnd: f64,
    cwnd_written: u32,
    /// Packets in flight before the current ACK (the RFC's flightsize).
    flightsize: u32,
}

impl Default for Ledbat {
    fn default() -> Self {
        Ledbat {
            cfg: LedbatConfig {
                target_ns: 100_000_000,
                gain: 1.0,
                allowed_increase: 1.0,
                min_cwnd: 2,
                init_cwnd: 2,
                base_history: 10,
                current_filter: 4,
                slow_start: false,
            },
            base_delays: VecDeque::new(),
            last_rollover_min: None,
            current_delays: VecDeque::new(),
            cwnd: 0.0,
            cwnd_written: 0,
            flightsize: 0,
        }
    }
}

impl Ledbat {
    /// RFC 6817 `update_base_delay()`.
    fn update_base_delay(&mut self, now_ns: u64, delay: u64) {
        let minute = now_ns / MINUTE_NS;
        if self.last_rollover_min != Some(minute) {
            self.last_rollover_min = Some(minute);
            self.base_delays.push_back(delay);
            while self.base_delays.len() > self.cfg.base_history {
                self.base_delays.pop_front();
            }
        } else if let Some(tail) = self.base_delays.back_mut() {
            *tail = (*tail).min(delay);
        }
    }

    /// RFC 6817 `update_current_delay()`.
    fn update_current_delay(&mut self, now_ns: u64, delay: u64) {
        self.current_delays.push_back((now_ns, delay));
        while self.current_delays.len() > self.cfg.current_filter {
            self.current_delays.pop_front();
        }
    }

    /// `FILTER(current_delays) - MIN(base_delays)`, if there are samples.
    pub fn queuing_delay_ns(&self, tp: &CcState) -> Option<u64> {
        let &(newest_t, newest) = self.current_delays.back()?;
        let horizon = newest_t.saturating_sub(tp.srtt_ns);
        let filtered = self
            .current_delays
            .iter()
            .filter(|&&(t, _)| t >= horizon)
            .map(|&(_, d)| d)
            .min()
            .unwrap_or(newest);
        let base = self.base_delays.iter().copied().min()?;
        Some(filtered.saturating_sub(base))
    }

    /// Take over a cwnd the sender changed (reductions, init).
    fn sync(&mut self, tp: &CcState) {
        if tp.cwnd != self.cwnd_written {
            self.cwnd = tp.cwnd as f64;
            self.cwnd_written = tp.cwnd;
        }
    }

    fn write(&mut self, tp: &mut CcState) {
        tp.cwnd = (self.cwnd as u32).clamp(1, tp.cwnd_clamp);
        self.cwnd_written = tp.cwnd;
    }
}

impl CongestionControl for Ledbat {
    /// TARGET, from 1 ms (yields at almost any queue) to RFC 6817's largest, 100 ms (a
    /// queue must hold 100 ms before it yields).
    fn lbe_knob(&self) -> Option<Knob> {
        Some(Knob {
            name: "target".to_owned(),
            low: 1e6,
            high: 1e8,
            unit: KnobUnit::Duration,
        })
    }
    fn init(&mut self, tp: &mut CcState) {
        if self.cfg.init_cwnd > 0 {
            tp.cwnd = self.cfg.init_cwnd;
        }
        self.cwnd = tp.cwnd as f64;
        self.cwnd_written = tp.cwnd;
    }

    fn ssthresh(&mut self, tp: &CcState, _cause: ReductionCause) -> u32 {
        (tp.cwnd / 2).max(self.cfg.min_cwnd)
    }

    fn pkts_acked(&mut self, tp: &mut CcState, sample: &AckSample) {
        self.flightsize = sample.in_flight;
        if let Some(delay) = sample.rtt_ns {
            self.update_base_delay(tp.now_ns, delay);
            self.update_current_delay(tp.now_ns, delay);
        }
    }

    fn cong_avoid(&mut self, tp: &mut CcState, acked: u32) {
        self.sync(tp);
        let mut acked = acked;
        if self.cfg.slow_start && tp.in_slow_start() {
            if !tp.is_cwnd_limited {
                return;
            }
            acked = reno::slow_start(tp, acked);
            self.cwnd = tp.cwnd as f64;
            self.cwnd_written = tp.cwnd;
            if acked == 0 {
                return;
            }
        }
        let Some(qd) = self.queuing_delay_ns(tp) else {
            return;
        };
        let target = self.cfg.target_ns as f64;
        let off_target = (target - qd as f64) / target;
        self.cwnd += self.cfg.gain * off_target * acked as f64 / self.cwnd;
        let max_allowed = self.flightsize as f64 + self.cfg.allowed_increase;
        self.cwnd = self.cwnd.min(max_allowed).max(self.cfg.min_cwnd as f64);
        self.write(tp);
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
