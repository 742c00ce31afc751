//! What `ccsim validate` prints of a `[network]`: its own nodes and links, how many
//! flows (and which groups) each link carries, and which links are congestion
//! candidates: the links saturated in the max-min fair allocation of the flows over the
//! network, computed by water-filling (Bertsekas & Gallager, *Data Networks*, 2nd ed.,
//! §6.5.2). Every TCP flow is taken as greedy, a UDP source as asking its mean rate, and
//! each flow is capped by its access links: a link is a candidate when, with every flow
//! taking its fair share, it is full, so a queue can build there. (What a run shows may
//! differ: short transfers, start times and congestion controls are not modelled.)

use serde::Serialize;

use super::network::network;
use super::topology::NetworkPlan;
use crate::scenario::{Network, Scenario, ScenarioError};

/// A `[network]` as built, for people to read.
#[derive(Debug, Serialize)]
pub struct NetworkReport {
    /// The network's own nodes (not the flows' hosts), in declaration order.
    pub nodes: Vec<String>,
    pub links: Vec<LinkReport>,
    /// A leaf-spine fabric's leaf oversubscription (hosts' over spines' capacity).
    pub oversubscription: Option<f64>,
    /// TCP and UDP flows placed on the network.
    pub flows: usize,
}

/// One of the network's own links.
#[derive(Debug, Serialize)]
pub struct LinkReport {
    pub name: String,
    pub from: String,
    pub to: String,
    pub rate_bps: u64,
    pub delay_ns: u64,
    /// The queue discipline's kind.
    pub queue: String,
    /// Flows whose data (forward route) crosses it.
    pub flows: u32,
    /// Flows whose ACKs cross it.
    pub ack_flows: u32,
    /// The groups (names, or `flows[i]` / `udp[i]`) of the flows whose data crosses it.
    pub groups: Vec<String>,
    /// Saturated in the max-min fair allocation: a congestion candidate.
    pub candidate: bool,
    /// The max-min fair rate of the flows it limits (candidates only), bit/s.
    pub fair_share_bps: Option<f64>,
}

/// The report of a scenario's `[network]` (`None` for a dumbbell).
pub fn network_report(sc: &Scenario) -> Result<Option<NetworkReport>, ScenarioError> {
    let Some(net) = &sc.network else {
        return Ok(None);
    };
    let plan = network(sc, net)?;
    let own = plan.reported.len();
    let (groups, caps) = flow_groups_and_caps(sc, &plan);
    // Forward routes are the even ones; the network's own links are the first `own`.
    let on_network =
        |r: &Vec<u32>| -> Vec<u32> { r.iter().copied().filter(|&l| (l as usize) < own).collect() };
    let forward: Vec<Vec<u32>> = plan.routes.iter().step_by(2).map(on_network).collect();
    let capacity: Vec<f64> = plan.links[..own]
        .iter()
        .map(|l| l.rate_bps as f64)
        .collect();
    let (saturated, share) = water_fill(&capacity, &forward, &caps);
    let mut links: Vec<LinkReport> = plan.links[..own]
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let tl = &plan.topo.links[i];
            LinkReport {
                name: l.name.clone(),
                from: plan.topo.node_names[tl.from as usize].clone(),
                to: plan.topo.node_names[tl.to as usize].clone(),
                rate_bps: l.rate_bps,
                delay_ns: l.delay_ns,
                queue: l.queue.kind.clone(),
                flows: 0,
                ack_flows: 0,
                groups: Vec::new(),
                candidate: saturated[i],
                fair_share_bps: saturated[i].then_some(share[i]),
            }
        })
        .collect();
    for (f, routes) in plan.routes.chunks(2).enumerate() {
        for &l in on_network(&routes[0]).iter() {
            let link = &mut links[l as usize];
            link.flows += 1;
            if link.groups.last() != Some(&groups[f]) && !link.groups.contains(&groups[f]) {
                link.groups.push(groups[f].clone());
            }
        }
        for &l in on_network(&routes[1]).iter() {
            links[l as usize].ack_flows += 1;
        }
    }
    let oversubscription = match net {
        Network::LeafSpine(f) => Some(f.oversubscription()),
        _ => None,
    };
    Ok(Some(NetworkReport {
        nodes: plan.topo.node_names[..node_count(&plan)].to_vec(),
        links,
        oversubscription,
        flows: plan.hosts.len(),
    }))
}

/// The network's own nodes: those added before the first flow's sender.
fn node_count(plan: &NetworkPlan) -> usize {
    plan.hosts
        .first()
        .map_or(plan.topo.node_names.len(), |&(s, _)| s as usize)
}

