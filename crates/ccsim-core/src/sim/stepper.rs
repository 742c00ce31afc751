//! Driving a run from outside, one monitor interval at a time: what a reinforcement-learning
//! environment (`ccsim.gym`) or a learned congestion control needs. Build a [`Stepper`]
//! from a scenario, [`Stepper::advance`] it to a time, read every TCP flow's statistics of
//! the interval since the last read ([`Stepper::interval_stats`]), and command a flow's
//! congestion control through its parameters ([`Stepper::set_param`]; the `policy`
//! controller's `rate_bps` / `cwnd_pkts`). The stepper never names an algorithm.
//!
//! The per-interval statistics are those of Aurora's monitor interval (PCC-RL
//! `src/common/sender_obs.py`, `SenderMonitorInterval`: bytes sent, acked and lost over the
//! interval and its RTT samples), plus CE marks and the delivery rate.
//!
//! A run driven this way ends with [`Stepper::finish`], which gives the same summary and
//! tables as an ordinary run.

use super::world::World;
use super::ParamUpdate;
use crate::engine::NS_PER_SEC;
use crate::results::RunOutput;
use crate::scenario::{ParamValue, Scenario, ScenarioError};

/// One TCP flow's statistics over one interval. Byte counts are payload bytes except
/// `bytes_sent`, which counts what the sender put on the wire (headers and
/// retransmissions included), as PCC-RL's send rate does.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FlowInterval {
    pub flow_id: u32,
    pub group: u32,
    /// The interval, ns.
    pub start_ns: u64,
    pub end_ns: u64,
    pub bytes_sent: u64,
    /// Newly cumulatively acknowledged.
    pub bytes_acked: u64,
    /// Newly delivered (cumulatively or selectively acknowledged).
    pub bytes_delivered: u64,
    /// Newly marked lost by the sender (`tp.lost`).
    pub bytes_lost: u64,
    /// Packets of the flow the network dropped, and CE-marked, during the interval.
    pub packets_dropped: u64,
    pub packets_marked: u64,
    /// RTT samples taken during the interval: count, first, min, mean, last (ns; 0
    /// without one).
    pub rtt_samples: u64,
    pub rtt_first_ns: u64,
    pub rtt_min_ns: u64,
    pub rtt_mean_ns: u64,
    pub rtt_last_ns: u64,
    /// Least-squares slope of the interval's RTT samples against the time they were
    /// taken (ns of RTT per ns; 0 with fewer than two samples at distinct times): the
    /// latency gradient, see [`rtt_slope`].
    pub rtt_slope: f64,
    /// The sender's smoothed and minimum RTT at the end of the interval.
    pub srtt_ns: u64,
    pub min_rtt_ns: u64,
    pub cwnd_pkts: u32,
    pub mss_bytes: u32,
    /// Delivered and sent bytes over the interval, bit/s.
    pub delivery_rate_bps: f64,
    pub send_rate_bps: f64,
    /// The application has started and its transfer is not complete.
    pub active: bool,
}

/// Where each flow's counters stood at the last read.
#[derive(Debug, Clone, Copy, Default)]
struct Mark {
    conn: u32,
    bytes_sent: u64,
    snd_una: u64,
    delivered: u64,
    lost: u64,
    dropped: u64,
    marked: u64,
    rtt_pos: usize,
    /// When the flow was last read, ns.
    read_ns: u64,
}

/// Least-squares slope of the RTT samples `(ack_time_ns, rtt_ns)` against the time each
/// sampled packet was sent (`ack_time - rtt`): the latency gradient as PCC Vivace computes
/// it (Dong et al., NSDI 2018; WebRTC's `modules/congestion_controller/pcc/
/// monitor_interval.cc`, `PccMonitorInterval::ComputeDelayGradient`: a linear regression
/// of each packet's delay on its send time, 0 when all were sent at once). Aurora's PCC-RL
/// (`src/common/sender_obs.py`, `_mi_metric_latency_increase` over "send dur") takes the
/// mean of the second half of the samples minus that of the first instead; both are 0 for
/// a flat RTT and the queue's growth rate for a steadily growing one, and the regression
/// weighs every sample by its time. Centred sums in f64 in sample order: the same samples
/// give the same bits.
pub fn rtt_slope(samples: &[(u64, u64)]) -> f64 {
    if samples.len() < 2 {
        return 0.0;
    }
    let n = samples.len() as f64;
    // Relative to the first sample, so that the times' magnitudes (up to 1e13 ns) do not
    // swamp their spread in f64.
    let (a0, r0) = samples[0];
    let sent0 = a0 as f64 - r0 as f64;
    let rel = |&(a, r): &(u64, u64)| (a as f64 - r as f64 - sent0, r as f64 - r0 as f64);
    let (sum_t, sum_r) = samples
        .iter()
        .map(rel)
        .fold((0.0, 0.0), |(st, sr), (t, r)| (st + t, sr + r));
    let (mean_t, mean_r) = (sum_t / n, sum_r / n);
    let (mut cov, mut var) = (0.0, 0.0);
    for (t, r) in samples.iter().map(rel) {
        cov += (t - mean_t) * (r - mean_r);
        var += (t - mean_t) * (t - mean_t);
    }
    if var > 0.0 {
        cov / var
    } else {
        0.0
    }
}

