//! `[network]`: a general network beside the `[bottleneck]` dumbbell shorthand.
//!
//! A graph of named nodes and directed links, each with its rate, propagation delay,
//! queue discipline (any of the dumbbell's, with its parameters) and optional shaper;
//! `both_ways = true` declares the link named `<name>-reverse` from `to` to `from` with
//! the same settings:
//!
//! ```toml
//! [network]
//! nodes = ["a", "b", "c"]            # optional: else every node a link names
//! [[network.links]]
//! name = "ab"                        # default "<from>-<to>"
//! from = "a"
//! to = "b"
//! rate = "10Mbps"
//! delay = "5ms"                      # default 0
//! queue = { kind = "fq_codel" }      # default droptail, limit 1bdp
//! both_ways = true                   # default false
//!
//! # [network] ecmp = true: each flow hashed over equal-cost next hops (seeded per flow)
//!
//! [[flows]]
//! from = "a"                         # hosts: any node
//! to = "c"
//! path = ["a", "b", "c"]             # optional: else a fewest-hop route
//! rtt = "40ms"                       # >= the route's propagation RTT there and back
//! ```
//!
//! Every flow gets a sender and a receiver of its own, on access links to its `from`
//! and `to` nodes; the sender's access link carries half of what the flow's `rtt` asks
//! beyond the route's propagation delay there and back (its ACKs' access link the
//! other half), so the papers' "RTT per flow" idiom works as in the dumbbell. ACKs take
//! the reverse route: the reversed explicit path, or a fewest-hop route back.
//!
//! A generator expands into the same nodes and links when the network is built:
//!
//! ```toml
//! [network]
//! kind = "parking_lot"               # routers r0..rN, hop i joins r(i-1) to r(i)
//! hops = [{ rate = "10Mbps", delay = "5ms", queue = "fq_codel" },
//!         { rate = "20Mbps", delay = "5ms", queue = "fq_codel" }]
//! ```
//!
//! Hop `i` (from 1) is the link `hop<i>` and its ACK direction `hop<i>-reverse` (same
//! rate and delay, an ample DropTail); a long flow goes `from = "r0", to = "rN"`, a
//! cross flow on hop `i` from `r<i-1>` to `r<i>`.
//!
//! Names and connectivity (unknown nodes, duplicate names, paths that are not paths)
//! are checked when the network is built, with the key path of what is wrong.

use super::lit::Given;
use super::raw::{Label, RawAlgo, RawHop, RawLink, RawNetwork, Table};
use super::units::{DataRate, SimDuration};
use super::{default_queue, error, join, resolve_shaper, AlgoSpec, ScenarioError, ShaperSpec};

/// A general network.
#[derive(Debug, Clone, PartialEq)]
pub enum Network {
    /// Nodes and links as written.
    Graph {
        /// Declared nodes (`None`: every node a link names, in order of first mention).
        nodes: Option<Vec<String>>,
        links: Vec<LinkSpec>,
        /// `ecmp = true`: each flow hashed over equal-cost next hops, not the first.
        ecmp: bool,
    },
    /// `kind = "parking_lot"`: a chain of hops (at least one).
    ParkingLot { hops: Vec<HopSpec> },
    /// `kind = "leaf_spine"`: a two-tier Clos fabric.
    LeafSpine(LeafSpineSpec),
}

/// A leaf-spine fabric (the two-tier folded Clos of datacenter papers: Alizadeh et al.,
/// "CONGA", SIGCOMM 2014, §2; Greenberg et al., "VL2", SIGCOMM 2009): `leaves` top-of-rack
/// switches with `hosts_per_leaf` hosts each, every leaf joined to every spine. Nodes
/// `host<k>` (numbered across the fabric: host `k` hangs off `leaf<k / hosts_per_leaf>`),
/// `leaf<i>`, `spine<j>`; links `<from>-<to>` in both directions.
#[derive(Debug, Clone, PartialEq)]
pub struct LeafSpineSpec {
    pub spines: u32,
    pub leaves: u32,
    pub hosts_per_leaf: u32,
    /// Host to leaf and back.
    pub host_link: HopSpec,
    /// Leaf to spine and back.
    pub fabric_link: HopSpec,
    /// ECMP over the spines (default on): each flow hashed to one spine.
    pub ecmp: bool,
    /// `ecmp` written in the file: then no flow with a choice of spine is an error.
    pub ecmp_given: bool,
}

impl LeafSpineSpec {
    /// Hosts' capacity into a leaf over the leaf's capacity towards the spines (1: a
    /// non-blocking fabric; CONGA's testbed is 2:1, many production fabrics 3:1).
    pub fn oversubscription(&self) -> f64 {
        (f64::from(self.hosts_per_leaf) * self.host_link.rate.bps as f64)
            / (f64::from(self.spines) * self.fabric_link.rate.bps as f64)
    }
}

