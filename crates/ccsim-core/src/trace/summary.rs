//! The end of a run: the summary over the measurement window (per flow, per group, the
//! bottleneck, convergence time, flow completion times) and every result table.

use crate::cc::{self};
use crate::engine::NS_PER_SEC;
use crate::net::link::{CapacityMeter, Link};
use crate::qdisc::QueueDisc;
use crate::results::{
    Cancelled, Column, FctStats, FctSummary, FlowSummary, GroupSummary, QueueSummary, RowBatches,
    RunOutput, Summary, Table,
};
use crate::stats::{jain_index, QueueSnapshot};
use crate::trace::{
    transfers_table, QdiscStateTrace, QueueEvents, QueueNames, RowBudget, RttSamples, Transfer,
};

use super::recorders::{Recorders, View};

impl Recorders {
    /// Summarise the run (`wall_s`: the wall-clock seconds it took), building the tables
    /// in `b`'s batches: a cancellation between two of them ends with [`Cancelled`].
    pub fn finish(
        &self,
        v: &View,
        wall_s: f64,
        b: &mut RowBatches,
    ) -> Result<RunOutput, Cancelled> {
        let window_s =
            (self.info.measure_end_ns - self.info.measure_start_ns) as f64 / NS_PER_SEC as f64;
        // Finished transfers, then those still running at the end, by start then flow.
        let mut transfers = self.transfers.clone();
        transfers.extend(
            v.tcp
                .iter()
                .enumerate()
                .filter(|(_, f)| f.awaiting_end && f.start_ns < self.info.duration_ns)
                .map(|(i, f)| Transfer::current(f, i as u32)),
        );
        transfers.sort_by_key(|t| (t.start_ns, t.flow, t.index));
        let n_tcp = v.tcp.len();
        // Loss columns appear only in runs with a link model that loses packets, so runs
        // without one keep their tables as they were.
        let has_loss = v.links.iter().any(|l| l.loss.is_some());
        let mut flows = Vec::with_capacity(v.counters.len());
        for i in 0..v.counters.len() {
            let (d1, r1) = self.window.bytes.1[i];
            let (d0, r0) = self.window.bytes.0[i];
            let goodput = (d1 - d0) as f64 * 8.0 / window_s / 1e6;
            let throughput = (r1 - r0) as f64 * 8.0 / window_s / 1e6;
            // Counts over the window: [packets sent, retransmits, timeouts, drops, marks,
            // losses on the wire].
            let (k0, k1) = (self.window.counts.0[i], self.window.counts.1[i]);
            let [sent, retransmits, timeouts, drops, marks, lost] =
                std::array::from_fn(|j| k1[j] - k0[j]);
            let losses = has_loss.then_some(lost);
            flows.push(if i < n_tcp {
                let f = &v.tcp[i];
                FlowSummary {
                    flow_id: i as u32,
                    group: f.group,
                    group_name: self.info.group_names.0[f.group as usize].clone(),
                    protocol: "tcp".into(),
                    algorithm: self.info.cc_names[i].into(),
                    base_rtt_ms: f.base_rtt_ns as f64 / 1e6,
                    start_s: f.first_start_ns as f64 / NS_PER_SEC as f64,
                    size_bytes: transfers
                        .iter()
                        .find(|t| t.flow == i as u32 && t.index == 0)
                        .map(|t| t.size_bytes),
                    goodput_mbps: goodput,
                    throughput_mbps: throughput,
                    bytes_delivered: d1 - d0,
                    packets_sent: sent,
                    retransmits,
                    timeouts,
                    drops,
                    marks,
                    losses,
                    fct_s: transfers
                        .iter()
                        .find(|t| t.flow == i as u32 && t.index == 0)
                        .and_then(Transfer::fct_s),
                }
            } else {
                let u = &v.udp[i - n_tcp];
                FlowSummary {
                    flow_id: i as u32,
                    group: self.info.udp_groups[i - n_tcp],
                    group_name: self.info.group_names.1[self.info.udp_groups[i - n_tcp] as usize]
                        .clone(),
                    protocol: "udp".into(),
                    algorithm: match u.pattern {
                        crate::scenario::UdpPattern::Cbr => "cbr".into(),
                        crate::scenario::UdpPattern::Poisson => "poisson".into(),
                    },
                    base_rtt_ms: self.info.udp_base_rtt_ns[i - n_tcp] as f64 / 1e6,
                    start_s: u.start_ns as f64 / NS_PER_SEC as f64,
                    size_bytes: None,
                    goodput_mbps: goodput,
                    throughput_mbps: throughput,
                    bytes_delivered: d1 - d0,
                    packets_sent: sent,
                    retransmits,
                    timeouts,
                    drops,
                    marks,
                    losses,
                    fct_s: None,
                }
            });
        }
        let bl = &v.links[self.queue_link as usize];
        let (s0, s1) = self.window.serialised;
        let m = self.window.meters;
        let bottleneck = queue_summary(bl, self.window.queue, (s0, s1), window_s, m);
        let utilisation = bottleneck.utilisation;
        let hist = bl
            .stats
            .hist
            .as_ref()
            .expect("bottleneck keeps a histogram");
        let links = (!self.reported.is_empty()).then(|| {
            self.reported
                .iter()
                .enumerate()
                .map(|(k, &l)| {
                    let ((q0, s0), (q1, s1)) = (self.window.links.0[k], self.window.links.1[k]);
                    let m = (self.window.link_meters.0[k], self.window.link_meters.1[k]);
                    queue_summary(&v.links[l as usize], (q0, q1), (s0, s1), window_s, m)
                })
                .collect()
        });
        let paths = (!self.flow_paths.is_empty()).then(|| self.flow_paths.clone());
        let tcp_goodputs: Vec<f64> = flows
            .iter()
            .filter(|f| f.protocol == "tcp")
            .map(|f| f.goodput_mbps)
            .collect();
        let jain = if tcp_goodputs.is_empty() {
            jain_index(&flows.iter().map(|f| f.goodput_mbps).collect::<Vec<_>>())
        } else {
            jain_index(&tcp_goodputs)
        };
        let groups = group_summaries(&flows);
        let s = &self.series;
        let convergence_time_s = s
            .convergence_t
            .iter()
            .zip(&s.convergence_jain)
            .find(|(_, &j)| j >= 0.95)
            .map(|(&t, _)| t - self.convergence.last_start_ns as f64 / NS_PER_SEC as f64);
        let in_window: Vec<&Transfer> = transfers
            .iter()
            .filter(|t| {
                (self.info.measure_start_ns..self.info.measure_end_ns).contains(&t.start_ns)
            })
            .collect();
        let fct = (!transfers.is_empty()).then(|| fct_summary(&in_window));
        let summary = Summary {
            ccsim_version: crate::VERSION.into(),
            seed: self.info.seed,
            duration_s: self.info.duration_ns as f64 / NS_PER_SEC as f64,
            measure_start_s: self.info.measure_start_ns as f64 / NS_PER_SEC as f64,
            measure_end_s: self.info.measure_end_ns as f64 / NS_PER_SEC as f64,
            utilisation,
            jain_index: jain,
            events: v.events,
            bottleneck_packets: bl.stats.departures,
            wall_s,
            flows,
            groups,
            bottleneck,
            convergence_time_s,
            fct,
            links,
            paths,
            warnings: self.budget_warnings(v),
        };
        let mut tables = self.tables(v, &summary, hist, b)?;
        tables.push(transfers_table(&transfers, self.info.duration_ns, b)?);
        tables.extend(self.trace_tables(v, b)?);
        let pcap = match &self.pcap {
            Some(p) => Some(b.copy(p.bytes())?),
            None => None,
        };
        Ok(RunOutput {
            summary,
            tables,
            pcap,
        })
    }

