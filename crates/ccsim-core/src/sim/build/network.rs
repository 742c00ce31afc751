//! Stage 1 for a `[network]`: its nodes and links (a generator's expanded here), then
//! for every flow a sender and a receiver on access links of their own to its `from`
//! and `to` nodes, and its routes: the explicit path or a fewest-hop route there, the
//! reverse for its ACKs. See `scenario::network` for the schema.

use std::collections::HashMap;

use super::topology::{ample_queue, check_udp_rate, LinkPlan, LinkRole, NetworkPlan};
use crate::engine::rng::{stream, StreamKind};
use crate::net::topology::{NodeId, Topology};
use crate::scenario::{
    Endpoints, HopSpec, LeafSpineSpec, LinkSpec, Network, Scenario, ScenarioError,
};

/// Default access-link rate as a multiple of the network's fastest link.
const ACCESS_RATE_FACTOR: u64 = 10;

/// The nodes declared (if any) and the links, a generator's expanded.
fn expand(net: &Network) -> (Option<Vec<String>>, Vec<LinkSpec>) {
    match net {
        Network::Graph { nodes, links, .. } => (nodes.clone(), links.clone()),
        Network::ParkingLot { hops } => {
            let nodes = (0..=hops.len()).map(|i| format!("r{i}")).collect();
            let mut links = Vec::with_capacity(2 * hops.len());
            for (i, h) in hops.iter().enumerate() {
                let hop = LinkSpec {
                    name: format!("hop{}", i + 1),
                    from: format!("r{i}"),
                    to: format!("r{}", i + 1),
                    rate: h.rate,
                    delay: h.delay,
                    queue: h.queue.clone(),
                    shaper: h.shaper,
                    both_ways: false,
                    loss: h.loss,
                    jitter: h.jitter.clone(),
                    rate_changes: h.rate_changes.clone(),
                    trace: h.trace.clone(),
                    reverse_trace: None,
                    trace_dequeue: h.trace_dequeue,
                    key_path: format!("network.hops[{i}]"),
                };
                // The ACKs' direction: an ample DropTail, as the dumbbell's reverse, with
                // no link model (the hop's models are its data direction's, as the
                // dumbbell's `bottleneck.loss` is the forward link's).
                let reverse = LinkSpec {
                    name: format!("hop{}-reverse", i + 1),
                    from: hop.to.clone(),
                    to: hop.from.clone(),
                    queue: ample_queue(),
                    shaper: None,
                    loss: None,
                    jitter: None,
                    rate_changes: Vec::new(),
                    trace: None,
                    ..hop.clone()
                };
                links.extend([hop, reverse]);
            }
            (Some(nodes), links)
        }
        Network::LeafSpine(f) => leaf_spine(f),
    }
}

/// A leaf-spine fabric's nodes and links: every host joined to its leaf, every leaf to
/// every spine, each both ways with the same rate, delay and queue (one discipline per
/// switch port, as the fabric's switches queue at every egress port; the hosts' NIC
/// queues are theirs too: `host<k>-leaf<i>` is the host's uplink).
fn leaf_spine(f: &LeafSpineSpec) -> (Option<Vec<String>>, Vec<LinkSpec>) {
    let hosts = f.leaves * f.hosts_per_leaf;
    let mut nodes: Vec<String> = (0..hosts).map(|k| format!("host{k}")).collect();
    nodes.extend((0..f.leaves).map(|i| format!("leaf{i}")));
    nodes.extend((0..f.spines).map(|j| format!("spine{j}")));
    let fabric_links = 2 * f.leaves as usize * f.spines as usize;
    let mut links = Vec::with_capacity(2 * hosts as usize + fabric_links);
    let link = |from: String, to: String, hop: &HopSpec, key: &str| LinkSpec {
        name: format!("{from}-{to}"),
        from,
        to,
        rate: hop.rate,
        delay: hop.delay,
        queue: hop.queue.clone(),
        shaper: hop.shaper,
        both_ways: false,
        loss: hop.loss,
        jitter: hop.jitter.clone(),
        rate_changes: hop.rate_changes.clone(),
        trace: hop.trace.clone(),
        reverse_trace: None,
        trace_dequeue: hop.trace_dequeue,
        key_path: format!("network.{key}"),
    };
    for k in 0..hosts {
        let (host, leaf) = (format!("host{k}"), format!("leaf{}", k / f.hosts_per_leaf));
        links.push(link(host.clone(), leaf.clone(), &f.host_link, "host_link"));
        links.push(link(leaf, host, &f.host_link, "host_link"));
    }
    for i in 0..f.leaves {
        for j in 0..f.spines {
            let (leaf, spine) = (format!("leaf{i}"), format!("spine{j}"));
            links.push(link(
                leaf.clone(),
                spine.clone(),
                &f.fabric_link,
                "fabric_link",
            ));
            links.push(link(spine, leaf, &f.fabric_link, "fabric_link"));
        }
    }
    (Some(nodes), links)
}

