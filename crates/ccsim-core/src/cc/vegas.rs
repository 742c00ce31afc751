//! TCP Vegas, as Linux `net/ipv4/tcp_vegas.c`.
//!
//! References: Linux `net/ipv4/tcp_vegas.c` (`tcp_vegas_pkts_acked`,
//! `tcp_vegas_cong_avoid`, `tcp_vegas_state`, `tcp_vegas_cwnd_event`); Brakmo & Peterson,
//! "TCP Vegas: End to end congestion avoidance on a global internet" (IEEE JSAC 1995).
//!
//! - RTT samples (µs, +1 so never 0): `baseRTT` is the minimum ever seen (propagation
//!   delay), `minRTT` the minimum within the current round, `cntRTT` the samples in it.
//! - Once per round (an ACK beyond the snd_nxt recorded at the previous adjustment), with
//!   more than 2 samples: `diff = cwnd (minRTT - baseRTT) / baseRTT` (packets queued).
//!   In slow start, `diff > gamma` ends it: `cwnd = min(cwnd, cwnd baseRTT / minRTT + 1)`
//!   and ssthresh follows; otherwise slow start continues. In congestion avoidance cwnd
//!   drops by one packet when `diff > beta`, rises by one when `diff < alpha`, else stays.
//!   cwnd is kept in [2, clamp] and ssthresh becomes `max(ssthresh, 3/4 cwnd)`
//!   (`tcp_current_ssthresh`). With 2 samples or fewer in the round it behaves as Reno.
//!   Between round boundaries only slow start grows cwnd.
//! - Vegas runs only in the Open state (re-enabled on each return to Open); in other
//!   states, and after (re)start or idle (`CA_EVENT_TX_START`, `CA_EVENT_CWND_RESTART`,
//!   which also forget baseRTT), growth is Reno's until a fresh round completes.
//! - Loss response and undo are Reno's.
//!
//! Parameters: [`TABLE`] (`ccsim algorithms vegas`), Linux's module parameters, in
//! packets. Changes apply at the next round boundary.
//!
//! Departures: none intended. As in Linux, Vegas's own adjustments ignore the cwnd-limited
//! check (only the Reno fallback applies it) and `cwnd x (minRTT - baseRTT)` is computed in
//! 32 bits.

use super::{reno, AckSample, CaEvent, CaState, CcState};
use super::{CongestionControl, ReductionCause};
use crate::params::{self, Algorithm, Family, Kind, Param, Settable};
use crate::scenario::{ParamValue, ScenarioError};

/// vegas's parameters.
pub const TABLE: Algorithm<Settable<Vegas>> = Algorithm {
    name: "vegas",
    aliases: &[],
    family: Family::CongestionControl,
    summary: "TCP Vegas: delay-based, keeps between alpha and beta packets queued",
    reference: "Linux net/ipv4/tcp_vegas.c; Brakmo & Peterson, IEEE JSAC 1995",
    params: &[
        Settable {
            param: Param {
                name: "alpha",
                kind: Kind::Integer {
                    lo: 0,
                    hi: i32::MAX as u64,
                },
                default: "2",
                help: "grow below this many queued packets (applied at the next round)",
            },
            set: |c, v| c.cfg.alpha = v.int() as u32,
        },
        Settable {
            param: Param {
                name: "beta",
                kind: Kind::Integer {
                    lo: 0,
                    hi: i32::MAX as u64,
                },
                default: "4",
                help: "shrink above this many queued packets",
            },
            set: |c, v| c.cfg.beta = v.int() as u32,
        },
        Settable {
            param: Param {
                name: "gamma",
                kind: Kind::Integer {
                    lo: 0,
                    hi: i32::MAX as u64,
                },
                default: "1",
                help: "leave slow start above this many queued packets",
            },
            set: |c, v| c.cfg.gamma = v.int() as u32,
        },
    ],
};

/// Vegas's configuration: the values of its [`TABLE`], kept apart from the per-flow state
/// (as quinn's `congestion/cubic.rs` does).
#[derive(Debug, Clone)]
pub struct VegasConfig {
    alpha: u32,
    beta: u32,
    gamma: u32,
}