    pub(crate) fn tables(
        &self,
        v: &View,
        summary: &Summary,
        hist: &hdrhistogram::Histogram<u64>,
        b: &mut RowBatches,
    ) -> Result<Vec<Table>, Cancelled> {
        let s = &self.series;
        // The series grow with the run (up to 100 M rows): copied in `b`'s batches, so
        // a cancellation is heard between them.
        let flow_series = Table::new("flow_series")
            .with("time_s", Column::F64(b.copy(&s.flow_t)?))
            .with("flow_id", Column::U32(b.copy(&s.flow_id)?))
            .with("goodput_mbps", Column::F64(b.copy(&s.flow_goodput)?))
            .with("throughput_mbps", Column::F64(b.copy(&s.flow_throughput)?))
            .with("bytes_delivered", Column::U64(b.copy(&s.flow_bytes)?))
            .with("drops", Column::U64(b.copy(&s.flow_drops)?))
            .with("marks", Column::U64(b.copy(&s.flow_marks)?));
        let group_names = s.group_protocol.iter().zip(&s.group_id).map(|(p, &g)| {
            let names = if *p == "tcp" {
                &self.info.group_names.0
            } else {
                &self.info.group_names.1
            };
            names[g as usize].clone().unwrap_or_default()
        });
        let group_series = Table::new("group_series")
            .with("time_s", Column::F64(b.copy(&s.group_t)?))
            .with(
                "protocol",
                Column::Str(b.collect(s.group_protocol.iter().map(|p| (*p).to_owned()))?),
            )
            .with("group", Column::U32(b.copy(&s.group_id)?))
            .with("name", Column::Str(b.collect(group_names)?))
            .with("flows_started", Column::U32(b.copy(&s.group_active)?))
            .with("goodput_mbps", Column::F64(b.copy(&s.group_goodput)?))
            .with("throughput_mbps", Column::F64(b.copy(&s.group_throughput)?));
        let cc_trace = Table::new("cc_trace")
            .with("time_s", Column::F64(b.copy(&s.cc_t)?))
            .with("flow_id", Column::U32(b.copy(&s.cc_id)?))
            .with("cwnd_pkts", Column::F64(b.copy(&s.cc_cwnd)?))
            .with("ssthresh_pkts", Column::F64(b.copy(&s.cc_ssthresh)?))
            .with("srtt_ms", Column::F64(b.copy(&s.cc_srtt)?))
            .with("inflight_pkts", Column::F64(b.copy(&s.cc_inflight)?));
        let queue_series = self.queue_series_table(v, b)?;
        let sojourn_cdf = self.sojourn_cdf_table(v, hist, b)?;
        let f = &summary.flows;
        let f64s = |g: fn(&FlowSummary) -> f64| Column::F64(f.iter().map(g).collect());
        let u64s = |g: fn(&FlowSummary) -> u64| Column::U64(f.iter().map(g).collect());
        let has_loss = v.links.iter().any(|l| l.loss.is_some());
        let flows = Table::new("flows")
            .with(
                "flow_id",
                Column::U32(f.iter().map(|x| x.flow_id).collect()),
            )
            .with("group", Column::U32(f.iter().map(|x| x.group).collect()))
            .with(
                "group_name",
                Column::Str(
                    f.iter()
                        .map(|x| x.group_name.clone().unwrap_or_default())
                        .collect(),
                ),
            )
            .with(
                "protocol",
                Column::Str(f.iter().map(|x| x.protocol.clone()).collect()),
            )
            .with(
                "algorithm",
                Column::Str(f.iter().map(|x| x.algorithm.clone()).collect()),
            )
            .with("base_rtt_ms", f64s(|x| x.base_rtt_ms))
            .with("start_s", f64s(|x| x.start_s))
            .with("size_bytes", u64s(|x| x.size_bytes.unwrap_or(0)))
            .with("goodput_mbps", f64s(|x| x.goodput_mbps))
            .with("throughput_mbps", f64s(|x| x.throughput_mbps))
            .with("bytes_delivered", u64s(|x| x.bytes_delivered))
            .with("packets_sent", u64s(|x| x.packets_sent))
            .with("retransmits", u64s(|x| x.retransmits))
            .with("timeouts", u64s(|x| x.timeouts))
            .with("drops", u64s(|x| x.drops))
            .with("marks", u64s(|x| x.marks))
            .with_if(has_loss, "losses", || u64s(|x| x.losses.unwrap_or(0)))
            .with("fct_s", f64s(|x| x.fct_s.unwrap_or(f64::NAN)));
        b.built(f.len())?;
        // Conservation accounting: sent = arrived + dropped + in_network, per flow and queue.
        let in_net = v.packets_in_network();
        let c = &v.counters;
        let conservation = Table::new("flow_packets")
            .with("flow_id", Column::U32((0..c.len() as u32).collect()))
            .with("sent", Column::U64(c.iter().map(|x| x.sent).collect()))
            .with(
                "arrived",
                Column::U64(c.iter().map(|x| x.arrived).collect()),
            )
            .with(
                "dropped",
                Column::U64(c.iter().map(|x| x.dropped).collect()),
            )
            .with_if(has_loss, "lost", || {
                Column::U64(c.iter().map(|x| x.lost).collect())
            })
            .with("in_network", Column::U64(in_net))
            .with(
                "bytes_delivered",
                Column::U64(v.flow_bytes().into_iter().map(|b| b.0).collect()),
            )
            .with(
                "retransmits",
                Column::U64(
                    (0..c.len())
                        .map(|i| v.tcp.get(i).map_or(0, |f| f.retransmits()))
                        .collect(),
                ),
            )
            .with(
                "timeouts",
                Column::U64(
                    (0..c.len())
                        .map(|i| v.tcp.get(i).map_or(0, |f| f.timeouts()))
                        .collect(),
                ),
            );
        let l = v.links;
        let queues = Table::new("queues")
            .with(
                "queue",
                Column::Str(l.iter().map(|x| x.name.clone()).collect()),
            )
            .with(
                "discipline",
                Column::Str(l.iter().map(|x| x.qdisc.kind().to_string()).collect()),
            )
            .with(
                "arrivals",
                Column::U64(l.iter().map(|x| x.stats.arrivals).collect()),
            )
            .with(
                "departures",
                Column::U64(l.iter().map(|x| x.stats.departures).collect()),
            )
            .with(
                "drops",
                Column::U64(l.iter().map(|x| x.stats.drops).collect()),
            )
            .with(
                "marks",
                Column::U64(l.iter().map(|x| x.stats.marks).collect()),
            )
            .with_if(has_loss, "losses", || {
                Column::U64(l.iter().map(|x| x.stats.losses).collect())
            })
            .with(
                "queued",
                Column::U64(l.iter().map(|x| x.qdisc.len_packets() as u64).collect()),
            );
        let cc_vars = Table::new("cc_vars")
            .with("time_s", Column::F64(b.copy(&s.var_t)?))
            .with("flow_id", Column::U32(b.copy(&s.var_id)?))
            .with("name", Column::Str(b.copy(&s.var_name)?))
            .with("value", Column::F64(b.copy(&s.var_value)?));
        let (mut rt, mut rid, mut rcause, mut rbefore, mut rafter) =
            (vec![], vec![], vec![], vec![], vec![]);
        for (i, f) in v.tcp.iter().enumerate() {
            for r in f.past_reductions.iter().chain(&f.sender.reductions) {
                rt.push(r.time_ns as f64 / NS_PER_SEC as f64);
                rid.push(i as u32);
                rcause.push(
                    match r.cause {
                        cc::ReductionCause::Loss => "loss",
                        cc::ReductionCause::Ecn => "ecn",
                        cc::ReductionCause::Delay => "delay",
                    }
                    .to_string(),
                );
                rbefore.push(r.cwnd_before as f64);
                rafter.push(r.ssthresh_after as f64);
                b.built(1)?;
            }
        }
        let cc_reductions = Table::new("cc_reductions")
            .with("time_s", Column::F64(rt))
            .with("flow_id", Column::U32(rid))
            .with("cause", Column::Str(rcause))
            .with("cwnd_before_pkts", Column::F64(rbefore))
            .with("ssthresh_after_pkts", Column::F64(rafter));
        Ok(vec![
            flow_series,
            group_series,
            cc_trace,
            cc_vars,
            cc_reductions,
            queue_series,
            sojourn_cdf,
            flows,
            conservation,
            queues,
        ])
    }
}

