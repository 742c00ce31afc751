//! The discrete-event engine: integer-nanosecond time, a deterministic event queue, and
//! seeded random streams.
//!
//! Determinism: events are ordered by (time, insertion sequence), so two events at the
//! same nanosecond run in the order they were scheduled, on any machine. Every random
//! stream is derived from the scenario seed and a stream identifier ([`rng::stream`]).

pub mod rng;
pub mod sched;
pub mod timer;

pub use sched::{Event, Scheduler};
pub use timer::{Timer, TimerFire};

/// Nanoseconds per second.
pub const NS_PER_SEC: u64 = 1_000_000_000;
/// Nanoseconds per millisecond.
pub const NS_PER_MS: u64 = 1_000_000;
/// Nanoseconds per microsecond.
pub const NS_PER_US: u64 = 1_000;

/// Time to serialise `bytes` onto a link of `rate_bps`, rounded up to whole nanoseconds.
#[inline]
pub fn serialisation_ns(bytes: u32, rate_bps: u64) -> u64 {
    (bytes as u64 * 8 * NS_PER_SEC).div_ceil(rate_bps)
}