/// The network's plan: its own links first (all reported), then the flows' hosts.
pub(super) fn network(sc: &Scenario, net: &Network) -> Result<NetworkPlan, ScenarioError> {
    let (nodes, links) = expand(net);
    let mut plan = NetworkPlan::default();
    let mut node_of: HashMap<String, NodeId> = HashMap::new();
    let declared = nodes.is_some();
    for (i, n) in nodes.iter().flatten().enumerate() {
        if node_of.contains_key(n) {
            let msg = format!("duplicate node name {n:?}");
            return Err(ScenarioError::new(format!("network.nodes[{i}]"), msg));
        }
        node_of.insert(n.clone(), plan.topo.add_node(n.clone()));
    }
    let mut link_names: HashMap<String, ()> = HashMap::new();
    for l in &links {
        let mut node = |key: &str, name: &String| -> Result<NodeId, ScenarioError> {
            if let Some(&id) = node_of.get(name) {
                return Ok(id);
            }
            if declared {
                let msg = format!("no node named {name:?} in network.nodes");
                return Err(ScenarioError::new(format!("{}.{key}", l.key_path), msg));
            }
            let id = plan.topo.add_node(name.clone());
            node_of.insert(name.clone(), id);
            Ok(id)
        };
        let (from, to) = (node("from", &l.from)?, node("to", &l.to)?);
        if from == to {
            let msg = "a link joins two different nodes, got the same twice";
            return Err(ScenarioError::new(format!("{}.to", l.key_path), msg));
        }
        let mut ways = vec![(from, to, l.name.clone(), l.trace.clone())];
        if l.both_ways {
            let trace = l.reverse_trace.clone().or_else(|| l.trace.clone());
            ways.push((to, from, format!("{}-reverse", l.name), trace));
        }
        for (a, b, name, trace) in ways {
            if link_names.insert(name.clone(), ()).is_some() {
                let msg = format!("duplicate link name {name:?}");
                return Err(ScenarioError::new(format!("{}.name", l.key_path), msg));
            }
            let mut p = link_plan(l, name);
            p.trace = trace;
            plan.add_link(a, b, p);
        }
    }
    plan.reported = (0..plan.links.len() as u32).collect();
    let (ecmp, ecmp_strict) = match net {
        Network::Graph { ecmp, .. } => (*ecmp, *ecmp),
        Network::ParkingLot { .. } => (false, false),
        Network::LeafSpine(f) => (f.ecmp, f.ecmp_given),
    };
    add_flows(sc, plan, &node_of, ecmp, ecmp_strict)
}

fn link_plan(l: &LinkSpec, name: String) -> LinkPlan {
    LinkPlan {
        name,
        rate_bps: l.rate.bps,
        delay_ns: l.delay.ns,
        queue: l.queue.clone(),
        queue_path: format!("{}.queue", l.key_path),
        stats_hist: true,
        role: LinkRole::Network,
        shaper: l.shaper,
        loss: l.loss,
        jitter: l.jitter.clone(),
        trace: None,
        trace_dequeue: l.trace_dequeue,
        rate_changes: l.rate_changes.clone(),
    }
}

