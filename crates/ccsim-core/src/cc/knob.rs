//! The parameter a controller above the algorithm turns ([`crate::control::deadline`]),
//! declared by each algorithm ([`super::CongestionControl::lbe_knob`]). It lives with the
//! algorithms so that `cc/` depends on nothing built on top of it.

use crate::scenario::ParamValue;

/// How a knob's value is written for `set_param`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KnobUnit {
    /// A plain number (CDG's `g`, in milliseconds as paper 000 writes it).
    Number,
    /// A duration; the controller works in nanoseconds (LEDBAT's `target`).
    Duration,
}

/// The congestion-control parameter a controller turns, and its range: `low` is the
/// most deferential setting, `high` the most aggressive (both > 0, low < high).
#[derive(Debug, Clone, PartialEq)]
pub struct Knob {
    pub name: String,
    pub low: f64,
    pub high: f64,
    pub unit: KnobUnit,
}

impl Knob {
    /// The value as `set_param` takes it.
    pub fn param(&self, value: f64) -> ParamValue {
        match self.unit {
            KnobUnit::Number => ParamValue::Number(value),
            // Written in ms as a user would; whole nanoseconds survive the round trip.
            KnobUnit::Duration => ParamValue::Str(format!("{}ms", value.round().max(1.0) / 1e6)),
        }
    }

    /// A value in the knob's unit from a scenario value: a number, or a duration string
    /// (in nanoseconds). `None` for anything else.
    pub fn parse_value(value: &ParamValue) -> Option<(f64, KnobUnit)> {
        match value {
            ParamValue::Number(v) => Some((*v, KnobUnit::Number)),
            ParamValue::Str(s) => crate::scenario::SimDuration::parse(s)
                .ok()
                .map(|d| (d.ns as f64, KnobUnit::Duration)),
            ParamValue::Bool(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duration_knob_is_written_in_nanoseconds() {
        let k = Knob {
            name: "target".into(),
            low: 1e6,
            high: 1e8,
            unit: KnobUnit::Duration,
        };
        assert_eq!(k.param(2.5e6), ParamValue::Str("2.5ms".into()));
        assert_eq!(k.param(1e8), ParamValue::Str("100ms".into()));
        assert_eq!(
            Knob::parse_value(&ParamValue::Str("25ms".into())),
            Some((25e6, KnobUnit::Duration))
        );
    }
}
