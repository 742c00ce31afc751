//! Stage 5, PPV markers at the senders' edge: one per flow, or one per group with scope
//! "group", each with its own random stream.

use crate::engine::rng::{stream, SimRng, StreamKind};
use crate::ppv::marker::{Marker, MarkerParams};
use crate::ppv::tvf::Tvf;
use crate::scenario::{PpvScope, PpvSpec, Scenario, ScenarioError, TvfSpec};

/// The markers, and each flow's marker (an index into them), if any.
pub(super) type Markers = (Vec<(Marker, SimRng)>, Vec<Option<u32>>);

/// Every group's markers, flows numbered TCP groups first, then UDP groups.
pub(super) fn ppv_markers(sc: &Scenario, n_flows: usize) -> Result<Markers, ScenarioError> {
    let mut markers: Vec<(Marker, SimRng)> = Vec::new();
    let mut marker_of: Vec<Option<u32>> = vec![None; n_flows];
    let group_specs = sc
        .flows
        .iter()
        .enumerate()
        .map(|(gi, g)| (format!("flows[{gi}].ppv"), g.count, g.ppv.as_ref()))
        .chain(
            sc.udp
                .iter()
                .enumerate()
                .map(|(gi, g)| (format!("udp[{gi}].ppv"), g.count, g.ppv.as_ref())),
        );
    let mut next_flow = 0usize;
    for (path, count, spec) in group_specs {
        if let Some(spec) = spec {
            let tvf = value_function(spec, &path)?;
            let params = MarkerParams {
                tau_ns: spec.tau.ns,
            };
            for k in 0..count as usize {
                if k == 0 || spec.scope == PpvScope::Flow {
                    let marker = Marker::new(tvf.clone(), params)
                        .map_err(|m| ScenarioError::new(path.clone(), m))?;
                    let rng = stream(sc.seed, StreamKind::Marker, markers.len() as u64);
                    markers.push((marker, rng));
                }
                marker_of[next_flow + k] = Some(markers.len() as u32 - 1);
            }
        }
        next_flow += count as usize;
    }
    Ok((markers, marker_of))
}

/// A group's throughput-value function: a preset or its points.
fn value_function(spec: &PpvSpec, path: &str) -> Result<Tvf, ScenarioError> {
    match &spec.tvf {
        TvfSpec::Preset(name) => Tvf::preset(name).ok_or_else(|| {
            ScenarioError::new(
                format!("{path}.tvf"),
                format!("unknown value function {name:?} (known: gold, silver, background, voice)"),
            )
        }),
        // Tvf errors name the offending point first: "points[2]: ...".
        TvfSpec::Points(points) => Tvf::from_points(points).map_err(|m| match m.split_once(": ") {
            Some((sub, rest)) => ScenarioError::new(format!("{path}.{sub}"), rest),
            None => ScenarioError::new(format!("{path}.points"), m),
        }),
    }
}
