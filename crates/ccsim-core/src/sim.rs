//! Building a scenario's network and running it: the event loop and its dispatch.
//!
//! The [`World`] owns every table (links, routes, flows, the packet pool) and interprets
//! the scheduler's events. Algorithms are reached only through the `cc` and `qdisc`
//! registries, never by name here.

use std::time::Instant;

use crate::api::{Control, ProgressFn};
use crate::cc::{self, CongestionControl};
use crate::engine::rng::{stream, SimRng, StreamKind};
use crate::engine::sched::TcpTimerKind;
use crate::engine::{serialisation_ns, Event, Scheduler, NS_PER_SEC};
use crate::net::link::{DelayLine, LineEntry, Link, Next};
use crate::net::packet::{
    prefetch_read, Ecn, Packet, PacketId, PacketKind, PacketPool, TCP_IP_HEADER_BYTES,
};
use crate::net::topology::Topology;
use crate::ppv::marker::{Marker, MarkerParams};
use crate::ppv::tvf::Tvf;
use crate::qdisc::{self, droptail, shaper, LinkInfo, QdiscCtx, QueueDisc};
use crate::results::{
    Column, FctStats, FctSummary, FlowSummary, GroupSummary, QueueSummary, RunOutput, Summary,
    Table,
};
use crate::scenario::{
    AlgoSpec, ParamValue, PpvScope, QdiscStateMode, Scenario, ScenarioError, TvfSpec,
};
use crate::stats::{jain_index, QueueSnapshot, QueueStats};
use crate::tcp::receiver::{TcpReceiver, DELACK_NS};
use crate::tcp::sender::TcpSender;
use crate::tcp::{TcpConfig, TcpIo, TimerFire};
use crate::trace::{transfers_table, QdiscStateTrace, QueueEvents, RttSamples, Transfer};
use crate::udp::UdpSource;

/// IPv4 (20) + UDP (8) header bytes: a UDP packet's goodput is its size less these.
const UDP_IP_HEADER_BYTES: u32 = 28;

/// Default access-link rate as a multiple of the bottleneck rate.
const ACCESS_RATE_FACTOR: u64 = 10;
/// The reverse (ACK) path's DropTail limit: ample, so it never drops.
const REVERSE_QUEUE_PACKETS: u64 = 100_000;

/// One TCP flow: both endpoints and what the scenario said about it.
#[derive(Debug)]
pub struct TcpFlow {
    pub sender: TcpSender,
    pub receiver: TcpReceiver,
    pub group: u32,
    pub base_rtt_ns: u64,
    /// Start of the current transfer (of the flow, for a bulk flow).
    pub start_ns: u64,
    /// Start of the flow's first transfer.
    pub first_start_ns: u64,
    pub trace: bool,
    /// Connection number, carried by the flow's packets: a closed-loop flow opens a new
    /// connection for every transfer, and a late packet of an earlier one is discarded.
    pub conn: u32,
    /// The path's RTT with serialisation, which seeds a new connection's estimator.
    path_rtt_ns: u64,
    /// What a new connection starts from (flows with repeated transfers only).
    template: Option<Box<(TcpConfig, cc::Cc)>>,
    /// Sizes of the transfers still to come, and the think time before each.
    next: std::collections::VecDeque<(u64, u64)>,
    /// Index of the current transfer.
    transfer: u32,
    /// A finite transfer is running whose end has not been recorded yet.
    awaiting_end: bool,
    /// Counters of the flow's finished connections.
    before: ConnTotals,
    /// Reductions and RTT samples of finished connections.
    past_reductions: Vec<crate::tcp::sender::Reduction>,
    past_rtts: Vec<(u64, u64)>,
}

/// Counters of a flow's finished connections, so that its totals run on across them.
#[derive(Debug, Clone, Copy, Default)]
struct ConnTotals {
    bytes_delivered: u64,
    wire_received: u64,
    packets_sent: u64,
    retransmits: u64,
    timeouts: u64,
}

impl TcpFlow {
    /// Payload bytes delivered in order, over all the flow's connections.
    pub fn bytes_delivered(&self) -> u64 {
        self.before.bytes_delivered + self.receiver.stats.bytes_delivered
    }
    /// Wire bytes (headers included, duplicates too) that reached the receiver.
    pub fn wire_received(&self) -> u64 {
        let s = &self.receiver.stats;
        self.before.wire_received
            + s.bytes_received
            + s.segments_received * u64::from(TCP_IP_HEADER_BYTES)
    }
    fn packets_sent(&self) -> u64 {
        self.before.packets_sent + self.sender.stats.packets_sent
    }
    fn retransmits(&self) -> u64 {
        self.before.retransmits + self.sender.stats.retransmits
    }
    fn timeouts(&self) -> u64 {
        self.before.timeouts + self.sender.stats.timeouts
    }
    /// The current transfer as a `transfers` row.
    fn transfer_row(&self, flow: u32) -> Transfer {
        Transfer {
            flow,
            group: self.group,
            index: self.transfer,
            size_bytes: self.sender.cfg.total_bytes.unwrap_or(0),
            start_ns: self.start_ns,
            end_ns: self.receiver.stats.completed_ns,
            retransmits: self.sender.stats.retransmits,
            timeouts: self.sender.stats.timeouts,
        }
    }
}

/// Per-flow packet accounting across the whole network (both directions).
#[derive(Debug, Clone, Copy, Default)]
pub struct FlowCounters {
    /// Packets created by the flow's endpoints.
    pub sent: u64,
    /// Packets that reached an endpoint of the flow.
    pub arrived: u64,
    /// Packets of the flow dropped at any queue.
    pub dropped: u64,
    /// Packets of the flow CE-marked at any queue.
    pub marked: u64,
}

/// Time series gathered at every stats tick.
#[derive(Debug, Default)]
struct Series {
    flow_t: Vec<f64>,
    flow_id: Vec<u32>,
    flow_goodput: Vec<f64>,
    flow_throughput: Vec<f64>,
    flow_bytes: Vec<u64>,
    flow_drops: Vec<u64>,
    flow_marks: Vec<u64>,
    group_t: Vec<f64>,
    group_protocol: Vec<&'static str>,
    group_id: Vec<u32>,
    group_active: Vec<u32>,
    group_goodput: Vec<f64>,
    group_throughput: Vec<f64>,
    /// Jain's index over the TCP flows' bytes delivered since the last TCP flow
    /// started, per tick (NaN before it): paper 003's convergence measure.
    convergence_t: Vec<f64>,
    convergence_jain: Vec<f64>,
    cc_t: Vec<f64>,
    cc_id: Vec<u32>,
    cc_cwnd: Vec<f64>,
    cc_ssthresh: Vec<f64>,
    cc_srtt: Vec<f64>,
    cc_inflight: Vec<f64>,
    var_t: Vec<f64>,
    var_id: Vec<u32>,
    var_name: Vec<String>,
    var_value: Vec<f64>,
    q_t: Vec<f64>,
    q_pkts: Vec<u64>,
    q_bytes: Vec<u64>,
    q_sojourn_mean: Vec<f64>,
    q_sojourn_max: Vec<f64>,
    q_sojourn_min: Vec<f64>,
    q_departed_bytes: Vec<u64>,
    q_utilisation: Vec<f64>,
    q_arrivals: Vec<u64>,
    q_drops: Vec<u64>,
    q_marks: Vec<u64>,
}

/// What a scheduled change does.
#[derive(Debug, Clone)]
enum ChangeAction {
    /// Set congestion-control parameters of flows `first..first + count`.
    CcParams {
        first: u32,
        count: u32,
        params: Vec<(String, ParamValue)>,
        path: String,
    },
    /// Set a link's rate; the packet being serialised keeps its time.
    LinkRate { link: u32, rate_bps: u64 },
}

/// The state of one TCP flow as an external controller sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowState {
    pub flow_id: u32,
    pub group: u32,
    pub time_s: f64,
    /// Application bytes sent (first transmissions) and acknowledged so far.
    pub bytes_sent: u64,
    pub bytes_acked: u64,
    /// Bytes of a finite transfer not yet acknowledged; `None` for a bulk flow.
    pub bytes_left: Option<u64>,
    pub cwnd_pkts: u32,
    /// `None` while ssthresh is still infinite.
    pub ssthresh_pkts: Option<u32>,
    pub srtt_ms: f64,
    pub min_rtt_ms: f64,
    /// Whether the application has started and the transfer is not complete.
    pub active: bool,
}

/// A parameter change an external controller asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamUpdate {
    pub flow_id: u32,
    pub name: String,
    pub value: ParamValue,
}

/// Snapshot of per-flow byte counters (delivered, received).
type FlowBytes = Vec<(u64, u64)>;

