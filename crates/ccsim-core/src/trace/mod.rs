//! Recorders of what the papers' figures plot beyond the per-interval series: the
//! bottleneck discipline's control state (`qdisc_state`), every RTT sample of traced
//! flows (`rtt_samples`), every drop and mark at the bottleneck (`queue_events`) and one
//! row per finite transfer (`transfers`).
//!
//! Each is a plain column store that [`Recorders`] fills at a few fixed points (a stats
//! tick, a discipline's timer, a drop or mark at the bottleneck, an RTT sample, a
//! transfer's end); the opt-in ones are `None` when off, so they cost one branch.

pub mod budget;
pub mod pcap;
mod recorders;
mod series;
mod summary;

pub use budget::{RowBudget, TRACE_ROWS_BUDGET};
pub use pcap::Pcap;
pub use recorders::{Recorders, View};
pub use summary::TABLE_NAMES;

use crate::engine::NS_PER_SEC;
use crate::flow::TcpFlow;
use crate::results::{Cancelled, Column, RowBatches, Table};

fn secs(ns: u64) -> f64 {
    ns as f64 / NS_PER_SEC as f64
}

/// Which links' rows a per-queue table keeps, and what its `queue` column says: the
/// watched queue alone as `"bottleneck"` in a dumbbell; in a `[network]` the links that
/// queued (`keep[link]`), each by its name.
pub(crate) enum QueueNames<'a> {
    Dumbbell,
    Network {
        keep: &'a [bool],
        names: Vec<&'a str>,
    },
}

impl QueueNames<'_> {
    fn keeps(&self, link: u32) -> bool {
        match self {
            QueueNames::Dumbbell => true,
            QueueNames::Network { keep, .. } => keep[link as usize],
        }
    }

    /// The kept rows of `links` (row `r` recorded at link `links[r]`).
    fn rows(&self, links: &[u32]) -> Vec<usize> {
        (0..links.len()).filter(|&r| self.keeps(links[r])).collect()
    }

    fn column(
        &self,
        links: &[u32],
        rows: &[usize],
        b: &mut RowBatches,
    ) -> Result<Vec<String>, Cancelled> {
        match self {
            QueueNames::Dumbbell => b.repeat("bottleneck", rows.len()),
            QueueNames::Network { names, .. } => {
                b.collect(rows.iter().map(|&r| names[links[r] as usize].to_owned()))
            }
        }
    }
}

/// `qdisc_state`: `(time, queue, name, value)` rows.
#[derive(Debug, Default)]
pub struct QdiscStateTrace {
    t: Vec<f64>,
    link: Vec<u32>,
    name: Vec<&'static str>,
    value: Vec<f64>,
    /// Scratch buffer the discipline writes its pairs into.
    pub buf: Vec<(&'static str, f64)>,
    pub budget: RowBudget,
}

impl QdiscStateTrace {
    /// Append the pairs in `buf` (then emptied) as link `link`'s rows at `now_ns`.
    pub fn commit(&mut self, now_ns: u64, link: u32) {
        if !self.budget.admit(self.buf.len() as u64, now_ns) {
            self.buf.clear();
            return;
        }
        let t = secs(now_ns);
        for (name, value) in self.buf.drain(..) {
            self.t.push(t);
            self.link.push(link);
            self.name.push(name);
            self.value.push(value);
        }
    }

    /// The table, built in `b`'s batches (cancellable).
    pub(crate) fn table(
        &self,
        b: &mut RowBatches,
        queues: &QueueNames,
    ) -> Result<Table, Cancelled> {
        let rows = queues.rows(&self.link);
        let pick = |c: &[f64], b: &mut RowBatches| b.collect(rows.iter().map(|&r| c[r]));
        Ok(Table::new("qdisc_state")
            .with("time_s", Column::F64(pick(&self.t, b)?))
            .with("queue", Column::Str(queues.column(&self.link, &rows, b)?))
            .with(
                "name",
                Column::Str(b.collect(rows.iter().map(|&r| self.name[r].to_owned()))?),
            )
            .with("value", Column::F64(pick(&self.value, b)?)))
    }
}

/// `rtt_samples`: every RTT sample a traced sender took (Linux `tcp_ack_update_rtt`'s
/// `seq_rtt`, the one that feeds SRTT).
#[derive(Debug, Default)]
pub struct RttSamples {
    t: Vec<f64>,
    flow: Vec<u32>,
    rtt_ms: Vec<f64>,
}

impl RttSamples {
    pub fn extend(&mut self, flow: u32, samples: &[(u64, u64)]) {
        for &(at, rtt) in samples {
            self.t.push(secs(at));
            self.flow.push(flow);
            self.rtt_ms.push(rtt as f64 / 1e6);
        }
    }

