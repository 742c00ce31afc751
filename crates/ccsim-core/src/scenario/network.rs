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
//! `from` and `to` may list several hosts (ranges like `"host[16-31]"`): the group's
//! flows are spread round-robin over them, or with `pairing = "permutation"` each host of
//! `from` sends to another drawn at random (see [`Endpoints`]).
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
    LeafSpine(Box<LeafSpineSpec>),
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
    /// Rate steps in time order, zero an outage (both directions with `both_ways`).
    pub rate_changes: Vec<super::RateChange>,
    /// A Mahimahi trace deciding when packets leave (both directions with `both_ways`,
    /// each with its own place in the trace), and the reverse direction's own.
    pub trace: Option<std::sync::Arc<crate::net::link_model::mahimahi::MahimahiTrace>>,
    pub reverse_trace: Option<std::sync::Arc<crate::net::link_model::mahimahi::MahimahiTrace>>,
    /// When the traced directions take a packet from the queue.
    pub trace_dequeue: super::link_model::TraceDequeue,
    /// Where it sits in the scenario (`network.links[2]`), for error messages.
    pub key_path: String,
}

/// One hop of a parking lot (the models on its data direction; its ACK direction is an
/// ample plain FIFO), or a leaf-spine fabric's host or fabric links (every one of them,
/// both ways, each model with streams of its own).
#[derive(Debug, Clone, PartialEq)]
pub struct HopSpec {
    pub rate: DataRate,
    pub delay: SimDuration,
    pub queue: AlgoSpec,
    pub shaper: Option<ShaperSpec>,
    pub loss: Option<super::LossSpec>,
    pub jitter: Option<super::JitterSpec>,
    pub rate_changes: Vec<super::RateChange>,
    pub trace: Option<std::sync::Arc<crate::net::link_model::mahimahi::MahimahiTrace>>,
    pub trace_dequeue: super::link_model::TraceDequeue,
}

/// Where a group's flows go in a `[network]`: from its `from` hosts to its `to` hosts,
/// along `path` (node names, `from` first and `to` last) or a fewest-hop route.
///
/// One host each way is the common case; a list spreads the group's flows over several
/// hosts, flow `k` from `from[k % len]` to `to[k % len]` (round-robin: an incast is many
/// `from` and one `to`), or with `pairing = "permutation"` from each host of `from` to
/// the host a random derangement of `from` gives it (every host sends to one other host
/// and receives from one: the permutation traffic matrix of Raiciu et al., "Improving
/// datacenter performance and robustness with multipath TCP", SIGCOMM 2011, §4).
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoints {
    /// The senders' hosts, ranges expanded, in the order written (at least one).
    pub from: Vec<String>,
    /// The receivers' hosts (a permutation's: `from` in its drawn order).
    pub to: Vec<String>,
    /// The explicit path (one host each way only).
    pub path: Option<Vec<String>>,
    /// `pairing = "permutation"`: `to[i]` is the host `from[i]` sends to (none is its
    /// own), so flow `k` goes from `from[k % len]` to `to[k % len]` as round-robin does.
    pub permutation: bool,
}

impl Endpoints {
    /// One flow per host named (the longer list's length), the count a group spread over
    /// hosts gets when it gives none.
    pub fn default_count(&self) -> usize {
        self.from.len().max(self.to.len())
    }

    /// Flow `k`'s hosts, as indices into `from` and `to`.
    pub fn pair(&self, k: usize) -> (usize, usize) {
        (k % self.from.len(), k % self.to.len())
    }
}

/// `from` / `to` as written: one host name, or a list of them (each may be a range like
/// `"host[16-31]"`).
pub(super) struct RawHosts(Vec<Given<Label>>);

const HOSTS_EXPECTED: &str =
    "a host name like \"host3\" or a list like [\"host[16-31]\", \"host40\"]";

impl<'de> serde::Deserialize<'de> for RawHosts {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(HostsVisitor)
    }
}

struct HostsVisitor;

impl HostsVisitor {
    fn wrong<E: serde::de::Error>(got: &str) -> Result<RawHosts, E> {
        Err(E::custom(format!("expected {HOSTS_EXPECTED}, got {got}")))
    }
}

