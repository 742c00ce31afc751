//! The entry points the Python bindings (and Rust tests) call.

use crate::results::RunOutput;
use crate::scenario::{Scenario, ScenarioError};

pub use crate::sim::{
    Control, FlowInterval, FlowState, ParamUpdate, ProgressFn, RunError, Stepper,
};

/// [`run`] with an external controller.
pub fn run_controlled(
    scenario: &Scenario,
    progress: Option<ProgressFn<'_>>,
    control: Option<Control<'_>>,
) -> Result<RunOutput, ScenarioError> {
    crate::sim::run_controlled(scenario, progress, control)
}

/// [`run_controlled`] whose result building asks `stop` between row batches and ends
/// with [`RunError::Cancelled`] when it says so (Ctrl-C while millions of trace rows become
/// tables, issue 33).
pub fn run_cancellable(
    scenario: &Scenario,
    progress: Option<ProgressFn<'_>>,
    control: Option<Control<'_>>,
    stop: &mut dyn FnMut() -> bool,
) -> Result<RunOutput, RunError> {
    crate::sim::run_cancellable(scenario, progress, control, stop)
}

/// Build the network a scenario describes and simulate it.
///
/// Errors are user-input errors found while building (unknown algorithm, bad parameter):
/// the simulation itself does not fail.
pub fn run(
    scenario: &Scenario,
    progress: Option<ProgressFn<'_>>,
) -> Result<RunOutput, ScenarioError> {
    crate::sim::run(scenario, progress)
}

/// Parse, validate and build (without running) a scenario, to report every input error up front.
pub fn validate(scenario: &Scenario) -> Result<(), ScenarioError> {
    crate::sim::build_only(scenario)
}

/// What a scenario's `[network]` is once built (nodes, links, the flows each carries,
/// the congestion candidates), for `ccsim validate` to print; `None` for a dumbbell.
pub fn network_report(
    scenario: &Scenario,
) -> Result<Option<crate::sim::NetworkReport>, ScenarioError> {
    crate::sim::network_report(scenario)
}

/// Parse a scenario in `format` ("toml" or "json").
pub fn parse(text: &str, format: &str) -> Result<Scenario, ScenarioError> {
    match format {
        "toml" => Scenario::from_toml(text),
        "json" => Scenario::from_json(text),
        other => Err(ScenarioError::new(
            "format",
            format!("expected \"toml\" or \"json\", got {other:?}"),
        )),
    }
}
