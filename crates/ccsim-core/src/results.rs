//! What a run hands back: column-oriented tables and a JSON-serialisable summary.
//!
//! Tables are plain columns so that the Python layer can turn them into Arrow
//! tables without copying element by element (see `crates/ccsim-py`).
//!
//! Building them is the one part of a run after the event loop that grows with its
//! traces (millions of rows), so it hears a cancellation too: [`RowBatches`] builds the
//! columns in batches of [`CANCEL_CHECK_ROWS`] rows and asks the caller's stop flag
//! between them, ending with [`Cancelled`] (SIGINT took 36.6 s to act while 19 M rows of
//! `queue_events` were turned into tables, issue 33).

use std::fmt;
use std::time::{Duration, Instant};

use serde::Serialize;

/// One column of a result table.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    U64(Vec<u64>),
    U32(Vec<u32>),
    Str(Vec<String>),
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::U32(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A named table: columns of equal length.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub name: String,
    pub columns: Vec<(String, Column)>,
}

impl Table {
    pub fn new(name: &str) -> Self {
        Table {
            name: name.to_string(),
            columns: Vec::new(),
        }
    }
    pub fn with(mut self, col: &str, data: Column) -> Self {
        self.columns.push((col.to_string(), data));
        self
    }
    /// A column only when `cond` holds (the loss columns, present only in runs with a
    /// link model that loses packets, so other runs' tables stay as they were).
    pub fn with_if(self, cond: bool, col: &str, data: impl FnOnce() -> Column) -> Self {
        if cond {
            self.with(col, data())
        } else {
            self
        }
    }
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }
    pub fn num_rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }
}

/// Per-flow figures over the measurement window.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FlowSummary {
    pub flow_id: u32,
    /// Index of the `[[flows]]` or `[[udp]]` group the flow came from.
    pub group: u32,
    /// The group's `name`, if it has one.
    pub group_name: Option<String>,
    /// "tcp" or "udp".
    pub protocol: String,
    /// Congestion-control name for TCP, traffic pattern for UDP.
    pub algorithm: String,
    pub base_rtt_ms: f64,
    /// When the flow (its first transfer) started, seconds.
    pub start_s: f64,
    /// Size of the flow's first finite transfer; `None` for a bulk flow or UDP.
    pub size_bytes: Option<u64>,
    /// Goodput: application payload delivered in order within the measurement window, as
    /// Mbit/s (TCP: segment payload; UDP: packet size less 28 B of IP and UDP headers).
    pub goodput_mbps: f64,
    /// Wire throughput: bytes on the wire, headers and retransmissions included, that
    /// reached the receiver within the window, as Mbit/s.
    pub throughput_mbps: f64,
    /// Within the measurement window, like every figure here (whole-run totals are in
    /// the `flow_packets` table): application payload bytes delivered in order, packets
    /// sent by the flow's endpoints, TCP retransmissions and timeouts, drops and CE marks
    /// of the flow's packets at any queue.
    pub bytes_delivered: u64,
    pub packets_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub drops: u64,
    pub marks: u64,
    /// Packets of the flow lost on a link's wire (random loss); only in runs with a
    /// link model that loses packets. Not counted in `drops`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub losses: Option<u64>,
    /// Flow completion time of a finite transfer, seconds; `None` for bulk or unfinished flows.
    pub fct_s: Option<f64>,
}

/// Per-queue figures over the measurement window.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct QueueSummary {
    pub name: String,
    pub discipline: String,
    pub arrivals: u64,
    pub departures: u64,
    pub drops: u64,
    pub marks: u64,
    /// Drops per arriving packet.
    pub drop_probability: f64,
    /// Packets lost on the wire after the queue (the link's random loss model), apart
    /// from `drops`; only on a link with a loss model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub losses: Option<u64>,
    /// CE marks per arriving packet.
    pub mark_probability: f64,
    pub sojourn_mean_ms: f64,
    pub sojourn_p50_ms: f64,
    pub sojourn_p90_ms: f64,
    pub sojourn_p99_ms: f64,
    /// Link busy fraction: bytes serialised / (rate x window).
    pub utilisation: f64,
    /// Wire bytes that left the queue within the window.
    pub bytes_departed: u64,
}

/// Per-group figures over the measurement window.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct GroupSummary {
    /// "tcp" (a `[[flows]]` group) or "udp" (a `[[udp]]` group).
    pub protocol: String,
    /// Index of the group among its kind.
    pub group: u32,
    /// The group's `name`, if it has one.
    pub name: Option<String>,
    pub flows: u32,
    /// Sum of the group's flows' goodput and wire throughput, Mbit/s.
    pub goodput_mbps: f64,
    pub throughput_mbps: f64,
    /// The group's part of all flows' goodput (0 when nothing was delivered).
    pub share: f64,
}