impl Recorders {
    /// The traces that stopped at their row budget, one line each (None: none did).
    fn budget_warnings(&self, v: &View) -> Option<Vec<String>> {
        let senders = || v.tcp.iter().map(|f| &f.sender);
        let warnings: Vec<String> = [
            self.qdisc_state
                .as_ref()
                .and_then(|t| t.budget.warning("qdisc_state")),
            self.queue_events
                .as_ref()
                .and_then(|t| t.budget.warning("queue_events")),
            RowBudget::per_flow_warning(
                "rtt_samples",
                senders()
                    .filter(|s| s.rtt_log.is_some())
                    .map(|s| &s.rtt_log_budget),
            ),
            RowBudget::per_flow_warning(
                "cc_reductions",
                senders()
                    .filter(|s| s.trace_reductions)
                    .map(|s| &s.reductions_budget),
            ),
            self.deadline.budget.warning("deadline_control"),
        ]
        .into_iter()
        .flatten()
        .collect();
        (!warnings.is_empty()).then_some(warnings)
    }
}

impl Recorders {
    /// `sojourn_cdf`: the bottleneck's sojourn distribution over the measurement window
    /// (`hist`) in a dumbbell; in a `[network]` each link's that queued, in link order,
    /// its `queue` column naming the link.
    fn sojourn_cdf_table(
        &self,
        v: &View,
        hist: &hdrhistogram::Histogram<u64>,
        b: &mut RowBatches,
    ) -> Result<Table, Cancelled> {
        let (mut queue, mut cdf_x, mut cdf_y) = (Vec::new(), Vec::new(), Vec::new());
        let mut add = |name: &str, hist: &hdrhistogram::Histogram<u64>| {
            let total = hist.len();
            if total == 0 {
                return;
            }
            let mut cum = 0u64;
            for v in hist.iter_recorded() {
                cum += v.count_at_value();
                queue.push(name.to_owned());
                cdf_x.push(hist.highest_equivalent(v.value_iterated_to()) as f64 / 1e6);
                cdf_y.push(cum as f64 / total as f64);
            }
        };
        match self.queued_links(v.links.len()) {
            None => add("bottleneck", hist),
            Some(queued) => {
                for &l in &self.reported {
                    let link = &v.links[l as usize];
                    if let (true, Some(h)) = (queued[l as usize], link.stats.hist.as_ref()) {
                        add(&link.name, h);
                        b.built(h.distinct_values())?;
                    }
                }
            }
        }
        Ok(Table::new("sojourn_cdf")
            .with("queue", Column::Str(queue))
            .with("sojourn_ms", Column::F64(cdf_x))
            .with("cdf", Column::F64(cdf_y)))
    }

