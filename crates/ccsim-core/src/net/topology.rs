//! Nodes, links and static shortest-path routing on a general graph.
//!
//! The dumbbell is one way of filling a [`Topology`]; parking-lot and multi-bottleneck
//! topologies add nodes and links the same way, and the engine routes packets along the
//! per-flow link lists computed here without knowing the shape.

use std::collections::{HashMap, VecDeque};

/// Index of a node.
pub type NodeId = u32;

/// A link as the topology knows it.
#[derive(Debug, Clone)]
pub struct TopoLink {
    pub from: NodeId,
    pub to: NodeId,
}

/// A directed graph of nodes and links.
#[derive(Debug, Clone, Default)]
pub struct Topology {
    pub node_names: Vec<String>,
    pub links: Vec<TopoLink>,
    out_links: Vec<Vec<u32>>,
    in_links: Vec<Vec<u32>>,
}

impl Topology {
    pub fn add_node(&mut self, name: impl Into<String>) -> NodeId {
        self.node_names.push(name.into());
        self.out_links.push(Vec::new());
        self.in_links.push(Vec::new());
        (self.node_names.len() - 1) as NodeId
    }

    /// Add a link and return its index.
    pub fn add_link(&mut self, from: NodeId, to: NodeId) -> u32 {
        let id = self.links.len() as u32;
        self.links.push(TopoLink { from, to });
        self.out_links[from as usize].push(id);
        self.in_links[to as usize].push(id);
        id
    }

    /// Fewest-hop routes for many `(src, dst)` pairs, as [`Topology::route`] gives them,
    /// in time linear in the number of pairs when hosts hang off routers: a source with
    /// one out-link and a destination with one in-link route through those links and the
    /// route between the two routers, searched once per router pair and reused. (A search
    /// per host pair would be quadratic in hosts: every search visits every host.)
    pub fn routes(&self, pairs: &[(NodeId, NodeId)]) -> Option<Vec<Vec<u32>>> {
        let mut between: HashMap<(NodeId, NodeId), Option<Vec<u32>>> = HashMap::new();
        let mut out = Vec::with_capacity(pairs.len());
        for &(src, dst) in pairs {
            let (up, down) = (&self.out_links[src as usize], &self.in_links[dst as usize]);
            let route = if src != dst && up.len() == 1 && down.len() == 1 {
                let (up, down) = (up[0], down[0]);
                let (a, b) = (self.links[up as usize].to, self.links[down as usize].from);
                let core = between
                    .entry((a, b))
                    .or_insert_with(|| self.route(a, b))
                    .as_ref()?;
                // Through `src` or `dst` again would not be a fewest-hop route.
                if core.iter().any(|&l| {
                    let tl = &self.links[l as usize];
                    [tl.from, tl.to].iter().any(|&n| n == src || n == dst)
                }) {
                    self.route(src, dst)?
                } else {
                    let mut r = Vec::with_capacity(core.len() + 2);
                    r.push(up);
                    r.extend_from_slice(core);
                    r.push(down);
                    r
                }
            } else {
                self.route(src, dst)?
            };
            out.push(route);
        }
        Some(out)
    }

    /// Every node's fewest-hop distance to `dst` (`u32::MAX`: cannot reach it), by a
    /// search over the links backwards: what equal-cost multipath chooses among.
    pub fn hops_to(&self, dst: NodeId) -> Vec<u32> {
        let mut dist = vec![u32::MAX; self.node_names.len()];
        dist[dst as usize] = 0;
        let mut queue = VecDeque::from([dst]);
        while let Some(v) = queue.pop_front() {
            for &l in &self.in_links[v as usize] {
                let u = self.links[l as usize].from;
                if dist[u as usize] == u32::MAX {
                    dist[u as usize] = dist[v as usize] + 1;
                    queue.push_back(u);
                }
            }
        }
        dist
    }

    /// An equal-cost route from `src` to the node `hops_to` was searched for, as a
    /// switch fabric with ECMP forwards a flow: at every node, of the out-links one hop
    /// closer to the destination (in insertion order), the one the flow's `hash` picks
    /// by hash-threshold (RFC 2992 §2: the key space cut into as many equal regions as
    /// next hops; here the 64-bit hash, `n * hash / 2^64`). Each node salts the hash
    /// with its own id first, as switches seed their hash functions differently, so
    /// flows that collide at one switch do not all collide again at the next (the
    /// polarisation RFC 2992 §4 warns of). Returns the route and whether any node had a
    /// choice; `None` if `src` cannot reach the destination.
    pub fn ecmp_route(&self, src: NodeId, hops_to: &[u32], hash: u64) -> Option<(Vec<u32>, bool)> {
        let mut at = src;
        let mut left = *hops_to.get(src as usize)?;
        if left == u32::MAX {
            return None;
        }
        let mut route = Vec::with_capacity(left as usize);
        let mut branched = false;
        let mut next = Vec::new();
        while left > 0 {
            next.clear();
            next.extend(
                self.out_links[at as usize]
                    .iter()
                    .copied()
                    .filter(|&l| hops_to[self.links[l as usize].to as usize] == left - 1),
            );
            branched |= next.len() > 1;
            let salted = crate::engine::rng::splitmix64(hash ^ u64::from(at));
            let pick = ((u128::from(salted) * next.len() as u128) >> 64) as usize;
            let l = next[pick];
            route.push(l);
            at = self.links[l as usize].to;
            left -= 1;
        }
        Some((route, branched))
    }

