//! A group's `deadline`: the DA-LBE controller ([`crate::control::deadline`]) it asks
//! for, checked against the group's congestion control when the scenario is built so
//! that no decision can fail while the flow runs.

use crate::cc::{self, CongestionControl, Knob, KnobUnit};
use crate::control::deadline::{DeadlineController, DeadlineParams};
use crate::flow::FlowDeadline;
use crate::scenario::{DeadlineSpec, ParamValue, ScenarioError, TcpFlowGroup};

/// The DA-LBE controller a group's `deadline` asks for: the knob exists, both ends of its
/// range are accepted (values between them are, for every algorithm's range), and the
/// escalation algorithm keeps the flow's ECN mode.
pub(super) fn group_deadline(
    g: &TcpFlowGroup,
    gi: usize,
) -> Result<Option<FlowDeadline>, ScenarioError> {
    let Some(spec) = &g.deadline else {
        return Ok(None);
    };
    let path = format!("flows[{gi}].deadline_control");
    let key = |k: &str| format!("{path}.{k}");
    if !spec.retune {
        return baseline(g, gi, spec, &key).map(Some);
    }
    let probe = cc::build(&g.cc, &format!("flows[{gi}].cc"))?;
    let knob = resolve_knob(&probe, spec, &key)?;
    let escalate_to = escalation(g, &probe, spec, &key)?;
    Ok(Some(FlowDeadline {
        ctl: DeadlineController::new(DeadlineParams {
            within_ns: spec.within.ns,
            knob,
            interval_ns: spec.interval.ns,
            gain: spec.gain,
            margin: spec.margin,
            escalate: escalate_to.is_some(),
            retune: true,
        }),
        escalate_to,
        original: probe,
    }))
}

/// A baseline (`retune = false`): the deadline's outcome is recorded, nothing is turned.
fn baseline(
    g: &TcpFlowGroup,
    gi: usize,
    spec: &DeadlineSpec,
    key: &dyn Fn(&str) -> String,
) -> Result<FlowDeadline, ScenarioError> {
    if spec.escalate.is_some() || spec.knob.is_some() {
        return Err(ScenarioError::new(
            key(if spec.knob.is_some() {
                "knob"
            } else {
                "escalate"
            }),
            "has no effect with retune = false",
        ));
    }
    Ok(FlowDeadline {
        ctl: DeadlineController::new(DeadlineParams {
            within_ns: spec.within.ns,
            knob: Knob {
                name: String::new(),
                low: 1.0,
                high: 2.0,
                unit: KnobUnit::Number,
            },
            interval_ns: spec.interval.ns,
            gain: spec.gain,
            margin: spec.margin,
            escalate: false,
            retune: false,
        }),
        escalate_to: None,
        original: cc::build(&g.cc, &format!("flows[{gi}].cc"))?,
    })
}

/// The knob to turn and its range: named by the spec or the algorithm's own LBE knob,
/// each end from the spec or the algorithm's default, both accepted by the algorithm.
fn resolve_knob(
    probe: &cc::Cc,
    spec: &DeadlineSpec,
    key: &dyn Fn(&str) -> String,
) -> Result<Knob, ScenarioError> {
    let own = probe.lbe_knob();
    let name = match (&spec.knob, &own) {
        (Some(n), _) => n.clone(),
        (None, Some(k)) => k.name.clone(),
        (None, None) => {
            return Err(ScenarioError::new(
                key("knob"),
                format!(
                    "{} has no built-in LBE knob: name the parameter to turn (knob = \"...\", \
                     low = ..., high = ...)",
                    probe.name()
                ),
            ))
        }
    };
    let own = own.filter(|k| k.name == name);
    let (low, unit_low) = knob_end(&spec.low, "low", own.as_ref().map(|k| (k.low, k.unit)), key)?;
    let (high, unit_high) = knob_end(
        &spec.high,
        "high",
        own.as_ref().map(|k| (k.high, k.unit)),
        key,
    )?;
    if unit_low != unit_high {
        return Err(ScenarioError::new(
            key("high"),
            "low and high must both be numbers or both durations",
        ));
    }
    if low >= high {
        return Err(ScenarioError::new(
            key("high"),
            "must be above low (low is the most deferential setting, high the most aggressive)",
        ));
    }
    let knob = Knob {
        name,
        low,
        high,
        unit: unit_low,
    };
    for (k, v) in [("low", low), ("high", high)] {
        probe
            .clone()
            .set_param("", &knob.name, &knob.param(v))
            .map_err(|e| {
                ScenarioError::new(
                    key(k),
                    format!("{}'s {} refuses it: {}", probe.name(), knob.name, e.message),
                )
            })?;
    }
    Ok(knob)
}

/// One end (`low` or `high`) of the knob's range: the spec's value, else the default.
fn knob_end(
    v: &Option<ParamValue>,
    k: &str,
    default: Option<(f64, KnobUnit)>,
    key: &dyn Fn(&str) -> String,
) -> Result<(f64, KnobUnit), ScenarioError> {
    match v {
        None => default.ok_or_else(|| ScenarioError::new(key(k), "missing")),
        Some(v) => Knob::parse_value(v)
            .filter(|(x, _)| *x > 0.0 && x.is_finite())
            .ok_or_else(|| {
                ScenarioError::new(
                    key(k),
                    format!(
                        "expected a positive number or duration like 0.1 or \"5ms\", got {}",
                        cc::shown(v)
                    ),
                )
            }),
    }
}

/// The congestion control to escalate to, if any: it must answer ECN as the group's does.
fn escalation(
    g: &TcpFlowGroup,
    probe: &cc::Cc,
    spec: &DeadlineSpec,
    key: &dyn Fn(&str) -> String,
) -> Result<Option<cc::Cc>, ScenarioError> {
    let Some(a) = &spec.escalate else {
        return Ok(None);
    };
    let c = cc::build(a, &key("escalate"))?;
    if g.ecn && c.needs_accurate_ecn() != probe.needs_accurate_ecn() {
        return Err(ScenarioError::new(
            key("escalate"),
            format!(
                "{} and {} answer ECN differently (per-packet echo or not); escalate \
                 to an algorithm with the same ECN mode",
                probe.name(),
                c.name()
            ),
        ));
    }
    Ok(Some(c))
}