/// One directed link (and its reverse with `both_ways`).
#[derive(Debug, Clone, PartialEq)]
pub struct LinkSpec {
    /// `<from>-<to>` unless named.
    pub name: String,
    pub from: String,
    pub to: String,
    pub rate: DataRate,
    pub delay: SimDuration,
    pub queue: AlgoSpec,
    pub shaper: Option<ShaperSpec>,
    /// Also the link `<name>-reverse` from `to` to `from`, with the same settings.
    pub both_ways: bool,
    /// Random loss on the wire (both directions with `both_ways`).
    pub loss: Option<super::LossSpec>,
    /// Delay jitter (both directions with `both_ways`, each from its own stream).
    pub jitter: Option<super::JitterSpec>,
    /// Where it sits in the scenario (`network.links[2]`), for error messages.
    pub key_path: String,
}

/// One hop of a parking lot.
#[derive(Debug, Clone, PartialEq)]
pub struct HopSpec {
    pub rate: DataRate,
    pub delay: SimDuration,
    pub queue: AlgoSpec,
}

/// Where a group's flows go in a `[network]`: from one node to another, along `path`
/// (node names, `from` first and `to` last) or a fewest-hop route.
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoints {
    pub from: String,
    pub to: String,
    pub path: Option<Vec<String>>,
}

impl Network {
    /// The link the summary's `bottleneck` fields report: the first declared (the
    /// first hop of a parking lot), as (rate, delay, queue).
    pub fn first_link(&self) -> (DataRate, SimDuration, AlgoSpec) {
        match self {
            Network::Graph { links, .. } => {
                let l = &links[0];
                (l.rate, l.delay, l.queue.clone())
            }
            Network::ParkingLot { hops } => (hops[0].rate, hops[0].delay, hops[0].queue.clone()),
            Network::LeafSpine(f) => {
                let h = &f.host_link;
                (h.rate, h.delay, h.queue.clone())
            }
        }
    }
}

pub(super) fn resolve_network(mut n: RawNetwork) -> Result<Network, ScenarioError> {
    let kind = n
        .kind
        .take()
        .map_or_else(|| "graph".to_owned(), |g| g.value.0);
    if kind != "leaf_spine" {
        let fabric_keys = [
            ("spines", n.spines.is_some()),
            ("leaves", n.leaves.is_some()),
            ("hosts_per_leaf", n.hosts_per_leaf.is_some()),
            ("host_link", n.host_link.is_some()),
            ("fabric_link", n.fabric_link.is_some()),
            ("queue", n.queue.is_some()),
        ];
        if let Some((key, _)) = fabric_keys.iter().find(|(_, given)| *given) {
            return Err(error(
                join("network", key),
                "only with kind = \"leaf_spine\"",
            ));
        }
    }
    match kind.as_str() {
        "graph" => {
            if n.hops.is_some() {
                return Err(error(
                    "network.hops",
                    "only with kind = \"parking_lot\"; a graph has nodes and links",
                ));
            }
            let links: Vec<LinkSpec> = n
                .links
                .map(|g| g.0)
                .unwrap_or_default()
                .into_iter()
                .enumerate()
                .map(|(i, Table(l))| resolve_link(l, format!("network.links[{i}]")))
                .collect::<Result<_, _>>()?;
            if links.is_empty() {
                return Err(error(
                    "network.links",
                    "a network needs at least one link ([[network.links]])",
                ));
            }
            let nodes = n.nodes.map(|v| v.into_iter().map(|g| g.value.0).collect());
            let ecmp = n.ecmp.is_some_and(|g| g.value.0);
            Ok(Network::Graph { nodes, links, ecmp })
        }
        "parking_lot" => {
            for (key, given) in [("nodes", n.nodes.is_some()), ("links", n.links.is_some())] {
                if given {
                    return Err(error(
                        join("network", key),
                        "a parking lot makes its own nodes and links from hops",
                    ));
                }
            }
            if n.ecmp.is_some_and(|g| g.value.0) {
                return Err(error(
                    "network.ecmp",
                    "a parking lot has one route between any two routers, no equal-cost paths",
                ));
            }
            let hops: Vec<HopSpec> = n
                .hops
                .map(|g| g.0)
                .unwrap_or_default()
                .into_iter()
                .map(|Table(h)| resolve_hop(h))
                .collect();
            if hops.is_empty() {
                return Err(error(
                    "network.hops",
                    "a parking lot needs at least one hop, like hops = [{ rate = \"10Mbps\" }]",
                ));
            }
            Ok(Network::ParkingLot { hops })
        }
        "leaf_spine" => resolve_leaf_spine(n),
        other => Err(error(
            "network.kind",
            format!("expected \"graph\", \"parking_lot\" or \"leaf_spine\", got {other:?}"),
        )),
    }
}

