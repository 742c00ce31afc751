//! ABE — Alternative Backoff with ECN — as a parameter set shared by NewReno and CUBIC.
//!
//! References: RFC 8511 §3 (a sender SHOULD set `ssthresh = max(FlightSize * beta_ecn,
//! 2 SMSS)` when it reacts to an ECN-Echo, and keeps its loss response unchanged; §3.1:
//! `beta_ecn = 0.8` for standard TCP, CUBIC was tested with `beta_ecn = 0.85`); paper 003
//! (Khademi et al., "Alternative Backoff"), Section III. The once-per-RTT limit is the
//! sender's CWR state (Linux `tcp_enter_cwr`), not repeated here.
//!
//! Parameters: three entries declared here ([`abe_switch`], [`beta_ecn`],
//! [`in_slow_start`]) and listed in the host algorithm's table. When `abe` is not given,
//! ABE is on exactly when `beta_ecn` is given (`cc = { kind = "newreno", beta_ecn = 0.8 }`
//! means ABE), whatever the order of the keys. RFC 8511 §3 uses `beta_ecn` only for an
//! ECN-Echo received in congestion avoidance (an echo that ends slow start gets the loss
//! `beta`); paper 003 Section III-A applies it at the end of slow start too, as
//! `abe_in_slow_start = true` (and FreeBSD's `cc_newreno`) does.
//!
//! Departures: like Linux (and unlike RFC 8511's FlightSize) the factor multiplies cwnd;
//! the product is truncated to whole packets.

use super::{CcState, ReductionCause};
use crate::params::{Kind, Param, Settable, OPEN_UNIT};

/// A controller that carries ABE settings (its table lists ABE's three entries).
pub trait HasAbe {
    fn abe_mut(&mut self) -> &mut Abe;
}

/// The `abe` switch's table entry.
pub const fn abe_switch<C: HasAbe>() -> Settable<C> {
    Settable {
        param: Param {
            name: "abe",
            kind: Kind::Bool,
            default: "on when beta_ecn is given",
            help: "ABE switch: `abe = true` alone uses the default `beta_ecn`; `abe = false` wins over a given `beta_ecn` (in any key order)",
        },
        set: |c, v| c.abe_mut().explicit = Some(v.boolean()),
    }
}

/// The `beta_ecn` table entry, with the host algorithm's default.
pub const fn beta_ecn<C: HasAbe>(default: &'static str) -> Settable<C> {
    Settable {
        param: Param {
            name: "beta_ecn",
            kind: OPEN_UNIT,
            default,
            help: "multiplicative decrease on an ECN echo when ABE applies (RFC 8511 §3.1)",
        },
        set: |c, v| {
            let abe = c.abe_mut();
            abe.beta_ecn = v.number();
            abe.beta_ecn_given = true;
        },
    }
}

/// The `abe_in_slow_start` table entry.
pub const fn in_slow_start<C: HasAbe>() -> Settable<C> {
    Settable {
        param: Param {
            name: "abe_in_slow_start",
            kind: Kind::Bool,
            default: "false",
            help: "`false`: an echo that ends slow start gets the loss `beta` (RFC 8511 §3); `true`: `beta_ecn` there too (paper 003 §III-A, FreeBSD)",
        },
        set: |c, v| c.abe_mut().in_slow_start = v.boolean(),
    }
}

/// ABE settings of one controller.
#[derive(Debug, Clone)]
pub struct Abe {
    /// `abe` as explicitly set, if it was.
    explicit: Option<bool>,
    /// Whether `beta_ecn` was ever set.
    beta_ecn_given: bool,
    /// Multiplicative decrease on an ECN-Echo when ABE applies.
    pub beta_ecn: f64,
    /// Use `beta_ecn` also when the echo arrives in slow start (paper 003).
    pub in_slow_start: bool,
}

impl Abe {
    /// ABE off, with `beta_ecn` defaulting to `default_beta_ecn`.
    pub fn new(default_beta_ecn: f64) -> Self {
        Abe {
            explicit: None,
            beta_ecn_given: false,
            beta_ecn: default_beta_ecn,
            in_slow_start: false,
        }
    }

    /// Whether ABE is on.
    pub fn enabled(&self) -> bool {
        self.explicit.unwrap_or(self.beta_ecn_given)
    }

    /// `Some(beta_ecn)` when this reduction should use ABE's factor, `None` when the
    /// algorithm's own (loss) response applies.
    #[inline]
    pub fn beta_for(&self, tp: &CcState, cause: ReductionCause) -> Option<f64> {
        (cause == ReductionCause::Ecn
            && self.enabled()
            && (self.in_slow_start || !tp.in_slow_start()))
        .then_some(self.beta_ecn)
    }
}
