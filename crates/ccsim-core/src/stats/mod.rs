//! Statistics aggregated on the fly: per-queue counters, per-interval accumulators, and
//! an HDR histogram of sojourn times over the measurement window (3 significant digits,
//! so percentiles are exact to 0.1%).

use hdrhistogram::Histogram;

/// Counters of one queue. `repr(C)` keeps what every departure updates together at the
/// front (see [`crate::net::link::Link`]'s layout).
#[derive(Debug, Clone)]
#[repr(C)]
pub struct QueueStats {
    pub arrivals: u64,
    pub departures: u64,
    pub bytes_departed: u64,
    /// Per-interval accumulators (reset at every stats tick).
    pub iv_sojourn_sum_ns: u64,
    pub iv_sojourn_max_ns: u64,
    pub iv_departures: u64,
    /// `u64::MAX` while the interval has had no departure.
    pub iv_sojourn_min_ns: u64,
    /// Boxed: cold, and large enough to push hot link fields out of cache.
    pub hist: Option<Box<Histogram<u64>>>,
    pub drops: u64,
    pub marks: u64,
    /// Measurement-window sojourn statistics.
    pub win_departures: u64,
    pub win_sojourn_sum_ns: u128,
    /// Packets lost on the wire after this queue (a link model's random loss), apart
    /// from the discipline's `drops`.
    pub losses: u64,
}

impl QueueStats {
    /// `with_histogram`: keep a sojourn histogram for the measurement window.
    pub fn new(with_histogram: bool) -> Self {
        QueueStats {
            arrivals: 0,
            departures: 0,
            drops: 0,
            marks: 0,
            bytes_departed: 0,
            iv_sojourn_sum_ns: 0,
            iv_sojourn_max_ns: 0,
            iv_departures: 0,
            iv_sojourn_min_ns: u64::MAX,
            win_sojourn_sum_ns: 0,
            win_departures: 0,
            losses: 0,
            hist: with_histogram.then(|| {
                Box::new(
                    Histogram::new_with_bounds(1, 3_600 * 1_000_000_000, 3).expect("valid bounds"),
                )
            }),
        }
    }

    /// Record a departure.
    #[inline]
    pub fn on_departure(&mut self, sojourn_ns: u64, bytes: u32, in_window: bool) {
        self.departures += 1;
        self.bytes_departed += bytes as u64;
        self.iv_sojourn_sum_ns += sojourn_ns;
        self.iv_sojourn_max_ns = self.iv_sojourn_max_ns.max(sojourn_ns);
        self.iv_sojourn_min_ns = self.iv_sojourn_min_ns.min(sojourn_ns);
        self.iv_departures += 1;
        if in_window {
            if let Some(h) = self.hist.as_mut() {
                self.win_sojourn_sum_ns += sojourn_ns as u128;
                self.win_departures += 1;
                h.saturating_record(sojourn_ns);
            }
        }
    }

    /// End a stats interval: reset the per-interval accumulators.
    pub fn end_interval(&mut self) {
        self.iv_sojourn_sum_ns = 0;
        self.iv_sojourn_max_ns = 0;
        self.iv_sojourn_min_ns = u64::MAX;
        self.iv_departures = 0;
    }

    /// Cumulative counters, to difference across the measurement window.
    pub fn snapshot(&self) -> QueueSnapshot {
        QueueSnapshot {
            arrivals: self.arrivals,
            departures: self.departures,
            drops: self.drops,
            marks: self.marks,
            bytes_departed: self.bytes_departed,
            losses: self.losses,
        }
    }
}

/// Cumulative queue counters at one instant.
#[derive(Debug, Clone, Copy, Default)]
pub struct QueueSnapshot {
    pub arrivals: u64,
    pub departures: u64,
    pub drops: u64,
    pub marks: u64,
    pub bytes_departed: u64,
    pub losses: u64,
}

/// Jain's fairness index `(sum x)^2 / (n sum x^2)`; 1 for an empty or all-zero set.
pub fn jain_index(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if n == 0.0 || s2 == 0.0 {
        1.0
    } else {
        s * s / (n * s2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index_of_equal_and_unequal_shares() {
        assert!((jain_index(&[5.0, 5.0, 5.0]) - 1.0).abs() < 1e-12);
        // One of two flows gets everything: 1/n.
        assert!((jain_index(&[10.0, 0.0]) - 0.5).abs() < 1e-12);
    }
}
