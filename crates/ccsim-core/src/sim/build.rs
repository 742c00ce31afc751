//! From a scenario to a [`World`]: the dumbbell's links and queues, the hosts on their
//! access links, the TCP and UDP endpoints with their drawn values, the PPV markers, and
//! the scheduled changes and first events.

use super::world::*;
use crate::cc::{self, CongestionControl, Knob, KnobUnit};
use crate::control::deadline::{DeadlineController, DeadlineParams};
use crate::engine::rng::{stream, SimRng, StreamKind};
use crate::engine::{serialisation_ns, Event, Scheduler};
use crate::flow::{ConnTotals, FlowCounters, FlowDeadline, TcpFlow};
use crate::net::link::{DelayLine, Link, NO_PCAP};
use crate::net::packet::{PacketPool, TCP_IP_HEADER_BYTES};
use crate::net::topology::Topology;
use crate::ppv::marker::{Marker, MarkerParams};
use crate::ppv::tvf::Tvf;
use crate::qdisc::{self, shaper, LinkInfo, QueueDisc};
use crate::scenario::{
    AlgoSpec, Direction, ParamValue, PpvScope, Scenario, ScenarioError, TvfSpec,
};
use crate::stats::QueueStats;
use crate::tcp::receiver::{TcpReceiver, DELACK_NS};
use crate::tcp::sender::TcpSender;
use crate::tcp::TcpConfig;
use crate::trace::Recorders;
use crate::udp::UdpSource;

/// Default access-link rate as a multiple of the bottleneck rate.
const ACCESS_RATE_FACTOR: u64 = 10;
/// The reverse (ACK) path's DropTail limit: ample, so it never drops.
const REVERSE_QUEUE_PACKETS: u64 = 100_000;