/// One group's hosts and route, both ways, as link indices of the network's own links.
struct GroupRoute {
    forward: Vec<u32>,
    back: Vec<u32>,
    /// The propagation delay there and back.
    delay_ns: u64,
    nodes: Vec<String>,
    ends: (NodeId, NodeId),
}

/// Every flow's sender and receiver, access links and routes.
fn add_flows(
    sc: &Scenario,
    mut plan: NetworkPlan,
    node_of: &HashMap<String, NodeId>,
    ecmp: bool,
    ecmp_strict: bool,
) -> Result<NetworkPlan, ScenarioError> {
    // Equal-cost routes are searched on the network's own links (hosts hang off it), with
    // each destination's distances searched once and kept.
    let mut multipath = ecmp.then(|| Multipath {
        core: plan.topo.clone(),
        delay_ns: plan.links.iter().map(|l| l.delay_ns).collect(),
        hops_to: HashMap::new(),
        branched: false,
    });
    let core = own_network(&plan);
    let mut fid = 0u64;
    let fastest = plan.links.iter().map(|l| l.rate_bps).max().unwrap_or(0);
    let default_access = fastest.saturating_mul(ACCESS_RATE_FACTOR);
    let tcp = sc.flows.iter().enumerate().map(|(gi, g)| {
        let rtts: Vec<u64> = g.drawn.iter().map(|d| d.rtt.ns).collect();
        (
            format!("flows[{gi}]"),
            format!("tcp{gi}"),
            &g.endpoints,
            g.access_rate,
            rtts,
        )
    });
    let udp = sc.udp.iter().enumerate().map(|(gi, g)| {
        let rtts: Vec<u64> = g.drawn.iter().map(|d| d.rtt.ns).collect();
        (
            format!("udp[{gi}]"),
            format!("udp{gi}"),
            &g.endpoints,
            g.access_rate,
            rtts,
        )
    });
    for (prefix, label, endpoints, access, rtts) in tcp.chain(udp) {
        let e = endpoints
            .as_ref()
            .expect("a [network] group names its hosts");
        // Each pair of hosts the group's flows use, routed once.
        let mut routes: HashMap<(usize, usize), GroupRoute> = HashMap::new();
        let access_bps = access.map_or(default_access, |r| r.bps);
        if let Some(gi) = prefix.strip_prefix("udp[") {
            let gi: usize = gi.trim_end_matches(']').parse().expect("udp index");
            check_udp_rate(&sc.udp[gi], gi, access_bps)?;
        }
        for (k, rtt_ns) in rtts.into_iter().enumerate() {
            let route = pair_route(&mut routes, (&core, node_of), e, k, &prefix)?;
            let hashed = match multipath.as_mut() {
                Some(m) if e.path.is_none() => {
                    Some(m.route(sc.seed, fid, route, &plan.topo.node_names))
                }
                _ => None,
            };
            fid += 1;
            let route = hashed.as_ref().unwrap_or(route);
            let extra = access_delay_ns(&prefix, rtt_ns, route)?;
            add_host_pair(
                &mut plan,
                route,
                format!("{label}.{k}"),
                extra / 2,
                access_bps,
            );
        }
    }
    if ecmp_strict && multipath.is_some_and(|m| !m.branched) {
        return Err(ScenarioError::new(
            "network.ecmp",
            "no flow has two equal-cost routes to choose from (give ecmp = false, or links \
             that make equal-cost paths)",
        ));
    }
    Ok(plan)
}

/// Flow `k`'s hosts' route, searched the first time the group's flows use the pair.
fn pair_route<'a>(
    routes: &'a mut HashMap<(usize, usize), GroupRoute>,
    (core, node_of): (&NetworkPlan, &HashMap<String, NodeId>),
    e: &Endpoints,
    k: usize,
    prefix: &str,
) -> Result<&'a GroupRoute, ScenarioError> {
    let pair = e.pair(k);
    Ok(match routes.entry(pair) {
        std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
        std::collections::hash_map::Entry::Vacant(v) => {
            v.insert(group_route(core, node_of, e, pair, prefix)?)
        }
    })
}