    /// Fewest-hop route from `src` to `dst` as a list of link indices (ties broken by
    /// link insertion order, so routing is deterministic). `None` if unreachable.
    pub fn route(&self, src: NodeId, dst: NodeId) -> Option<Vec<u32>> {
        if src == dst {
            return Some(Vec::new());
        }
        let n = self.node_names.len();
        let mut via: Vec<Option<u32>> = vec![None; n];
        let mut seen = vec![false; n];
        let mut queue = VecDeque::from([src]);
        seen[src as usize] = true;
        while let Some(u) = queue.pop_front() {
            for &l in &self.out_links[u as usize] {
                let v = self.links[l as usize].to;
                if !seen[v as usize] {
                    seen[v as usize] = true;
                    via[v as usize] = Some(l);
                    if v == dst {
                        let mut path = vec![l];
                        let mut at = self.links[l as usize].from;
                        while at != src {
                            let l2 = via[at as usize].expect("BFS predecessor");
                            path.push(l2);
                            at = self.links[l2 as usize].from;
                        }
                        path.reverse();
                        return Some(path);
                    }
                    queue.push_back(v);
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_fewest_hops_and_reports_unreachable() {
        let mut t = Topology::default();
        let a = t.add_node("a");
        let b = t.add_node("b");
        let c = t.add_node("c");
        let d = t.add_node("d");
        let ab = t.add_link(a, b);
        let bc = t.add_link(b, c);
        let _ac = t.add_link(a, c);
        let cd = t.add_link(c, d);
        assert_eq!(t.route(a, d), Some(vec![2, cd]));
        assert_eq!(t.route(b, d), Some(vec![bc, cd]));
        assert_eq!(t.route(d, a), None);
        let _ = ab;
    }

    /// Two routers joined through `k` middle nodes (a diamond for `k = 2`).
    fn diamond(k: u32) -> (Topology, NodeId, NodeId) {
        let mut t = Topology::default();
        let (a, z) = (t.add_node("a"), t.add_node("z"));
        for i in 0..k {
            let m = t.add_node(format!("m{i}"));
            t.add_link(a, m);
            t.add_link(m, z);
        }
        (t, a, z)
    }

    #[test]
    fn ecmp_spreads_flows_evenly_over_equal_cost_next_hops() {
        let (t, a, z) = diamond(4);
        let dist = t.hops_to(z);
        assert_eq!(dist[a as usize], 2);
        let mut per_middle = [0u32; 4];
        let n = 40_000u64;
        for f in 0..n {
            let h =
                crate::engine::rng::stream(1, crate::engine::rng::StreamKind::Ecmp, f).next_u64();
            let (route, branched) = t.ecmp_route(a, &dist, h).expect("reachable");
            assert!(branched);
            assert_eq!(route.len(), 2);
            // The first link out of a is 2i for middle node i; the second leaves it.
            assert_eq!(route[1], route[0] + 1);
            per_middle[(route[0] / 2) as usize] += 1;
        }
        // Binomial(40000, 1/4): sd about 87, so 5 sd is 435 about the mean 10000.
        for c in per_middle {
            assert!((c as i64 - 10_000).abs() < 435, "{per_middle:?}");
        }
        // One path only: no choice, and the fewest-hop route.
        let (t, a, z) = diamond(1);
        let (route, branched) = t.ecmp_route(a, &t.hops_to(z), 7).unwrap();
        assert_eq!((route, branched), (t.route(a, z).unwrap(), false));
        assert_eq!(t.ecmp_route(z, &t.hops_to(a), 7), None);
    }

    #[test]
    fn routes_between_hosts_match_the_graph_search() {
        // A dumbbell: two routers, three hosts on each side, links in both directions.
        let mut t = Topology::default();
        let (l, r) = (t.add_node("l"), t.add_node("r"));
        t.add_link(l, r);
        t.add_link(r, l);
        let mut pairs = Vec::new();
        for k in 0..3 {
            let s = t.add_node(format!("s{k}"));
            let d = t.add_node(format!("d{k}"));
            t.add_link(s, l);
            t.add_link(r, d);
            t.add_link(d, r);
            t.add_link(l, s);
            pairs.push((s, d));
            pairs.push((d, s));
        }
        pairs.push((l, r));
        let direct: Vec<_> = pairs.iter().map(|&(a, b)| t.route(a, b).unwrap()).collect();
        assert_eq!(t.routes(&pairs), Some(direct));
        let lone = t.add_node("lone");
        assert_eq!(t.routes(&[(lone, l)]), None);
    }
}
