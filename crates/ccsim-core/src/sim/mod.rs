//! Building a scenario's network and running it.
//!
//! - [`build`] (`build/`, one file per stage) turns a scenario into a [`World`];
//! - `world.rs` holds the [`World`] and its event loop: it dispatches events and hands
//!   packets between the links' datapath ([`crate::net::datapath`]) and the endpoints;
//! - the run's statistics and tables are recorded and assembled by
//!   [`crate::trace::Recorders`], which the world calls at fixed points.

mod build;
pub mod estimate;
mod external;
pub mod stepper;
pub(crate) mod world;

use std::time::Instant;

use crate::engine::Event;
use crate::results::RunOutput;
use crate::scenario::{Scenario, ScenarioError};

pub use crate::flow::{FlowCounters, TcpFlow};
pub use crate::qdisc::droptail::Limit as DropTailLimit;
pub use crate::trace::TABLE_NAMES;
pub use build::{build, network_report, LinkReport, NetworkReport};
pub use estimate::{estimate, Estimate};
pub use stepper::{FlowInterval, Stepper};
pub use world::{FlowState, ParamUpdate, World};

/// Called with the fraction of simulated time done, about every 1% of the run.
pub type ProgressFn<'a> = &'a mut dyn FnMut(f64);

/// An external controller: every `interval_ns` of simulated time `callback` sees the state
/// of every TCP flow and returns parameter changes for their congestion controllers (how
/// a deadline-aware controller retunes CDG's G while a transfer runs).
pub struct Control<'a> {
    pub interval_ns: u64,
    pub callback: &'a mut dyn FnMut(&[FlowState]) -> Vec<ParamUpdate>,
}

/// Validate by building without running.
pub fn build_only(sc: &Scenario) -> Result<(), ScenarioError> {
    build(sc).map(|_| ())
}

/// Build and run a scenario.
pub fn run(sc: &Scenario, progress: Option<ProgressFn<'_>>) -> Result<RunOutput, ScenarioError> {
    run_controlled(sc, progress, None)
}

/// Build and run a scenario with an optional external controller.
pub fn run_controlled(
    sc: &Scenario,
    progress: Option<ProgressFn<'_>>,
    control: Option<Control<'_>>,
) -> Result<RunOutput, ScenarioError> {
    let mut world = build(sc)?;
    if let Some(c) = &control {
        if c.interval_ns == 0 {
            return Err(ScenarioError::new(
                "control_interval",
                "expected a positive duration like \"100ms\"",
            ));
        }
        world
            .sched
            .at(c.interval_ns.min(world.duration_ns), Event::ControlTick);
    }
    let started = Instant::now();
    world.run_until_end_controlled(progress, control)?;
    let wall_s = started.elapsed().as_secs_f64();
    Ok(world.finish(wall_s))
}
