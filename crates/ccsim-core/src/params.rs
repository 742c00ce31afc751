//! One declarative parameter table per algorithm, and the one reader of all of them.
//!
//! After ns-3's `TypeId::AddAttribute` (name, help, default, checker) and Linux's
//! `module_param` + `MODULE_PARM_DESC`: every congestion control and queue discipline
//! declares its parameters once, as an [`Algorithm`] table of [`Param`]s (name, [`Kind`],
//! default as shown to users, one line of help) with its one-line summary and reference.
//! The same table checks a scenario's values (and the errors say what it accepts), lists
//! the valid names when a key is unknown, and is printed by `ccsim algorithms` and in
//! `docs/algorithms.md`.
//!
//! Configuration is kept apart from per-flow state as in quinn's `congestion/cubic.rs`:
//! a congestion control's table pairs each parameter with a setter ([`Settable`]) used
//! both when the flow is built and when a controller or a `[[changes]]` entry retunes it
//! ([`set`]); a queue discipline reads its table once, through a [`Reader`], into its
//! configuration (its defaults may depend on other values and on the link).
//!
//! The two families word their type errors as they always have: a congestion-control
//! parameter says `expected <what it accepts>, got <value>`; a queue-discipline parameter
//! `expected a number`, `expected true or false` or `expected a string with a unit, got
//! <value>`, and `expected <what it accepts>, got <value>` for a bad value.

use std::cell::Cell;

use crate::scenario::{
    AlgoSpec, ByteSize, DataRate, ParamValue, QueueLimit, ScenarioError, SimDuration,
};

/// Congestion control or queue discipline: decides how type errors are worded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    CongestionControl,
    QueueDiscipline,
}

impl Family {
    /// As written in `ccsim algorithms` and in the Python tables.
    pub fn label(self) -> &'static str {
        match self {
            Family::CongestionControl => "congestion control",
            Family::QueueDiscipline => "queue discipline",
        }
    }
}

/// A checked parameter value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Number(f64),
    /// A whole number ([`Kind::Integer`]).
    Int(u64),
    Bool(bool),
    /// A duration in nanoseconds.
    Ns(u64),
    Bytes(u64),
    /// A rate in bits per second.
    Bps(u64),
    Limit(QueueLimit),
    /// A keyword, as listed in its [`Kind::Keyword`].
    Word(&'static str),
    /// A packet count written `"5p"`.
    Packets(u64),
    /// `"inf"`.
    Infinite,
}

macro_rules! accessor {
    ($name:ident, $variant:ident, $ty:ty) => {
        /// The value of a parameter declared with the matching [`Kind`] (a mismatch is a
        /// bug in the table, caught by the tests that set every parameter).
        pub fn $name(self) -> $ty {
            match self {
                Value::$variant(v) => v,
                other => panic!(
                    concat!("expected a ", stringify!($variant), " value, got {:?}"),
                    other
                ),
            }
        }
    };
}

impl Value {
    accessor!(number, Number, f64);
    accessor!(int, Int, u64);
    accessor!(boolean, Bool, bool);
    accessor!(ns, Ns, u64);
    accessor!(bytes, Bytes, u64);
    accessor!(bps, Bps, u64);
    accessor!(limit, Limit, QueueLimit);
    accessor!(word, Word, &'static str);
}

/// What a parameter accepts: its unit for the docs and its checker.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// A finite number accepted by `ok`; `what` is the accepted range in words
    /// (`"a number in (0, 1)"`), said in the docs and in the error.
    Number {
        what: &'static str,
        ok: fn(f64) -> bool,
    },
    /// A whole number in `[lo, hi]`.
    Integer {
        lo: u64,
        hi: u64,
    },
    Bool,
    /// A duration string accepted by `ok`. `what: None`: any duration, with the unit
    /// parser's own error.
    Duration {
        what: Option<&'static str>,
        ok: fn(u64) -> bool,
    },
    /// A size string (`"1500B"`) accepted by `ok`; `what` as for `Duration`.
    Size {
        what: Option<&'static str>,
        ok: fn(u64) -> bool,
    },
    /// A rate string (`"10Mbps"`).
    Rate,
    /// A queue limit (`"100p"`, `"150KB"`, `"1bdp"`).
    Limit,
    /// One of `values`. `unknown` is the error, with `{got}` for the value as written and
    /// `{known}` for the values. `trim`: surrounding blanks are ignored.
    Keyword {
        values: &'static [&'static str],
        unknown: &'static str,
        trim: bool,
    },
    /// Anything else, read by `read` (whose error is the whole message); `unit` and
    /// `accepts` are for the docs.
    Custom {
        unit: &'static str,
        accepts: &'static str,
        read: fn(&ParamValue) -> Result<Value, String>,
    },
}

fn always<T>(_: T) -> bool {
    true
}

