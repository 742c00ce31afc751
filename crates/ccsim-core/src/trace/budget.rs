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

    /// Rows this budget allows in all.
    pub fn limit_rows(&self) -> u64 {
        self.limit_rows
    }

    /// Simulated time of the first row set refused, ns (None: never refused).
    pub fn stopped_at_ns(&self) -> Option<u64> {
        self.stopped_at_ns
    }

    /// A share of [`TRACE_ROWS_BUDGET`] for each of `holders` per-flow traces
    /// (`rtt_samples`, `cc_reductions`: each traced sender keeps its own rows, so that
    /// the hot path touches no shared state), together never more than the budget.
    pub fn per_flow_share(holders: u64) -> Self {
        RowBudget::new((TRACE_ROWS_BUDGET / holders.max(1)).max(1))
    }

    /// The summary's warning when the per-flow traces `table` of several flows stopped at
    /// their budgets (None: none did): how many, and the first instant one stopped.
    pub fn per_flow_warning<'a>(
        table: &str,
        budgets: impl IntoIterator<Item = &'a RowBudget>,
    ) -> Option<String> {
        let (mut stopped, mut first_ns, mut limit) = (0u64, u64::MAX, 0);
        for b in budgets {
            if let Some(at) = b.stopped_at_ns {
                stopped += 1;
                first_ns = first_ns.min(at);
                limit = b.limit_rows;
            }
        }
        (stopped > 0).then(|| {
            format!(
                "{table}: stopped recording for {stopped} flow(s), the first at t = {:.6} s, \
                 each flow's budget of {limit} rows reached (later rows are missing)",
                first_ns as f64 / 1e9
            )
        })
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

    #[test]
    fn per_flow_shares_sum_to_at_most_the_budget_and_warn_once() {
        let shares = RowBudget::per_flow_share(3);
        assert_eq!(
            3 * shares.limit_rows(),
            TRACE_ROWS_BUDGET - TRACE_ROWS_BUDGET % 3
        );
        assert_eq!(RowBudget::per_flow_share(u64::MAX).limit_rows(), 1);
        let mut flows = vec![RowBudget::new(2), RowBudget::new(2), RowBudget::new(2)];
        assert_eq!(RowBudget::per_flow_warning("rtt_samples", &flows), None);
        assert!(flows[0].admit(2, 1));
        assert!(!flows[1].admit(3, 2_000_000_000));
        assert!(!flows[2].admit(3, 1_000_000_000));
        let w = RowBudget::per_flow_warning("rtt_samples", &flows).unwrap();
        assert_eq!(
            w,
            "rtt_samples: stopped recording for 2 flow(s), the first at t = 1.000000 s, \
             each flow's budget of 2 rows reached (later rows are missing)"
        );
    }
}