/// The simulated world.
pub struct World {
    sched: Scheduler,
    pool: PacketPool,
    links: Vec<Link>,
    lines: Vec<DelayLine>,
    /// All routes' links, flattened; route `r` is `route_links[route_start[r]..route_start[r + 1]]`.
    route_links: Vec<u32>,
    route_start: Vec<u32>,
    tcp: Vec<TcpFlow>,
    udp: Vec<UdpSource>,
    udp_groups: Vec<u32>,
    udp_base_rtt_ns: Vec<u64>,
    counters: Vec<FlowCounters>,
    out_buf: Vec<PacketId>,
    drop_buf: Vec<PacketId>,
    mark_buf: Vec<PacketId>,
    bottleneck: u32,
    duration_ns: u64,
    stats_interval_ns: u64,
    measure_start_ns: u64,
    measure_end_ns: u64,
    in_window: bool,
    series: Series,
    last_tick_bytes: FlowBytes,
    last_tick_queue: QueueSnapshot,
    win_start_bytes: FlowBytes,
    win_end_bytes: FlowBytes,
    win_start_queue: QueueSnapshot,
    win_end_queue: QueueSnapshot,
    seed: u64,
    cc_names: Vec<&'static str>,
    changes: Vec<ChangeAction>,
    /// PPV edge markers with their random streams, and each flow's marker, if any.
    markers: Vec<(Marker, SimRng)>,
    marker_of: Vec<Option<u32>>,
    /// Finished transfers (one row each).
    transfers: Vec<Transfer>,
    /// `qdisc_state` recorder, and whether it also records after every timer update.
    qdisc_trace: Option<QdiscStateTrace>,
    qdisc_trace_updates: bool,
    /// `queue_events` recorder (opt-in).
    queue_events: Option<QueueEvents>,
    /// Per-flow (drops, marks) at the last tick, and bottleneck bytes departed.
    last_tick_signals: Vec<(u64, u64)>,
    last_tick_departed: u64,
    /// The bulk TCP flows, the last one's start, and their bytes delivered at the first
    /// tick after it (convergence time).
    convergence_flows: Vec<usize>,
    last_tcp_start_ns: u64,
    convergence_base: Option<Vec<u64>>,
}