/// Each flow's group label and the rate it can ask for (its access link's; a UDP
/// source's mean rate if lower), in flow order (TCP groups, then UDP).
fn flow_groups_and_caps(sc: &Scenario, plan: &NetworkPlan) -> (Vec<String>, Vec<f64>) {
    let mut groups = Vec::with_capacity(plan.hosts.len());
    let mut caps = Vec::with_capacity(plan.hosts.len());
    // A flow's access link is its route's first link.
    let access = |f: usize| plan.links[plan.routes[2 * f][0] as usize].rate_bps as f64;
    for (gi, g) in sc.flows.iter().enumerate() {
        let label = g.name.clone().unwrap_or_else(|| format!("flows[{gi}]"));
        for _ in 0..g.count {
            caps.push(access(groups.len()));
            groups.push(label.clone());
        }
    }
    for (gi, g) in sc.udp.iter().enumerate() {
        let label = g.name.clone().unwrap_or_else(|| format!("udp[{gi}]"));
        for d in &g.drawn {
            caps.push(access(groups.len()).min(d.rate.bps as f64));
            groups.push(label.clone());
        }
    }
    (groups, caps)
}

/// Max-min fair rates by water-filling: raise every unfrozen flow's rate together until
/// a link fills or a flow reaches its cap; freeze those flows; repeat. Returns per link
/// whether it filled, and the rate of the flows it froze. Each round freezes a link or a
/// flow, and costs a pass over the links and the flows frozen.
fn water_fill(capacity: &[f64], uses: &[Vec<u32>], cap: &[f64]) -> (Vec<bool>, Vec<f64>) {
    let n_links = capacity.len();
    let mut flows_on: Vec<Vec<usize>> = vec![Vec::new(); n_links];
    for (f, route) in uses.iter().enumerate() {
        for &l in route {
            flows_on[l as usize].push(f);
        }
    }
    let mut active: Vec<u32> = flows_on.iter().map(|v| v.len() as u32).collect();
    let mut frozen_bps = vec![0.0; n_links];
    let mut frozen = vec![false; uses.len()];
    let (mut saturated, mut share) = (vec![false; n_links], vec![0.0; n_links]);
    let mut by_cap: Vec<usize> = (0..uses.len()).collect();
    by_cap.sort_by(|&a, &b| cap[a].total_cmp(&cap[b]));
    let mut next_cap = 0;
    let freeze = |f: usize, rate: f64, frozen: &mut [bool], active: &mut [u32], fz: &mut [f64]| {
        frozen[f] = true;
        for &l in &uses[f] {
            active[l as usize] -= 1;
            fz[l as usize] += rate;
        }
    };
    loop {
        while next_cap < by_cap.len() && frozen[by_cap[next_cap]] {
            next_cap += 1;
        }
        // The level at which the next link fills, and the next flow's cap.
        let fill = (0..n_links)
            .filter(|&l| active[l] > 0 && !saturated[l])
            .map(|l| ((capacity[l] - frozen_bps[l]) / f64::from(active[l]), l))
            .min_by(|a, b| a.0.total_cmp(&b.0));
        let capped = by_cap.get(next_cap).map(|&f| cap[f]);
        match (fill, capped) {
            (Some((level, _)), c) if c.is_none_or(|c| level <= c) => {
                // Every link full at this level (ties: a flow's uplink and downlink of
                // one rate fill together), then their flows frozen.
                let full: Vec<usize> = (0..n_links)
                    .filter(|&l| active[l] > 0 && !saturated[l])
                    .filter(|&l| {
                        (capacity[l] - frozen_bps[l]) / f64::from(active[l]) <= level * (1.0 + 1e-9)
                    })
                    .collect();
                for l in full {
                    saturated[l] = true;
                    share[l] = level;
                    for &f in &flows_on[l] {
                        if !frozen[f] {
                            freeze(f, level, &mut frozen, &mut active, &mut frozen_bps);
                        }
                    }
                }
            }
            (_, Some(c)) => {
                let f = by_cap[next_cap];
                freeze(f, c, &mut frozen, &mut active, &mut frozen_bps);
            }
            _ => break,
        }
    }
    (saturated, share)
}

#[cfg(test)]
mod tests {
    use super::water_fill;

    #[test]
    fn water_filling_matches_hand_computed_allocations() {
        // Two links of 10 and 20; flow 0 on both, flow 1 on the first, flows 2 and 3 on
        // the second: the first fills at 5 each; the second gives its other 15 to two
        // flows (7.5 each) and fills too.
        let uses = [vec![0, 1], vec![0], vec![1], vec![1]];
        let (sat, share) = water_fill(&[10.0, 20.0], &uses, &[f64::INFINITY; 4]);
        assert_eq!(sat, [true, true]);
        assert_eq!(share, [5.0, 7.5]);
        // Cap flows 2 and 3 at 2 each: the second link no longer fills.
        let (sat, _) = water_fill(&[10.0, 20.0], &uses, &[f64::INFINITY, 9.0, 2.0, 2.0]);
        assert_eq!(sat, [true, false]);
        // An unused link never fills.
        let (sat, _) = water_fill(&[10.0, 20.0, 1.0], &uses, &[f64::INFINITY; 4]);
        assert_eq!(sat, [true, true, false]);
        // A flow's two links of one rate fill together.
        let (sat, share) = water_fill(&[10.0, 10.0], &[vec![0, 1]], &[f64::INFINITY]);
        assert_eq!((sat, share), (vec![true, true], vec![10.0, 10.0]));
    }
}