/// Any duration (the unit parser's error).
pub const ANY_DURATION: Kind = Kind::Duration {
    what: None,
    ok: always,
};
/// A positive duration, CoDel's wording.
pub const POSITIVE_DURATION: Kind = Kind::Duration {
    what: Some("a positive duration like \"5ms\""),
    ok: |ns| ns > 0,
};
/// The period of an AQM's update timer (PIE's and DualPI2's `tupdate`): at least 1 µs.
/// Linux takes it in whole microseconds (`tc ... tupdate` is passed in µs; sch_dualpi2's
/// netlink policy is `NLA_POLICY_MIN(NLA_U32, 1)`, sch_pie rounds it up to a jiffy), so
/// a shorter period has no counterpart in a real queue and only multiplies events: PIE
/// with `tupdate = "1ns"` ran 1.5 billion events for one second of a 10 Mbit/s link
/// (issue 33).
pub const UPDATE_PERIOD: Kind = Kind::Duration {
    what: Some("a period of at least 1us like \"15ms\" (Linux takes it in whole microseconds)"),
    ok: |ns| ns >= 1_000,
};
/// A probability in (0, 1].
pub const PROBABILITY: Kind = Kind::Number {
    what: "a probability in (0, 1]",
    ok: |x| x > 0.0 && x <= 1.0,
};
/// A number in (0, 1), the multiplicative decreases.
pub const OPEN_UNIT: Kind = Kind::Number {
    what: "a number in (0, 1)",
    ok: |x| x > 0.0 && x < 1.0,
};

impl Kind {
    /// The unit (or kind of value) as shown in the docs.
    pub fn unit(&self) -> &'static str {
        match self {
            Kind::Number { .. } => "number",
            Kind::Integer { .. } => "integer",
            Kind::Bool => "boolean",
            Kind::Duration { .. } => "duration",
            Kind::Size { .. } => "size",
            Kind::Rate => "rate",
            Kind::Limit => "queue limit",
            Kind::Keyword { .. } => "keyword",
            Kind::Custom { unit, .. } => unit,
        }
    }

    /// What the parameter accepts, in words (its allowed range).
    pub fn accepts(&self) -> String {
        match self {
            Kind::Number { what, .. } => (*what).to_owned(),
            Kind::Integer { lo, hi } => format!("an integer in [{lo}, {hi}]"),
            Kind::Bool => "true or false".to_owned(),
            Kind::Duration { what, .. } => what.unwrap_or("a duration like \"5ms\"").to_owned(),
            Kind::Size { what, .. } => what.unwrap_or("a size like \"1500B\"").to_owned(),
            Kind::Rate => "a rate like \"10Mbps\"".to_owned(),
            Kind::Limit => "a queue limit like \"100p\", \"150KB\" or \"1bdp\"".to_owned(),
            Kind::Keyword { values, .. } => {
                let quoted: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
                format!("one of {}", quoted.join(", "))
            }
            Kind::Custom { accepts, .. } => (*accepts).to_owned(),
        }
    }
}

/// One parameter: the single place its name, kind, default and help are written.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    pub name: &'static str,
    pub kind: Kind,
    /// The default as shown to users (it may depend on other parameters or the link).
    pub default: &'static str,
    /// One line of help.
    pub help: &'static str,
}

/// A congestion-control parameter with the setter that applies it to the controller.
pub struct Settable<C> {
    pub param: Param,
    pub set: fn(&mut C, Value),
}

/// Table entries: plain parameters (queue disciplines) or settable ones (congestion
/// controls).
pub trait Entry {
    fn param(&self) -> &Param;
}

impl Entry for Param {
    fn param(&self) -> &Param {
        self
    }
}

impl<C> Entry for Settable<C> {
    fn param(&self) -> &Param {
        &self.param
    }
}

/// One algorithm's table.
pub struct Algorithm<E: 'static = Param> {
    /// The name written in scenario files (`cc = "cubic"`, `queue = { kind = "pie" }`).
    pub name: &'static str,
    /// Other names accepted for it.
    pub aliases: &'static [&'static str],
    pub family: Family,
    /// One line.
    pub summary: &'static str,
    /// The reference it follows (Linux file, RFC section, paper).
    pub reference: &'static str,
    pub params: &'static [E],
}

/// A parameter value as the user wrote it, for error messages.
pub fn shown(value: &ParamValue) -> String {
    match value {
        ParamValue::Number(n) => format!("{n}"),
        ParamValue::Bool(b) => format!("{b}"),
        ParamValue::Str(s) => format!("{s:?}"),
    }
}

/// The text of a string value; for anything else the queue disciplines' type error (a
/// [`Kind::Custom`] reader is only called with a string in their tables).
pub fn text(value: &ParamValue) -> Result<&str, String> {
    match value {
        ParamValue::Str(s) => Ok(s),
        other => Err(format!(
            "expected a string with a unit, got {}",
            shown(other)
        )),
    }
}

