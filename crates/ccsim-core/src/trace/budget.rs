//! The row budget of a trace whose length cannot be known before the run (issue 33):
//! `qdisc_state` with `"updates"` (one row set per discipline timer, and the interval
//! may be tiny) and `queue_events` (one row per drop or mark, and offered load may be far
//! above the bottleneck's rate). A recorder asks its budget once per row set
//! ([`RowBudget::admit`]); past the budget it records nothing more, and the run's summary
//! carries a warning naming the table and when it stopped ([`RowBudget::warning`]),
//! instead of the process dying of memory. The budget is a fixed number of rows, not a
//! share of the machine's memory, so that a scenario's results do not depend on the
//! machine; `sim::estimate` counts every budgeted trace at its budget at most.

/// Rows each budgeted trace keeps at most. A row costs about 200 bytes over its life
/// (the Rust columns, the copy `table()` makes, Python `bytes`, Arrow): 5 million rows
/// are about 1 GB at the peak, and far more than any example or reproduction records.
pub const TRACE_ROWS_BUDGET: u64 = 5_000_000;

/// How many rows a trace may still take, and when it ran out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowBudget {
    limit_rows: u64,
    used_rows: u64,
    /// Simulated time of the first row set refused, ns.
    stopped_at_ns: Option<u64>,
}

impl Default for RowBudget {
    fn default() -> Self {
        RowBudget::new(TRACE_ROWS_BUDGET)
    }
}

impl RowBudget {
    pub fn new(limit_rows: u64) -> Self {
        RowBudget {
            limit_rows,
            used_rows: 0,
            stopped_at_ns: None,
        }
    }

    /// Whether `rows` more rows fit; if they do they are counted. Once a row set is
    /// refused every later one is too, so a trace stops at one instant instead of
    /// keeping scattered rows.
    #[inline]
    pub fn admit(&mut self, rows: u64, now_ns: u64) -> bool {
        if self.stopped_at_ns.is_none() && self.used_rows + rows <= self.limit_rows {
            self.used_rows += rows;
            return true;
        }
        self.stopped_at_ns.get_or_insert(now_ns);
        false
    }

    /// The summary's warning when trace `table` stopped at its budget.
    pub fn warning(&self, table: &str) -> Option<String> {
        self.stopped_at_ns.map(|at| {
            format!(
                "{table}: stopped recording at t = {:.6} s, its budget of {} rows reached \
                 (later rows are missing)",
                at as f64 / 1e9,
                self.limit_rows
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_up_to_the_limit_then_nothing() {
        let mut b = RowBudget::new(10);
        assert!(b.admit(4, 1));
        assert!(b.admit(6, 2));
        assert_eq!(b.warning("t"), None);
        assert!(!b.admit(1, 3_500_000_000));
        // a smaller set after a refusal is refused too: the trace ends at one instant
        assert!(!b.admit(0, 4));
        let w = b.warning("qdisc_state").unwrap();
        assert!(
            w.starts_with("qdisc_state: stopped recording at t = 3.500000 s"),
            "{w}"
        );
        assert!(w.contains("budget of 10 rows"), "{w}");
    }
}