/// A run advanced from outside.
pub struct Stepper {
    world: World,
    marks: Vec<Mark>,
    /// Flows whose RTT log the stepper turned on (to read samples); turned off again
    /// before [`Stepper::finish`], so the tables are those of an ordinary run.
    logged_by_us: Vec<bool>,
}

impl Stepper {
    /// Build the scenario's network, at time 0.
    pub fn new(sc: &Scenario) -> Result<Self, ScenarioError> {
        let mut world = super::build(sc)?;
        let mut logged_by_us = Vec::with_capacity(world.tcp.len());
        for f in &mut world.tcp {
            let ours = f.sender.rtt_log.is_none();
            if ours {
                f.sender.rtt_log = Some(Vec::new());
                // Emptied at every read, so it needs no budget (the run's own log, when
                // it records one, keeps its budget: past it, the intervals count no
                // samples, which the summary's warning says).
                f.sender.rtt_log_budget = crate::trace::RowBudget::new(u64::MAX);
            }
            logged_by_us.push(ours);
        }
        let marks = vec![Mark::default(); world.tcp.len()];
        Ok(Stepper {
            world,
            marks,
            logged_by_us,
        })
    }

    /// Simulated time now, ns.
    pub fn now_ns(&self) -> u64 {
        self.world.sched.now()
    }

    /// The scenario's duration, ns.
    pub fn duration_ns(&self) -> u64 {
        self.world.duration_ns()
    }

    /// Number of TCP flows.
    pub fn tcp_flows(&self) -> usize {
        self.world.tcp.len()
    }

    /// Each TCP flow's base (propagation and serialisation) RTT, ns.
    pub fn path_rtt_ns(&self) -> Vec<u64> {
        self.world.tcp.iter().map(|f| f.path_rtt_ns).collect()
    }

    /// Run every event up to `until_ns` (at most the duration). Returns whether simulated
    /// time is left.
    pub fn advance(&mut self, until_ns: u64) -> bool {
        if until_ns > self.world.sched.now() {
            self.world.run_until(until_ns);
        }
        self.world.sched.now() < self.world.duration_ns()
    }

    /// Every TCP flow's statistics since the previous read of that flow (or the start).
    pub fn interval_stats(&mut self) -> Vec<FlowInterval> {
        (0..self.world.tcp.len())
            .map(|i| self.flow_interval(i))
            .collect()
    }