/// Build the dumbbell a scenario describes.
pub fn build(sc: &Scenario) -> Result<World, ScenarioError> {
    let b = &sc.bottleneck;
    let rate = b.rate.bps;
    // A scenario edited after parsing must keep one set of values per flow.
    let counts = sc.flows.iter().map(|g| (g.count, g.drawn.len(), "flows"));
    let counts = counts.chain(sc.udp.iter().map(|g| (g.count, g.drawn.len(), "udp")));
    for (i, (count, drawn, kind)) in counts.enumerate() {
        if count as usize != drawn {
            return Err(ScenarioError::new(
                format!(
                    "{kind}[{}].count",
                    if kind == "udp" { i - sc.flows.len() } else { i }
                ),
                format!("{count} flows but values drawn for {drawn}"),
            ));
        }
    }
    let n_tcp: usize = sc.flows.iter().map(|g| g.count as usize).sum();
    let n_udp: usize = sc.udp.iter().map(|g| g.count as usize).sum();
    // Events name links and flows by 28-bit indices (`Event::MAX_INDEX`); each host
    // brings four access links.
    let max_hosts = (Event::MAX_INDEX as usize - 2) / 4;
    if n_tcp + n_udp > max_hosts {
        return Err(ScenarioError::new(
            "flows",
            format!(
                "{} flows in all; at most {max_hosts} are supported",
                n_tcp + n_udp
            ),
        ));
    }
    let max_rtt_ns = sc
        .flows
        .iter()
        .flat_map(|g| g.drawn.iter().map(|d| d.rtt.ns))
        .chain(sc.udp.iter().flat_map(|g| g.drawn.iter().map(|d| d.rtt.ns)))
        .max()
        .unwrap_or(0);
    let bdp_rtt_ns = b.bdp_rtt.map_or(max_rtt_ns, |d| d.ns);
    let mtu_bytes = sc
        .flows
        .iter()
        .map(|g| g.mss + TCP_IP_HEADER_BYTES)
        .max()
        .unwrap_or(1500);
    let one_way_b = b.delay.ns;

    let mut topo = Topology::default();
    let left = topo.add_node("left-router");
    let right = topo.add_node("right-router");
    struct LinkPlan {
        name: String,
        rate_bps: u64,
        delay_ns: u64,
        queue: AlgoSpec,
        queue_path: String,
        stats_hist: bool,
    }
    let mut plans: Vec<LinkPlan> = Vec::new();
    let ample = AlgoSpec {
        kind: "droptail".into(),
        params: [(
            "limit".to_string(),
            ParamValue::Str(format!("{REVERSE_QUEUE_PACKETS}p")),
        )]
        .into_iter()
        .collect(),
    };
    let bottleneck = topo.add_link(left, right);
    plans.push(LinkPlan {
        name: "bottleneck".into(),
        rate_bps: rate,
        delay_ns: one_way_b,
        queue: b.queue.clone(),
        queue_path: "bottleneck.queue".into(),
        stats_hist: true,
    });
    topo.add_link(right, left);
    plans.push(LinkPlan {
        name: "bottleneck-reverse".into(),
        rate_bps: b.reverse_rate.map_or(rate, |r| r.bps),
        delay_ns: one_way_b,
        queue: ample.clone(),
        queue_path: "bottleneck.reverse".into(),
        stats_hist: false,
    });

    // Hosts: one sender and one receiver per flow, each on its own access link.
    let mut endpoints: Vec<(u32, u32)> = Vec::new(); // (sender node, receiver node)
    let mut add_hosts = |topo: &mut Topology,
                         plans: &mut Vec<LinkPlan>,
                         label: String,
                         rtt_ns: u64,
                         access_bps: u64,
                         path: String|
     -> Result<(), ScenarioError> {
        let access_delay = (rtt_ns / 2).checked_sub(one_way_b).ok_or_else(|| {
            ScenarioError::new(
                path,
                format!(
                    "the base RTT must be at least twice bottleneck.delay ({} ms), got {} ms",
                    2.0 * one_way_b as f64 / 1e6,
                    rtt_ns as f64 / 1e6
                ),
            )
        })?;
        let s = topo.add_node(format!("{label}-sender"));
        let r = topo.add_node(format!("{label}-receiver"));
        for (from, to, delay, nm) in [
            (s, left, access_delay, "access-up"),
            (right, r, 0, "access-down"),
            (r, right, 0, "access-ack-up"),
            (left, s, access_delay, "access-ack-down"),
        ] {
            topo.add_link(from, to);
            plans.push(LinkPlan {
                name: format!("{label}-{nm}"),
                rate_bps: access_bps,
                delay_ns: delay,
                queue: ample.clone(),
                queue_path: format!("{label}.access"),
                stats_hist: false,
            });
        }
        endpoints.push((s, r));
        Ok(())
    };
    let default_access = b
        .access_rate
        .map_or(rate.saturating_mul(ACCESS_RATE_FACTOR), |r| r.bps);
    for (gi, g) in sc.flows.iter().enumerate() {
        for k in 0..g.count {
            add_hosts(
                &mut topo,
                &mut plans,
                format!("tcp{}.{}", gi, k),
                g.drawn[k as usize].rtt.ns,
                g.access_rate.map_or(default_access, |r| r.bps),
                format!("flows[{gi}].rtt"),
            )?;
        }
    }
    for (gi, g) in sc.udp.iter().enumerate() {
        for k in 0..g.count {
            add_hosts(
                &mut topo,
                &mut plans,
                format!("udp{}.{}", gi, k),
                g.drawn[k as usize].rtt.ns,
                g.access_rate.map_or(default_access, |r| r.bps),
                format!("udp[{gi}].rtt"),
            )?;
        }
    }

    // Links with their queue disciplines; one delay line per distinct delay.
    let mut links = Vec::with_capacity(plans.len());
    let mut lines: Vec<DelayLine> = Vec::new();
    for (i, p) in plans.into_iter().enumerate() {
        let info = LinkInfo {
            rate_bps: p.rate_bps,
            bdp_bytes: p.rate_bps as f64 * bdp_rtt_ns as f64 / 8e9,
            mtu_bytes,
        };
        let mut qd = qdisc::build(&p.queue, &p.queue_path, info)?;
        if i as u32 == bottleneck {
            if let Some(sh) = &sc.bottleneck.shaper {
                let peak = sh.peak.map(|r| r.bps);
                qd = if sh.docsis {
                    let params = shaper::DocsisParams::cablelabs(
                        peak.unwrap_or(sh.sustained.bps),
                        p.rate_bps,
                    );
                    shaper::build_docsis(qd, sh.sustained.bps, peak, sh.burst.bytes, params)
                } else {
                    qdisc::build_shaped(qd, sh.sustained.bps, peak, sh.burst.bytes)
                }
                .map_err(|m| ScenarioError::new("bottleneck.shaper", m))?;
            }
        }
        let qdisc_uses_timer = qd.uses_timer();
        let tl = &topo.links[i];
        let line = match lines.iter().position(|d| d.delay_ns == p.delay_ns) {
            Some(k) => k,
            None => {
                lines.push(DelayLine {
                    delay_ns: p.delay_ns,
                    ..DelayLine::default()
                });
                lines.len() - 1
            }
        } as u32;
        links.push(Link {
            name: p.name,
            from: tl.from,
            to: tl.to,
            rate_bps: p.rate_bps,
            delay_ns: p.delay_ns,
            qdisc: qd,
            rng: stream(sc.seed, StreamKind::Qdisc, i as u64),
            busy_until_ns: 0,
            tx_pending: false,
            qdisc_uses_timer,
            qdisc_timer: Default::default(),
            line,
            in_flight: None,
            stats: QueueStats::new(p.stats_hist),
        });
    }

    // Routes: forward and reverse per flow.
    let mut routes = Vec::with_capacity(2 * (n_tcp + n_udp));
    let path_rtt = |fwd: &[u32], rev: &[u32], links: &[Link]| -> u64 {
        fwd.iter()
            .map(|&l| {
                links[l as usize].delay_ns + serialisation_ns(mtu_bytes, links[l as usize].rate_bps)
            })
            .sum::<u64>()
            + rev
                .iter()
                .map(|&l| {
                    links[l as usize].delay_ns
                        + serialisation_ns(TCP_IP_HEADER_BYTES, links[l as usize].rate_bps)
                })
                .sum::<u64>()
    };
    let mut flow_path_rtts = Vec::new();
    for (i, &(s, r)) in endpoints.iter().enumerate() {
        let group_path = if i < n_tcp {
            format!(
                "flows[{}]",
                group_of(&sc.flows.iter().map(|g| g.count).collect::<Vec<_>>(), i)
            )
        } else {
            format!(
                "udp[{}]",
                group_of(
                    &sc.udp.iter().map(|g| g.count).collect::<Vec<_>>(),
                    i - n_tcp
                )
            )
        };
        let fwd = topo.route(s, r).ok_or_else(|| {
            ScenarioError::new(
                group_path.clone(),
                "no route from the flow's sender to its receiver",
            )
        })?;
        let rev = topo.route(r, s).ok_or_else(|| {
            ScenarioError::new(
                group_path,
                "no route from the flow's receiver back to its sender",
            )
        })?;
        flow_path_rtts.push(path_rtt(&fwd, &rev, &links));
        routes.push(fwd);
        routes.push(rev);
    }

    // Endpoints.
    let mut tcp = Vec::with_capacity(n_tcp);
    let mut cc_names = Vec::with_capacity(n_tcp);
    let mut fid = 0u32;
    for (gi, g) in sc.flows.iter().enumerate() {
        for drawn in &g.drawn {
            let path = format!("flows[{gi}].cc");
            let mut cc = cc::build(&g.cc, &path)?;
            cc.seed_rng(stream(sc.seed, StreamKind::Cc, fid as u64));
            cc_names.push(cc.name());
            let cfg = TcpConfig {
                mss: g.mss,
                initial_window: g.initial_window,
                sack: g.sack,
                ecn: g.ecn,
                pacing: g.pacing,
                min_rto_ns: g.min_rto.ns,
                delayed_ack: g.delayed_ack,
                total_bytes: drawn.sizes.first().map(|s| s.bytes),
                accurate_ecn: g.ecn && cc.needs_accurate_ecn(),
            };
            let receiver = TcpReceiver::new(fid, 2 * fid + 1, &cfg, DELACK_NS);
            let template = (drawn.sizes.len() > 1).then(|| Box::new((cfg.clone(), cc.clone())));
            let path_rtt_ns = flow_path_rtts[fid as usize];
            let mut sender = TcpSender::new(fid, 2 * fid, cfg, cc, path_rtt_ns);
            sender.trace_reductions = g.trace;
            if g.trace && sc.trace.rtt_samples {
                sender.rtt_log = Some(Vec::new());
            }
            let next = drawn
                .sizes
                .iter()
                .skip(1)
                .zip(&drawn.thinks)
                .map(|(s, t)| (s.bytes, t.ns))
                .collect();
            tcp.push(TcpFlow {
                sender,
                receiver,
                group: gi as u32,
                base_rtt_ns: drawn.rtt.ns,
                start_ns: drawn.start.ns,
                first_start_ns: drawn.start.ns,
                trace: g.trace,
                conn: 0,
                path_rtt_ns,
                template,
                next,
                transfer: 0,
                awaiting_end: !drawn.sizes.is_empty(),
                before: ConnTotals::default(),
                past_reductions: Vec::new(),
                past_rtts: Vec::new(),
            });
            fid += 1;
        }
    }
    let mut udp = Vec::with_capacity(n_udp);
    let mut udp_groups = Vec::with_capacity(n_udp);
    let mut udp_base_rtt_ns = Vec::with_capacity(n_udp);
    for (gi, g) in sc.udp.iter().enumerate() {
        for drawn in &g.drawn {
            udp.push(UdpSource {
                flow: fid,
                route: 2 * fid,
                rate_bps: drawn.rate.bps,
                packet_size: g.packet_size.bytes as u32,
                pattern: g.pattern,
                ecn: g.ecn,
                start_ns: drawn.start.ns,
                stop_ns: g.stop.map_or(u64::MAX, |s| s.ns),
                rng: stream(sc.seed, StreamKind::Udp, udp.len() as u64),
                packets_sent: 0,
                bytes_sent: 0,
                bytes_received: 0,
            });
            udp_groups.push(gi as u32);
            udp_base_rtt_ns.push(drawn.rtt.ns);
            fid += 1;
        }
    }

    // PPV markers at the senders' edge: one per flow, or one per group with scope "group".
    let n_flows = n_tcp + n_udp;
    let mut markers: Vec<(Marker, SimRng)> = Vec::new();
    let mut marker_of: Vec<Option<u32>> = vec![None; n_flows];
    let group_specs = sc
        .flows
        .iter()
        .enumerate()
        .map(|(gi, g)| (format!("flows[{gi}].ppv"), g.count, g.ppv.as_ref()))
        .chain(
            sc.udp
                .iter()
                .enumerate()
                .map(|(gi, g)| (format!("udp[{gi}].ppv"), g.count, g.ppv.as_ref())),
        );
    let mut next_flow = 0usize;
    for (path, count, spec) in group_specs {
        if let Some(spec) = spec {
            let tvf = match &spec.tvf {
                TvfSpec::Preset(name) => Tvf::preset(name).ok_or_else(|| {
                    ScenarioError::new(
                        format!("{path}.tvf"),
                        format!("unknown value function {name:?} (known: gold, silver, background, voice)"),
                    )
                })?,
                // Tvf errors name the offending point first: "points[2]: ...".
                TvfSpec::Points(points) => Tvf::from_points(points).map_err(|m| match m.split_once(": ") {
                    Some((sub, rest)) => ScenarioError::new(format!("{path}.{sub}"), rest),
                    None => ScenarioError::new(format!("{path}.points"), m),
                })?,
            };
            let params = MarkerParams {
                tau_ns: spec.tau.ns,
            };
            for k in 0..count as usize {
                if k == 0 || spec.scope == PpvScope::Flow {
                    let marker = Marker::new(tvf.clone(), params)
                        .map_err(|m| ScenarioError::new(path.clone(), m))?;
                    markers.push((
                        marker,
                        stream(sc.seed, StreamKind::Marker, markers.len() as u64),
                    ));
                }
                marker_of[next_flow + k] = Some(markers.len() as u32 - 1);
            }
        }
        next_flow += count as usize;
    }
    let mut world = World {
        sched: Scheduler::new(),
        pool: PacketPool::new(),
        links,
        lines,
        route_start: {
            let mut v = Vec::with_capacity(routes.len() + 1);
            let mut acc = 0u32;
            v.push(0);
            for r in &routes {
                acc += r.len() as u32;
                v.push(acc);
            }
            v
        },
        route_links: routes.concat(),
        tcp,
        udp,
        udp_groups,
        udp_base_rtt_ns,
        counters: vec![FlowCounters::default(); n_flows],
        out_buf: Vec::with_capacity(64),
        drop_buf: Vec::with_capacity(8),
        mark_buf: Vec::with_capacity(8),
        bottleneck,
        duration_ns: sc.duration.ns,
        stats_interval_ns: sc.stats_interval.ns,
        measure_start_ns: sc.measure_start.ns,
        measure_end_ns: sc.measure_end.ns,
        in_window: false,
        series: Series::default(),
        last_tick_bytes: vec![(0, 0); n_flows],
        last_tick_queue: QueueSnapshot::default(),
        win_start_bytes: vec![(0, 0); n_flows],
        win_end_bytes: vec![(0, 0); n_flows],
        win_start_queue: QueueSnapshot::default(),
        win_end_queue: QueueSnapshot::default(),
        seed: sc.seed,
        cc_names,
        changes: Vec::new(),
        markers,
        marker_of,
        transfers: Vec::new(),
        qdisc_trace: (sc.trace.qdisc_state != QdiscStateMode::Off).then(QdiscStateTrace::default),
        qdisc_trace_updates: sc.trace.qdisc_state == QdiscStateMode::Updates,
        queue_events: sc.trace.queue_events.then(QueueEvents::default),
        last_tick_signals: vec![(0, 0); n_flows],
        last_tick_departed: 0,
        convergence_flows: sc
            .flows
            .iter()
            .flat_map(|g| g.drawn.iter())
            .enumerate()
            .filter(|(_, d)| d.sizes.is_empty())
            .map(|(i, _)| i)
            .collect(),
        last_tcp_start_ns: sc
            .flows
            .iter()
            .flat_map(|g| {
                g.drawn
                    .iter()
                    .filter(|d| d.sizes.is_empty())
                    .map(|d| d.start.ns)
            })
            .max()
            .unwrap_or(0),
        convergence_base: None,
    };

    for l in 0..world.links.len() as u32 {
        world.sync_qdisc_timer(l);
    }
    // Scheduled changes, validated now on a copy of the group's controller.
    let mut first = 0u32;
    let mut timed: Vec<(u64, ChangeAction)> = Vec::new();
    for (gi, g) in sc.flows.iter().enumerate() {
        for (k, ch) in g.changes.iter().enumerate() {
            let path = format!("flows[{gi}].changes[{k}]");
            // A group of open-loop arrivals may have drawn no flow: probe a fresh controller.
            let mut probe = match world.tcp.get(first as usize) {
                Some(f) if g.count > 0 => f.sender.cc.clone(),
                _ => cc::build(&g.cc, &format!("flows[{gi}].cc"))?,
            };
            for (name, value) in &ch.params {
                probe.set_param(&path, name, value)?;
            }
            timed.push((
                ch.at.ns,
                ChangeAction::CcParams {
                    first,
                    count: g.count,
                    params: ch
                        .params
                        .iter()
                        .map(|(n, v)| (n.clone(), v.clone()))
                        .collect(),
                    path,
                },
            ));
        }
        first += g.count;
    }
    for rc in &sc.bottleneck.rate_changes {
        timed.push((
            rc.at.ns,
            ChangeAction::LinkRate {
                link: world.bottleneck,
                rate_bps: rc.rate.bps,
            },
        ));
    }
    if timed.len() > Event::MAX_INDEX as usize {
        return Err(ScenarioError::new(
            "changes",
            format!(
                "{} scheduled changes in all; at most {} are supported",
                timed.len(),
                Event::MAX_INDEX
            ),
        ));
    }
    for (at, action) in timed {
        world
            .sched
            .at(at, Event::Change(world.changes.len() as u32));
        world.changes.push(action);
    }
    // Initial events: measurement window first so it wins ties at the same instant.
    world.sched.at(world.measure_start_ns, Event::MeasureStart);
    world.sched.at(world.measure_end_ns, Event::MeasureEnd);
    world.sched.at(world.stats_interval_ns, Event::StatsTick);
    let mut fi = 0usize;
    for g in &sc.flows {
        for drawn in &g.drawn {
            world.sched.at(drawn.start.ns, Event::FlowStart(fi as u32));
            if let Some(stop) = g.stop {
                world.sched.at(stop.ns, Event::FlowStop(fi as u32));
            }
            fi += 1;
        }
    }
    for u in 0..world.udp.len() {
        let start = world.udp[u].start_ns;
        world.sched.at(start, Event::UdpSend(u as u32));
    }
    Ok(world)
}

