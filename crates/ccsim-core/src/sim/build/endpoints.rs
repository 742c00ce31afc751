//! Stage 3, endpoints: every TCP flow's sender and receiver with its congestion control,
//! its transfers (one bulk transfer, or finite ones with think times between) and its
//! DA-LBE controller, and each path's RTT that seeds the sender's estimator.

use super::deadline::group_deadline;
use crate::cc::{self, CongestionControl};
use crate::engine::rng::{stream, StreamKind};
use crate::engine::serialisation_ns;
use crate::flow::{ConnTotals, FlowDeadline, TcpFlow};
use crate::net::link::Link;
use crate::net::packet::TCP_IP_HEADER_BYTES;
use crate::scenario::{Scenario, ScenarioError, TcpFlowDraw, TcpFlowGroup};
use crate::tcp::receiver::{TcpReceiver, DELACK_NS};
use crate::tcp::sender::TcpSender;
use crate::tcp::TcpConfig;
use crate::trace::RowBudget;

/// Each flow's path RTT with serialisation: a full-size packet's there, an ACK's back
/// (routes `2f` and `2f + 1`).
pub(super) fn path_rtts(routes: &[Vec<u32>], links: &[Link], mtu_bytes: u32) -> Vec<u64> {
    let one_way = |route: &[u32], bytes: u32| -> u64 {
        route
            .iter()
            .map(|&l| {
                let link = &links[l as usize];
                link.delay_ns + serialisation_ns(bytes, link.rate_bps)
            })
            .sum()
    };
    routes
        .chunks_exact(2)
        .map(|fr| one_way(&fr[0], mtu_bytes) + one_way(&fr[1], TCP_IP_HEADER_BYTES))
        .collect()
}

/// The TCP flows in flow order, and each one's congestion control's name.
pub(super) fn tcp_flows(
    sc: &Scenario,
    path_rtts: &[u64],
) -> Result<(Vec<TcpFlow>, Vec<&'static str>), ScenarioError> {
    let n_tcp: usize = sc.flows.iter().map(|g| g.count as usize).sum();
    let mut tcp = Vec::with_capacity(n_tcp);
    let mut cc_names = Vec::with_capacity(n_tcp);
    // The traced flows share each per-flow trace's budget (`cc_reductions`,
    // `rtt_samples`) equally.
    let traced: u64 = sc
        .flows
        .iter()
        .filter(|g| g.trace)
        .map(|g| u64::from(g.count))
        .sum();
    let share = RowBudget::per_flow_share(traced);
    for (gi, g) in sc.flows.iter().enumerate() {
        let deadline = group_deadline(g, gi)?.map(Box::new);
        for drawn in &g.drawn {
            let fid = tcp.len() as u32;
            let mut flow = tcp_flow(sc, (gi, g), drawn, fid, path_rtts[fid as usize], &deadline)?;
            if g.trace {
                flow.sender.reductions_budget = share.clone();
                flow.sender.rtt_log_budget = share.clone();
            }
            cc_names.push(flow.sender.cc.name());
            tcp.push(flow);
        }
    }
    Ok((tcp, cc_names))
}

/// TCP flow `fid`, the group's drawn values `drawn`.
fn tcp_flow(
    sc: &Scenario,
    (gi, g): (usize, &TcpFlowGroup),
    drawn: &TcpFlowDraw,
    fid: u32,
    path_rtt_ns: u64,
    deadline: &Option<Box<FlowDeadline>>,
) -> Result<TcpFlow, ScenarioError> {
    let path = format!("flows[{gi}].cc");
    let mut cc = cc::build(&g.cc, &path)?;
    cc.seed_rng(stream(sc.seed, StreamKind::Cc, fid as u64));
    let cfg = TcpConfig {
        mss: g.mss,
        initial_window: g.initial_window,
        sack: g.sack,
        ecn: g.ecn,
        pacing: g.pacing,
        recovery_exit: g.recovery_exit,
        rack: g.rack,
        tlp: g.tlp,
        ce_quickack: g.ce_quickack,
        min_rto_ns: g.min_rto.ns,
        delayed_ack: g.delayed_ack,
        total_bytes: drawn.sizes.first().map(|s| s.bytes),
        accurate_ecn: g.ecn && cc.needs_accurate_ecn(),
    };
    let receiver = TcpReceiver::new(fid, 2 * fid + 1, &cfg, DELACK_NS);
    let template = (drawn.sizes.len() > 1).then(|| Box::new((cfg.clone(), cc.clone())));
    let mut sender = TcpSender::new(fid, 2 * fid, cfg, cc, path_rtt_ns);
    sender.trace_reductions = g.trace;
    if g.trace && sc.trace.rtt_samples {
        sender.rtt_log = Some(Vec::new());
    }
    // The transfers after the first, each with the think time before it.
    let next = drawn
        .sizes
        .iter()
        .skip(1)
        .zip(&drawn.thinks)
        .map(|(s, t)| (s.bytes, t.ns))
        .collect();
    Ok(TcpFlow {
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
    })
}
