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
use crate::results::{Cancelled, RowBatches, RunOutput};
use crate::scenario::{Scenario, ScenarioError};

pub use crate::flow::{FlowCounters, TcpFlow};
pub use crate::qdisc::droptail::Limit as DropTailLimit;
pub use crate::trace::TABLE_NAMES;
pub use build::{build, network_report, LinkReport, NetworkReport};
pub use estimate::{estimate, Estimate};
pub use external::ExternalCapture;
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
    run_cancellable(sc, progress, control, &mut || false).map_err(|err| match err {
        RunError::Scenario(err) => err,
        RunError::Cancelled(_) => unreachable!("a stop flag that is never set"),
    })
}

/// Why a cancellable run returned nothing.
#[derive(Debug, Clone, PartialEq)]
pub enum RunError {
    /// The scenario cannot be run (found while building, or a controller's bad update).
    Scenario(ScenarioError),
    /// `stop` said so while the results were built.
    Cancelled(Cancelled),
}

impl From<ScenarioError> for RunError {
    fn from(err: ScenarioError) -> Self {
        RunError::Scenario(err)
    }
}

impl From<Cancelled> for RunError {
    fn from(err: Cancelled) -> Self {
        RunError::Cancelled(err)
    }
}

/// [`run_controlled`] whose result building asks `stop` between row batches (at most
/// every [`crate::results::CANCEL_CHECK_WALL`]) and ends with [`RunError::Cancelled`] when
/// it returns true. The event loop itself is stopped through `progress` (which the
/// Python layer makes raise).
pub fn run_cancellable(
    sc: &Scenario,
    progress: Option<ProgressFn<'_>>,
    control: Option<Control<'_>>,
    stop: &mut dyn FnMut() -> bool,
) -> Result<RunOutput, RunError> {
    let mut world = build(sc)?;
    if let Some(c) = &control {
        if c.interval_ns == 0 {
            return Err(ScenarioError::new(
                "control_interval",
                "expected a positive duration like \"100ms\"",
            )
            .into());
        }
        world
            .sched
            .at(c.interval_ns.min(world.duration_ns), Event::ControlTick);
    }
    let started = Instant::now();
    world.run_until_end_controlled(progress, control)?;
    let wall_s = started.elapsed().as_secs_f64();
    let mut batches = RowBatches::new(stop);
    Ok(world.finish_in_batches(wall_s, &mut batches)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{RowBudget, TRACE_ROWS_BUDGET};

    /// A traced flow of back-to-back 30 KB transfers (a new sender for each), another
    /// traced bulk flow, and an untraced one.
    const TRACED: &str = r#"
duration = "2s"
[bottleneck]
rate = "10Mbps"
queue = { kind = "fifo", limit = "20p" }
[[flows]]
rtt = "10ms"
size = "30KB"
repeat = { times = 200 }
trace = true
[[flows]]
rtt = "20ms"
trace = true
[[flows]]
rtt = "20ms"
[trace]
rtt_samples = true
"#;

    fn rows(out: &RunOutput, table: &str) -> usize {
        out.tables
            .iter()
            .find(|t| t.name == table)
            .map_or(0, |t| t.num_rows())
    }

    /// The traced flows share `rtt_samples`' and `cc_reductions`' budgets; a flow's later
    /// transfers go on with what its first one left (issue 33: before, these traces had
    /// no budget and grew with the run until the process died).
    #[test]
    fn per_flow_traces_stop_at_their_budget_across_transfers() {
        let sc = Scenario::from_toml(TRACED).unwrap();
        let world = build(&sc).unwrap();
        let share = TRACE_ROWS_BUDGET / 2;
        for f in &world.tcp[..2] {
            assert_eq!(f.sender.rtt_log_budget.limit_rows(), share);
            assert_eq!(f.sender.reductions_budget.limit_rows(), share);
        }
        let unbudgeted = build(&sc).unwrap();
        let full = {
            let mut w = unbudgeted;
            w.run_until_end(None);
            w.finish(0.0)
        };
        assert_eq!(full.summary.warnings, None);
        let (all_rtts, all_cuts) = (rows(&full, "rtt_samples"), rows(&full, "cc_reductions"));
        // the first flow's samples come from many transfers, so the budget must outlive one
        assert!(all_rtts > 400 && all_cuts >= 4, "{all_rtts} {all_cuts}");

        let mut w = build(&sc).unwrap();
        for f in &mut w.tcp[..2] {
            f.sender.rtt_log_budget = RowBudget::new(100);
            f.sender.reductions_budget = RowBudget::new(1);
        }
        w.run_until_end(None);
        let out = w.finish(0.0);
        assert_eq!(rows(&out, "rtt_samples"), 200);
        assert_eq!(rows(&out, "cc_reductions"), 2);
        let warnings = out.summary.warnings.unwrap();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].starts_with("rtt_samples: stopped recording for 2 flow(s)"));
        assert!(warnings[1].starts_with("cc_reductions: stopped recording for 2 flow(s)"));
        // what was kept is the start of the full trace: nothing else moved
        assert_eq!(full.summary.events, out.summary.events);
    }
}