/// Which group a flow index falls in, given the groups' counts.
fn group_of(counts: &[u32], mut i: usize) -> usize {
    for (g, &c) in counts.iter().enumerate() {
        if i < c as usize {
            return g;
        }
        i -= c as usize;
    }
    counts.len().saturating_sub(1)
}

/// Validate by building without running.
pub fn build_only(sc: &Scenario) -> Result<(), ScenarioError> {
    build(sc).map(|_| ())
}

/// Build and run a scenario.
pub fn run(sc: &Scenario, progress: Option<ProgressFn<'_>>) -> Result<RunOutput, ScenarioError> {
    run_controlled(sc, progress, None)
}

/// Build and run a scenario with an optional external controller.
pub fn run_controlled(
    sc: &Scenario,
    progress: Option<ProgressFn<'_>>,
    control: Option<Control<'_>>,
) -> Result<RunOutput, ScenarioError> {
    let mut world = build(sc)?;
    if let Some(c) = &control {
        if c.interval_ns == 0 {
            return Err(ScenarioError::new(
                "control_interval",
                "expected a positive duration like \"100ms\"",
            ));
        }
        world
            .sched
            .at(c.interval_ns.min(world.duration_ns), Event::ControlTick);
    }
    let started = Instant::now();
    world.run_until_end_controlled(progress, control)?;
    let wall_s = started.elapsed().as_secs_f64();
    Ok(world.finish(wall_s))
}

impl World {
    /// Run every event up to the scenario's duration.
    pub fn run_until_end(&mut self, progress: Option<ProgressFn<'_>>) {
        self.run_until_end_controlled(progress, None)
            .expect("without a controller a run cannot fail");
    }

    /// Run to the end, calling the external controller at its ticks.
    pub fn run_until_end_controlled(
        &mut self,
        mut progress: Option<ProgressFn<'_>>,
        mut control: Option<Control<'_>>,
    ) -> Result<(), ScenarioError> {
        let end = self.duration_ns;
        let step = (end / 100).max(1);
        let mut next_report = step;
        while let Some(ev) = self.sched.pop_until(end) {
            if ev == Event::ControlTick {
                if let Some(c) = control.as_mut() {
                    let states = self.flow_states();
                    let updates = (c.callback)(&states);
                    self.apply_updates(&updates)?;
                    let next = self.sched.now() + c.interval_ns;
                    if next <= end {
                        self.sched.at(next, Event::ControlTick);
                    }
                }
                continue;
            }
            self.dispatch(ev);
            if let Some(p) = progress.as_mut() {
                let now = self.sched.now();
                if now >= next_report {
                    p(now as f64 / end as f64);
                    next_report = (now / step + 1) * step;
                }
            }
        }
        self.sched.advance_to(end);
        if let Some(p) = progress.as_mut() {
            p(1.0);
        }
        Ok(())
    }

