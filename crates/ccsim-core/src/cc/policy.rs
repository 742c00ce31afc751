//! `policy`: a congestion control whose decisions come from outside the simulator — a
//! learned policy or any program that sets the flow's rate or window once per monitor
//! interval (`ccsim.gym` in Python, through `set_param`).
//!
//! Reference: Aurora (Jay et al., "A Deep Reinforcement Learning Perspective on Internet
//! Congestion Control", ICML 2019; PCC-RL `src/gym/network_sim.py`, `Sender.set_rate` /
//! `set_cwnd`): the agent chooses a sending rate each monitor interval and the sender
//! paces at it; the PCC-RL variant with `USE_CWND` also caps the packets in flight. Here:
//!
//! - `mode = "rate"` (Aurora): the flow is paced at `rate_bps` (bits per second on the
//!   wire, headers included, so "90 % of the link" is `0.9 x` the link's rate) and its
//!   window is capped at `cwnd_gain x rate x min RTT` (at least 4 packets, PCC-RL's
//!   `MIN_CWND`), so a policy cannot build an unbounded backlog in the sender.
//! - `mode = "cwnd"`: the window is `cwnd_pkts`, unpaced (a window-based policy).
//!
//! The controller takes Linux's `.cong_control` path (as BBR): it sets cwnd and the pacing
//! rate on every ACK, so the sender's own loss response (`ssthresh`, PRR) never shrinks
//! the window — reacting to loss is the policy's job. A new value set between two ACKs is
//! used from the next ACK on.
//!
//! Parameters: [`TABLE`] (`ccsim algorithms policy`). `policy`, `interval` and
//! `interval_rtts` are read by the Python driver (`ccsim.gym.policy_cc`), which calls the
//! named Python object once per interval; the core only checks them.

use super::{CcState, CongestionControl, ReductionCause, INFINITE_SSTHRESH};
use crate::net::packet::TCP_IP_HEADER_BYTES;
use crate::params::{self, Algorithm, Family, Kind, Param, Settable, Value};
use crate::scenario::{DataRate, ParamValue, ScenarioError};

/// Whether the outside sets a rate or a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyMode {
    Rate,
    Cwnd,
}

/// The decisions set from outside.
#[derive(Debug, Clone)]
pub struct Policy {
    pub mode: PolicyMode,
    /// Sending rate on the wire, bit/s (rate mode).
    pub rate_bps: f64,
    /// Congestion window, packets (cwnd mode).
    pub cwnd_pkts: f64,
    /// Window cap in rate mode, in multiples of rate x min RTT.
    pub cwnd_gain: f64,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            mode: PolicyMode::Rate,
            rate_bps: 1e6,
            cwnd_pkts: 10.0,
            cwnd_gain: 2.0,
        }
    }
}

/// PCC-RL's `MIN_CWND`.
const MIN_CWND_PKTS: u32 = 4;

/// A rate: a number of bit/s, or a string like "10Mbps".
fn read_rate(value: &ParamValue) -> Result<Value, String> {
    match value {
        ParamValue::Number(x) if x.is_finite() && *x >= 1.0 => Ok(Value::Number(*x)),
        ParamValue::Str(s) => match DataRate::parse(s) {
            Ok(r) if r.bps >= 1 => Ok(Value::Number(r.bps as f64)),
            _ => Err(format!(
                "expected a rate like \"10Mbps\" or a number of bit/s >= 1, got {}",
                params::shown(value)
            )),
        },
        other => Err(format!(
            "expected a rate like \"10Mbps\" or a number of bit/s >= 1, got {}",
            params::shown(other)
        )),
    }
}

/// A Python object `module:attr`, checked for shape only (Python imports it).
fn read_object(value: &ParamValue) -> Result<Value, String> {
    match value {
        ParamValue::Str(s)
            if s.split_once(':')
                .is_some_and(|(m, a)| !m.is_empty() && !a.is_empty()) =>
        {
            Ok(Value::Bool(true))
        }
        other => Err(format!(
            "expected a Python object as \"module:attr\" (or \"path/file.py:attr\"), got {}",
            params::shown(other)
        )),
    }
}

