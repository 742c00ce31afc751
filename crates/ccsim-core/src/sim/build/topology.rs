//! Stage 1, the network plan: a [`Topology`] of nodes and links, what each link carries
//! (rate, delay, queue), one host pair per flow, and the flows' routes searched on the
//! graph. [`dumbbell`] fills it for today's scenarios; a parking lot or a leaf-spine
//! fabric would fill the same [`NetworkPlan`].

use crate::net::topology::{NodeId, Topology};
use crate::scenario::{AlgoSpec, Direction, ParamValue, Scenario, ScenarioError, ShaperSpec};

/// Default access-link rate as a multiple of the bottleneck rate.
const ACCESS_RATE_FACTOR: u64 = 10;
/// The reverse (ACK) path's DropTail limit: ample, so it never drops.
const REVERSE_QUEUE_PACKETS: u64 = 100_000;

/// Which scenario section shapes a link's queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LinkRole {
    /// `[bottleneck]`: its `shaper` applies.
    Bottleneck,
    /// The bottleneck's reverse direction: `reverse_shaper` applies.
    BottleneckReverse,
    /// A host's access link.
    Access,
    /// A `[network]` link: its own `shaper` applies.
    Network,
}

/// A link as planned: what the links stage builds.
#[derive(Debug, Clone)]
pub(super) struct LinkPlan {
    pub(super) name: String,
    pub(super) rate_bps: u64,
    pub(super) delay_ns: u64,
    pub(super) queue: AlgoSpec,
    /// Where the queue's parameters sit in the scenario, for error messages.
    pub(super) queue_path: String,
    /// Keep a sojourn histogram over the measurement window.
    pub(super) stats_hist: bool,
    pub(super) role: LinkRole,
    /// A `[network]` link's shaper (the dumbbell's come from `[bottleneck]`).
    pub(super) shaper: Option<ShaperSpec>,
    /// Random loss on the wire after the queue.
    pub(super) loss: Option<crate::scenario::LossSpec>,
    /// Delay jitter on the wire.
    pub(super) jitter: Option<crate::scenario::JitterSpec>,
    /// A Mahimahi trace deciding when packets leave (`bottleneck.trace`).
    pub(super) trace: Option<std::sync::Arc<crate::net::link_model::mahimahi::MahimahiTrace>>,
    /// When a traced link takes a packet from its queue.
    pub(super) trace_dequeue: crate::scenario::link_model::TraceDequeue,
    /// The link's rate steps (`bottleneck.rate_changes`, a `[network]` link's own).
    pub(super) rate_changes: Vec<crate::scenario::RateChange>,
}

/// The network: nodes and links (`topo.links[i]` is planned by `links[i]`), one
/// (sender, receiver) host pair per flow in flow order, and the link whose queue the
/// summary reports.
#[derive(Debug, Default)]
pub(super) struct NetworkPlan {
    pub(super) topo: Topology,
    pub(super) links: Vec<LinkPlan>,
    pub(super) hosts: Vec<(NodeId, NodeId)>,
    pub(super) bottleneck: u32,
    /// A `[network]`'s routes, as [`flow_routes`] gives them (empty: search them).
    pub(super) routes: Vec<Vec<u32>>,
    /// The links reported one by one in the summary (a `[network]`'s own links).
    pub(super) reported: Vec<u32>,
    /// Each flow's route through a `[network]`, as node names.
    pub(super) flow_paths: Vec<Vec<String>>,
}

impl NetworkPlan {
    pub(super) fn add_link(&mut self, from: NodeId, to: NodeId, plan: LinkPlan) -> u32 {
        self.links.push(plan);
        self.topo.add_link(from, to)
    }
}

/// A DropTail queue that never drops: the reverse path's and the access links'.
pub(super) fn ample_queue() -> AlgoSpec {
    AlgoSpec {
        kind: "droptail".into(),
        params: [(
            "limit".to_string(),
            ParamValue::Str(format!("{REVERSE_QUEUE_PACKETS}p")),
        )]
        .into_iter()
        .collect(),
    }
}