    /// Which links' rows the per-queue trace tables keep, and their names.
    fn queue_names<'a>(&self, v: &'a View) -> (Option<Vec<bool>>, Vec<&'a str>) {
        let queued = self.queued_links(v.links.len());
        let names = match queued {
            None => Vec::new(),
            Some(_) => v.links.iter().map(|l| l.name.as_str()).collect(),
        };
        (queued, names)
    }

    /// The opt-in traces' tables (`qdisc_state`, `rtt_samples`, `queue_events`) and the
    /// DA-LBE controllers' decisions (`deadline_control`), each
    /// present (possibly empty) whatever the options, so every run has the same tables.
    /// Built in `b`'s batches (cancellable).
    pub(crate) fn trace_tables(
        &self,
        v: &View,
        b: &mut RowBatches,
    ) -> Result<Vec<Table>, Cancelled> {
        let mut rtts = RttSamples::default();
        for (i, f) in v.tcp.iter().enumerate() {
            rtts.extend(i as u32, &f.past_rtts);
            if let Some(log) = &f.sender.rtt_log {
                rtts.extend(i as u32, log);
            }
            b.built(f.past_rtts.len() + f.sender.rtt_log.as_ref().map_or(0, Vec::len))?;
        }
        let (queued, names) = self.queue_names(v);
        let queues = match &queued {
            None => QueueNames::Dumbbell,
            Some(keep) => QueueNames::Network { keep, names },
        };
        Ok(vec![
            match &self.qdisc_state {
                Some(trace) => trace.table(b, &queues)?,
                None => QdiscStateTrace::default().table(b, &queues)?,
            },
            rtts.table(b)?,
            match &self.queue_events {
                Some(trace) => trace.table(b, &queues)?,
                None => QueueEvents::default().table(b, &queues)?,
            },
            self.deadline.table(b)?,
        ])
    }
}

