//! The per-interval series recorded at every stats tick (`flow_series`, `group_series`,
//! `cc_trace`, `cc_vars`, `queue_series`, the convergence index) and the per-flow byte
//! counters they difference.

use super::recorders::{LinkTick, Recorders, View};
use crate::cc::{self, CongestionControl};
use crate::engine::NS_PER_SEC;
use crate::net::link::Link;
use crate::qdisc::QueueDisc;
use crate::stats::jain_index;

/// Time series gathered at every stats tick.
#[derive(Debug, Default)]
pub(crate) struct Series {
    pub(crate) flow_t: Vec<f64>,
    pub(crate) flow_id: Vec<u32>,
    pub(crate) flow_goodput: Vec<f64>,
    pub(crate) flow_throughput: Vec<f64>,
    pub(crate) flow_bytes: Vec<u64>,
    pub(crate) flow_drops: Vec<u64>,
    pub(crate) flow_marks: Vec<u64>,
    pub(crate) group_t: Vec<f64>,
    pub(crate) group_protocol: Vec<&'static str>,
    pub(crate) group_id: Vec<u32>,
    pub(crate) group_active: Vec<u32>,
    pub(crate) group_goodput: Vec<f64>,
    pub(crate) group_throughput: Vec<f64>,
    /// Jain's index over the TCP flows' bytes delivered since the last TCP flow
    /// started, per tick (NaN before it): paper 003's convergence measure.
    pub(crate) convergence_t: Vec<f64>,
    pub(crate) convergence_jain: Vec<f64>,
    pub(crate) cc_t: Vec<f64>,
    pub(crate) cc_id: Vec<u32>,
    pub(crate) cc_cwnd: Vec<f64>,
    pub(crate) cc_ssthresh: Vec<f64>,
    pub(crate) cc_srtt: Vec<f64>,
    pub(crate) cc_inflight: Vec<f64>,
    pub(crate) var_t: Vec<f64>,
    pub(crate) var_id: Vec<u32>,
    pub(crate) var_name: Vec<String>,
    pub(crate) var_value: Vec<f64>,
    pub(crate) q_t: Vec<f64>,
    pub(crate) q_pkts: Vec<u64>,
    pub(crate) q_bytes: Vec<u64>,
    pub(crate) q_sojourn_mean: Vec<f64>,
    pub(crate) q_sojourn_max: Vec<f64>,
    pub(crate) q_sojourn_min: Vec<f64>,
    pub(crate) q_departed_bytes: Vec<u64>,
    pub(crate) q_utilisation: Vec<f64>,
    pub(crate) q_arrivals: Vec<u64>,
    pub(crate) q_drops: Vec<u64>,
    pub(crate) q_marks: Vec<u64>,
    /// Losses on the wire after the watched queue (a link model's random loss).
    pub(crate) q_losses: Vec<u64>,
    /// Each row's link (index) in a `[network]`; empty in a dumbbell (the watched link).
    pub(crate) q_link: Vec<u32>,
}

impl Recorders {
    /// A stats tick: one row per flow, group, traced flow and the watched queue. The
    /// caller then ends the queue's interval ([`crate::stats::QueueStats::end_interval`]).
    pub fn on_tick(&mut self, v: &View) {
        let now = v.now_ns;
        let t = now as f64 / NS_PER_SEC as f64;
        let iv_s = self.info.stats_interval_ns as f64 / NS_PER_SEC as f64;
        let bytes = v.flow_bytes();
        self.tick_flows(v, &bytes, t, iv_s);
        self.tick_convergence(&bytes, now, t);
        self.tick.bytes = bytes;
        self.tick_cc(v, t);
        self.tick_queue(v, t, iv_s);
    }