    /// Every TCP flow's state, for an external controller.
    pub fn flow_states(&self) -> Vec<FlowState> {
        let t = self.sched.now() as f64 / NS_PER_SEC as f64;
        self.tcp
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let s = &f.sender;
                let mss = s.cfg.mss as u64;
                let acked = (s.tp.snd_una * mss).min(s.cfg.total_bytes.unwrap_or(u64::MAX));
                let sent = (s.tp.snd_nxt * mss).min(s.cfg.total_bytes.unwrap_or(u64::MAX));
                FlowState {
                    flow_id: i as u32,
                    group: f.group,
                    time_s: t,
                    bytes_sent: sent,
                    bytes_acked: acked,
                    bytes_left: s.cfg.total_bytes.map(|b| b - acked),
                    cwnd_pkts: s.tp.cwnd,
                    ssthresh_pkts: (s.tp.ssthresh < cc::INFINITE_SSTHRESH).then_some(s.tp.ssthresh),
                    srtt_ms: s.srtt_ns() as f64 / 1e6,
                    min_rtt_ms: s.tp.min_rtt_ns as f64 / 1e6,
                    active: self.sched.now() >= f.start_ns && !s.is_complete(),
                }
            })
            .collect()
    }

    /// Apply an external controller's parameter changes.
    pub fn apply_updates(&mut self, updates: &[ParamUpdate]) -> Result<(), ScenarioError> {
        for u in updates {
            let path = format!("controller.flows[{}].cc", u.flow_id);
            let flow = self.tcp.get_mut(u.flow_id as usize).ok_or_else(|| {
                ScenarioError::new("controller", format!("no TCP flow {}", u.flow_id))
            })?;
            flow.sender.cc.set_param(&path, &u.name, &u.value)?;
            if let Some(t) = flow.template.as_mut() {
                t.1.set_param(&path, &u.name, &u.value)?;
            }
        }
        Ok(())
    }

    /// Every byte of flow `f`'s current transfer is acknowledged: record it and, for a
    /// closed-loop flow with transfers to come, open a new connection for the next one
    /// after its think time (a fresh sender and receiver: slow start again, as a new
    /// HTTP/1.0 connection would).
    fn transfer_ended(&mut self, f: u32) {
        let seed = self.seed;
        let now = self.sched.now();
        let flow = &mut self.tcp[f as usize];
        flow.awaiting_end = false;
        self.transfers.push(flow.transfer_row(f));
        let Some((size, think_ns)) = flow.next.pop_front() else {
            return;
        };
        let (cfg, cc) = &**flow
            .template
            .as_ref()
            .expect("repeating flows keep a template");
        let mut cfg = cfg.clone();
        cfg.total_bytes = Some(size);
        let mut cc = cc.clone();
        flow.conn += 1;
        cc.seed_rng(stream(
            seed,
            StreamKind::Cc,
            u64::from(f) | (u64::from(flow.conn) << 32),
        ));
        let receiver = TcpReceiver::new(f, 2 * f + 1, &cfg, DELACK_NS);
        let mut sender = TcpSender::new(f, 2 * f, cfg, cc, flow.path_rtt_ns);
        sender.trace_reductions = flow.sender.trace_reductions;
        sender.rtt_log = flow.sender.rtt_log.as_ref().map(|_| Vec::new());
        let old_sender = std::mem::replace(&mut flow.sender, sender);
        let old_receiver = std::mem::replace(&mut flow.receiver, receiver);
        let b = &mut flow.before;
        b.bytes_delivered += old_receiver.stats.bytes_delivered;
        b.wire_received += old_receiver.stats.bytes_received
            + old_receiver.stats.segments_received * u64::from(TCP_IP_HEADER_BYTES);
        b.packets_sent += old_sender.stats.packets_sent;
        b.retransmits += old_sender.stats.retransmits;
        b.timeouts += old_sender.stats.timeouts;
        flow.past_reductions.extend(old_sender.reductions);
        flow.past_rtts
            .extend(old_sender.rtt_log.unwrap_or_default());
        flow.transfer += 1;
        flow.awaiting_end = true;
        flow.start_ns = now + think_ns;
        if flow.start_ns < self.duration_ns {
            self.sched.at(flow.start_ns, Event::FlowStart(f));
        }
    }

    fn apply_change(&mut self, i: u32) {
        match self.changes[i as usize].clone() {
            ChangeAction::CcParams {
                first,
                count,
                params,
                path,
            } => {
                for f in first..first + count {
                    let flow = &mut self.tcp[f as usize];
                    for (name, value) in &params {
                        flow.sender
                            .cc
                            .set_param(&path, name, value)
                            .expect("validated when the scenario was built");
                        if let Some(t) = flow.template.as_mut() {
                            t.1.set_param(&path, name, value)
                                .expect("validated when the scenario was built");
                        }
                    }
                }
            }
            ChangeAction::LinkRate { link, rate_bps } => {
                // The queue hears it too (CSAQM's capacity, RED's idle clock).
                let l = &mut self.links[link as usize];
                l.rate_bps = rate_bps;
                l.qdisc.link_rate_changed(rate_bps);
            }
        }
    }

    /// Run every event up to `t_ns` (at most the scenario's duration); for tests that
    /// inspect the world part-way.
    pub fn run_until(&mut self, t_ns: u64) {
        let end = t_ns.min(self.duration_ns);
        while let Some(ev) = self.sched.pop_until(end) {
            self.dispatch(ev);
        }
        self.sched.advance_to(end);
    }

    /// The scenario's duration.
    pub fn duration_ns(&self) -> u64 {
        self.duration_ns
    }

    /// Check internal consistency: every sender's scoreboard counters match its tags, and
    /// every live packet is in exactly one queue or delay line.
    pub fn check_invariants(&self) -> Result<(), String> {
        for (i, f) in self.tcp.iter().enumerate() {
            f.sender
                .check_invariants()
                .map_err(|e| format!("flow {i}: {e}"))?;
        }
        let held: usize = self
            .links
            .iter()
            .map(|l| l.qdisc.len_packets() + l.in_flight.is_some() as usize)
            .sum::<usize>()
            + self.lines.iter().map(|d| d.queue.len()).sum::<usize>();
        if held != self.pool.live() {
            return Err(format!(
                "{} live packets but {} in queues and lines",
                self.pool.live(),
                held
            ));
        }
        Ok(())
    }

    /// Events executed so far.
    pub fn events(&self) -> u64 {
        self.sched.executed()
    }

    #[inline]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::LinkTxDone(l) => {
                let link = &mut self.links[l as usize];
                let arrived = link.in_flight.take();
                if link.tx_pending {
                    link.tx_pending = false;
                    self.link_start_tx(l);
                }
                if let Some(e) = arrived {
                    self.deliver(e.id, e.next);
                }
            }
            Event::LineArrive(k) => self.line_arrive(k),
            Event::QdiscTimer(l) => self.qdisc_timer(l),
            Event::TcpTimer { flow, timer } => self.tcp_timer(flow, timer),
            Event::FlowStart(f) => {
                let now = self.sched.now();
                let mut io = TcpIo {
                    now_ns: now,
                    pool: &mut self.pool,
                    out: &mut self.out_buf,
                };
                self.tcp[f as usize].sender.start(&mut io);
                self.flush_tcp(f);
            }
            Event::FlowStop(f) => self.tcp[f as usize].sender.stop(),
            Event::UdpSend(u) => self.udp_send(u),
            Event::StatsTick => self.stats_tick(),
            Event::MeasureStart => {
                self.in_window = true;
                self.win_start_bytes = self.flow_bytes();
                self.win_start_queue = self.links[self.bottleneck as usize].stats.snapshot();
            }
            Event::MeasureEnd => {
                self.in_window = false;
                self.win_end_bytes = self.flow_bytes();
                self.win_end_queue = self.links[self.bottleneck as usize].stats.snapshot();
            }
            Event::Change(i) => self.apply_change(i),
            Event::ControlTick => {}
        }
    }

    // ----- links -----------------------------------------------------------------

    fn account_qdisc_outcome(&mut self, l: u32) {
        if l == self.bottleneck {
            if let Some(ev) = self.queue_events.as_mut() {
                let now = self.sched.now();
                let q = &self.links[l as usize].qdisc;
                let (pkts, bytes) = (q.len_packets() as u64, q.len_bytes());
                for (buf, mark) in [(&self.drop_buf, false), (&self.mark_buf, true)] {
                    for &id in buf {
                        let p = self.pool.get(id);
                        // A packet dropped on arrival was stamped now: it waited 0.
                        ev.push(
                            now,
                            p.flow,
                            mark,
                            pkts,
                            bytes,
                            now.saturating_sub(p.enqueue_ns),
                        );
                    }
                }
            }
        }
        let link = &mut self.links[l as usize];
        for &id in &self.mark_buf {
            link.stats.marks += 1;
            self.counters[self.pool.get(id).flow as usize].marked += 1;
        }
        self.mark_buf.clear();
        for &id in &self.drop_buf {
            link.stats.drops += 1;
            self.counters[self.pool.get(id).flow as usize].dropped += 1;
            self.pool.free(id);
        }
        self.drop_buf.clear();
    }

    /// Keep the link's timer in step with what its discipline asks for.
    #[inline]
    fn sync_qdisc_timer(&mut self, l: u32) {
        let link = &mut self.links[l as usize];
        if !link.qdisc_uses_timer {
            return;
        }
        match link.qdisc.timer_deadline() {
            Some(t) => link.qdisc_timer.arm(t),
            None => return,
        }
        if let Some(t) = link.qdisc_timer.sync() {
            self.sched.at(t, Event::QdiscTimer(l));
        }
    }

    fn qdisc_timer(&mut self, l: u32) {
        let now = self.sched.now();
        let link = &mut self.links[l as usize];
        match link.qdisc_timer.on_event(now) {
            TimerFire::Stale => return,
            TimerFire::Reschedule(t) => {
                self.sched.at(t, Event::QdiscTimer(l));
                return;
            }
            TimerFire::Fire => {}
        }
        let mut ctx = QdiscCtx {
            now_ns: now,
            pool: &mut self.pool,
            dropped: &mut self.drop_buf,
            marked: &mut self.mark_buf,
            rng: &mut link.rng,
        };
        link.qdisc.on_timer(&mut ctx);
        if self.qdisc_trace_updates && l == self.bottleneck {
            if let Some(tr) = self.qdisc_trace.as_mut() {
                self.links[l as usize].qdisc.state(now, &mut tr.buf);
                tr.commit(now);
            }
        }
        self.account_qdisc_outcome(l);
        self.sync_qdisc_timer(l);
        // A timer may make a held packet eligible (a shaper's tokens).
        if self.links[l as usize].qdisc.len_packets() > 0 {
            self.wake_transmitter(l);
        }
    }

    /// Have link `l` send its next queued packet as soon as its transmitter is free: now
    /// if it is idle, else at the transmit-done event of the packet on the wire.
    fn wake_transmitter(&mut self, l: u32) {
        let now = self.sched.now();
        let link = &mut self.links[l as usize];
        if link.tx_pending {
            return; // a transmit-done event will start it
        }
        if link.in_flight.is_some() {
            // A zero-delay link's transmit-done event is due at `busy_until_ns`
            // (possibly now, not yet run); it delivers that packet and starts this one.
            link.tx_pending = true;
        } else if now >= link.busy_until_ns {
            self.link_start_tx(l);
        } else {
            link.tx_pending = true;
            self.sched.at(link.busy_until_ns, Event::LinkTxDone(l));
        }
    }

    fn link_enqueue(&mut self, l: u32, id: PacketId) {
        let now = self.sched.now();
        let link = &mut self.links[l as usize];
        link.stats.arrivals += 1;
        // An idle link with an empty DropTail queue sends the packet straight away:
        // DropTail admits it and hands it back unchanged, so skip the round trip
        // through its FIFO (most access and reverse-path hops take this path). Its
        // sojourn is zero, so `transmit` needs no enqueue time.
        if link.is_idle(now)
            && link
                .qdisc
                .is_empty_droptail_admitting(self.pool.get(id).size_bytes as u64)
        {
            self.transmit(l, id, now, false);
            return;
        }
        self.pool.get_mut(id).enqueue_ns = now;
        let link = &mut self.links[l as usize];
        let mut ctx = QdiscCtx {
            now_ns: now,
            pool: &mut self.pool,
            dropped: &mut self.drop_buf,
            marked: &mut self.mark_buf,
            rng: &mut link.rng,
        };
        link.qdisc.enqueue(id, &mut ctx);
        let wants_timer = link.qdisc_uses_timer;
        self.account_qdisc_outcome(l);
        if wants_timer {
            self.sync_qdisc_timer(l);
        }
        self.wake_transmitter(l);
    }

    fn link_start_tx(&mut self, l: u32) {
        let now = self.sched.now();
        let link = &mut self.links[l as usize];
        let mut ctx = QdiscCtx {
            now_ns: now,
            pool: &mut self.pool,
            dropped: &mut self.drop_buf,
            marked: &mut self.mark_buf,
            rng: &mut link.rng,
        };
        let next = link.qdisc.dequeue(&mut ctx);
        let wants_timer = link.qdisc_uses_timer;
        if !self.drop_buf.is_empty() || !self.mark_buf.is_empty() {
            self.account_qdisc_outcome(l);
        }
        if wants_timer {
            self.sync_qdisc_timer(l);
        }
        match next {
            Some(id) => self.transmit(l, id, now, true),
            None => {
                let link = &mut self.links[l as usize];
                if link.qdisc.len_packets() > 0 {
                    if let Some(t) = link.qdisc.next_ready_ns(now) {
                        link.tx_pending = true;
                        self.sched.at(t.max(now), Event::LinkTxDone(l));
                    }
                }
            }
        }
    }

    /// Put packet `id`, just taken from link `l`'s queue, on the wire: it occupies the
    /// transmitter for its serialisation time, then propagates. `may_be_queued`: it came
    /// through the queue, and others may wait behind it (false on the idle-link fast
    /// path: it arrived now and nothing waits, which saves asking the discipline).
    #[inline]
    fn transmit(&mut self, l: u32, id: PacketId, now: u64, may_be_queued: bool) {
        let in_window = self.in_window;
        let link = &mut self.links[l as usize];
        let p = self.pool.get(id);
        let size = p.size_bytes;
        let sojourn_ns = if may_be_queued { now - p.enqueue_ns } else { 0 };
        link.stats.on_departure(sojourn_ns, size, in_window);
        let tx_end = now + serialisation_ns(size, link.rate_bps);
        link.busy_until_ns = tx_end;
        let arrive = tx_end + link.delay_ns;
        let zero_delay = link.delay_ns == 0;
        let queued = if may_be_queued {
            link.qdisc.peek()
        } else {
            None
        };
        if let Some(next) = queued {
            self.pool.prefetch(next);
            link.tx_pending = true;
        }
        // The transmit-done event starts the next queued packet and, on a zero-delay
        // link, delivers this one.
        if queued.is_some() || zero_delay {
            self.sched.at(tx_end, Event::LinkTxDone(l));
        }
        let k = link.line;
        let next = {
            let p = self.pool.get(id);
            let start = self.route_start[p.route as usize] as usize;
            let end = self.route_start[p.route as usize + 1] as usize;
            let at = start + p.hop as usize + 1;
            if at < end {
                Next(self.route_links[at])
            } else {
                Next(Next::ENDPOINT | p.flow)
            }
        };
        let entry = LineEntry {
            arrive_ns: arrive,
            id,
            next,
        };
        if zero_delay {
            debug_assert!(self.links[l as usize].in_flight.is_none());
            self.links[l as usize].in_flight = Some(entry);
            return;
        }
        let dl = &mut self.lines[k as usize];
        if dl.push(entry) && dl.event_at.is_none_or(|t| arrive < t) {
            dl.event_at = Some(arrive);
            self.sched.at(arrive, Event::LineArrive(k));
        }
    }

    fn line_arrive(&mut self, k: u32) {
        let now = self.sched.now();
        if self.lines[k as usize].event_at != Some(now) {
            return; // superseded by an earlier head
        }
        self.lines[k as usize].event_at = None;
        while let Some(&e) = self.lines[k as usize].queue.front() {
            if e.arrive_ns > now {
                break;
            }
            self.lines[k as usize].queue.pop_front();
            self.deliver(e.id, e.next);
        }
        let dl = &mut self.lines[k as usize];
        for e in dl.queue.iter().take(2) {
            self.pool.prefetch(e.id);
            if e.next.0 & Next::ENDPOINT == 0 {
                let link = &self.links[e.next.0 as usize];
                prefetch_read(link);
                prefetch_read(&link.qdisc);
            } else if let Some(f) = self.tcp.get((e.next.0 & !Next::ENDPOINT) as usize) {
                prefetch_read(&f.sender.tp);
                prefetch_read(&f.receiver);
            }
        }
        if let Some(&LineEntry { arrive_ns: t, .. }) = dl.queue.front() {
            if dl.event_at.is_none_or(|e| t < e) {
                dl.event_at = Some(t);
                self.sched.at(t, Event::LineArrive(k));
            }
        }
    }

    /// A packet reached the far end of a link: forward it or hand it to its endpoint.
    fn deliver(&mut self, id: PacketId, next: Next) {
        let p = self.pool.get_mut(id);
        p.hop += 1;
        if next.0 & Next::ENDPOINT == 0 {
            self.link_enqueue(next.0, id);
            return;
        }
        let pkt: Packet = *p;
        let sack = if pkt.n_sack > 0 {
            *self.pool.sack(id)
        } else {
            Default::default()
        };
        self.pool.free(id);
        self.counters[pkt.flow as usize].arrived += 1;
        let now = self.sched.now();
        if pkt.kind != PacketKind::Udp && pkt.conn != self.tcp[pkt.flow as usize].conn {
            return; // a late packet of a closed connection
        }
        match pkt.kind {
            PacketKind::TcpData => {
                let mut io = TcpIo {
                    now_ns: now,
                    pool: &mut self.pool,
                    out: &mut self.out_buf,
                };
                self.tcp[pkt.flow as usize].receiver.on_data(&pkt, &mut io);
                self.flush_tcp(pkt.flow);
            }
            PacketKind::TcpAck => {
                let mut io = TcpIo {
                    now_ns: now,
                    pool: &mut self.pool,
                    out: &mut self.out_buf,
                };
                let flow = &mut self.tcp[pkt.flow as usize];
                flow.sender
                    .on_ack(&pkt, &sack[..pkt.n_sack as usize], &mut io);
                let ended = flow.awaiting_end && flow.sender.is_complete();
                self.flush_tcp(pkt.flow);
                if ended {
                    self.transfer_ended(pkt.flow);
                }
            }
            PacketKind::Udp => {
                let u = pkt.flow as usize - self.tcp.len();
                self.udp[u].bytes_received += pkt.payload_bytes as u64;
            }
        }
    }

    /// Put a TCP flow's outgoing packets on their routes and schedule its timers.
    fn flush_tcp(&mut self, f: u32) {
        let mut out = std::mem::take(&mut self.out_buf);
        let marker = self.marker_of[f as usize];
        let conn = self.tcp[f as usize].conn;
        for &id in &out {
            self.counters[f as usize].sent += 1;
            self.pool.get_mut(id).conn = conn;
            if let Some(m) = marker {
                let p = self.pool.get_mut(id);
                if p.kind == PacketKind::TcpData {
                    let (mk, rng) = &mut self.markers[m as usize];
                    p.value = mk.mark(self.sched.now(), p.size_bytes, rng);
                }
            }
            let route = self.pool.get(id).route;
            let first = self.route_links[self.route_start[route as usize] as usize];
            self.link_enqueue(first, id);
        }
        out.clear();
        self.out_buf = out;
        let flow = &mut self.tcp[f as usize];
        if let Some(t) = flow.sender.rto_timer.sync() {
            self.sched.at(
                t,
                Event::TcpTimer {
                    flow: f,
                    timer: TcpTimerKind::Rto,
                },
            );
        }
        if let Some(t) = flow.sender.pacing_timer.sync() {
            self.sched.at(
                t,
                Event::TcpTimer {
                    flow: f,
                    timer: TcpTimerKind::Pacing,
                },
            );
        }
        if let Some(t) = flow.receiver.delack_timer.sync() {
            self.sched.at(
                t,
                Event::TcpTimer {
                    flow: f,
                    timer: TcpTimerKind::DelAck,
                },
            );
        }
    }

    fn tcp_timer(&mut self, f: u32, kind: TcpTimerKind) {
        let now = self.sched.now();
        let flow = &mut self.tcp[f as usize];
        let timer = match kind {
            TcpTimerKind::Rto => &mut flow.sender.rto_timer,
            TcpTimerKind::Pacing => &mut flow.sender.pacing_timer,
            TcpTimerKind::DelAck => &mut flow.receiver.delack_timer,
        };
        match timer.on_event(now) {
            TimerFire::Stale => {}
            TimerFire::Reschedule(t) => self.sched.at(
                t,
                Event::TcpTimer {
                    flow: f,
                    timer: kind,
                },
            ),
            TimerFire::Fire => {
                let mut io = TcpIo {
                    now_ns: now,
                    pool: &mut self.pool,
                    out: &mut self.out_buf,
                };
                match kind {
                    TcpTimerKind::Rto => flow.sender.on_rto(&mut io),
                    TcpTimerKind::Pacing => flow.sender.on_pacing_timer(&mut io),
                    TcpTimerKind::DelAck => flow.receiver.on_delack_timer(&mut io),
                }
                self.flush_tcp(f);
            }
        }
    }

    fn udp_send(&mut self, u: u32) {
        let now = self.sched.now();
        let src = &mut self.udp[u as usize];
        if now >= src.stop_ns {
            return;
        }
        let p = Packet {
            kind: PacketKind::Udp,
            flow: src.flow,
            route: src.route,
            size_bytes: src.packet_size,
            payload_bytes: src.packet_size,
            ecn: if src.ecn { Ecn::Ect0 } else { Ecn::NotEct },
            ts_val: now,
            ..Packet::default()
        };
        src.packets_sent += 1;
        src.bytes_sent += src.packet_size as u64;
        let gap = src.next_gap_ns();
        let flow = src.flow;
        let route = src.route;
        if now + gap < src.stop_ns {
            self.sched.at(now + gap, Event::UdpSend(u));
        }
        let id = self.pool.alloc(p);
        if let Some(m) = self.marker_of[flow as usize] {
            let (mk, rng) = &mut self.markers[m as usize];
            let size = self.pool.get(id).size_bytes;
            self.pool.get_mut(id).value = mk.mark(now, size, rng);
        }
        self.counters[flow as usize].sent += 1;
        let first = self.route_links[self.route_start[route as usize] as usize];
        self.link_enqueue(first, id);
    }

    // ----- statistics ---------------------------------------------------------------

    /// (payload bytes delivered in order to the application, wire bytes received) per
    /// flow. A UDP packet's payload is its size less the IP and UDP headers.
    fn flow_bytes(&self) -> FlowBytes {
        let mut v: FlowBytes = self
            .tcp
            .iter()
            .map(|f| (f.bytes_delivered(), f.wire_received()))
            .collect();
        v.extend(self.udp.iter().map(|u| {
            let packets = u.bytes_received / u64::from(u.packet_size);
            let payload = u.packet_size.saturating_sub(UDP_IP_HEADER_BYTES);
            (packets * u64::from(payload), u.bytes_received)
        }));
        v
    }

    /// `(protocol, group)` of flow `i`.
    fn group_key(&self, i: usize) -> (&'static str, u32) {
        match self.tcp.get(i) {
            Some(f) => ("tcp", f.group),
            None => ("udp", self.udp_groups[i - self.tcp.len()]),
        }
    }

    fn stats_tick(&mut self) {
        let now = self.sched.now();
        let t = now as f64 / NS_PER_SEC as f64;
        let iv_s = self.stats_interval_ns as f64 / NS_PER_SEC as f64;
        let mbps = |bytes: u64| bytes as f64 * 8.0 / iv_s / 1e6;
        let bytes = self.flow_bytes();
        // Per-group sums, in first-seen (flow-id) order: TCP groups, then UDP groups.
        let mut groups: Vec<((&'static str, u32), u32, u64, u64)> = Vec::new();
        for (i, (&(d, r), &(d0, r0))) in bytes.iter().zip(self.last_tick_bytes.iter()).enumerate() {
            let c = self.counters[i];
            let (drops0, marks0) = self.last_tick_signals[i];
            let s = &mut self.series;
            s.flow_t.push(t);
            s.flow_id.push(i as u32);
            s.flow_goodput.push(mbps(d - d0));
            s.flow_throughput.push(mbps(r - r0));
            s.flow_bytes.push(d);
            s.flow_drops.push(c.dropped - drops0);
            s.flow_marks.push(c.marked - marks0);
            self.last_tick_signals[i] = (c.dropped, c.marked);
            let key = self.group_key(i);
            let started = match self.tcp.get(i) {
                Some(f) => f.first_start_ns <= now,
                None => self.udp[i - self.tcp.len()].start_ns <= now,
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
        // Paper 003 §4.3: Jain's index of the bytes each bulk TCP flow has delivered
        // since the last one entered (finite transfers come and go: not counted).
        if self.convergence_flows.len() >= 2 && now > self.last_tcp_start_ns {
            let flows = &self.convergence_flows;
            let base = self
                .convergence_base
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
        self.last_tick_bytes = bytes;
        for (i, f) in self.tcp.iter().enumerate() {
            if f.trace {
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
        let link = &mut self.links[self.bottleneck as usize];
        if let Some(tr) = self.qdisc_trace.as_mut() {
            link.qdisc.state(now, &mut tr.buf);
            tr.commit(now);
        }
        let snap = link.stats.snapshot();
        let st = &mut link.stats;
        let has = st.iv_departures > 0;
        let departed = snap.bytes_departed - self.last_tick_departed;
        let s = &mut self.series;
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
        s.q_utilisation
            .push(departed as f64 * 8.0 / (link.rate_bps as f64 * iv_s));
        s.q_arrivals
            .push(snap.arrivals - self.last_tick_queue.arrivals);
        s.q_drops.push(snap.drops - self.last_tick_queue.drops);
        s.q_marks.push(snap.marks - self.last_tick_queue.marks);
        st.iv_sojourn_sum_ns = 0;
        st.iv_sojourn_max_ns = 0;
        st.iv_sojourn_min_ns = u64::MAX;
        st.iv_departures = 0;
        self.last_tick_queue = snap;
        self.last_tick_departed = snap.bytes_departed;
        if now + self.stats_interval_ns <= self.duration_ns {
            self.sched
                .at(now + self.stats_interval_ns, Event::StatsTick);
        }
    }

    /// Packets of each flow still inside the network (queued or propagating).
    pub fn packets_in_network(&self) -> Vec<u64> {
        let mut v = vec![0u64; self.counters.len()];
        for link in &self.links {
            for id in link
                .qdisc
                .held()
                .into_iter()
                .chain(link.in_flight.map(|e| e.id))
            {
                v[self.pool.get(id).flow as usize] += 1;
            }
        }
        for dl in &self.lines {
            for e in &dl.queue {
                v[self.pool.get(e.id).flow as usize] += 1;
            }
        }
        v
    }

    /// Summarise the run (`wall_s`: the wall-clock seconds it took).
    pub fn finish(&self, wall_s: f64) -> RunOutput {
        let window_s = (self.measure_end_ns - self.measure_start_ns) as f64 / NS_PER_SEC as f64;
        // Finished transfers, then those still running at the end, by start then flow.
        let mut transfers = self.transfers.clone();
        transfers.extend(
            self.tcp
                .iter()
                .enumerate()
                .filter(|(_, f)| f.awaiting_end && f.start_ns < self.duration_ns)
                .map(|(i, f)| f.transfer_row(i as u32)),
        );
        transfers.sort_by_key(|t| (t.start_ns, t.flow, t.index));
        let n_tcp = self.tcp.len();
        let mut flows = Vec::with_capacity(self.counters.len());
        for i in 0..self.counters.len() {
            let (d1, r1) = self.win_end_bytes[i];
            let (d0, r0) = self.win_start_bytes[i];
            let goodput = (d1 - d0) as f64 * 8.0 / window_s / 1e6;
            let throughput = (r1 - r0) as f64 * 8.0 / window_s / 1e6;
            let c = self.counters[i];
            flows.push(if i < n_tcp {
                let f = &self.tcp[i];
                FlowSummary {
                    flow_id: i as u32,
                    group: f.group,
                    protocol: "tcp".into(),
                    algorithm: self.cc_names[i].into(),
                    base_rtt_ms: f.base_rtt_ns as f64 / 1e6,
                    start_s: f.first_start_ns as f64 / NS_PER_SEC as f64,
                    size_bytes: transfers
                        .iter()
                        .find(|t| t.flow == i as u32 && t.index == 0)
                        .map(|t| t.size_bytes),
                    goodput_mbps: goodput,
                    throughput_mbps: throughput,
                    bytes_delivered: f.bytes_delivered(),
                    packets_sent: f.packets_sent(),
                    retransmits: f.retransmits(),
                    timeouts: f.timeouts(),
                    drops: c.dropped,
                    marks: c.marked,
                    fct_s: transfers
                        .iter()
                        .find(|t| t.flow == i as u32 && t.index == 0)
                        .and_then(Transfer::fct_s),
                }
            } else {
                let u = &self.udp[i - n_tcp];
                FlowSummary {
                    flow_id: i as u32,
                    group: self.udp_groups[i - n_tcp],
                    protocol: "udp".into(),
                    algorithm: match u.pattern {
                        crate::scenario::UdpPattern::Cbr => "cbr".into(),
                        crate::scenario::UdpPattern::Poisson => "poisson".into(),
                    },
                    base_rtt_ms: self.udp_base_rtt_ns[i - n_tcp] as f64 / 1e6,
                    start_s: u.start_ns as f64 / NS_PER_SEC as f64,
                    size_bytes: None,
                    goodput_mbps: goodput,
                    throughput_mbps: throughput,
                    bytes_delivered: u.bytes_received,
                    packets_sent: u.packets_sent,
                    retransmits: 0,
                    timeouts: 0,
                    drops: c.dropped,
                    marks: c.marked,
                    fct_s: None,
                }
            });
        }
        let bl = &self.links[self.bottleneck as usize];
        let q0 = self.win_start_queue;
        let q1 = self.win_end_queue;
        let arrivals = q1.arrivals - q0.arrivals;
        let drops = q1.drops - q0.drops;
        let marks = q1.marks - q0.marks;
        let utilisation =
            (q1.bytes_departed - q0.bytes_departed) as f64 * 8.0 / (bl.rate_bps as f64 * window_s);
        let hist = bl
            .stats
            .hist
            .as_ref()
            .expect("bottleneck keeps a histogram");
        let pct = |q: f64| {
            if hist.is_empty() {
                f64::NAN
            } else {
                hist.value_at_quantile(q) as f64 / 1e6
            }
        };
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let bottleneck = QueueSummary {
            name: bl.name.clone(),
            discipline: bl.qdisc.kind().into(),
            arrivals,
            departures: q1.departures - q0.departures,
            drops,
            marks,
            drop_probability: ratio(drops, arrivals),
            mark_probability: ratio(marks, arrivals),
            sojourn_mean_ms: if bl.stats.win_departures == 0 {
                f64::NAN
            } else {
                bl.stats.win_sojourn_sum_ns as f64 / bl.stats.win_departures as f64 / 1e6
            },
            sojourn_p50_ms: pct(0.5),
            sojourn_p90_ms: pct(0.9),
            sojourn_p99_ms: pct(0.99),
            utilisation,
            bytes_departed: q1.bytes_departed - q0.bytes_departed,
        };
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
            .map(|(&t, _)| t - self.last_tcp_start_ns as f64 / NS_PER_SEC as f64);
        let in_window: Vec<&Transfer> = transfers
            .iter()
            .filter(|t| (self.measure_start_ns..self.measure_end_ns).contains(&t.start_ns))
            .collect();
        let fct = (!transfers.is_empty()).then(|| fct_summary(&in_window));
        let summary = Summary {
            ccsim_version: crate::VERSION.into(),
            seed: self.seed,
            duration_s: self.duration_ns as f64 / NS_PER_SEC as f64,
            measure_start_s: self.measure_start_ns as f64 / NS_PER_SEC as f64,
            measure_end_s: self.measure_end_ns as f64 / NS_PER_SEC as f64,
            utilisation,
            jain_index: jain,
            events: self.sched.executed(),
            bottleneck_packets: bl.stats.departures,
            wall_s,
            flows,
            groups,
            bottleneck,
            convergence_time_s,
            fct,
        };
        let mut tables = self.tables(&summary, hist);
        tables.push(transfers_table(&transfers));
        tables.extend(self.trace_tables());
        RunOutput { summary, tables }
    }

    fn tables(&self, summary: &Summary, hist: &hdrhistogram::Histogram<u64>) -> Vec<Table> {
        let s = &self.series;
        let flow_series = Table::new("flow_series")
            .with("time_s", Column::F64(s.flow_t.clone()))
            .with("flow_id", Column::U32(s.flow_id.clone()))
            .with("goodput_mbps", Column::F64(s.flow_goodput.clone()))
            .with("throughput_mbps", Column::F64(s.flow_throughput.clone()))
            .with("bytes_delivered", Column::U64(s.flow_bytes.clone()))
            .with("drops", Column::U64(s.flow_drops.clone()))
            .with("marks", Column::U64(s.flow_marks.clone()));
        let group_series = Table::new("group_series")
            .with("time_s", Column::F64(s.group_t.clone()))
            .with(
                "protocol",
                Column::Str(s.group_protocol.iter().map(|p| (*p).to_owned()).collect()),
            )
            .with("group", Column::U32(s.group_id.clone()))
            .with("flows_started", Column::U32(s.group_active.clone()))
            .with("goodput_mbps", Column::F64(s.group_goodput.clone()))
            .with("throughput_mbps", Column::F64(s.group_throughput.clone()));
        let cc_trace = Table::new("cc_trace")
            .with("time_s", Column::F64(s.cc_t.clone()))
            .with("flow_id", Column::U32(s.cc_id.clone()))
            .with("cwnd_pkts", Column::F64(s.cc_cwnd.clone()))
            .with("ssthresh_pkts", Column::F64(s.cc_ssthresh.clone()))
            .with("srtt_ms", Column::F64(s.cc_srtt.clone()))
            .with("inflight_pkts", Column::F64(s.cc_inflight.clone()));
        let n = s.q_t.len();
        let queue_series = Table::new("queue_series")
            .with("time_s", Column::F64(s.q_t.clone()))
            .with("queue", Column::Str(vec!["bottleneck".to_string(); n]))
            .with("qlen_pkts", Column::U64(s.q_pkts.clone()))
            .with("qlen_bytes", Column::U64(s.q_bytes.clone()))
            .with("sojourn_mean_ms", Column::F64(s.q_sojourn_mean.clone()))
            .with("sojourn_max_ms", Column::F64(s.q_sojourn_max.clone()))
            .with("sojourn_min_ms", Column::F64(s.q_sojourn_min.clone()))
            .with("departed_bytes", Column::U64(s.q_departed_bytes.clone()))
            .with("utilisation", Column::F64(s.q_utilisation.clone()))
            .with("arrivals", Column::U64(s.q_arrivals.clone()))
            .with("drops", Column::U64(s.q_drops.clone()))
            .with("marks", Column::U64(s.q_marks.clone()));
        let (mut cdf_x, mut cdf_y) = (Vec::new(), Vec::new());
        let total = hist.len();
        if total > 0 {
            let mut cum = 0u64;
            for v in hist.iter_recorded() {
                cum += v.count_at_value();
                cdf_x.push(hist.highest_equivalent(v.value_iterated_to()) as f64 / 1e6);
                cdf_y.push(cum as f64 / total as f64);
            }
        }
        let sojourn_cdf = Table::new("sojourn_cdf")
            .with(
                "queue",
                Column::Str(vec!["bottleneck".to_string(); cdf_x.len()]),
            )
            .with("sojourn_ms", Column::F64(cdf_x))
            .with("cdf", Column::F64(cdf_y));
        let f = &summary.flows;
        let f64s = |g: fn(&FlowSummary) -> f64| Column::F64(f.iter().map(g).collect());
        let u64s = |g: fn(&FlowSummary) -> u64| Column::U64(f.iter().map(g).collect());
        let flows = Table::new("flows")
            .with(
                "flow_id",
                Column::U32(f.iter().map(|x| x.flow_id).collect()),
            )
            .with("group", Column::U32(f.iter().map(|x| x.group).collect()))
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
            .with("fct_s", f64s(|x| x.fct_s.unwrap_or(f64::NAN)));
        // Conservation accounting: sent = arrived + dropped + in_network, per flow and queue.
        let in_net = self.packets_in_network();
        let c = &self.counters;
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
            .with("in_network", Column::U64(in_net));
        let l = &self.links;
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
            .with(
                "queued",
                Column::U64(l.iter().map(|x| x.qdisc.len_packets() as u64).collect()),
            );
        let cc_vars = Table::new("cc_vars")
            .with("time_s", Column::F64(s.var_t.clone()))
            .with("flow_id", Column::U32(s.var_id.clone()))
            .with("name", Column::Str(s.var_name.clone()))
            .with("value", Column::F64(s.var_value.clone()));
        let (mut rt, mut rid, mut rcause, mut rbefore, mut rafter) =
            (vec![], vec![], vec![], vec![], vec![]);
        for (i, f) in self.tcp.iter().enumerate() {
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
            }
        }
        let cc_reductions = Table::new("cc_reductions")
            .with("time_s", Column::F64(rt))
            .with("flow_id", Column::U32(rid))
            .with("cause", Column::Str(rcause))
            .with("cwnd_before_pkts", Column::F64(rbefore))
            .with("ssthresh_after_pkts", Column::F64(rafter));
        vec![
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
        ]
    }
}

impl World {
    /// The opt-in traces' tables (`qdisc_state`, `rtt_samples`, `queue_events`), each
    /// present (possibly empty) whatever the options, so every run has the same tables.
    fn trace_tables(&self) -> Vec<Table> {
        let mut rtts = RttSamples::default();
        for (i, f) in self.tcp.iter().enumerate() {
            rtts.extend(i as u32, &f.past_rtts);
            if let Some(log) = &f.sender.rtt_log {
                rtts.extend(i as u32, log);
            }
        }
        vec![
            self.qdisc_trace.as_ref().map_or_else(
                || QdiscStateTrace::default().table(),
                QdiscStateTrace::table,
            ),
            rtts.table(),
            self.queue_events
                .as_ref()
                .map_or_else(|| QueueEvents::default().table(), QueueEvents::table),
        ]
    }
}

/// Names of every table a run produces, in the order `RunOutput::tables` lists them.
pub const TABLE_NAMES: [&str; 14] = [
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
pub use droptail::Limit as DropTailLimit;