/// `policy`'s parameters.
pub const TABLE: Algorithm<Settable<Policy>> = Algorithm {
    name: "policy",
    aliases: &[],
    family: Family::CongestionControl,
    summary: "rate or window set from outside each monitor interval (learned policies, ccsim.gym)",
    reference: "Aurora, Jay et al. ICML 2019; PCC-RL src/gym/network_sim.py (Sender.set_rate, set_cwnd)",
    params: &[
        Settable {
            param: Param {
                name: "mode",
                kind: Kind::Keyword {
                    values: &["rate", "cwnd"],
                    unknown: "expected \"rate\" or \"cwnd\", got {got}",
                    trim: false,
                },
                default: "\"rate\"",
                help: "what the policy sets: the pacing rate (Aurora) or the congestion window",
            },
            set: |c, v| {
                c.mode = if v.word() == "cwnd" {
                    PolicyMode::Cwnd
                } else {
                    PolicyMode::Rate
                }
            },
        },
        Settable {
            param: Param {
                name: "rate_bps",
                kind: Kind::Custom {
                    unit: "rate",
                    accepts: "a rate like \"10Mbps\" or a number of bit/s >= 1",
                    read: read_rate,
                },
                default: "1e6",
                help: "sending rate on the wire (headers included) in rate mode; the policy's start value",
            },
            set: |c, v| c.rate_bps = v.number(),
        },
        Settable {
            param: Param {
                name: "cwnd_pkts",
                kind: Kind::Number {
                    what: "a number >= 1",
                    ok: |x| x >= 1.0,
                },
                default: "10",
                help: "congestion window in cwnd mode, packets",
            },
            set: |c, v| c.cwnd_pkts = v.number(),
        },
        Settable {
            param: Param {
                name: "cwnd_gain",
                kind: Kind::Number {
                    what: "a positive number",
                    ok: |x| x > 0.0,
                },
                default: "2",
                help: "rate mode: window cap in multiples of rate x min RTT (at least 4 packets)",
            },
            set: |c, v| c.cwnd_gain = v.number(),
        },
        Settable {
            param: Param {
                name: "policy",
                kind: Kind::Custom {
                    unit: "Python object",
                    accepts: "\"module:attr\" or \"path/file.py:attr\"",
                    read: read_object,
                },
                default: "none",
                help: "the Python callable (observation -> action) that drives the flow under `ccsim run`",
            },
            set: |_, _| {},
        },
        Settable {
            param: Param {
                name: "interval",
                kind: params::POSITIVE_DURATION,
                default: "one RTT",
                help: "monitor interval between two decisions of `policy` (a duration)",
            },
            set: |_, _| {},
        },
        Settable {
            param: Param {
                name: "interval_rtts",
                kind: Kind::Number {
                    what: "a positive number",
                    ok: |x| x > 0.0,
                },
                default: "1",
                help: "monitor interval in base RTTs of the flow's path, unless `interval` is given",
            },
            set: |_, _| {},
        },
        Settable {
            param: Param {
                name: "action",
                kind: Kind::Keyword {
                    values: &["absolute", "multiplicative"],
                    unknown: "expected \"absolute\" or \"multiplicative\", got {got}",
                    trim: false,
                },
                default: "\"multiplicative\"",
                help: "how `policy`'s action is read: the new value, or Aurora's change (x(1+δa) or /(1-δa))",
            },
            set: |_, _| {},
        },
    ],
};

