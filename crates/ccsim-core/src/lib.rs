//! ccsim core: a deterministic discrete-event packet-level simulator for congestion-control
//! and AQM research.
//!
//! Layout (one folder per concern):
//! - [`engine`]: the event scheduler, integer-nanosecond time, seeded random streams.
//! - [`net`]: packets, links, nodes, topologies and routing.
//! - [`flow`]: the flows' endpoints and per-flow counters, shared by [`sim`] and [`trace`].
//! - [`tcp`]: the TCP sender and receiver (SACK, NewReno recovery, PRR, ECN, RTO, delayed ACKs).
//! - [`cc`]: congestion-control algorithms behind the [`cc::CongestionControl`] trait.
//! - [`control`]: controllers that retune a flow's congestion control as it runs (DA-LBE).
//! - [`qdisc`]: queue disciplines behind the [`qdisc::QueueDisc`] trait.
//! - [`udp`]: UDP traffic sources.
//! - [`stats`]: on-the-fly statistics.
//! - [`scenario`]: the scenario schema with units; [`sim`] builds and runs it.

pub mod api;
pub mod cc;
pub mod control;
pub mod emulate;
pub mod engine;
pub mod flow;
pub mod net;
pub mod params;
pub mod ppv;
pub mod qdisc;
pub mod results;
pub mod scenario;
pub mod sim;
pub mod stats;
pub mod tcp;
pub mod trace;
pub mod udp;

/// The crate version, reported in every summary.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