/// `kind = "leaf_spine"`: counts and the two link kinds (`queue` the default of both).
fn resolve_leaf_spine(n: RawNetwork) -> Result<Network, ScenarioError> {
    let foreign = [
        ("nodes", n.nodes.is_some()),
        ("links", n.links.is_some()),
        ("hops", n.hops.is_some()),
    ];
    for (key, given) in foreign {
        if given {
            return Err(error(
                join("network", key),
                "a leaf-spine fabric makes its own nodes and links from spines, leaves, \
                 hosts_per_leaf, host_link and fabric_link",
            ));
        }
    }
    let count = |g: Option<Given<super::raw::FabricCount>>, key: &str| {
        g.map(|g| g.value.0 as u32).ok_or_else(|| {
            error(
                join("network", key),
                "missing: a leaf-spine fabric needs spines, leaves and hosts_per_leaf",
            )
        })
    };
    let default = n.queue.map_or_else(default_queue, |RawAlgo(a)| a);
    let link = |t: Option<Table<RawHop>>, key: &str| -> Result<HopSpec, ScenarioError> {
        let Table(h) = t.ok_or_else(|| {
            error(
                join("network", key),
                "missing: give its rate, like { rate = \"10Gbps\", delay = \"1us\" }",
            )
        })?;
        positive_rate(&h.rate, &join(&join("network", key), "rate"))?;
        let queue = h.queue.is_none().then(|| default.clone());
        let mut hop = resolve_hop(h);
        if let Some(q) = queue {
            hop.queue = q;
        }
        Ok(hop)
    };
    Ok(Network::LeafSpine(LeafSpineSpec {
        spines: count(n.spines, "spines")?,
        leaves: count(n.leaves, "leaves")?,
        hosts_per_leaf: count(n.hosts_per_leaf, "hosts_per_leaf")?,
        host_link: link(n.host_link, "host_link")?,
        fabric_link: link(n.fabric_link, "fabric_link")?,
        ecmp: n.ecmp.as_ref().is_none_or(|g| g.value.0),
        ecmp_given: n.ecmp.is_some_and(|g| g.value.0),
    }))
}

fn resolve_link(l: RawLink, key_path: String) -> Result<LinkSpec, ScenarioError> {
    let (from, to) = (l.from.value.0, l.to.value.0);
    let shaper = l
        .shaper
        .map(|Table(sh)| resolve_shaper(sh, &join(&key_path, "shaper"), true))
        .transpose()?;
    Ok(LinkSpec {
        name: l.name.map_or_else(|| format!("{from}-{to}"), |g| g.value.0),
        from,
        to,
        rate: positive_rate(&l.rate, &join(&key_path, "rate"))?,
        delay: l.delay.map_or(SimDuration::default(), |g| g.value),
        queue: l.queue.map_or_else(default_queue, |RawAlgo(a)| a),
        shaper,
        both_ways: l.both_ways.is_some_and(|g| g.value.0),
        loss: l
            .loss
            .map(|raw| super::link_model::resolve_raw_loss(raw, &join(&key_path, "loss")))
            .transpose()?,
        jitter: l
            .jitter
            .map(|Table(j)| super::link_model::resolve_jitter(j, &join(&key_path, "jitter")))
            .transpose()?,
        key_path,
    })
}

fn resolve_hop(h: RawHop) -> HopSpec {
    HopSpec {
        rate: h.rate.value,
        delay: h.delay.map_or(SimDuration::default(), |g| g.value),
        queue: h.queue.map_or_else(default_queue, |RawAlgo(a)| a),
    }
}

fn positive_rate(g: &Given<DataRate>, path: &str) -> Result<DataRate, ScenarioError> {
    if g.value.bps == 0 {
        return Err(error(
            path,
            format!("expected a positive rate like \"10Mbps\", got {}", g.text),
        ));
    }
    Ok(g.value)
}

/// A group's `from`, `to` and `path` (`prefix`: `flows[1]`): both ends or a path.
pub(super) fn resolve_endpoints(
    from: Option<Given<Label>>,
    to: Option<Given<Label>>,
    path: Option<Vec<Given<Label>>>,
    prefix: &str,
) -> Result<Option<Endpoints>, ScenarioError> {
    let path: Option<Vec<String>> = path.map(|v| v.into_iter().map(|g| g.value.0).collect());
    let (from, to) = (from.map(|g| g.value.0), to.map(|g| g.value.0));
    if let Some(p) = &path {
        if p.len() < 2 {
            return Err(error(
                join(prefix, "path"),
                "expected at least two nodes, the first the flow's from and the last its to",
            ));
        }
        let ends = [("from", &from, &p[0]), ("to", &to, &p[p.len() - 1])];
        for (key, given, end) in ends {
            if given.as_ref().is_some_and(|g| g != end) {
                return Err(error(
                    join(prefix, "path"),
                    format!(
                        "must {} at {key} = {given:?}, got {end:?}",
                        if key == "from" { "start" } else { "end" },
                        given = given.as_deref().unwrap_or_default()
                    ),
                ));
            }
        }
        return Ok(Some(Endpoints {
            from: p[0].clone(),
            to: p[p.len() - 1].clone(),
            path,
        }));
    }
    match (from, to) {
        (None, None) => Ok(None),
        (Some(from), Some(to)) => Ok(Some(Endpoints {
            from,
            to,
            path: None,
        })),
        (None, Some(_)) => Err(error(join(prefix, "from"), "missing (to is given)")),
        (Some(_), None) => Err(error(join(prefix, "to"), "missing (from is given)")),
    }
}