/// Names of every table a run produces, in the order `RunOutput::tables` lists them.
pub const TABLE_NAMES: [&str; 15] = [
    "flow_series",
    "group_series",
    "cc_trace",
    "cc_vars",
    "cc_reductions",
    "queue_series",
    "sojourn_cdf",
    "flows",
    "flow_packets",
    "queues",
    "transfers",
    "qdisc_state",
    "rtt_samples",
    "queue_events",
    "deadline_control",
];

/// Per-group goodput and share, TCP groups first (flows are in that order).
fn group_summaries(flows: &[FlowSummary]) -> Vec<GroupSummary> {
    let total: f64 = flows.iter().map(|f| f.goodput_mbps).sum();
    let mut out: Vec<GroupSummary> = Vec::new();
    for f in flows {
        match out.last_mut() {
            Some(g) if g.protocol == f.protocol && g.group == f.group => {
                g.flows += 1;
                g.goodput_mbps += f.goodput_mbps;
                g.throughput_mbps += f.throughput_mbps;
            }
            _ => out.push(GroupSummary {
                protocol: f.protocol.clone(),
                name: f.group_name.clone(),
                group: f.group,
                flows: 1,
                goodput_mbps: f.goodput_mbps,
                throughput_mbps: f.throughput_mbps,
                share: 0.0,
            }),
        }
    }
    for g in &mut out {
        g.share = if total > 0.0 {
            g.goodput_mbps / total
        } else {
            0.0
        };
    }
    out
}