    /// The table, rows sorted by time (then flow), as a stable sort of the per-flow runs,
    /// built in `b`'s batches (cancellable; the sort merges the flows' sorted runs and is
    /// one step).
    pub fn table(&self, b: &mut RowBatches) -> Result<Table, Cancelled> {
        let mut order: Vec<usize> = b.collect(0..self.t.len())?;
        order.sort_by(|&x, &y| self.t[x].total_cmp(&self.t[y]));
        b.ask_if_due()?;
        Ok(Table::new("rtt_samples")
            .with(
                "time_s",
                Column::F64(b.collect(order.iter().map(|&i| self.t[i]))?),
            )
            .with(
                "flow_id",
                Column::U32(b.collect(order.iter().map(|&i| self.flow[i]))?),
            )
            .with(
                "rtt_ms",
                Column::F64(b.collect(order.iter().map(|&i| self.rtt_ms[i]))?),
            ))
    }
}

/// `queue_events`: a congestion signal at the bottleneck (at every link of a `[network]`).
#[derive(Debug, Default)]
pub struct QueueEvents {
    t: Vec<f64>,
    link: Vec<u32>,
    flow: Vec<u32>,
    mark: Vec<bool>,
    qlen_pkts: Vec<u64>,
    qlen_bytes: Vec<u64>,
    sojourn_ms: Vec<f64>,
    pub budget: RowBudget,
}

impl QueueEvents {
    /// A drop or mark at link `link` of a packet of `flow` that waited `sojourn_ns`, with
    /// the queue holding `qlen_pkts`/`qlen_bytes` after the discipline acted.
    #[allow(clippy::too_many_arguments)]
    pub fn push(
        &mut self,
        now_ns: u64,
        link: u32,
        flow: u32,
        mark: bool,
        qlen_pkts: u64,
        qlen_bytes: u64,
        sojourn_ns: u64,
    ) {
        if !self.budget.admit(1, now_ns) {
            return;
        }
        self.t.push(secs(now_ns));
        self.link.push(link);
        self.flow.push(flow);
        self.mark.push(mark);
        self.qlen_pkts.push(qlen_pkts);
        self.qlen_bytes.push(qlen_bytes);
        self.sojourn_ms.push(sojourn_ns as f64 / 1e6);
    }

    /// The table, built in `b`'s batches (cancellable). A `[network]`'s has a `queue`
    /// column naming the link (every link that signalled queued); a dumbbell's keeps its
    /// columns as they were (the bottleneck's events only).
    pub(crate) fn table(
        &self,
        b: &mut RowBatches,
        queues: &QueueNames,
    ) -> Result<Table, Cancelled> {
        let event = |&m: &bool| if m { "mark" } else { "drop" }.to_owned();
        let table = Table::new("queue_events").with("time_s", Column::F64(b.copy(&self.t)?));
        let table = match queues {
            QueueNames::Dumbbell => table,
            QueueNames::Network { .. } => {
                let rows: Vec<usize> = (0..self.t.len()).collect();
                table.with("queue", Column::Str(queues.column(&self.link, &rows, b)?))
            }
        };
        Ok(table
            .with("flow_id", Column::U32(b.copy(&self.flow)?))
            .with(
                "event",
                Column::Str(b.collect(self.mark.iter().map(event))?),
            )
            .with("qlen_pkts", Column::U64(b.copy(&self.qlen_pkts)?))
            .with("qlen_bytes", Column::U64(b.copy(&self.qlen_bytes)?))
            .with("sojourn_ms", Column::F64(b.copy(&self.sojourn_ms)?)))
    }
}

/// One finite transfer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Transfer {
    pub flow: u32,
    pub group: u32,
    /// Index of the transfer within its flow (closed-loop repeats count up from 0).
    pub index: u32,
    pub size_bytes: u64,
    pub start_ns: u64,
    /// When the receiver had every byte; `None` if the run ended first.
    pub end_ns: Option<u64>,
    pub retransmits: u64,
    pub timeouts: u64,
    /// The soft deadline (absolute), for a group with `deadline`.
    pub deadline_ns: Option<u64>,
}

impl Transfer {
    /// Flow `flow`'s (number `id`) current transfer as a row.
    pub(crate) fn current(flow: &TcpFlow, id: u32) -> Transfer {
        Transfer {
            flow: id,
            group: flow.group,
            index: flow.transfer,
            size_bytes: flow.sender.cfg.total_bytes.unwrap_or(0),
            start_ns: flow.start_ns,
            end_ns: flow.receiver.stats.completed_ns,
            retransmits: flow.sender.stats.retransmits,
            timeouts: flow.sender.stats.timeouts,
            deadline_ns: flow
                .deadline
                .as_ref()
                .map(|d| flow.start_ns.saturating_add(d.ctl.params.within_ns)),
        }
    }

    /// Flow completion time, seconds.
    pub fn fct_s(&self) -> Option<f64> {
        self.end_ns.map(|e| secs(e - self.start_ns))
    }
}

