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
//! Parameters: `beta` (multiplicative decrease on loss and ECN, default 0.5).
//! Departures from the reference: `beta` other than 0.5 is an extension (Linux has
//! none); the product is truncated to whole packets like Linux's shift.

use super::{expect_number, reno, CcState, CongestionControl, ReductionCause};
use crate::scenario::{ParamValue, ScenarioError};

/// NewReno state: only its parameter.
#[derive(Debug, Clone)]
pub struct NewReno {
    /// Multiplicative decrease factor in (0, 1).
    pub beta: f64,
}

impl Default for NewReno {
    fn default() -> Self {
        NewReno { beta: 0.5 }
    }
}

impl CongestionControl for NewReno {
    fn ssthresh(&mut self, tp: &CcState, _cause: ReductionCause) -> u32 {
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
        match name {
            "beta" => {
                let b = expect_number(path, name, value)?;
                if !(b > 0.0 && b < 1.0) {
                    return Err(ScenarioError::new(
                        format!("{path}.{name}"),
                        format!("expected a number in (0, 1), got {b}"),
                    ));
                }
                self.beta = b;
                Ok(())
            }
            other => Err(ScenarioError::new(
                format!("{path}.{other}"),
                "unknown parameter for newreno (expected one of: beta)",
            )),
        }
    }
}
