//! The entry points the Python bindings (and Rust tests) call.

use crate::results::RunOutput;
use crate::scenario::{Scenario, ScenarioError};

/// Called with the fraction of simulated time done, about every 1% of the run.
pub type ProgressFn<'a> = &'a mut dyn FnMut(f64);

pub use crate::sim::{FlowState, ParamUpdate};

/// An external controller: every `interval_ns` of simulated time `callback` sees the state
/// of every TCP flow and returns parameter changes for their congestion controllers (how
/// a deadline-aware controller retunes CDG's G while a transfer runs).
pub struct Control<'a> {
    pub interval_ns: u64,
    pub callback: &'a mut dyn FnMut(&[FlowState]) -> Vec<ParamUpdate>,
}

/// [`run`] with an external controller.
pub fn run_controlled(
    scenario: &Scenario,
    progress: Option<ProgressFn<'_>>,
    control: Option<Control<'_>>,
) -> Result<RunOutput, ScenarioError> {
    crate::sim::run_controlled(scenario, progress, control)
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