/// Whether a transfer met its deadline: `met`, `missed` (finished late, or still running
/// at the end of a run that outlasted the deadline), `open` (still running, deadline
/// after the run's end), or empty without a deadline.
fn deadline_outcome(t: &Transfer, run_end_ns: u64) -> &'static str {
    match (t.deadline_ns, t.end_ns) {
        (None, _) => "",
        (Some(d), Some(e)) if e <= d => "met",
        (Some(_), Some(_)) => "missed",
        (Some(d), None) if run_end_ns >= d => "missed",
        (Some(_), None) => "open",
    }
}

/// `transfers`: one row per finite transfer, ordered by start time then flow.
/// `run_end_ns` decides whether an unfinished transfer has missed its deadline. Built in
/// `b`'s batches (cancellable).
pub fn transfers_table(
    rows: &[Transfer],
    run_end_ns: u64,
    b: &mut RowBatches,
) -> Result<Table, Cancelled> {
    let col_f = |b: &mut RowBatches, f: &dyn Fn(&Transfer) -> f64| {
        b.collect(rows.iter().map(f)).map(Column::F64)
    };
    let col_u = |b: &mut RowBatches, f: &dyn Fn(&Transfer) -> u64| {
        b.collect(rows.iter().map(f)).map(Column::U64)
    };
    let col_u32 = |b: &mut RowBatches, f: &dyn Fn(&Transfer) -> u32| {
        b.collect(rows.iter().map(f)).map(Column::U32)
    };
    Ok(Table::new("transfers")
        .with("flow_id", col_u32(b, &|r| r.flow)?)
        .with("group", col_u32(b, &|r| r.group)?)
        .with("transfer", col_u32(b, &|r| r.index)?)
        .with("size_bytes", col_u(b, &|r| r.size_bytes)?)
        .with("start_s", col_f(b, &|r| secs(r.start_ns))?)
        .with("end_s", col_f(b, &|r| r.end_ns.map_or(f64::NAN, secs))?)
        .with("fct_s", col_f(b, &|r| r.fct_s().unwrap_or(f64::NAN))?)
        .with("retransmits", col_u(b, &|r| r.retransmits)?)
        .with("timeouts", col_u(b, &|r| r.timeouts)?)
        .with(
            "deadline_s",
            col_f(b, &|r| r.deadline_ns.map_or(f64::NAN, secs))?,
        )
        .with(
            "lateness_s",
            col_f(b, &|r| match (r.deadline_ns, r.end_ns) {
                (Some(d), Some(e)) => (e as f64 - d as f64) / NS_PER_SEC as f64,
                _ => f64::NAN,
            })?,
        )
        .with(
            "deadline_met",
            col_f(b, &|r| match deadline_outcome(r, run_end_ns) {
                "met" => 1.0,
                "missed" => 0.0,
                _ => f64::NAN,
            })?,
        )
        .with(
            "deadline_outcome",
            Column::Str(
                b.collect(
                    rows.iter()
                        .map(|r| deadline_outcome(r, run_end_ns).to_owned()),
                )?,
            ),
        ))
}

/// `deadline_control`: every decision of the DA-LBE controllers
/// ([`crate::control::deadline`]), one row per flow and control interval.
#[derive(Debug, Default)]
pub struct DeadlineTrace {
    flow: Vec<u32>,
    knob_name: Vec<String>,
    rows: Vec<crate::control::deadline::Decision>,
    /// One decision per flow and control interval grows with the run's length.
    pub budget: RowBudget,
}

impl DeadlineTrace {
    pub fn push(&mut self, flow: u32, knob_name: &str, d: crate::control::deadline::Decision) {
        if !self.budget.admit(1, d.time_ns) {
            return;
        }
        self.flow.push(flow);
        self.knob_name.push(knob_name.to_owned());
        self.rows.push(d);
    }

    /// The table, built in `b`'s batches (cancellable).
    pub fn table(&self, b: &mut RowBatches) -> Result<Table, Cancelled> {
        let col_f = |b: &mut RowBatches, f: &dyn Fn(&crate::control::deadline::Decision) -> f64| {
            b.collect(self.rows.iter().map(f)).map(Column::F64)
        };
        Ok(Table::new("deadline_control")
            .with("time_s", col_f(b, &|d| secs(d.time_ns))?)
            .with("flow_id", Column::U32(b.copy(&self.flow)?))
            .with(
                "bytes_left",
                Column::U64(b.collect(self.rows.iter().map(|d| d.bytes_left))?),
            )
            .with("plan_left_s", col_f(b, &|d| d.plan_left_s)?)
            .with(
                "rate_required_mbps",
                col_f(b, &|d| d.rate_required_bps / 1e6)?,
            )
            .with(
                "rate_achieved_mbps",
                col_f(b, &|d| d.rate_achieved_bps / 1e6)?,
            )
            .with("rate_trend_mbps", col_f(b, &|d| d.rate_trend_bps / 1e6)?)
            .with("knob", Column::Str(b.copy(&self.knob_name)?))
            .with("knob_value", col_f(b, &|d| d.knob)?)
            .with(
                "escalated",
                Column::U32(b.collect(self.rows.iter().map(|d| u32::from(d.escalated)))?),
            ))
    }
}