    /// TCP flow `i`'s statistics since its previous read (or the start); only this flow's
    /// interval restarts, so flows can be read on their own clocks.
    pub fn flow_interval(&mut self, i: usize) -> FlowInterval {
        let now = self.world.sched.now();
        let w = &mut self.world;
        let f = &mut w.tcp[i];
        let mark = &mut self.marks[i];
        let start = mark.read_ns;
        let secs = (now - start) as f64 / NS_PER_SEC as f64;
        let s = &f.sender;
        if mark.conn != f.conn {
            // A new connection of a closed-loop flow: its counters start from zero (the
            // old one's RTT log moved to `past_rtts`).
            *mark = Mark {
                conn: f.conn,
                dropped: mark.dropped,
                marked: mark.marked,
                read_ns: start,
                ..Mark::default()
            };
        }
        let mss = u64::from(s.cfg.mss);
        let c = &w.counters[i];
        let log = s.rtt_log.as_deref().unwrap_or(&[]);
        let new = &log[mark.rtt_pos.min(log.len())..];
        let (mut lo, mut sum) = (u64::MAX, 0u64);
        for &(_, r) in new {
            lo = lo.min(r);
            sum += r;
        }
        let n = new.len() as u64;
        let delivered = (s.tp.delivered - mark.delivered.min(s.tp.delivered)) * mss;
        let sent = s.stats.bytes_sent - mark.bytes_sent.min(s.stats.bytes_sent);
        let rate = |bytes: u64| {
            if secs > 0.0 {
                bytes as f64 * 8.0 / secs
            } else {
                0.0
            }
        };
        let out = FlowInterval {
            flow_id: i as u32,
            group: f.group,
            start_ns: start,
            end_ns: now,
            bytes_sent: sent,
            bytes_acked: (s.tp.snd_una - mark.snd_una.min(s.tp.snd_una)) * mss,
            bytes_delivered: delivered,
            bytes_lost: (s.tp.lost - mark.lost.min(s.tp.lost)) * mss,
            packets_dropped: c.dropped - mark.dropped.min(c.dropped),
            packets_marked: c.marked - mark.marked.min(c.marked),
            rtt_samples: n,
            rtt_first_ns: new.first().map_or(0, |&(_, r)| r),
            rtt_min_ns: if n > 0 { lo } else { 0 },
            rtt_mean_ns: sum.checked_div(n).unwrap_or(0),
            rtt_last_ns: new.last().map_or(0, |&(_, r)| r),
            rtt_slope: rtt_slope(new),
            srtt_ns: s.srtt_ns(),
            min_rtt_ns: if s.tp.min_rtt_ns == u64::MAX {
                0
            } else {
                s.tp.min_rtt_ns
            },
            cwnd_pkts: s.tp.cwnd,
            mss_bytes: s.cfg.mss,
            delivery_rate_bps: rate(delivered),
            send_rate_bps: rate(sent),
            active: now >= f.start_ns && !s.is_complete(),
        };
        *mark = Mark {
            conn: f.conn,
            bytes_sent: s.stats.bytes_sent,
            snd_una: s.tp.snd_una,
            delivered: s.tp.delivered,
            lost: s.tp.lost,
            dropped: c.dropped,
            marked: c.marked,
            rtt_pos: log.len(),
            read_ns: now,
        };
        // Samples already read are not needed again unless the run records them.
        if self.logged_by_us[i] {
            if let Some(l) = f.sender.rtt_log.as_mut() {
                l.clear();
            }
            mark.rtt_pos = 0;
        }
        out
    }

    /// Set a parameter of TCP flow `flow_id`'s congestion control (from the next ACK on).
    pub fn set_param(
        &mut self,
        flow_id: u32,
        name: &str,
        value: ParamValue,
    ) -> Result<(), ScenarioError> {
        self.world.apply_updates(&[ParamUpdate {
            flow_id,
            name: name.to_owned(),
            value,
        }])
    }

    /// Run to the end and summarise, as an ordinary run would (`wall_s`: the wall-clock
    /// seconds it took).
    pub fn finish(mut self, wall_s: f64) -> RunOutput {
        let end = self.world.duration_ns();
        self.world.run_until(end);
        for (f, ours) in self.world.tcp.iter_mut().zip(&self.logged_by_us) {
            if *ours {
                f.sender.rtt_log = None;
                f.past_rtts.clear();
            }
        }
        self.world.finish(wall_s)
    }
}

#[cfg(test)]
mod rtt_slope_tests {
    use super::rtt_slope;

    #[test]
    fn flat_rtt_has_no_gradient_and_fewer_than_two_samples_none() {
        assert_eq!(rtt_slope(&[]), 0.0);
        assert_eq!(rtt_slope(&[(50_000_000, 40_000_000)]), 0.0);
        let flat: Vec<_> = (0..10)
            .map(|i| (40_000_000 + i * 1_000_000, 40_000_000))
            .collect();
        assert_eq!(rtt_slope(&flat), 0.0);
    }

    #[test]
    fn a_queue_growing_steadily_gives_its_growth_rate() {
        // Packets sent every 1 ms into a queue that grows by 0.2 ms per packet: RTT 40 ms
        // + 0.2 x (send time), acked at send time + RTT. Slope 0.2 s of RTT per s.
        let samples: Vec<_> = (0..20u64)
            .map(|i| {
                let sent = 1_000_000 * i;
                let rtt = 40_000_000 + 200_000 * i;
                (sent + rtt, rtt)
            })
            .collect();
        assert!((rtt_slope(&samples) - 0.2).abs() < 1e-12);
    }

    #[test]
    fn worked_by_hand_against_send_time() {
        // Send times 0, 1, 2 ms with RTTs 10, 14, 12 ms: mean t 1, mean r 12;
        // cov = (-1)(-2) + 0 + (1)(0) = 2 ms^2, var = 2 ms^2: slope 1; the PCC-RL
        // halves (one sample, then two) give ((14+12)/2 - 10) / 2 ms = 1.5.
        let ms = 1_000_000u64;
        let samples = [(10 * ms, 10 * ms), (15 * ms, 14 * ms), (14 * ms, 12 * ms)];
        assert!((rtt_slope(&samples) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn packets_sent_together_give_zero() {
        let ms = 1_000_000u64;
        assert_eq!(rtt_slope(&[(10 * ms, 10 * ms), (12 * ms, 12 * ms)]), 0.0);
    }
}