/// Vegas state (Linux `struct vegas`) and parameters.
#[derive(Debug, Clone)]
pub struct Vegas {
    /// The parameters ([`TABLE`]).
    cfg: VegasConfig,
    doing_vegas_now: bool,
    cnt_rtt: u32,
    /// µs + 1.
    min_rtt: u32,
    base_rtt: u32,
    beg_snd_nxt: u64,
}

impl Default for Vegas {
    fn default() -> Self {
        Vegas {
            cfg: VegasConfig {
                alpha: 2,
                beta: 4,
                gamma: 1,
            },
            doing_vegas_now: true,
            cnt_rtt: 0,
            min_rtt: 0x7fff_ffff,
            base_rtt: 0x7fff_ffff,
            beg_snd_nxt: 0,
        }
    }
}

impl Vegas {
    /// Linux `vegas_enable()`.
    fn enable(&mut self, tp: &CcState) {
        self.doing_vegas_now = true;
        self.beg_snd_nxt = tp.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt = 0x7fff_ffff;
    }

    /// Linux `tcp_vegas_init()`.
    fn restart(&mut self, tp: &CcState) {
        self.base_rtt = 0x7fff_ffff;
        self.enable(tp);
    }

    /// The propagation-delay estimate in µs (+1), if any sample was seen.
    pub fn base_rtt_us(&self) -> Option<u32> {
        (self.base_rtt != 0x7fff_ffff).then_some(self.base_rtt)
    }
}

impl CongestionControl for Vegas {
    fn init(&mut self, tp: &mut CcState) {
        self.restart(tp);
    }

    fn ssthresh(&mut self, tp: &CcState, _cause: ReductionCause) -> u32 {
        (tp.cwnd >> 1).max(2)
    }

    fn pkts_acked(&mut self, _tp: &mut CcState, sample: &AckSample) {
        let Some(ns) = sample.rtt_ns else {
            return;
        };
        // Never allow a zero RTT or baseRTT.
        let vrtt = ((ns / 1000).min(u32::MAX as u64 - 1) as u32) + 1;
        self.base_rtt = self.base_rtt.min(vrtt);
        self.min_rtt = self.min_rtt.min(vrtt);
        self.cnt_rtt += 1;
    }

    fn set_state(&mut self, tp: &mut CcState, new_state: CaState) {
        if new_state == CaState::Open {
            self.enable(tp);
        } else {
            self.doing_vegas_now = false;
        }
    }

    fn cwnd_event(&mut self, tp: &mut CcState, event: CaEvent) {
        if matches!(event, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.restart(tp);
        }
    }

    fn cong_avoid(&mut self, tp: &mut CcState, acked: u32) {
        if !self.doing_vegas_now {
            reno::cong_avoid(tp, acked);
            return;
        }
        if tp.snd_una > self.beg_snd_nxt {
            // The once-per-RTT adjustment.
            self.beg_snd_nxt = tp.snd_nxt;
            if self.cnt_rtt <= 2 {
                // Too few samples (probably all delayed ACKs): behave as Reno.
                reno::cong_avoid(tp, acked);
            } else {
                let rtt = self.min_rtt;
                let target_cwnd = tp.cwnd as u64 * self.base_rtt as u64 / rtt as u64;
                let diff = tp.cwnd.wrapping_mul(rtt - self.base_rtt) / self.base_rtt;
                if diff > self.cfg.gamma && tp.in_slow_start() {
                    // Going too fast: match the actual rate and leave slow start.
                    tp.cwnd = tp.cwnd.min(target_cwnd as u32 + 1);
                    tp.ssthresh = tp.ssthresh.min(tp.cwnd);
                } else if tp.in_slow_start() {
                    reno::slow_start(tp, acked);
                } else if diff > self.cfg.beta {
                    tp.cwnd -= 1;
                    tp.ssthresh = tp.ssthresh.min(tp.cwnd);
                } else if diff < self.cfg.alpha {
                    tp.cwnd += 1;
                }
                tp.cwnd = tp.cwnd.clamp(2, tp.cwnd_clamp.max(2));
                // tcp_current_ssthresh() outside a reduction.
                tp.ssthresh = tp.ssthresh.max((tp.cwnd >> 1) + (tp.cwnd >> 2));
            }
            // Wipe the slate clean for the next round.
            self.cnt_rtt = 0;
            self.min_rtt = 0x7fff_ffff;
        } else if tp.in_slow_start() {
            reno::slow_start(tp, acked);
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