    /// `flow_series` and `group_series` rows.
    fn tick_flows(&mut self, v: &View, bytes: &[(u64, u64)], t: f64, iv_s: f64) {
        let now = v.now_ns;
        let mbps = |bytes: u64| bytes as f64 * 8.0 / iv_s / 1e6;
        // Per-group sums, in first-seen (flow-id) order: TCP groups, then UDP groups.
        let mut groups: Vec<((&'static str, u32), u32, u64, u64)> = Vec::new();
        for (i, (&(d, r), &(d0, r0))) in bytes.iter().zip(self.tick.bytes.iter()).enumerate() {
            let c = v.counters[i];
            let (drops0, marks0) = self.tick.signals[i];
            let s = &mut self.series;
            s.flow_t.push(t);
            s.flow_id.push(i as u32);
            s.flow_goodput.push(mbps(d - d0));
            s.flow_throughput.push(mbps(r - r0));
            s.flow_bytes.push(d);
            s.flow_drops.push(c.dropped - drops0);
            s.flow_marks.push(c.marked - marks0);
            self.tick.signals[i] = (c.dropped, c.marked);
            let key = self.group_key(v, i);
            let started = match v.tcp.get(i) {
                Some(f) => f.first_start_ns <= now,
                None => v.udp[i - v.tcp.len()].start_ns <= now,
            };
            match groups.last_mut() {
                Some(g) if g.0 == key => {
                    g.1 += u32::from(started);
                    g.2 += d - d0;
                    g.3 += r - r0;
                }
                _ => groups.push((key, u32::from(started), d - d0, r - r0)),
            }
        }
        for ((protocol, group), active, d, r) in groups {
            let s = &mut self.series;
            s.group_t.push(t);
            s.group_protocol.push(protocol);
            s.group_id.push(group);
            s.group_active.push(active);
            s.group_goodput.push(mbps(d));
            s.group_throughput.push(mbps(r));
        }
    }

    /// Paper 003 §4.3: Jain's index of the bytes each bulk TCP flow has delivered
    /// since the last one entered (finite transfers come and go: not counted).
    fn tick_convergence(&mut self, bytes: &[(u64, u64)], now: u64, t: f64) {
        let c = &mut self.convergence;
        if c.flows.len() >= 2 && now > c.last_start_ns {
            let flows = &c.flows;
            let base = c
                .base
                .get_or_insert_with(|| flows.iter().map(|&i| bytes[i].0).collect());
            let since: Vec<f64> = flows
                .iter()
                .zip(base.iter())
                .map(|(&i, b0)| (bytes[i].0 - b0) as f64)
                .collect();
            let jain = if since.iter().sum::<f64>() > 0.0 {
                jain_index(&since)
            } else {
                f64::NAN
            };
            self.series.convergence_t.push(t);
            self.series.convergence_jain.push(jain);
        }
    }

    /// `cc_trace` and `cc_vars` rows of the traced flows that have started: before its
    /// start a flow has no state to trace (issue 32: rows of the initial cwnd and the
    /// seeded RTT, nothing in flight, drew a flat line from 0 s).
    fn tick_cc(&mut self, v: &View, t: f64) {
        for (i, f) in v.tcp.iter().enumerate() {
            if f.trace && f.first_start_ns <= v.now_ns {
                let s = &f.sender;
                self.series.cc_t.push(t);
                self.series.cc_id.push(i as u32);
                self.series.cc_cwnd.push(s.tp.cwnd as f64);
                self.series
                    .cc_ssthresh
                    .push(if s.tp.ssthresh >= cc::INFINITE_SSTHRESH {
                        f64::NAN
                    } else {
                        s.tp.ssthresh as f64
                    });
                self.series.cc_srtt.push(s.srtt_ns() as f64 / 1e6);
                self.series.cc_inflight.push(s.in_flight() as f64);
                for (name, value) in s.cc.diagnostics() {
                    self.series.var_t.push(t);
                    self.series.var_id.push(i as u32);
                    self.series.var_name.push(name.to_string());
                    self.series.var_value.push(value);
                }
            }
        }
    }

    /// The `queue_series` rows: the watched queue's in a dumbbell, every reported link's
    /// in a `[network]` (and `qdisc_state`'s of the watched queue, if on).
    fn tick_queue(&mut self, v: &View, t: f64, iv_s: f64) {
        let now = v.now_ns;
        if let Some(tr) = self.qdisc_state.as_mut() {
            if self.reported.is_empty() {
                let l = self.queue_link;
                v.links[l as usize].qdisc.state(now, &mut tr.buf);
                tr.commit(now, l);
            } else {
                for &l in &self.reported {
                    v.links[l as usize].qdisc.state(now, &mut tr.buf);
                    tr.commit(now, l);
                }
            }
        }
        if self.reported.is_empty() {
            let link = &v.links[self.queue_link as usize];
            queue_row(&mut self.series, link, &mut self.tick.link, now, t, iv_s);
            return;
        }
        for (i, &l) in self.reported.iter().enumerate() {
            let link = &v.links[l as usize];
            queue_row(
                &mut self.series,
                link,
                &mut self.tick.links[i],
                now,
                t,
                iv_s,
            );
            self.series.q_link.push(l);
        }
    }
}

/// One link's `queue_series` row for the interval since `last`, which it then updates.
fn queue_row(s: &mut Series, link: &Link, last: &mut LinkTick, now: u64, t: f64, iv_s: f64) {
    let serialised = link.bytes_serialised(now);
    let meter = link.capacity_meter(now);
    let snap = link.stats.snapshot();
    let st = &link.stats;
    let has = st.iv_departures > 0;
    let departed = snap.bytes_departed - last.departed;
    s.q_t.push(t);
    s.q_pkts.push(link.qdisc.len_packets() as u64);
    s.q_bytes.push(link.qdisc.len_bytes());
    let ms = |ns: u64| if has { ns as f64 / 1e6 } else { f64::NAN };
    s.q_sojourn_mean.push(if has {
        st.iv_sojourn_sum_ns as f64 / st.iv_departures as f64 / 1e6
    } else {
        f64::NAN
    });
    s.q_sojourn_max.push(ms(st.iv_sojourn_max_ns));
    s.q_sojourn_min.push(ms(st.iv_sojourn_min_ns));
    s.q_departed_bytes.push(departed);
    let meters = (last.meter, meter);
    s.q_utilisation
        .push(link.utilisation(serialised - last.serialised, iv_s, meters));
    s.q_arrivals.push(snap.arrivals - last.queue.arrivals);
    s.q_drops.push(snap.drops - last.queue.drops);
    s.q_marks.push(snap.marks - last.queue.marks);
    s.q_losses.push(snap.losses - last.queue.losses);
    *last = LinkTick {
        queue: snap,
        departed: snap.bytes_departed,
        serialised,
        meter,
    };
}

impl Recorders {
    /// In a `[network]`, `queued[l]` for each of the `n_links` links: a packet waited at
    /// link `l` (a positive sojourn in some interval) or it dropped or marked one. None in
    /// a dumbbell.
    pub(crate) fn queued_links(&self, n_links: usize) -> Option<Vec<bool>> {
        let s = &self.series;
        if self.reported.is_empty() {
            return None;
        }
        let mut queued = vec![false; n_links];
        for (r, &l) in s.q_link.iter().enumerate() {
            queued[l as usize] |= s.q_sojourn_max[r] > 0.0 || s.q_drops[r] > 0 || s.q_marks[r] > 0;
        }
        Some(queued)
    }

    /// The `queue_series` table: the watched queue's rows (`queue` = "bottleneck") in a
    /// dumbbell; in a `[network]` every link that queued, named by its link name: a link
    /// queued if a packet waited at it (a positive sojourn in some interval) or it dropped
    /// or marked one. The others (idle, or carrying at most one packet at a time) are
    /// left out: a 128-host fabric has 320 links.
    /// `queue_series`, its columns built in `b`'s batches (up to 100 M rows), so a
    /// cancellation is heard between them.
    pub(crate) fn queue_series_table(
        &self,
        v: &View,
        b: &mut crate::results::RowBatches,
    ) -> Result<crate::results::Table, crate::results::Cancelled> {
        use crate::results::{Column, Table};
        let s = &self.series;
        let keep: Vec<usize> = match self.queued_links(v.links.len()) {
            None => (0..s.q_t.len()).collect(),
            Some(queued) => (0..s.q_t.len())
                .filter(|&r| queued[s.q_link[r] as usize])
                .collect(),
        };
        let names: Vec<String> = if s.q_link.is_empty() {
            b.repeat("bottleneck", keep.len())?
        } else {
            b.collect(
                keep.iter()
                    .map(|&r| v.links[s.q_link[r] as usize].name.clone()),
            )?
        };
        let has_loss = if s.q_link.is_empty() {
            v.links[self.queue_link as usize].loss.is_some()
        } else {
            keep.iter()
                .any(|&r| v.links[s.q_link[r] as usize].loss.is_some())
        };
        let f64s = |c: &[f64], b: &mut crate::results::RowBatches| {
            b.collect(keep.iter().map(|&r| c[r])).map(Column::F64)
        };
        let t = f64s(&s.q_t, b)?;
        let sojourn_mean = f64s(&s.q_sojourn_mean, b)?;
        let sojourn_max = f64s(&s.q_sojourn_max, b)?;
        let sojourn_min = f64s(&s.q_sojourn_min, b)?;
        let utilisation = f64s(&s.q_utilisation, b)?;
        let u64s = |c: &[u64], b: &mut crate::results::RowBatches| {
            b.collect(keep.iter().map(|&r| c[r])).map(Column::U64)
        };
        let losses = if has_loss {
            Some(u64s(&s.q_losses, b)?)
        } else {
            None
        };
        Ok(Table::new("queue_series")
            .with("time_s", t)
            .with("queue", Column::Str(names))
            .with("qlen_pkts", u64s(&s.q_pkts, b)?)
            .with("qlen_bytes", u64s(&s.q_bytes, b)?)
            .with("sojourn_mean_ms", sojourn_mean)
            .with("sojourn_max_ms", sojourn_max)
            .with("sojourn_min_ms", sojourn_min)
            .with("departed_bytes", u64s(&s.q_departed_bytes, b)?)
            .with("utilisation", utilisation)
            .with("arrivals", u64s(&s.q_arrivals, b)?)
            .with("drops", u64s(&s.q_drops, b)?)
            .with("marks", u64s(&s.q_marks, b)?)
            .with_if(has_loss, "losses", || losses.expect("built when has_loss")))
    }
}