/// The network's own nodes and links, before any host: what groups' routes are searched
/// on (a search on the whole plan would visit every host added so far, quadratic in
/// groups: 10 000 one-flow groups took 1.5 s).
fn own_network(plan: &NetworkPlan) -> NetworkPlan {
    NetworkPlan {
        topo: plan.topo.clone(),
        links: plan.links.clone(),
        ..NetworkPlan::default()
    }
}

/// What a flow's base RTT asks beyond its route's propagation delay there and back (its
/// access links carry it), or the error naming the group's `rtt`.
fn access_delay_ns(prefix: &str, rtt_ns: u64, route: &GroupRoute) -> Result<u64, ScenarioError> {
    rtt_ns.checked_sub(route.delay_ns).ok_or_else(|| {
        ScenarioError::new(
            format!("{prefix}.rtt"),
            format!(
                "the base RTT must be at least the route's propagation delay there and back \
                 ({} ms), got {} ms",
                route.delay_ns as f64 / 1e6,
                rtt_ns as f64 / 1e6
            ),
        )
    })
}

/// Equal-cost multipath routing (`network.ecmp`): each flow's own route, picked by a
/// hash drawn for it from its own stream (`StreamKind::Ecmp`, indexed by flow), so the
/// choice depends on the seed and the flow alone, and no other stream's draws move.
struct Multipath {
    /// The network's own nodes and links, before any host was added.
    core: Topology,
    /// Each of its links' propagation delay.
    delay_ns: Vec<u64>,
    /// Each destination's fewest-hop distances from every node of `core`.
    hops_to: HashMap<NodeId, Vec<u32>>,
    /// Whether any flow had a choice (`ecmp` asked where there is none is an error).
    branched: bool,
}

impl Multipath {
    /// Flow `fid`'s route along `group`'s ends, there and back (the ACKs hashed by the
    /// same flow hash over the reverse direction's equal-cost next hops).
    fn route(&mut self, seed: u64, fid: u64, group: &GroupRoute, names: &[String]) -> GroupRoute {
        let hash = stream(seed, StreamKind::Ecmp, fid).next_u64();
        let (src, dst) = group.ends;
        let mut pick = |from: NodeId, to: NodeId| {
            let core = &self.core;
            let dist = self.hops_to.entry(to).or_insert_with(|| core.hops_to(to));
            let (links, branched) = core
                .ecmp_route(from, dist, hash)
                .expect("a fewest-hop route exists, so an equal-cost one does");
            self.branched |= branched;
            links
        };
        let forward = pick(src, dst);
        let back = pick(dst, src);
        let mut nodes = vec![names[src as usize].clone()];
        nodes.extend(
            forward
                .iter()
                .map(|&l| names[self.core.links[l as usize].to as usize].clone()),
        );
        GroupRoute {
            delay_ns: forward
                .iter()
                .chain(&back)
                .map(|&l| self.delay_ns[l as usize])
                .sum(),
            forward,
            back,
            nodes,
            ends: group.ends,
        }
    }
}

/// A flow's sender and receiver on their own access links (the sender's and its ACKs'
/// carrying `access_delay_ns` each), and its routes.
fn add_host_pair(
    plan: &mut NetworkPlan,
    route: &GroupRoute,
    label: String,
    access_delay_ns: u64,
    access_bps: u64,
) {
    let s = plan.topo.add_node(format!("{label}-sender"));
    let r = plan.topo.add_node(format!("{label}-receiver"));
    let (near, far) = route.ends;
    let mut ids = [0u32; 4];
    for (j, (from, to, delay_ns, nm)) in [
        (s, near, access_delay_ns, "access-up"),
        (far, r, 0, "access-down"),
        (r, far, 0, "access-ack-up"),
        (near, s, access_delay_ns, "access-ack-down"),
    ]
    .into_iter()
    .enumerate()
    {
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
        ids[j] = plan.add_link(from, to, link);
    }
    let with_access = |up: u32, core: &[u32], down: u32| {
        let mut v = Vec::with_capacity(core.len() + 2);
        v.push(up);
        v.extend_from_slice(core);
        v.push(down);
        v
    };
    plan.routes
        .push(with_access(ids[0], &route.forward, ids[1]));
    plan.routes.push(with_access(ids[2], &route.back, ids[3]));
    plan.hosts.push((s, r));
    plan.flow_paths.push(route.nodes.clone());
}

