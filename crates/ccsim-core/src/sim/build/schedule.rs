//! Stage 6, the schedule: the queue disciplines' first timers, the scenario's scheduled
//! changes (validated now), and the first events of the run.

use super::super::world::{ChangeAction, World};
use super::topology::NetworkPlan;
use crate::cc::{self, CongestionControl};
use crate::engine::Event;
use crate::scenario::{Scenario, ScenarioError};

/// Arm every discipline's timer that asks for one from the start.
pub(super) fn qdisc_timers(world: &mut World) {
    for l in 0..world.links.len() as u32 {
        world.sync_qdisc_timer(l);
    }
}

/// Schedule the scenario's changes: congestion-control parameters (validated now on a
/// copy of the group's controller), then the links' rate changes.
pub(super) fn changes(
    sc: &Scenario,
    plan: &NetworkPlan,
    world: &mut World,
) -> Result<(), ScenarioError> {
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
            let params = ch.params.iter().map(|(n, v)| (n.clone(), v.clone()));
            let action = ChangeAction::CcParams {
                first,
                count: g.count,
                params: params.collect(),
                path,
            };
            timed.push((ch.at.ns, action));
        }
        first += g.count;
    }
    // Every link's rate steps, link by link (the dumbbell's bottleneck's included). A
    // link whose rate will change measures utilisation against the capacity offered
    // from the start (its every interval, before the first change too).
    for (l, p) in plan.links.iter().enumerate() {
        if p.rate_changes.is_empty() {
            continue;
        }
        world.links[l].expect_rate_changes();
        for rc in &p.rate_changes {
            let action = ChangeAction::LinkRate {
                link: l as u32,
                rate_bps: rc.rate.bps,
            };
            timed.push((rc.at.ns, action));
        }
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
        let i = world.changes.len() as u32;
        world.sched.at(at, Event::Change(i));
        world.changes.push(action);
    }
    Ok(())
}

/// The first events: the measurement window first so it wins ties at the same instant,
/// the stats ticks, every TCP flow's start (and stop), every UDP source's first packet.
pub(super) fn first_events(sc: &Scenario, world: &mut World) {
    world.sched.at(sc.measure_start.ns, Event::MeasureStart);
    world.sched.at(sc.measure_end.ns, Event::MeasureEnd);
    world.sched.at(sc.stats_interval.ns, Event::StatsTick);
    let mut fi = 0u32;
    for g in &sc.flows {
        for drawn in &g.drawn {
            world.sched.at(drawn.start.ns, Event::FlowStart(fi));
            if let Some(stop) = g.stop {
                world.sched.at(stop.ns, Event::FlowStop(fi));
            }
            fi += 1;
        }
    }
    for u in 0..world.udp.len() {
        let start = world.udp[u].start_ns;
        world.sched.at(start, Event::UdpSend(u as u32));
    }
}