/// The dumbbell: two routers joined by the bottleneck (both directions), and for every
/// flow a sender and a receiver on their own access links. A reverse-direction flow's
/// sender sits on the right, its receiver on the left.
pub(super) fn dumbbell(sc: &Scenario) -> Result<NetworkPlan, ScenarioError> {
    let b = &sc.bottleneck;
    let rate = b.rate.bps;
    let mut plan = NetworkPlan::default();
    let left = plan.topo.add_node("left-router");
    let right = plan.topo.add_node("right-router");
    let link = |name: &str, rate_bps, queue: AlgoSpec, path: &str, role| LinkPlan {
        name: name.into(),
        rate_bps,
        delay_ns: b.delay.ns,
        queue,
        queue_path: path.into(),
        stats_hist: role == LinkRole::Bottleneck,
        role,
        shaper: None,
        loss: None,
        jitter: None,
        trace: None,
        trace_dequeue: b.trace_dequeue,
        rate_changes: Vec::new(),
    };
    let mut bottleneck = link(
        "bottleneck",
        rate,
        b.queue.clone(),
        "bottleneck.queue",
        LinkRole::Bottleneck,
    );
    bottleneck.loss = b.loss;
    bottleneck.jitter = b.jitter.clone();
    bottleneck.trace = b.trace.clone();
    bottleneck.rate_changes = b.rate_changes.clone();
    plan.bottleneck = plan.add_link(left, right, bottleneck);
    let mut reverse = link(
        "bottleneck-reverse",
        b.reverse_rate.map_or(rate, |r| r.bps),
        b.reverse_queue.clone().unwrap_or_else(ample_queue),
        "bottleneck.reverse_queue",
        LinkRole::BottleneckReverse,
    );
    reverse.loss = b.reverse_loss;
    reverse.jitter = b.reverse_jitter.clone();
    reverse.trace = b.reverse_trace.clone();
    plan.add_link(right, left, reverse);
    let default_access = b
        .access_rate
        .map_or(rate.saturating_mul(ACCESS_RATE_FACTOR), |r| r.bps);
    let mut hosts = Hosts {
        plan,
        routers: (left, right),
        one_way_ns: b.delay.ns,
    };
    for (gi, g) in sc.flows.iter().enumerate() {
        let access_bps = g.access_rate.map_or(default_access, |r| r.bps);
        let reverse = g.direction == Direction::Reverse;
        for (k, d) in g.drawn.iter().enumerate() {
            let path = || format!("flows[{gi}].rtt");
            hosts.add(format!("tcp{gi}.{k}"), d.rtt.ns, access_bps, reverse, path)?;
        }
    }
    for (gi, g) in sc.udp.iter().enumerate() {
        let access_bps = g.access_rate.map_or(default_access, |r| r.bps);
        check_udp_rate(g, gi, access_bps)?;
        let reverse = g.direction == Direction::Reverse;
        for (k, d) in g.drawn.iter().enumerate() {
            let path = || format!("udp[{gi}].rtt");
            hosts.add(format!("udp{gi}.{k}"), d.rtt.ns, access_bps, reverse, path)?;
        }
    }
    Ok(hosts.plan)
}

/// A host cannot send faster than its own link: a source asking for more would only
/// make the simulator create (and drop) packets the wire could never carry.
pub(super) fn check_udp_rate(
    g: &crate::scenario::UdpGroup,
    gi: usize,
    access_bps: u64,
) -> Result<(), ScenarioError> {
    let Some((k, d)) = g
        .drawn
        .iter()
        .enumerate()
        .find(|(_, d)| d.rate.bps > access_bps)
    else {
        return Ok(());
    };
    Err(ScenarioError::new(
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
    ))
}

/// The dumbbell's hosts being added: one sender and one receiver per flow, each on its
/// own access link, the sender's carrying the delay the base RTT asks beyond the
/// bottleneck's.
struct Hosts {
    plan: NetworkPlan,
    /// (left, right) routers.
    routers: (NodeId, NodeId),
    /// The bottleneck's one-way delay.
    one_way_ns: u64,
}

impl Hosts {
    fn add(
        &mut self,
        label: String,
        rtt_ns: u64,
        access_bps: u64,
        reverse: bool,
        path: impl Fn() -> String,
    ) -> Result<(), ScenarioError> {
        let one_way = self.one_way_ns;
        let access_delay = (rtt_ns / 2).checked_sub(one_way).ok_or_else(|| {
            ScenarioError::new(
                path(),
                format!(
                    "the base RTT must be at least twice bottleneck.delay ({} ms), got {} ms",
                    2.0 * one_way as f64 / 1e6,
                    rtt_ns as f64 / 1e6
                ),
            )
        })?;
        let plan = &mut self.plan;
        let s = plan.topo.add_node(format!("{label}-sender"));
        let r = plan.topo.add_node(format!("{label}-receiver"));
        let (left, right) = self.routers;
        let (near, far) = if reverse {
            (right, left)
        } else {
            (left, right)
        };
        for (from, to, delay_ns, nm) in [
            (s, near, access_delay, "access-up"),
            (far, r, 0, "access-down"),
            (r, far, 0, "access-ack-up"),
            (near, s, access_delay, "access-ack-down"),
        ] {
            let link = LinkPlan {
                name: format!("{label}-{nm}"),
                rate_bps: access_bps,
                delay_ns,
                queue: ample_queue(),
                queue_path: format!("{label}.access"),
                stats_hist: false,
                role: LinkRole::Access,
                shaper: None,
                loss: None,
                jitter: None,
                trace: None,
                trace_dequeue: Default::default(),
                rate_changes: Vec::new(),
            };
            plan.add_link(from, to, link);
        }
        plan.hosts.push((s, r));
        Ok(())
    }
}

/// Every flow's routes on the plan's graph: flow `f`'s forward route (sender to
/// receiver) is route `2f`, its reverse (ACK) route `2f + 1`.
pub(super) fn flow_routes(plan: &NetworkPlan) -> Result<Vec<Vec<u32>>, ScenarioError> {
    if !plan.routes.is_empty() {
        return Ok(plan.routes.clone());
    }
    let pairs: Vec<(NodeId, NodeId)> = plan
        .hosts
        .iter()
        .flat_map(|&(s, r)| [(s, r), (r, s)])
        .collect();
    plan.topo.routes(&pairs).ok_or_else(|| {
        ScenarioError::new(
            "flows",
            "a flow's receiver cannot be reached from its sender",
        )
    })
}
