//! NewReno congestion control.
//!
//! Reference: Linux `net/ipv4/tcp_cong.c` (`tcp_reno_ssthresh`, `tcp_reno_cong_avoid`):
//! slow start with exact per-packet counting, additive increase of one packet per
//! window of ACKed packets, `ssthresh = max(cwnd * beta, 2)`. With the default
//! `beta = 0.5` this is Linux's `max(cwnd >> 1, 2)` exactly. RFC 5681 §3.1 specifies
//! `max(FlightSize / 2, 2 SMSS)`; Linux (and ccsim) use cwnd, not FlightSize.
//! Recovery itself (fast retransmit, NewReno partial ACKs, SACK, PRR) lives in the TCP
//! sender, as in Linux, not here.
//!
//! Parameters: [`TABLE`] (`ccsim algorithms newreno`): `beta`, and ABE's (RFC 8511, paper
//! 003; see [`super::abe`]).
//!
//! Departures from the reference: `beta` other than 0.5 and ABE are extensions (Linux has
//! neither); the product is truncated to whole packets like Linux's shift.

use super::abe::{self, Abe, HasAbe};
use super::{reno, CcState, CongestionControl, ReductionCause};
use crate::params::{self, Algorithm, Family, Param, Settable, OPEN_UNIT};
use crate::scenario::{ParamValue, ScenarioError};

/// NewReno state: only its parameters.
#[derive(Debug, Clone)]
pub struct NewReno {
    /// Multiplicative decrease factor in (0, 1).
    pub beta: f64,
    /// Alternative Backoff with ECN.
    pub abe: Abe,
}

impl Default for NewReno {
    fn default() -> Self {
        NewReno {
            beta: 0.5,
            abe: Abe::new(0.8),
        }
    }
}

impl HasAbe for NewReno {
    fn abe_mut(&mut self) -> &mut Abe {
        &mut self.abe
    }
}

/// NewReno's parameters.
pub const TABLE: Algorithm<Settable<NewReno>> = Algorithm {
    name: "newreno",
    aliases: &["reno"],
    family: Family::CongestionControl,
    summary: "Reno with NewReno recovery: additive increase, multiplicative decrease",
    reference: "Linux net/ipv4/tcp_cong.c (tcp_reno_*); RFC 5681 §3.1, RFC 6582; ABE: RFC 8511",
    params: &[
        Settable {
            param: Param {
                name: "beta",
                kind: OPEN_UNIT,
                default: "0.5",
                help: "multiplicative decrease on loss, and on ECN unless ABE applies; 0.5 is Linux's `max(cwnd >> 1, 2)` exactly",
            },
            set: |c, v| c.beta = v.number(),
        },
        abe::abe_switch(),
        abe::beta_ecn("0.8"),
        abe::in_slow_start(),
    ],
};

impl CongestionControl for NewReno {
    fn ssthresh(&mut self, tp: &CcState, cause: ReductionCause) -> u32 {
        if let Some(b) = self.abe.beta_for(tp, cause) {
            return ((tp.cwnd as f64 * b) as u32).max(2);
        }
        if self.beta == 0.5 {
            (tp.cwnd >> 1).max(2)
        } else {
            ((tp.cwnd as f64 * self.beta) as u32).max(2)
        }
    }

    fn cong_avoid(&mut self, tp: &mut CcState, acked: u32) {
        reno::cong_avoid(tp, acked);
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

    fn ss(cc: &mut NewReno, tp: &CcState, cause: ReductionCause) -> u32 {
        cc.ssthresh(tp, cause)
    }

    #[test]
    fn abe_uses_beta_ecn_for_ecn_in_congestion_avoidance_only() {
        let mut tp = state(100);
        tp.ssthresh = 80; // congestion avoidance (cwnd >= ssthresh)
        let mut cc = NewReno::default();
        // Without ABE an ECN echo is a loss (RFC 3168 §6.1.2).
        assert_eq!(ss(&mut cc, &tp, ReductionCause::Ecn), 50);
        cc.set_param("p", "beta_ecn", &ParamValue::Number(0.8))
            .unwrap();
        assert!(cc.abe.enabled(), "giving beta_ecn turns ABE on");
        // RFC 8511 §3: 0.8 x cwnd on ECE, loss unchanged.
        assert_eq!(ss(&mut cc, &tp, ReductionCause::Ecn), 80);
        assert_eq!(ss(&mut cc, &tp, ReductionCause::Loss), 50);
        // An echo that ends slow start keeps the loss response (RFC 8511 §3) ...
        tp.ssthresh = crate::cc::INFINITE_SSTHRESH;
        assert_eq!(ss(&mut cc, &tp, ReductionCause::Ecn), 50);
        // ... unless the paper's slow-start variant is asked for (paper 003 §III-A).
        cc.set_param("p", "abe_in_slow_start", &ParamValue::Bool(true))
            .unwrap();
        assert_eq!(ss(&mut cc, &tp, ReductionCause::Ecn), 80);
        // abe = false wins over a given beta_ecn, whatever the order.
        cc.set_param("p", "abe", &ParamValue::Bool(false)).unwrap();
        cc.set_param("p", "beta_ecn", &ParamValue::Number(0.9))
            .unwrap();
        assert_eq!(ss(&mut cc, &tp, ReductionCause::Ecn), 50);
    }

    #[test]
    fn abe_switch_alone_uses_the_default_beta_ecn() {
        let mut tp = state(100);
        tp.ssthresh = 10;
        let mut cc = NewReno::default();
        cc.set_param("p", "abe", &ParamValue::Bool(true)).unwrap();
        assert_eq!(ss(&mut cc, &tp, ReductionCause::Ecn), 80);
        // Small windows keep the 2-packet floor.
        let tp = state(2);
        assert_eq!(ss(&mut cc, &tp, ReductionCause::Ecn), 2);
    }
}