impl Policy {
    /// Put the outside's decision into the sender's state.
    fn apply(&self, tp: &mut CcState) {
        match self.mode {
            PolicyMode::Rate => {
                // The pacing rate counts payload bytes; rate_bps counts the wire's.
                let wire = f64::from(tp.mss + TCP_IP_HEADER_BYTES);
                let payload_bytes_per_s = self.rate_bps / 8.0 * f64::from(tp.mss) / wire;
                tp.pacing_rate = (payload_bytes_per_s as u64).max(1);
                let rtt_ns = if tp.min_rtt_ns > 0 && tp.min_rtt_ns != u64::MAX {
                    tp.min_rtt_ns
                } else {
                    tp.srtt_ns
                };
                if rtt_ns > 0 {
                    let bdp_pkts = self.rate_bps / 8.0 * rtt_ns as f64 / 1e9 / wire;
                    let cap = (self.cwnd_gain * bdp_pkts).ceil().min(1e7) as u32;
                    tp.cwnd = cap.max(MIN_CWND_PKTS).min(tp.cwnd_clamp);
                }
            }
            PolicyMode::Cwnd => {
                tp.cwnd = (self.cwnd_pkts.round().min(1e7) as u32)
                    .max(1)
                    .min(tp.cwnd_clamp);
            }
        }
    }
}

impl CongestionControl for Policy {
    fn init(&mut self, tp: &mut CcState) {
        tp.ssthresh = INFINITE_SSTHRESH;
        tp.paced = self.mode == PolicyMode::Rate;
        self.apply(tp);
    }

    /// No reduction of its own: the window stays what the outside set.
    fn ssthresh(&mut self, tp: &CcState, _cause: ReductionCause) -> u32 {
        tp.cwnd.max(2)
    }

    fn cong_avoid(&mut self, tp: &mut CcState, _acked: u32) {
        self.apply(tp);
    }

    fn undo_cwnd(&mut self, tp: &CcState) -> u32 {
        tp.cwnd
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    fn cong_control(&mut self, tp: &mut CcState, _rs: &super::RateSample) {
        self.apply(tp);
    }

    fn diagnostics(&self) -> Vec<(&'static str, f64)> {
        vec![("rate_bps", self.rate_bps), ("cwnd_pkts", self.cwnd_pkts)]
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
mod tests {
    use super::*;
    use crate::cc::tests::state;

    #[test]
    fn rate_mode_paces_at_the_wire_rate_and_caps_the_window() {
        let mut tp = state(10);
        tp.mss = 1448;
        tp.min_rtt_ns = 50_000_000;
        let mut cc = Policy::default();
        cc.set_param("p", "rate_bps", &ParamValue::Str("12Mbps".into()))
            .unwrap();
        cc.init(&mut tp);
        assert!(tp.paced);
        // 12 Mbit/s on the wire = 1.5 MB/s of 1500-byte packets = 1000 packets/s of 1448
        // payload bytes.
        assert_eq!(tp.pacing_rate, 1_448_000);
        // 1000 packets/s x 50 ms = 50 packets; x2 = 100.
        assert_eq!(tp.cwnd, 100);
        // A loss does not shrink it.
        assert_eq!(cc.ssthresh(&tp, ReductionCause::Loss), 100);
        cc.set_param("p", "rate_bps", &ParamValue::Number(1e5))
            .unwrap();
        cc.cong_control(&mut tp, &Default::default());
        assert_eq!(tp.cwnd, MIN_CWND_PKTS);
    }

    #[test]
    fn cwnd_mode_sets_the_window_unpaced() {
        let mut tp = state(10);
        let mut cc = Policy::default();
        cc.set_param("p", "mode", &ParamValue::Str("cwnd".into()))
            .unwrap();
        cc.set_param("p", "cwnd_pkts", &ParamValue::Number(33.4))
            .unwrap();
        cc.init(&mut tp);
        assert!(!tp.paced);
        assert_eq!(tp.cwnd, 33);
        assert!(cc
            .set_param("p", "policy", &ParamValue::Str("nocolon".into()))
            .is_err());
        assert!(cc
            .set_param("p", "policy", &ParamValue::Str("pkg.mod:fn".into()))
            .is_ok());
    }
}