/// Completion-time statistics of finite transfers.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FctStats {
    /// Smallest and largest size of the transfers counted.
    pub size_min_bytes: u64,
    pub size_max_bytes: u64,
    /// Transfers counted, and how many of them completed before the end of the run.
    pub transfers: u64,
    pub completed: u64,
    /// Over the completed ones (linear interpolation between order statistics, as
    /// numpy's default); `None` when none completed.
    pub mean_s: Option<f64>,
    pub median_s: Option<f64>,
    pub p99_s: Option<f64>,
}

/// Flow completion times of the transfers that started inside the measurement window.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FctSummary {
    pub all: FctStats,
    /// Per transfer size when there are at most 16 distinct sizes, else per decade of
    /// size (`[10^k, 10^(k+1))` bytes).
    pub by_size: Vec<FctStats>,
}

/// The `summary.json` document.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Summary {
    pub ccsim_version: String,
    pub seed: u64,
    pub duration_s: f64,
    pub measure_start_s: f64,
    pub measure_end_s: f64,
    pub flows: Vec<FlowSummary>,
    /// One entry per `[[flows]]` group, then per `[[udp]]` group.
    pub groups: Vec<GroupSummary>,
    pub bottleneck: QueueSummary,
    /// Paper 003 §4.3: seconds from the last bulk TCP flow's start until Jain's index of
    /// the bytes each bulk TCP flow delivered since then first reaches 0.95 (at a stats
    /// tick, so to within `stats_interval`); `None` with fewer than two bulk TCP flows or
    /// if it never does.
    pub convergence_time_s: Option<f64>,
    /// Completion times of finite transfers; `None` when the scenario has none.
    pub fct: Option<FctSummary>,
    pub utilisation: f64,
    /// Jain's fairness index over the TCP flows' goodput (all flows when there is no TCP flow).
    pub jain_index: f64,
    pub events: u64,
    /// Packets serialised onto the bottleneck link over the whole run.
    pub bottleneck_packets: u64,
    /// Wall-clock seconds spent simulating (excludes scenario parsing and writing results).
    pub wall_s: f64,
    /// With a `[network]`: each of its links' queue over the window, in declaration
    /// order, named (absent in a dumbbell).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub links: Option<Vec<QueueSummary>>,
    /// With a `[network]`: each flow's route as node names, in flow order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paths: Option<Vec<Vec<String>>>,
    /// Traces that stopped recording at their row budget (`trace::budget`), one line
    /// each (absent when none did, so complete runs' summaries are unchanged).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<String>>,
}

impl Summary {
    /// The run's speed in one line: wall time, events and bottleneck packets per second.
    pub fn speed_line(&self) -> String {
        format!(
            "wall {:.4} s | {:.2} M events/s | {:.2} M bottleneck pkts/s",
            self.wall_s,
            self.events as f64 / self.wall_s / 1e6,
            self.bottleneck_packets as f64 / self.wall_s / 1e6,
        )
    }
}

/// Everything a run produces.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub summary: Summary,
    pub tables: Vec<Table>,
    /// The pcapng capture `[trace] pcap` asked for.
    pub pcap: Option<Vec<u8>>,
}

/// The run was cancelled (Ctrl-C, SIGTERM, a cancel handle) while its results were being
/// built: nothing of them is returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancelled;

impl fmt::Display for Cancelled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("run cancelled while its results were being built")
    }
}

impl std::error::Error for Cancelled {}

/// Rows built between two looks at the clock, and so at most between two asks of the
/// stop flag once [`CANCEL_CHECK_WALL`] has passed: a batch of 64 Ki rows takes well under
/// a millisecond to copy and a few to turn into strings.
pub const CANCEL_CHECK_ROWS: usize = 1 << 16;

/// The stop flag is asked at most this often: asking it takes the Python GIL, which a
/// run in a worker thread may wait milliseconds for while another thread holds it (the
/// event loop's progress callback is called at the same pace, `sim::world`).
pub const CANCEL_CHECK_WALL: Duration = Duration::from_millis(50);

/// Table building in batches of rows, asking a stop flag between them.
pub struct RowBatches<'a> {
    /// Returns true to stop; `None` never stops.
    stop: Option<&'a mut dyn FnMut() -> bool>,
    /// The least wall time between two asks.
    every: Duration,
    last_asked: Instant,
    /// Rows built since the clock was last looked at.
    rows_pending: usize,
}