/// The DA-LBE controller a group's `deadline` asks for, checked against the group's
/// congestion control now so that no decision can fail while the flow runs: the knob
/// exists, both ends of its range are accepted (values between them are, for every
/// algorithm's range), and the escalation algorithm keeps the flow's ECN mode.
fn group_deadline(
    g: &crate::scenario::TcpFlowGroup,
    gi: usize,
) -> Result<Option<FlowDeadline>, ScenarioError> {
    let Some(spec) = &g.deadline else {
        return Ok(None);
    };
    let path = format!("flows[{gi}].deadline_control");
    let key = |k: &str| format!("{path}.{k}");
    if !spec.retune {
        // A baseline: the deadline's outcome is recorded, nothing is turned.
        if spec.escalate.is_some() || spec.knob.is_some() {
            return Err(ScenarioError::new(
                key(if spec.knob.is_some() {
                    "knob"
                } else {
                    "escalate"
                }),
                "has no effect with retune = false",
            ));
        }
        return Ok(Some(FlowDeadline {
            ctl: DeadlineController::new(DeadlineParams {
                within_ns: spec.within.ns,
                knob: Knob {
                    name: String::new(),
                    low: 1.0,
                    high: 2.0,
                    unit: KnobUnit::Number,
                },
                interval_ns: spec.interval.ns,
                gain: spec.gain,
                margin: spec.margin,
                escalate: false,
                retune: false,
            }),
            escalate_to: None,
            original: cc::build(&g.cc, &format!("flows[{gi}].cc"))?,
        }));
    }
    let probe = cc::build(&g.cc, &format!("flows[{gi}].cc"))?;
    let own = probe.lbe_knob();
    let name = match (&spec.knob, &own) {
        (Some(n), _) => n.clone(),
        (None, Some(k)) => k.name.clone(),
        (None, None) => {
            return Err(ScenarioError::new(
                key("knob"),
                format!(
                    "{} has no built-in LBE knob: name the parameter to turn (knob = \"...\", \
                     low = ..., high = ...)",
                    probe.name()
                ),
            ))
        }
    };
    let own = own.filter(|k| k.name == name);
    let end = |v: &Option<ParamValue>,
               k: &str,
               default: Option<(f64, KnobUnit)>|
     -> Result<(f64, KnobUnit), ScenarioError> {
        match v {
            None => default.ok_or_else(|| ScenarioError::new(key(k), "missing")),
            Some(v) => Knob::parse_value(v)
                .filter(|(x, _)| *x > 0.0 && x.is_finite())
                .ok_or_else(|| {
                    ScenarioError::new(
                        key(k),
                        format!(
                            "expected a positive number or duration like 0.1 or \"5ms\", got {}",
                            cc::shown(v)
                        ),
                    )
                }),
        }
    };
    let (low, unit_low) = end(&spec.low, "low", own.as_ref().map(|k| (k.low, k.unit)))?;
    let (high, unit_high) = end(&spec.high, "high", own.as_ref().map(|k| (k.high, k.unit)))?;
    if unit_low != unit_high {
        return Err(ScenarioError::new(
            key("high"),
            "low and high must both be numbers or both durations",
        ));
    }
    if low >= high {
        return Err(ScenarioError::new(
            key("high"),
            "must be above low (low is the most deferential setting, high the most aggressive)",
        ));
    }
    let knob = Knob {
        name,
        low,
        high,
        unit: unit_low,
    };
    for (k, v) in [("low", low), ("high", high)] {
        probe
            .clone()
            .set_param("", &knob.name, &knob.param(v))
            .map_err(|e| {
                ScenarioError::new(
                    key(k),
                    format!("{}'s {} refuses it: {}", probe.name(), knob.name, e.message),
                )
            })?;
    }
    let escalate_to = match &spec.escalate {
        None => None,
        Some(a) => {
            let c = cc::build(a, &key("escalate"))?;
            if g.ecn && c.needs_accurate_ecn() != probe.needs_accurate_ecn() {
                return Err(ScenarioError::new(
                    key("escalate"),
                    format!(
                        "{} and {} answer ECN differently (per-packet echo or not); escalate \
                         to an algorithm with the same ECN mode",
                        probe.name(),
                        c.name()
                    ),
                ));
            }
            Some(c)
        }
    };
    Ok(Some(FlowDeadline {
        ctl: DeadlineController::new(DeadlineParams {
            within_ns: spec.within.ns,
            knob,
            interval_ns: spec.interval.ns,
            gain: spec.gain,
            margin: spec.margin,
            escalate: escalate_to.is_some(),
            retune: true,
        }),
        escalate_to,
        original: probe,
    }))
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
        queue: b.reverse_queue.clone().unwrap_or_else(|| ample.clone()),
        queue_path: "bottleneck.reverse_queue".into(),
        stats_hist: false,
    });

    // Hosts: one sender and one receiver per flow, each on its own access link. A
    // reverse-direction flow's sender sits on the right, its receiver on the left.
    // (sender node, receiver node, reverse)
    let mut endpoints: Vec<(u32, u32, bool)> = Vec::new();
    let mut add_hosts = |topo: &mut Topology,
                         plans: &mut Vec<LinkPlan>,
                         label: String,
                         rtt_ns: u64,
                         access_bps: u64,
                         reverse: bool,
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
        let (near, far) = if reverse {
            (right, left)
        } else {
            (left, right)
        };
        for (from, to, delay, nm) in [
            (s, near, access_delay, "access-up"),
            (far, r, 0, "access-down"),
            (r, far, 0, "access-ack-up"),
            (near, s, access_delay, "access-ack-down"),
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
        endpoints.push((s, r, reverse));
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
                g.direction == Direction::Reverse,
                format!("flows[{gi}].rtt"),
            )?;
        }
    }
    for (gi, g) in sc.udp.iter().enumerate() {
        // A host cannot send faster than its own link: a source asking for more would only
        // make the simulator create (and drop) packets the wire could never carry.
        let access_bps = g.access_rate.map_or(default_access, |r| r.bps);
        if let Some((k, d)) = g
            .drawn
            .iter()
            .enumerate()
            .find(|(_, d)| d.rate.bps > access_bps)
        {
            return Err(ScenarioError::new(
                format!("udp[{gi}].rate"),
                format!(
                    "{} Mbit/s{} exceeds the source's access link ({} Mbit/s; see access_rate)",
                    d.rate.bps as f64 / 1e6,
                    if g.count > 1 {
                        format!(" (source {k})")
                    } else {
                        String::new()
                    },
                    access_bps as f64 / 1e6
                ),
            ));
        }
        for k in 0..g.count {
            add_hosts(
                &mut topo,
                &mut plans,
                format!("udp{}.{}", gi, k),
                g.drawn[k as usize].rtt.ns,
                access_bps,
                g.direction == Direction::Reverse,
                format!("udp[{gi}].rtt"),
            )?;
        }
    }

    // Links with their queue disciplines; one delay line per distinct delay.
    let mut links = Vec::with_capacity(plans.len());
    let mut lines: Vec<DelayLine> = Vec::new();
    let mut line_of: std::collections::HashMap<u64, u32> = std::collections::HashMap::new();
    for (i, p) in plans.into_iter().enumerate() {
        let info = LinkInfo {
            rate_bps: p.rate_bps,
            bdp_bytes: p.rate_bps as f64 * bdp_rtt_ns as f64 / 8e9,
            mtu_bytes,
        };
        let mut qd = qdisc::build(&p.queue, &p.queue_path, info)?;
        if i as u32 == bottleneck + 1 {
            if let Some(sh) = &sc.bottleneck.reverse_shaper {
                qd = qdisc::build_shaped(
                    qd,
                    sh.sustained.bps,
                    sh.peak.map(|r| r.bps),
                    sh.burst.bytes,
                )
                .map_err(|m| ScenarioError::new("bottleneck.reverse_shaper", m))?;
            }
        }
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
        // One delay line per distinct delay, found through a map (with random RTTs there
        // may be as many delays as flows).
        let line = *line_of.entry(p.delay_ns).or_insert_with(|| {
            lines.push(DelayLine {
                delay_ns: p.delay_ns,
                ..DelayLine::default()
            });
            lines.len() as u32 - 1
        });
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
            pcap_iface: NO_PCAP,
        });
    }
    // `[trace] pcap`: the named links, one capture interface each, in the order given.
    for (k, name) in sc.trace.pcap.iter().enumerate() {
        let Some(l) = links.iter_mut().find(|l| l.name == *name) else {
            let some: Vec<&str> = links.iter().take(6).map(|l| l.name.as_str()).collect();
            return Err(ScenarioError::new(
                format!("trace.pcap[{k}]"),
                format!(
                    "no link named {name:?} (links: {}, ...: \"bottleneck\", \
                     \"bottleneck-reverse\", or a host's \"tcp<group>.<k>-access-up\", \
                     \"-access-down\", \"-access-ack-up\", \"-access-ack-down\")",
                    some.join(", ")
                ),
            ));
        };
        if l.pcap_iface != NO_PCAP {
            return Err(ScenarioError::new(
                format!("trace.pcap[{k}]"),
                format!("{name:?} is listed twice"),
            ));
        }
        l.pcap_iface = k as u32;
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
    // Every host's four access links were added in order after the two bottleneck links
    // (up, down, ack-up, ack-down), so its routes are known without a search, which keeps
    // the build linear in the number of flows (a graph search per flow was quadratic).
    let mut flow_path_rtts = Vec::with_capacity(endpoints.len());
    for (i, &(s, r, reverse)) in endpoints.iter().enumerate() {
        let base = 2 + 4 * i as u32;
        let (there, back) = if reverse {
            (bottleneck + 1, bottleneck)
        } else {
            (bottleneck, bottleneck + 1)
        };
        let fwd = vec![base, there, base + 1];
        let rev = vec![base + 2, back, base + 3];
        if i < 2 {
            debug_assert_eq!(topo.route(s, r).as_deref(), Some(&fwd[..]));
            debug_assert_eq!(topo.route(r, s).as_deref(), Some(&rev[..]));
        }
        flow_path_rtts.push(path_rtt(&fwd, &rev, &links));
        routes.push(fwd);
        routes.push(rev);
    }

    // Endpoints.
    let mut tcp = Vec::with_capacity(n_tcp);
    let mut cc_names = Vec::with_capacity(n_tcp);
    let mut fid = 0u32;
    for (gi, g) in sc.flows.iter().enumerate() {
        let deadline = group_deadline(g, gi)?.map(Box::new);
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
                recovery_exit: g.recovery_exit,
                ce_quickack: g.ce_quickack,
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
                deadline: deadline.clone(),
            });
            fid += 1;
        }
    }
    let mut udp = Vec::with_capacity(n_udp);
    for g in &sc.udp {
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
    let rec = Recorders::new(sc, bottleneck, cc_names);
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
        counters: vec![FlowCounters::default(); n_flows],
        out_buf: Vec::with_capacity(64),
        drop_buf: Vec::with_capacity(8),
        mark_buf: Vec::with_capacity(8),
        bottleneck,
        duration_ns: sc.duration.ns,
        in_window: false,
        seed: sc.seed,
        changes: Vec::new(),
        markers,
        marker_of,
        rec,
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
    world.sched.at(sc.measure_start.ns, Event::MeasureStart);
    world.sched.at(sc.measure_end.ns, Event::MeasureEnd);
    world.sched.at(sc.stats_interval.ns, Event::StatsTick);
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
