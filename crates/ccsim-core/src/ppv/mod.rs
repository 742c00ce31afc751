//! Per Packet Value (PPV) marking: throughput-value functions, the 16-bit value coding
//! and the edge marker.
//!
//! References: S. Nádas, Z. R. Turányi, S. Rácz, "Per Packet Value: A Practical Concept
//! for Network Resource Sharing", IEEE Globecom 2016 (as ccsim paper 001 §2 describes
//! it: "for any throughput value b, the traffic up to b shall receive a PV of V(b) or
//! higher"); S. Nádas, G. Gombos, P. Hudoba, S. Laki, "Towards a Congestion
//! Control-Independent Core-Stateless AQM", ANRW 2018 (ccsim paper 001: Fig. 1 TVFs,
//! §3 value coding).
//!
//! - [`tvf`]: throughput-value functions (piecewise log-log, presets of Fig. 1).
//! - [`coding`]: `v = ⌈ln(PV)/ln(PV_max) · 65535⌉`, `PV = 0 → 0`.
//! - [`marker`]: per-flow (per policy subject) marker `PV = TVF(u·R)`.
//!
//! A marked packet carries the coded value in [`crate::net::packet::Packet::value`];
//! the value-aware disciplines ([`crate::qdisc::csaqm`], [`crate::qdisc::pvpie`]) read it.

pub mod coding;
pub mod marker;
pub mod tvf;

pub use coding::{decode, encode, PV_MAX};
pub use marker::{Marker, MarkerParams};
pub use tvf::Tvf;
