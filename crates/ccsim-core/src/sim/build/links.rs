//! Stage 2, links and queues: every planned link with its queue discipline (shaped where
//! the scenario says), its random stream and its delay line, and the pcap capture's
//! interfaces.

use std::collections::HashMap;

use super::topology::{LinkPlan, LinkRole, NetworkPlan};
use super::Dims;
use crate::engine::rng::{stream, StreamKind};
use crate::net::link::{DelayLine, Link, NO_LINE_ENTRY, NO_PCAP};
use crate::net::link_model::{LinkJitter, LinkLoss};
use crate::qdisc::{self, shaper, LinkInfo, Qdisc, QueueDisc};
use crate::scenario::link_model::TraceDequeue;
use crate::scenario::{Scenario, ScenarioError};
use crate::stats::QueueStats;

/// The links in plan order, and one delay line per distinct delay.
pub(super) fn build_links(
    sc: &Scenario,
    plan: &NetworkPlan,
    dims: &Dims,
) -> Result<(Vec<Link>, Vec<DelayLine>), ScenarioError> {
    let mut links = Vec::with_capacity(plan.links.len());
    let mut lines: Vec<DelayLine> = Vec::new();
    // One delay line per distinct delay, found through a map (with random RTTs there may
    // be as many delays as flows).
    let mut line_of: HashMap<u64, u32> = HashMap::new();
    for (i, p) in plan.links.iter().enumerate() {
        let qd = link_qdisc(sc, p, dims)?;
        let tl = &plan.topo.links[i];
        let new_line = |lines: &mut Vec<DelayLine>| {
            lines.push(DelayLine {
                delay_ns: p.delay_ns,
                ..DelayLine::default()
            });
            lines.len() as u32 - 1
        };
        // A jittered link's packets enter a line out of arrival order; a line of its own
        // keeps the sorted insertion's scan to that link's packets (and keeps the lines
        // of a scenario without jitter exactly as they were).
        let line = if p.jitter.is_some() {
            new_line(&mut lines)
        } else {
            *line_of
                .entry(p.delay_ns)
                .or_insert_with(|| new_line(&mut lines))
        };
        links.push(Link {
            name: p.name.clone(),
            from: tl.from,
            to: tl.to,
            rate_bps: p.rate_bps,
            delay_ns: p.delay_ns,
            qdisc_uses_timer: qd.uses_timer(),
            qdisc: qd,
            rng: stream(sc.seed, StreamKind::Qdisc, i as u64),
            busy_until_ns: 0,
            tx_pending: false,
            qdisc_timer: Default::default(),
            line,
            in_flight_entry: NO_LINE_ENTRY,
            in_service_bytes: 0,
            models: 0,
            stats: QueueStats::new(p.stats_hist),
            pcap_iface: NO_PCAP,
            loss: p
                .loss
                .as_ref()
                .map(|spec| LinkLoss::new(spec, sc.seed, i as u64)),
            service: Default::default(),
            offered: Default::default(),
            jitter: p
                .jitter
                .as_ref()
                .map(|spec| LinkJitter::new(spec, sc.seed, i as u64)),
            trace: p.trace.as_ref().map(|t| {
                let mut service = crate::net::link_model::mahimahi::TraceService::new(t.clone());
                service.dequeue_at_opportunity = p.trace_dequeue == TraceDequeue::Opportunity;
                Box::new(service)
            }),
        });
        links.last_mut().expect("just pushed").sync_models();
    }
    attach_pcap(sc, &mut links)?;
    Ok((links, lines))
}

/// A link's queue discipline, behind the shaper its role asks for.
fn link_qdisc(sc: &Scenario, p: &LinkPlan, dims: &Dims) -> Result<Qdisc, ScenarioError> {
    let info = LinkInfo {
        rate_bps: p.rate_bps,
        bdp_bytes: p.rate_bps as f64 * dims.bdp_rtt_ns as f64 / 8e9,
        mtu_bytes: dims.mtu_bytes,
    };
    let qd = qdisc::build(&p.queue, &p.queue_path, info)?;
    match p.role {
        LinkRole::Access => Ok(qd),
        LinkRole::BottleneckReverse => match &sc.bottleneck.reverse_shaper {
            None => Ok(qd),
            Some(sh) => {
                qdisc::build_shaped(qd, sh.sustained.bps, sh.peak.map(|r| r.bps), sh.burst.bytes)
                    .map_err(|m| ScenarioError::new("bottleneck.reverse_shaper", m))
            }
        },
        LinkRole::Bottleneck | LinkRole::Network => {
            let (shaper, shaper_path) = match p.role {
                LinkRole::Network => (&p.shaper, p.queue_path.replace(".queue", ".shaper")),
                _ => (&sc.bottleneck.shaper, "bottleneck.shaper".to_owned()),
            };
            let Some(sh) = shaper else {
                return Ok(qd);
            };
            let peak = sh.peak.map(|r| r.bps);
            if sh.docsis {
                let params =
                    shaper::DocsisParams::cablelabs(peak.unwrap_or(sh.sustained.bps), p.rate_bps);
                shaper::build_docsis(qd, sh.sustained.bps, peak, sh.burst.bytes, params)
            } else {
                qdisc::build_shaped(qd, sh.sustained.bps, peak, sh.burst.bytes)
            }
            .map_err(|m| ScenarioError::new(shaper_path, m))
        }
    }
}

/// `[trace] pcap`: the named links, one capture interface each, in the order given.
fn attach_pcap(sc: &Scenario, links: &mut [Link]) -> Result<(), ScenarioError> {
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
    Ok(())
}