/// Quantile `q` of sorted values by linear interpolation between order statistics
/// (numpy's default method).
fn quantile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let h = (n - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(n - 1);
    Some(sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo]))
}

fn fct_stats(transfers: &[&Transfer]) -> FctStats {
    let mut fcts: Vec<f64> = transfers.iter().filter_map(|t| t.fct_s()).collect();
    fcts.sort_by(f64::total_cmp);
    FctStats {
        size_min_bytes: transfers.iter().map(|t| t.size_bytes).min().unwrap_or(0),
        size_max_bytes: transfers.iter().map(|t| t.size_bytes).max().unwrap_or(0),
        transfers: transfers.len() as u64,
        completed: fcts.len() as u64,
        mean_s: (!fcts.is_empty()).then(|| fcts.iter().sum::<f64>() / fcts.len() as f64),
        median_s: quantile_sorted(&fcts, 0.5),
        p99_s: quantile_sorted(&fcts, 0.99),
    }
}

fn fct_summary(transfers: &[&Transfer]) -> FctSummary {
    let mut sizes: Vec<u64> = transfers.iter().map(|t| t.size_bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let bucket = |size: u64| -> u64 {
        if sizes.len() <= 16 {
            size
        } else {
            10u64.pow(size.max(1).ilog10())
        }
    };
    let mut keys: Vec<u64> = sizes.iter().map(|&s| bucket(s)).collect();
    keys.dedup();
    let by_size = keys
        .into_iter()
        .map(|k| {
            let members: Vec<&Transfer> = transfers
                .iter()
                .copied()
                .filter(|t| bucket(t.size_bytes) == k)
                .collect();
            fct_stats(&members)
        })
        .collect();
    FctSummary {
        all: fct_stats(transfers),
        by_size,
    }
}

// Keep the DropTail limit type reachable for tests that inspect resolved limits.

/// A link's queue over the measurement window, from its counters and bytes serialised at
/// the window's edges.
fn queue_summary(
    link: &Link,
    (q0, q1): (QueueSnapshot, QueueSnapshot),
    (s0, s1): (f64, f64),
    window_s: f64,
    meters: (CapacityMeter, CapacityMeter),
) -> QueueSummary {
    let arrivals = q1.arrivals - q0.arrivals;
    let drops = q1.drops - q0.drops;
    let losses = link.loss.is_some().then_some(q1.losses - q0.losses);
    let marks = q1.marks - q0.marks;
    let utilisation = link.utilisation(s1 - s0, window_s, meters);
    let pct = |q: f64| match link.stats.hist.as_ref() {
        Some(hist) if !hist.is_empty() => hist.value_at_quantile(q) as f64 / 1e6,
        _ => f64::NAN,
    };
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    QueueSummary {
        name: link.name.clone(),
        discipline: link.qdisc.kind().into(),
        arrivals,
        departures: q1.departures - q0.departures,
        drops,
        marks,
        drop_probability: ratio(drops, arrivals),
        losses,
        mark_probability: ratio(marks, arrivals),
        sojourn_mean_ms: if link.stats.win_departures == 0 {
            f64::NAN
        } else {
            link.stats.win_sojourn_sum_ns as f64 / link.stats.win_departures as f64 / 1e6
        },
        sojourn_p50_ms: pct(0.5),
        sojourn_p90_ms: pct(0.9),
        sojourn_p99_ms: pct(0.99),
        utilisation,
        bytes_departed: q1.bytes_departed - q0.bytes_departed,
    }
}