/// An error about parameter `name` at `path`.
pub fn param_error(path: &str, name: &str, message: impl Into<String>) -> ScenarioError {
    ScenarioError::new(format!("{path}.{name}"), message)
}

impl Param {
    /// Check `value` against the parameter's kind. The error is the message alone
    /// (the caller adds the key path).
    pub fn check(&self, family: Family, value: &ParamValue) -> Result<Value, String> {
        let cc = family == Family::CongestionControl;
        let expected = |what: &str| format!("expected {what}, got {}", shown(value));
        let with_unit = || format!("expected a string with a unit, got {}", shown(value));
        match self.kind {
            Kind::Number { what, ok } => match value {
                ParamValue::Number(n) if n.is_finite() && ok(*n) => Ok(Value::Number(*n)),
                ParamValue::Number(_) => Err(expected(what)),
                _ if cc => Err(expected(what)),
                _ => Err("expected a number".to_owned()),
            },
            Kind::Integer { lo, hi } => match value {
                ParamValue::Number(x)
                    if x.is_finite() && x.fract() == 0.0 && *x >= lo as f64 && *x <= hi as f64 =>
                {
                    Ok(Value::Int(*x as u64))
                }
                _ => Err(expected(&format!("an integer in [{lo}, {hi}]"))),
            },
            Kind::Bool => match value {
                ParamValue::Bool(b) => Ok(Value::Bool(*b)),
                _ if cc => Err(expected("true or false")),
                _ => Err("expected true or false".to_owned()),
            },
            Kind::Duration { what, ok } => {
                let ParamValue::Str(s) = value else {
                    return Err(match what {
                        Some(w) if cc => expected(w),
                        _ => with_unit(),
                    });
                };
                match (SimDuration::parse(s), what) {
                    (Ok(d), _) if ok(d.ns) => Ok(Value::Ns(d.ns)),
                    (Err(m), None) => Err(m),
                    (_, w) => Err(expected(w.unwrap_or("a duration like \"5ms\""))),
                }
            }
            Kind::Size { what, ok } => {
                let ParamValue::Str(s) = value else {
                    return Err(with_unit());
                };
                match (ByteSize::parse(s), what) {
                    (Ok(b), _) if ok(b.bytes) => Ok(Value::Bytes(b.bytes)),
                    (Err(m), None) => Err(m),
                    (_, w) => Err(expected(w.unwrap_or("a size like \"1500B\""))),
                }
            }
            Kind::Rate => match value {
                ParamValue::Str(s) => DataRate::parse(s).map(|r| Value::Bps(r.bps)),
                _ => Err(with_unit()),
            },
            Kind::Limit => match value {
                ParamValue::Str(s) => QueueLimit::parse(s).map(Value::Limit),
                _ => Err(with_unit()),
            },
            Kind::Keyword {
                values,
                unknown,
                trim,
            } => {
                let found = match value {
                    ParamValue::Str(s) => {
                        let s = if trim { s.trim() } else { s.as_str() };
                        values.iter().find(|v| **v == s)
                    }
                    _ if cc => None,
                    _ => return Err(with_unit()),
                };
                found.map(|v| Value::Word(v)).ok_or_else(|| {
                    unknown
                        .replace("{known}", &values.join(", "))
                        .replace("{got}", &shown(value))
                })
            }
            Kind::Custom { read, .. } => match value {
                ParamValue::Str(_) => read(value),
                _ if cc => read(value),
                _ => Err(with_unit()),
            },
        }
    }
}

impl<E: Entry> Algorithm<E> {
    /// The entry named `name`, or the one-line error naming the valid names. `kind` is
    /// the algorithm as the scenario wrote it.
    pub fn entry(&self, path: &str, name: &str, kind: &str) -> Result<&E, ScenarioError> {
        self.params
            .iter()
            .find(|e| e.param().name == name)
            .ok_or_else(|| {
                param_error(
                    path,
                    name,
                    format!(
                        "unknown parameter for {kind} (expected one of: {})",
                        self.names().join(", ")
                    ),
                )
            })
    }

    /// The parameter names, in table order.
    pub fn names(&self) -> Vec<&'static str> {
        self.params.iter().map(|e| e.param().name).collect()
    }

    /// The table without setters, for listing and the docs.
    pub fn describe(&self) -> AlgorithmDoc {
        AlgorithmDoc {
            name: self.name,
            aliases: self.aliases,
            family: self.family,
            summary: self.summary,
            reference: self.reference,
            params: self.params.iter().map(|e| *e.param()).collect(),
        }
    }
}

