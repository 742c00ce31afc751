//! Controllers that retune a flow's congestion control while it runs, from what the
//! flow observes. They sit above the [`crate::cc::CongestionControl`] trait and reach an
//! algorithm only through `set_param` and the knob it declares
//! ([`crate::cc::CongestionControl::lbe_knob`]), so any controller with a tunable
//! parameter can be driven.
//!
//! - [`deadline`]: the deadline-aware less-than-best-effort (DA-LBE) controller paper 000
//!   asks for: stay as low-priority as the deadline allows.

pub mod deadline;
