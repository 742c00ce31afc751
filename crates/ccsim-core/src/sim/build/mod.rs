//! From a scenario to a [`World`], in stages, each taking and returning plain data:
//!
//! 1. [`topology`]: the network plan, a general [`Topology`] of nodes and links with
//!    what each link carries (the dumbbell is one way of filling it), one host pair per
//!    flow, and every flow's routes searched on the graph;
//! 2. [`links`]: the links with their queue disciplines, shapers and delay lines, and the
//!    pcap capture's interfaces;
//! 3. [`endpoints`]: the TCP flows (sender, receiver, congestion control, transfers, the
//!    DA-LBE controller of [`deadline`]);
//! 4. [`sources`]: the UDP traffic sources;
//! 5. [`markers`]: the PPV edge markers;
//! 6. [`schedule`]: the discipline timers, scheduled changes and first events.
//!
//! A new topology plugs in at stage 1 ([`network`] for a scenario's `[network]`); the
//! later stages read only the plan.
//!
//! [`Topology`]: crate::net::topology::Topology

mod deadline;
mod describe;
mod endpoints;
mod links;
mod markers;
mod network;
mod schedule;
mod sources;
mod topology;

pub use describe::{network_report, LinkReport, NetworkReport};

use super::world::World;
use crate::engine::{Event, Scheduler};
use crate::flow::FlowCounters;
use crate::net::packet::{PacketPool, TCP_IP_HEADER_BYTES};
use crate::net::route::Routes;
use crate::scenario::{Scenario, ScenarioError};
use crate::trace::Recorders;

/// What every stage needs to know about the scenario's size and packets.
#[derive(Debug, Clone, Copy)]
pub(super) struct Dims {
    pub(super) n_tcp: usize,
    pub(super) n_udp: usize,
    /// The RTT the queues' BDP-relative limits are taken at.
    pub(super) bdp_rtt_ns: u64,
    /// The largest packet of any TCP flow (1500 bytes without TCP flows).
    pub(super) mtu_bytes: u32,
}

impl Dims {
    pub(super) fn n_flows(&self) -> usize {
        self.n_tcp + self.n_udp
    }
}

/// Build the network a scenario describes, ready to run.
pub fn build(sc: &Scenario) -> Result<World, ScenarioError> {
    let dims = check(sc)?;
    let plan = match &sc.network {
        None => topology::dumbbell(sc)?,
        Some(net) => network::network(sc, net)?,
    };
    let (links, lines) = links::build_links(sc, &plan, &dims)?;
    let route_lists = topology::flow_routes(&plan)?;
    let path_rtts = endpoints::path_rtts(&route_lists, &links, dims.mtu_bytes);
    let (tcp, cc_names) = endpoints::tcp_flows(sc, &path_rtts)?;
    let udp = sources::udp_sources(sc, dims.n_tcp as u32);
    let (markers, marker_of) = markers::ppv_markers(sc, dims.n_flows())?;
    let mut rec = Recorders::new(sc, plan.bottleneck, cc_names);
    rec.report_links(plan.reported.clone(), plan.flow_paths.clone());
    let mut world = World {
        sched: Scheduler::new(),
        pool: PacketPool::new(),
        links,
        lines,
        routes: Routes::from_lists(&route_lists),
        tcp,
        udp,
        counters: vec![FlowCounters::default(); dims.n_flows()],
        out_buf: Vec::with_capacity(64),
        drop_buf: Vec::with_capacity(8),
        mark_buf: Vec::with_capacity(8),
        bottleneck: plan.bottleneck,
        duration_ns: sc.duration.ns,
        in_window: false,
        seed: sc.seed,
        changes: Vec::new(),
        markers,
        marker_of,
        rec,
        external_tcp: false,
        external_arrivals: Vec::new(),
        external_udp: false,
        external_captures: Vec::new(),
    };
    schedule::qdisc_timers(&mut world);
    schedule::changes(sc, &plan, &mut world)?;
    schedule::first_events(sc, &mut world);
    Ok(world)
}

/// Check what a scenario edited after parsing may have broken, and size the network.
fn check(sc: &Scenario) -> Result<Dims, ScenarioError> {
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
    let mtu_bytes = sc
        .flows
        .iter()
        .map(|g| g.mss + TCP_IP_HEADER_BYTES)
        .max()
        .unwrap_or(1500);
    Ok(Dims {
        n_tcp,
        n_udp,
        bdp_rtt_ns: sc.bottleneck.bdp_rtt.map_or(max_rtt_ns, |d| d.ns),
        mtu_bytes,
    })
}