impl<'a> RowBatches<'a> {
    /// Ask `stop` between batches, at most every [`CANCEL_CHECK_WALL`].
    pub fn new(stop: &'a mut dyn FnMut() -> bool) -> Self {
        Self::asking_every(stop, CANCEL_CHECK_WALL)
    }

    /// Ask `stop` between batches, at most every `every` (zero: after every batch).
    pub fn asking_every(stop: &'a mut dyn FnMut() -> bool, every: Duration) -> Self {
        RowBatches {
            stop: Some(stop),
            every,
            last_asked: Instant::now(),
            rows_pending: 0,
        }
    }

    /// Never stops (a caller with nothing to cancel: tests, the emulator, the stepper).
    pub fn unchecked() -> RowBatches<'static> {
        RowBatches {
            stop: None,
            every: Duration::ZERO,
            last_asked: Instant::now(),
            rows_pending: 0,
        }
    }

    /// Count `rows` more rows built; once a batch of them has accumulated, ask the flag
    /// (if [`CANCEL_CHECK_WALL`] has passed since it was last asked).
    #[inline]
    pub fn built(&mut self, rows: usize) -> Result<(), Cancelled> {
        self.rows_pending += rows;
        if self.rows_pending < CANCEL_CHECK_ROWS {
            return Ok(());
        }
        self.rows_pending %= CANCEL_CHECK_ROWS;
        self.ask_if_due()
    }

    /// Ask the flag now if [`CANCEL_CHECK_WALL`] has passed since it was last asked.
    pub fn ask_if_due(&mut self) -> Result<(), Cancelled> {
        let Some(stop) = self.stop.as_mut() else {
            return Ok(());
        };
        if self.last_asked.elapsed() < self.every {
            return Ok(());
        }
        self.last_asked = Instant::now();
        if stop() {
            Err(Cancelled)
        } else {
            Ok(())
        }
    }

    /// `values` copied, a batch at a time.
    pub fn copy<T: Clone>(&mut self, values: &[T]) -> Result<Vec<T>, Cancelled> {
        let mut out = Vec::with_capacity(values.len());
        for batch in values.chunks(CANCEL_CHECK_ROWS) {
            out.extend_from_slice(batch);
            self.built(batch.len())?;
        }
        Ok(out)
    }

    /// `values` collected, a batch at a time.
    pub fn collect<T>(&mut self, values: impl IntoIterator<Item = T>) -> Result<Vec<T>, Cancelled> {
        let mut values = values.into_iter();
        let mut out = Vec::with_capacity(values.size_hint().0);
        loop {
            let before = out.len();
            out.extend(values.by_ref().take(CANCEL_CHECK_ROWS));
            let added = out.len() - before;
            if added == 0 {
                return Ok(out);
            }
            self.built(added)?;
        }
    }

    /// `n` copies of `text` as a string column (a table's constant `queue` column).
    pub fn repeat(&mut self, text: &str, n: usize) -> Result<Vec<String>, Cancelled> {
        self.collect(std::iter::repeat_n(text, n).map(str::to_owned))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batched_copies_equal_plain_ones_and_ask_once_per_batch() {
        for n in [
            0,
            1,
            CANCEL_CHECK_ROWS - 1,
            CANCEL_CHECK_ROWS,
            3 * CANCEL_CHECK_ROWS + 7,
        ] {
            let values: Vec<u64> = (0..n as u64).map(|x| x * 3 + 1).collect();
            let mut asked = 0;
            {
                let mut stop = || {
                    asked += 1;
                    false
                };
                let mut b = RowBatches::asking_every(&mut stop, Duration::ZERO);
                assert_eq!(b.copy(&values).unwrap(), values);
                let doubled: Vec<u64> = values.iter().map(|x| x * 2).collect();
                assert_eq!(b.collect(values.iter().map(|x| x * 2)).unwrap(), doubled);
                assert_eq!(b.repeat("q", n).unwrap(), vec!["q".to_owned(); n]);
            }
            // three columns of n rows: an ask per full batch of rows counted
            assert_eq!(asked, 3 * n / CANCEL_CHECK_ROWS, "n = {n}");
        }
    }

    #[test]
    fn unchecked_batches_never_stop() {
        let values = vec![1.5f64; 2 * CANCEL_CHECK_ROWS];
        assert_eq!(RowBatches::unchecked().copy(&values).unwrap(), values);
    }

    #[test]
    fn a_stop_returns_cancelled_from_the_batch_it_ends() {
        let values = vec![7u32; 4 * CANCEL_CHECK_ROWS];
        let mut stop = || true;
        let mut b = RowBatches::asking_every(&mut stop, Duration::ZERO);
        assert_eq!(b.copy(&values), Err(Cancelled));
        assert_eq!(b.collect(values.iter().copied()), Err(Cancelled));
    }
}