/// Set congestion-control parameter `name` on `target` from its table (when the flow is
/// built and when it is retuned while it runs): one table look-up and one check.
pub fn set<C>(
    table: &Algorithm<Settable<C>>,
    target: &mut C,
    path: &str,
    name: &str,
    value: &ParamValue,
) -> Result<(), ScenarioError> {
    let entry = table.entry(path, name, table.name)?;
    let v = entry
        .param
        .check(table.family, value)
        .map_err(|m| param_error(path, name, m))?;
    (entry.set)(target, v);
    Ok(())
}

/// Reads a queue discipline's parameters out of an [`AlgoSpec`] through its table.
pub struct Reader<'a> {
    table: &'static Algorithm,
    spec: &'a AlgoSpec,
    path: &'a str,
    /// Table entries read so far (bit i: `table.params[i]`), so that [`Reader::finish`]
    /// also refuses a key of the table that this configuration does not read.
    read: Cell<u64>,
}

impl<'a> Reader<'a> {
    /// A reader for `spec` at `path`.
    pub fn new(table: &'static Algorithm, spec: &'a AlgoSpec, path: &'a str) -> Self {
        assert!(
            table.params.len() <= 64,
            "{}: too many parameters",
            table.name
        );
        Reader {
            table,
            spec,
            path,
            read: Cell::new(0),
        }
    }

    /// Fail (`expected a string`) if any of `names` is given and is not a string: the
    /// keywords that PIE and RED check before reading any other key.
    pub fn require_strings(&self, names: &[&str]) -> Result<(), ScenarioError> {
        for name in names {
            if let Some(v) = self.spec.params.get(*name) {
                if !matches!(v, ParamValue::Str(_)) {
                    return Err(self.error(name, "expected a string"));
                }
            }
        }
        Ok(())
    }

    fn param(&self, name: &str) -> &'static Param {
        let i = self
            .table
            .params
            .iter()
            .position(|p| p.name == name)
            .unwrap_or_else(|| panic!("{name} is not in {}'s table", self.table.name));
        self.read.set(self.read.get() | 1 << i);
        &self.table.params[i]
    }

    /// The checked value of `name`, if the scenario gives it.
    pub fn get(&self, name: &str) -> Result<Option<Value>, ScenarioError> {
        let param = self.param(name);
        match self.spec.params.get(name) {
            None => Ok(None),
            Some(v) => param
                .check(self.table.family, v)
                .map(Some)
                .map_err(|m| self.error(name, m)),
        }
    }

    pub fn number(&self, name: &str, default: f64) -> Result<f64, ScenarioError> {
        Ok(self.get(name)?.map_or(default, Value::number))
    }

    pub fn boolean(&self, name: &str, default: bool) -> Result<bool, ScenarioError> {
        Ok(self.get(name)?.map_or(default, Value::boolean))
    }

    pub fn ns(&self, name: &str, default_ns: u64) -> Result<u64, ScenarioError> {
        Ok(self.get(name)?.map_or(default_ns, Value::ns))
    }

    pub fn bytes(&self, name: &str, default: u64) -> Result<u64, ScenarioError> {
        Ok(self.get(name)?.map_or(default, Value::bytes))
    }

    pub fn limit(&self, name: &str) -> Result<Option<QueueLimit>, ScenarioError> {
        Ok(self.get(name)?.map(Value::limit))
    }

    pub fn word(&self, name: &str, default: &'static str) -> Result<&'static str, ScenarioError> {
        Ok(self.get(name)?.map_or(default, Value::word))
    }

    /// Whether the scenario gives `name` at all.
    pub fn given(&self, name: &str) -> bool {
        self.spec.params.contains_key(name)
    }

    /// An error about `name`.
    pub fn error(&self, name: &str, message: impl Into<String>) -> ScenarioError {
        param_error(self.path, name, message)
    }

    /// Fail on the first key (in name order) that the table does not have or that this
    /// configuration did not read (as `unknown parameter`, naming the table's keys).
    pub fn finish(self) -> Result<(), ScenarioError> {
        for key in self.spec.params.keys() {
            let read = self
                .table
                .params
                .iter()
                .position(|p| p.name == key)
                .is_some_and(|i| self.read.get() & (1 << i) != 0);
            if !read {
                return Err(param_error(
                    self.path,
                    key,
                    format!(
                        "unknown parameter for {} (expected one of: {})",
                        self.spec.kind,
                        self.table.names().join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// An algorithm's table without its setters.
#[derive(Debug, Clone)]
pub struct AlgorithmDoc {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub family: Family,
    pub summary: &'static str,
    pub reference: &'static str,
    pub params: Vec<Param>,
}

/// Every congestion control, then every queue discipline, as `ccsim algorithms` lists them.
pub fn all() -> Vec<AlgorithmDoc> {
    let mut out = crate::cc::tables();
    out.extend(crate::qdisc::tables());
    out
}