/// The route there (the group's explicit path or a fewest-hop route) and back between
/// the group's hosts `from[i]` and `to[j]`.
fn group_route(
    plan: &NetworkPlan,
    node_of: &HashMap<String, NodeId>,
    e: &Endpoints,
    (i, j): (usize, usize),
    prefix: &str,
) -> Result<GroupRoute, ScenarioError> {
    let err = |key: &str, msg: String| ScenarioError::new(format!("{prefix}.{key}"), msg);
    let node = |key: &str, name: &String| {
        node_of
            .get(name)
            .copied()
            .ok_or_else(|| err(key, format!("no node named {name:?} in the network")))
    };
    let (from, to) = (&e.from[i], &e.to[j]);
    let (src, dst) = (node("from", from)?, node("to", to)?);
    if src == dst {
        let msg = if e.from.len() == 1 && e.to.len() == 1 {
            format!("must differ from from ({from:?})")
        } else {
            format!(
                "a flow would go from {from:?} to itself (flows pair from[k % {}] with to[k % {}])",
                e.from.len(),
                e.to.len()
            )
        };
        return Err(err("to", msg));
    }
    let (forward, back) = match &e.path {
        Some(names) => explicit_route(plan, names, &node, &err)?,
        None => {
            let forward = plan
                .topo
                .route(src, dst)
                .ok_or_else(|| err("to", format!("no route from {from:?} to {to:?}")))?;
            let back = plan.topo.route(dst, src).ok_or_else(|| {
                err(
                    "from",
                    format!("no route back from {to:?} to {from:?} for the ACKs"),
                )
            })?;
            (forward, back)
        }
    };
    let delay_ns = forward
        .iter()
        .chain(&back)
        .map(|&l| plan.links[l as usize].delay_ns)
        .sum();
    let mut nodes = vec![from.clone()];
    for &l in &forward {
        let to = plan.topo.links[l as usize].to;
        nodes.push(plan.topo.node_names[to as usize].clone());
    }
    Ok(GroupRoute {
        forward,
        back,
        delay_ns,
        nodes,
        ends: (src, dst),
    })
}

type RouteBothWays = (Vec<u32>, Vec<u32>);

/// An explicit path's links, and the reversed path's for the ACKs: each step must be a
/// link, and no node may be visited twice.
fn explicit_route(
    plan: &NetworkPlan,
    names: &[String],
    node: &dyn Fn(&str, &String) -> Result<NodeId, ScenarioError>,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<RouteBothWays, ScenarioError> {
    let mut ids = Vec::with_capacity(names.len());
    for (i, n) in names.iter().enumerate() {
        let id = node(&format!("path[{i}]"), n)?;
        if ids.contains(&id) {
            return Err(err(
                &format!("path[{i}]"),
                format!("visits {n:?} twice (a loop)"),
            ));
        }
        ids.push(id);
    }
    let link = |a: usize, b: usize, why: &str| {
        let (x, y) = (ids[a], ids[b]);
        let found = plan
            .topo
            .links
            .iter()
            .position(|l| l.from == x && l.to == y);
        found.map(|l| l as u32).ok_or_else(|| {
            err(
                &format!("path[{}]", a.max(b)),
                format!("no link from {:?} to {:?}{why}", names[a], names[b]),
            )
        })
    };
    let forward = (1..ids.len())
        .map(|i| link(i - 1, i, ""))
        .collect::<Result<_, _>>()?;
    let back = (1..ids.len())
        .rev()
        .map(|i| link(i, i - 1, " (the ACKs take the path back)"))
        .collect::<Result<_, _>>()?;
    Ok((forward, back))
}