impl<'de> serde::de::Visitor<'de> for HostsVisitor {
    type Value = RawHosts;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(HOSTS_EXPECTED)
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawHosts, E> {
        let lit = super::lit::Lit::S(v.to_owned());
        let value = <Label as super::lit::Leaf>::from_lit(&lit).map_err(E::custom)?;
        Ok(RawHosts(vec![Given {
            value,
            text: lit.to_string(),
        }]))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<RawHosts, A::Error> {
        let mut hosts = Vec::new();
        while let Some(h) = seq.next_element::<Given<Label>>()? {
            hosts.push(h);
        }
        Ok(RawHosts(hosts))
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<RawHosts, E> {
        Self::wrong(&v.to_string())
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<RawHosts, E> {
        Self::wrong(&v.to_string())
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<RawHosts, E> {
        Self::wrong(&v.to_string())
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<RawHosts, E> {
        Self::wrong(&v.to_string())
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, _map: A) -> Result<RawHosts, A::Error> {
        Self::wrong("a table")
    }
}

/// The most hosts one range may name (a guard against a typo like `host[0-99999999]`).
const MAX_RANGE_HOSTS: u64 = 100_000;

/// A list's names with ranges expanded: `"host[16-19]"` is host16, host17, host18,
/// host19 (the hostlist notation of Slurm and pdsh; bounds inclusive, numbers without
/// padding, as the generators name their nodes).
fn expand_hosts(raw: RawHosts, key: &str) -> Result<Vec<String>, ScenarioError> {
    let mut out = Vec::with_capacity(raw.0.len());
    for (i, g) in raw.0.into_iter().enumerate() {
        let name = g.value.0;
        let Some(open) = name.find('[') else {
            out.push(name);
            continue;
        };
        let bad = || {
            error(
                format!("{key}[{i}]"),
                format!("expected a range like \"host[16-31]\" (first <= last), got {name:?}"),
            )
        };
        let close = name[open..].find(']').map(|c| open + c).ok_or_else(bad)?;
        let (first, last) = name[open + 1..close].split_once('-').ok_or_else(bad)?;
        let (first, last): (u64, u64) = (
            first.trim().parse().map_err(|_| bad())?,
            last.trim().parse().map_err(|_| bad())?,
        );
        if first > last || last - first >= MAX_RANGE_HOSTS {
            return Err(bad());
        }
        let (head, tail) = (&name[..open], &name[close + 1..]);
        out.extend((first..=last).map(|n| format!("{head}{n}{tail}")));
    }
    Ok(out)
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

pub(super) fn resolve_network(
    mut n: RawNetwork,
    duration: super::SimDuration,
) -> Result<Network, ScenarioError> {
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
                .map(|(i, Table(l))| resolve_link(l, format!("network.links[{i}]"), duration))
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
                .enumerate()
                .map(|(i, Table(h))| resolve_hop(h, &format!("network.hops[{i}]"), duration))
                .collect::<Result<_, _>>()?;
            if hops.is_empty() {
                return Err(error(
                    "network.hops",
                    "a parking lot needs at least one hop, like hops = [{ rate = \"10Mbps\" }]",
                ));
            }
            Ok(Network::ParkingLot { hops })
        }
        "leaf_spine" => resolve_leaf_spine(n, duration),
        other => Err(error(
            "network.kind",
            format!("expected \"graph\", \"parking_lot\" or \"leaf_spine\", got {other:?}"),
        )),
    }
}

/// `kind = "leaf_spine"`: counts and the two link kinds (`queue` the default of both).
fn resolve_leaf_spine(
    n: RawNetwork,
    duration: super::SimDuration,
) -> Result<Network, ScenarioError> {
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
        let mut hop = resolve_hop(h, &join("network", key), duration)?;
        if let Some(q) = queue {
            hop.queue = q;
        }
        Ok(hop)
    };
    Ok(Network::LeafSpine(Box::new(LeafSpineSpec {
        spines: count(n.spines, "spines")?,
        leaves: count(n.leaves, "leaves")?,
        hosts_per_leaf: count(n.hosts_per_leaf, "hosts_per_leaf")?,
        host_link: link(n.host_link, "host_link")?,
        fabric_link: link(n.fabric_link, "fabric_link")?,
        ecmp: n.ecmp.as_ref().is_none_or(|g| g.value.0),
        ecmp_given: n.ecmp.is_some_and(|g| g.value.0),
    })))
}

fn resolve_link(
    l: RawLink,
    key_path: String,
    duration: super::SimDuration,
) -> Result<LinkSpec, ScenarioError> {
    let (from, to) = (l.from.value.0, l.to.value.0);
    let shaper = l
        .shaper
        .map(|Table(sh)| resolve_shaper(sh, &join(&key_path, "shaper"), true))
        .transpose()?;
    let both_ways = l.both_ways.as_ref().is_some_and(|g| g.value.0);
    if l.reverse_trace.is_some() && !both_ways {
        return Err(error(
            join(&key_path, "reverse_trace"),
            "only with both_ways = true (it drives the <name>-reverse link)",
        ));
    }
    let Capacity {
        rate_changes,
        trace,
        reverse_trace,
        trace_dequeue,
    } = resolve_capacity(
        l.rate_changes,
        [l.trace.as_ref(), l.reverse_trace.as_ref()],
        l.trace_dequeue,
        &key_path,
        duration,
    )?;
    Ok(LinkSpec {
        name: l.name.map_or_else(|| format!("{from}-{to}"), |g| g.value.0),
        from,
        to,
        rate: positive_rate(&l.rate, &join(&key_path, "rate"))?,
        delay: l.delay.map_or(SimDuration::default(), |g| g.value),
        queue: l.queue.map_or_else(default_queue, |RawAlgo(a)| a),
        shaper,
        both_ways,
        loss: l
            .loss
            .map(|raw| super::link_model::resolve_raw_loss(raw, &join(&key_path, "loss")))
            .transpose()?,
        jitter: l
            .jitter
            .map(|Table(j)| super::link_model::resolve_jitter(j, &join(&key_path, "jitter")))
            .transpose()?,
        rate_changes,
        trace,
        reverse_trace,
        trace_dequeue,
        key_path,
    })
}

fn resolve_hop(
    h: RawHop,
    key_path: &str,
    duration: super::SimDuration,
) -> Result<HopSpec, ScenarioError> {
    let Capacity {
        rate_changes,
        trace,
        trace_dequeue,
        ..
    } = resolve_capacity(
        h.rate_changes,
        [h.trace.as_ref(), None],
        h.trace_dequeue,
        key_path,
        duration,
    )?;
    Ok(HopSpec {
        rate: h.rate.value,
        delay: h.delay.map_or(SimDuration::default(), |g| g.value),
        queue: h.queue.map_or_else(default_queue, |RawAlgo(a)| a),
        shaper: h
            .shaper
            .map(|Table(sh)| resolve_shaper(sh, &join(key_path, "shaper"), true))
            .transpose()?,
        loss: h
            .loss
            .map(|raw| super::link_model::resolve_raw_loss(raw, &join(key_path, "loss")))
            .transpose()?,
        jitter: h
            .jitter
            .map(|Table(j)| super::link_model::resolve_jitter(j, &join(key_path, "jitter")))
            .transpose()?,
        trace_dequeue,
        rate_changes,
        trace,
    })
}

/// A trace-driven link's file path.
type TraceFile = Given<super::raw::FilePath>;
type Trace = std::sync::Arc<crate::net::link_model::mahimahi::MahimahiTrace>;

/// What [`resolve_capacity`] gives.
struct Capacity {
    rate_changes: Vec<super::RateChange>,
    trace: Option<Trace>,
    reverse_trace: Option<Trace>,
    trace_dequeue: super::link_model::TraceDequeue,
}

/// What sets a link's capacity under `key_path` (`network.links[2]`, `network.hops[0]`,
/// `network.fabric_link`): its rate steps, its traces (`[trace, reverse_trace]`) and when
/// a traced direction dequeues. A trace and rate steps on one link are refused together:
/// both set its capacity.
fn resolve_capacity(
    rate_changes: Option<super::raw::Groups<Table<super::raw::RawRateChange>>>,
    [trace, reverse_trace]: [Option<&TraceFile>; 2],
    trace_dequeue: Option<Given<super::link_model::TraceDequeue>>,
    key_path: &str,
    duration: super::SimDuration,
) -> Result<Capacity, ScenarioError> {
    let rate_changes = super::resolve_rate_changes(rate_changes, duration, key_path)?;
    let trace = super::link_model::resolve_trace(trace, &join(key_path, "trace"))?;
    let reverse_trace =
        super::link_model::resolve_trace(reverse_trace, &join(key_path, "reverse_trace"))?;
    let traced = trace.is_some() || reverse_trace.is_some();
    if traced && !rate_changes.is_empty() {
        let key = if trace.is_some() {
            "trace"
        } else {
            "reverse_trace"
        };
        return Err(error(
            join(key_path, key),
            "a trace and rate_changes both set the link's capacity: give one",
        ));
    }
    let trace_dequeue = super::link_model::resolve_trace_dequeue(trace_dequeue, traced, key_path)?;
    Ok(Capacity {
        rate_changes,
        trace,
        reverse_trace,
        trace_dequeue,
    })
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

/// What a group says of its hosts: `from`, `to`, `path`, `pairing`.
pub(super) type RawEndpoints = (
    Option<RawHosts>,
    Option<RawHosts>,
    Option<Vec<Given<Label>>>,
    Option<Given<super::raw::Kind>>,
);

/// A group's `from`, `to`, `path` and `pairing` (`prefix`: `flows[1]`): both ends, a
/// path, or a permutation of `from` drawn from `rng` (the group's own stream).
pub(super) fn resolve_endpoints(
    (from, to, path, pairing): RawEndpoints,
    prefix: &str,
    mut rng: crate::engine::rng::SimRng,
) -> Result<Option<Endpoints>, ScenarioError> {
    let key = |k: &str| join(prefix, k);
    let hosts = |raw: Option<RawHosts>, k: &str| -> Result<Option<Vec<String>>, ScenarioError> {
        let Some(raw) = raw else { return Ok(None) };
        let list = expand_hosts(raw, &key(k))?;
        if list.is_empty() {
            return Err(error(
                key(k),
                "expected at least one host, got an empty list",
            ));
        }
        Ok(Some(list))
    };
    let (from, to) = (hosts(from, "from")?, hosts(to, "to")?);
    let pairing = pairing.map_or_else(|| "round_robin".to_owned(), |g| g.value.0);
    match pairing.as_str() {
        "round_robin" => {}
        "permutation" => {
            if to.is_some() {
                return Err(error(
                    key("to"),
                    "not with pairing = \"permutation\": each host of from sends to another of from",
                ));
            }
            if path.is_some() {
                return Err(error(key("path"), "not with pairing = \"permutation\""));
            }
            let from = from
                .ok_or_else(|| error(key("from"), "missing: the hosts the permutation pairs up"))?;
            let mut seen = std::collections::HashSet::new();
            if let Some(dup) = from.iter().find(|h| !seen.insert(h.as_str())) {
                return Err(error(key("from"), format!("names host {dup:?} twice")));
            }
            if from.len() < 2 {
                return Err(error(
                    key("from"),
                    format!("a permutation needs at least two hosts, got {}", from.len()),
                ));
            }
            let to = derangement(from.len(), &mut rng)
                .into_iter()
                .map(|j| from[j].clone())
                .collect();
            return Ok(Some(Endpoints {
                from,
                to,
                path: None,
                permutation: true,
            }));
        }
        other => {
            return Err(error(
                key("pairing"),
                format!("expected \"round_robin\" or \"permutation\", got {other:?}"),
            ))
        }
    }
    let path: Option<Vec<String>> = path.map(|v| v.into_iter().map(|g| g.value.0).collect());
    if let Some(p) = &path {
        if p.len() < 2 {
            return Err(error(
                key("path"),
                "expected at least two nodes, the first the flow's from and the last its to",
            ));
        }
        let ends = [("from", &from, &p[0]), ("to", &to, &p[p.len() - 1])];
        for (k, given, end) in ends {
            match given.as_deref() {
                Some([one]) if one != end => {
                    return Err(error(
                        key("path"),
                        format!(
                            "must {} at {k} = {one:?}, got {end:?}",
                            if k == "from" { "start" } else { "end" },
                        ),
                    ))
                }
                Some(list) if list.len() > 1 => {
                    return Err(error(
                        key("path"),
                        format!(
                            "an explicit path joins one host to one host, but {k} lists {}",
                            list.len()
                        ),
                    ))
                }
                _ => {}
            }
        }
        return Ok(Some(Endpoints {
            from: vec![p[0].clone()],
            to: vec![p[p.len() - 1].clone()],
            path,
            permutation: false,
        }));
    }
    match (from, to) {
        (None, None) => Ok(None),
        (Some(from), Some(to)) => Ok(Some(Endpoints {
            from,
            to,
            path: None,
            permutation: false,
        })),
        (None, Some(_)) => Err(error(key("from"), "missing (to is given)")),
        (Some(_), None) => Err(error(key("to"), "missing (from is given)")),
    }
}

/// A uniformly random derangement of `0..n` (`n >= 2`): Fisher-Yates shuffles until one
/// has no fixed point (a shuffle is one with probability about 1/e, so a few tries).
fn derangement(n: usize, rng: &mut crate::engine::rng::SimRng) -> Vec<usize> {
    loop {
        let mut p: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            p.swap(i, j);
        }
        if p.iter().enumerate().all(|(i, &j)| i != j) {
            return p;
        }
    }
}
