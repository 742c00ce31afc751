//! The scenario schema as written by the user: private serde structs, deserialized
//! from a JSON value tree (TOML is converted to one first) and then validated into the
//! public types by `super::resolve`.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

use super::dist::{Prob, RawDist};
use super::link_model::TraceDequeue;
use super::lit::{mismatch, Given, Leaf, Lit};
use super::units::{ByteSize, DataRate, SimDuration, StepRate};
use super::{AlgoSpec, Direction, ParamValue, QdiscStateMode, RecoveryExit, UdpPattern};

/// An integer in `MIN..=MAX`. A `MAX` of `u32::MAX` or `u64::MAX` is reported as
/// unbounded (`an integer >= 1`) unless the value actually exceeds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Int<const MIN: u64, const MAX: u64>(pub u64);

/// `count`, `initial_window`: at least 1, fits a `u32`.
pub(super) type PosU32 = Int<1, { u32::MAX as u64 }>;
/// `seed`: any non-negative integer.
pub(super) type Seed = Int<0, { u64::MAX }>;
/// `mss`: a packet payload size in bytes.
pub(super) type Mss = Int<64, 9000>;

impl<const MIN: u64, const MAX: u64> Leaf for Int<MIN, MAX> {
    fn expected() -> Cow<'static, str> {
        if MAX == u64::MAX || MAX == u64::from(u32::MAX) {
            Cow::Owned(format!("an integer >= {MIN}"))
        } else {
            Cow::Owned(format!("an integer between {MIN} and {MAX}"))
        }
    }
    fn from_lit(lit: &Lit) -> Result<Self, String> {
        match *lit {
            Lit::U(v) if (MIN..=MAX).contains(&v) => Ok(Int(v)),
            Lit::U(v) if v > MAX => Err(mismatch(
                &format!("an integer between {MIN} and {MAX}"),
                lit,
            )),
            _ => Err(mismatch(&Self::expected(), lit)),
        }
    }
}

/// A boolean flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Flag(pub bool);

impl Leaf for Flag {
    fn expected() -> Cow<'static, str> {
        Cow::Borrowed("true or false")
    }
    fn from_lit(lit: &Lit) -> Result<Self, String> {
        match *lit {
            Lit::B(b) => Ok(Flag(b)),
            _ => Err(mismatch(&Self::expected(), lit)),
        }
    }
}

/// Implements [`Leaf`] for an enum written as one of a few keywords, case-insensitive
/// and trimmed (`"CBR"` is accepted); anything else is an error naming the keywords.
macro_rules! keyword_leaf {
    ($ty:ty, $expected:expr, { $($word:literal => $value:expr),+ $(,)? }) => {
        impl Leaf for $ty {
            fn expected() -> Cow<'static, str> {
                Cow::Borrowed($expected)
            }
            fn from_lit(lit: &Lit) -> Result<Self, String> {
                if let Lit::S(s) = lit {
                    let s = s.trim();
                    $(if s.eq_ignore_ascii_case($word) {
                        return Ok($value);
                    })+
                }
                Err(mismatch(&Self::expected(), lit))
            }
        }
    };
}

keyword_leaf!(UdpPattern, "\"cbr\" or \"poisson\"", {
    "cbr" => UdpPattern::Cbr,
    "poisson" => UdpPattern::Poisson,
});

keyword_leaf!(Direction, "\"forward\" or \"reverse\"", {
    "forward" => Direction::Forward,
    "reverse" => Direction::Reverse,
});

keyword_leaf!(TraceDequeue, "\"opportunity\" or \"link_free\"", {
    "opportunity" => TraceDequeue::Opportunity,
    "link_free" => TraceDequeue::LinkFree,
});

keyword_leaf!(RecoveryExit, "\"linux\" or \"ns3\"", {
    "linux" => RecoveryExit::Linux,
    "ns3" => RecoveryExit::Ns3,
});

impl Leaf for ParamValue {
    fn expected() -> Cow<'static, str> {
        Cow::Borrowed("a number, boolean or string")
    }
    fn from_lit(lit: &Lit) -> Result<Self, String> {
        match lit {
            Lit::U(v) => Ok(ParamValue::Number(*v as f64)),
            Lit::I(v) => Ok(ParamValue::Number(*v as f64)),
            Lit::F(v) if v.is_finite() => Ok(ParamValue::Number(*v)),
            Lit::B(b) => Ok(ParamValue::Bool(*b)),
            Lit::S(s) => Ok(ParamValue::Str(s.clone())),
            _ => Err(mismatch(&Self::expected(), lit)),
        }
    }
}

/// A group's display name (`name = "Gold"`): 1 to 60 characters, stored trimmed.
pub(super) struct Label(pub String);

impl Leaf for Label {
    fn expected() -> Cow<'static, str> {
        Cow::Borrowed("a name of 1 to 60 characters like \"Gold\"")
    }
    fn from_lit(lit: &Lit) -> Result<Self, String> {
        match lit {
            Lit::S(s) if (1..=60).contains(&s.trim().chars().count()) => {
                Ok(Label(s.trim().to_owned()))
            }
            _ => Err(mismatch(&Self::expected(), lit)),
        }
    }
}

/// A file path (`trace = "traces/lte.down"`): a non-empty string, kept as written.
pub(crate) struct FilePath(pub String);

impl Leaf for FilePath {
    fn expected() -> Cow<'static, str> {
        Cow::Borrowed("a file path like \"traces/cellular.trace\"")
    }
    fn from_lit(lit: &Lit) -> Result<Self, String> {
        match lit {
            Lit::S(s) if !s.is_empty() => Ok(FilePath(s.clone())),
            _ => Err(mismatch(&Self::expected(), lit)),
        }
    }
}

/// An algorithm name: non-empty, stored trimmed and lower-cased.
pub(super) struct Kind(pub String);

const KIND_EXPECTED: &str = "an algorithm name like \"newreno\"";

impl Leaf for Kind {
    fn expected() -> Cow<'static, str> {
        Cow::Borrowed(KIND_EXPECTED)
    }
    fn from_lit(lit: &Lit) -> Result<Self, String> {
        match lit {
            Lit::S(s) if !s.trim().is_empty() => Ok(Kind(s.trim().to_lowercase())),
            _ => Err(mismatch(KIND_EXPECTED, lit)),
        }
    }
}

/// A link's loss: a probability (`loss = 0.01`, Bernoulli) or a table with a `kind`
/// (`{ kind = "gilbert_elliott", p = 0.01, r = 0.3 }`), validated by
/// `super::link_model::resolve_loss`.
pub(super) enum RawLoss {
    Probability(Lit),
    Table(AlgoSpec),
}

const LOSS_EXPECTED: &str = "a loss probability like 0.01 or a table like \
     { kind = \"gilbert_elliott\", p = 0.01, r = 0.3 }";

impl<'de> Deserialize<'de> for RawLoss {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LossVisitor)
    }
}

struct LossVisitor;

impl<'de> Visitor<'de> for LossVisitor {
    type Value = RawLoss;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(LOSS_EXPECTED)
    }
    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<RawLoss, A::Error> {
        AlgoVisitor
            .visit_map(map)
            .map(|RawAlgo(a)| RawLoss::Table(a))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawLoss, E> {
        Ok(RawLoss::Probability(Lit::I(v)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawLoss, E> {
        Ok(RawLoss::Probability(Lit::U(v)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawLoss, E> {
        Ok(RawLoss::Probability(Lit::F(v)))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawLoss, E> {
        Err(E::custom(mismatch(LOSS_EXPECTED, &Lit::B(v))))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<RawLoss, E> {
        Err(E::custom(mismatch(LOSS_EXPECTED, &Lit::S(v.to_owned()))))
    }
    fn visit_unit<E: de::Error>(self) -> Result<RawLoss, E> {
        Err(E::custom(mismatch(LOSS_EXPECTED, &Lit::Null)))
    }
}

/// `"newreno"` or `{ kind = "newreno", beta = 0.5 }`.
pub(super) struct RawAlgo(pub AlgoSpec);

const ALGO_EXPECTED: &str =
    "an algorithm name like \"newreno\" or a table like { kind = \"newreno\", ... }";

impl<'de> Deserialize<'de> for RawAlgo {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(AlgoVisitor)
    }
}

struct AlgoVisitor;

impl AlgoVisitor {
    fn wrong<E: de::Error>(lit: Lit) -> Result<RawAlgo, E> {
        Err(E::custom(mismatch(ALGO_EXPECTED, &lit)))
    }
}

impl<'de> Visitor<'de> for AlgoVisitor {
    type Value = RawAlgo;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(ALGO_EXPECTED)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<RawAlgo, E> {
        let Kind(kind) = Kind::from_lit(&Lit::S(v.to_owned())).map_err(E::custom)?;
        Ok(RawAlgo(AlgoSpec {
            kind,
            params: BTreeMap::new(),
        }))
    }
    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<RawAlgo, A::Error> {
        let mut kind = None;
        let mut params = BTreeMap::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == "kind" {
                let k: Given<Kind> = map.next_value()?;
                kind = Some(k.value.0);
            } else {
                let v: Given<ParamValue> = map.next_value()?;
                params.insert(key, v.value);
            }
        }
        let kind = kind.ok_or_else(|| de::Error::missing_field("kind"))?;
        Ok(RawAlgo(AlgoSpec { kind, params }))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawAlgo, E> {
        Self::wrong(Lit::B(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawAlgo, E> {
        Self::wrong(Lit::I(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawAlgo, E> {
        Self::wrong(Lit::U(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawAlgo, E> {
        Self::wrong(Lit::F(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<RawAlgo, E> {
        Self::wrong(Lit::Null)
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, _seq: A) -> Result<RawAlgo, A::Error> {
        Err(de::Error::custom(format!(
            "expected {ALGO_EXPECTED}, got an array"
        )))
    }
}

/// `{ at = "60s", g = 5.0 }`: a time plus free-form algorithm parameters.
pub(super) struct RawChange {
    pub at: Given<SimDuration>,
    pub params: BTreeMap<String, ParamValue>,
}

impl<'de> Deserialize<'de> for RawChange {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ChangeVisitor)
    }
}

struct ChangeVisitor;

impl<'de> Visitor<'de> for ChangeVisitor {
    type Value = RawChange;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a table like { at = \"60s\", g = 5.0 }")
    }
    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<RawChange, A::Error> {
        let mut at = None;
        let mut params = BTreeMap::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == "at" {
                at = Some(map.next_value::<Given<SimDuration>>()?);
            } else {
                let v: Given<ParamValue> = map.next_value()?;
                params.insert(key, v.value);
            }
        }
        let at = at.ok_or_else(|| de::Error::missing_field("at"))?;
        Ok(RawChange { at, params })
    }
}

/// `ppv = "gold"` or `ppv = { tvf = "gold" | points = [[rate, value], ...], tau = "100ms",
/// scope = "flow" | "group" }`.
pub(super) struct RawPpv {
    pub tvf: Option<String>,
    pub points: Option<Vec<(Given<ParamValue>, Given<ParamValue>)>>,
    pub tau: Option<Given<SimDuration>>,
    pub scope: Option<String>,
}

const PPV_EXPECTED: &str = "a value function name like \"gold\" or a table like { tvf = \"gold\" }";

impl<'de> Deserialize<'de> for RawPpv {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(PpvVisitor)
    }
}

struct PpvVisitor;

impl<'de> Visitor<'de> for PpvVisitor {
    type Value = RawPpv;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(PPV_EXPECTED)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<RawPpv, E> {
        let Kind(name) = Kind::from_lit(&Lit::S(v.to_owned())).map_err(E::custom)?;
        Ok(RawPpv {
            tvf: Some(name),
            points: None,
            tau: None,
            scope: None,
        })
    }
    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<RawPpv, A::Error> {
        let mut out = RawPpv {
            tvf: None,
            points: None,
            tau: None,
            scope: None,
        };
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "tvf" => out.tvf = Some(map.next_value::<Given<Kind>>()?.value.0),
                "points" => out.points = Some(map.next_value()?),
                "tau" => out.tau = Some(map.next_value()?),
                "scope" => out.scope = Some(map.next_value::<Given<Kind>>()?.value.0),
                other => {
                    return Err(de::Error::unknown_field(
                        other,
                        &["tvf", "points", "tau", "scope"],
                    ))
                }
            }
        }
        Ok(out)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawPpv, E> {
        Err(E::custom(mismatch(PPV_EXPECTED, &Lit::B(v))))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawPpv, E> {
        Err(E::custom(mismatch(PPV_EXPECTED, &Lit::I(v))))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawPpv, E> {
        Err(E::custom(mismatch(PPV_EXPECTED, &Lit::U(v))))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawPpv, E> {
        Err(E::custom(mismatch(PPV_EXPECTED, &Lit::F(v))))
    }
}

/// An array of tables (`[[flows]]`, `[[udp]]`).
pub(super) struct Groups<T>(pub Vec<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Groups<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(GroupsVisitor(PhantomData))
    }
}

struct GroupsVisitor<T>(PhantomData<T>);

const GROUPS_EXPECTED: &str = "an array of tables (one [[...]] section per group)";

impl<'de, T: Deserialize<'de>> Visitor<'de> for GroupsVisitor<T> {
    type Value = Groups<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(GROUPS_EXPECTED)
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Groups<T>, A::Error> {
        let mut out = Vec::new();
        while let Some(item) = seq.next_element()? {
            out.push(item);
        }
        Ok(Groups(out))
    }
    fn visit_map<A: de::MapAccess<'de>>(self, _map: A) -> Result<Groups<T>, A::Error> {
        Err(de::Error::custom(format!(
            "expected {GROUPS_EXPECTED}, got a table"
        )))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Groups<T>, E> {
        Err(E::custom(mismatch(GROUPS_EXPECTED, &Lit::B(v))))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Groups<T>, E> {
        Err(E::custom(mismatch(GROUPS_EXPECTED, &Lit::I(v))))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Groups<T>, E> {
        Err(E::custom(mismatch(GROUPS_EXPECTED, &Lit::U(v))))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Groups<T>, E> {
        Err(E::custom(mismatch(GROUPS_EXPECTED, &Lit::F(v))))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Groups<T>, E> {
        Err(E::custom(mismatch(GROUPS_EXPECTED, &Lit::S(v.to_owned()))))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Groups<T>, E> {
        // JSON `null`: no groups.
        Ok(Groups(Vec::new()))
    }
}

/// A table deserialized into the derived struct `T`. Serde's derived structs also
/// accept arrays (fields by position); this wrapper only accepts tables.
pub(super) struct Table<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Table<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TableVisitor(PhantomData))
    }
}

struct TableVisitor<T>(PhantomData<T>);

const TABLE_EXPECTED: &str = "a table";

impl<'de, T: Deserialize<'de>> Visitor<'de> for TableVisitor<T> {
    type Value = Table<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(TABLE_EXPECTED)
    }
    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Table<T>, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map)).map(Table)
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, _seq: A) -> Result<Table<T>, A::Error> {
        Err(de::Error::custom(format!(
            "expected {TABLE_EXPECTED}, got an array"
        )))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Table<T>, E> {
        Err(E::custom(mismatch(TABLE_EXPECTED, &Lit::B(v))))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Table<T>, E> {
        Err(E::custom(mismatch(TABLE_EXPECTED, &Lit::I(v))))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Table<T>, E> {
        Err(E::custom(mismatch(TABLE_EXPECTED, &Lit::U(v))))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Table<T>, E> {
        Err(E::custom(mismatch(TABLE_EXPECTED, &Lit::F(v))))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Table<T>, E> {
        Err(E::custom(mismatch(TABLE_EXPECTED, &Lit::S(v.to_owned()))))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Table<T>, E> {
        Err(E::custom(mismatch(TABLE_EXPECTED, &Lit::Null)))
    }
}

/// Top level.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScenario {
    pub duration: Given<SimDuration>,
    pub seed: Option<Given<Seed>>,
    pub stats_interval: Option<Given<SimDuration>>,
    pub measure: Option<Table<RawMeasure>>,
    pub bottleneck: Option<Table<RawBottleneck>>,
    pub network: Option<Table<RawNetwork>>,
    pub flows: Option<Groups<Table<RawFlow>>>,
    pub udp: Option<Groups<Table<RawUdp>>>,
    pub trace: Option<Table<RawTrace>>,
}

/// `[trace]`: the opt-in recorders.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTrace {
    pub qdisc_state: Option<Given<QdiscStateMode>>,
    pub queue_events: Option<Given<Flag>>,
    pub rtt_samples: Option<Given<Flag>>,
    pub pcap: Option<Vec<Given<Kind>>>,
    pub pcap_max_packets: Option<Given<Int<1, 100_000_000>>>,
}

keyword_leaf!(QdiscStateMode, "\"interval\", \"updates\" or \"off\"", {
    "interval" => QdiscStateMode::Interval,
    "updates" => QdiscStateMode::Updates,
    "off" => QdiscStateMode::Off,
});

/// `measure = { start = "30s", end = "60s" }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMeasure {
    pub start: Option<Given<SimDuration>>,
    pub end: Option<Given<SimDuration>>,
}

/// `[bottleneck]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBottleneck {
    pub rate: Given<DataRate>,
    pub delay: Option<Given<SimDuration>>,
    pub queue: Option<RawAlgo>,
    pub bdp_rtt: Option<Given<SimDuration>>,
    pub reverse_rate: Option<Given<DataRate>>,
    pub reverse_queue: Option<RawAlgo>,
    pub reverse_shaper: Option<Table<RawShaper>>,
    pub access_rate: Option<Given<DataRate>>,
    pub rate_changes: Option<Groups<Table<RawRateChange>>>,
    pub shaper: Option<Table<RawShaper>>,
    pub loss: Option<RawLoss>,
    pub reverse_loss: Option<RawLoss>,
    pub jitter: Option<Table<RawJitter>>,
    pub reverse_jitter: Option<Table<RawJitter>>,
    pub trace: Option<Given<FilePath>>,
    pub reverse_trace: Option<Given<FilePath>>,
    pub trace_dequeue: Option<Given<TraceDequeue>>,
}

/// A link's delay jitter: `{ dist = { uniform = ["0ms", "10ms"] }, reorder = false }`,
/// validated by `super::link_model::resolve_jitter`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawJitter {
    pub dist: RawDist<SimDuration>,
    pub reorder: Option<Given<Flag>>,
    pub reorder_probability: Option<Given<Prob>>,
}

/// `{ at = "10s", rate = "5Mbps" }` in `bottleneck.rate_changes`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRateChange {
    pub at: Given<SimDuration>,
    /// Zero is an outage.
    pub rate: Given<StepRate>,
}

/// `bottleneck.shaper = { sustained = "5Mbps", peak = "20Mbps", burst = "10MB" }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawShaper {
    pub sustained: Given<DataRate>,
    pub peak: Option<Given<DataRate>>,
    pub burst: Given<ByteSize>,
    pub docsis: Option<Given<Flag>>,
}

/// One `[[flows]]` group.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFlow {
    pub count: Option<Given<PosU32>>,
    pub cc: Option<RawAlgo>,
    pub rtt: RawDist<SimDuration>,
    pub ecn: Option<Given<Flag>>,
    pub sack: Option<Given<Flag>>,
    pub delayed_ack: Option<Given<Flag>>,
    pub initial_window: Option<Given<PosU32>>,
    pub mss: Option<Given<Mss>>,
    pub pacing: Option<Given<Flag>>,
    pub recovery_exit: Option<Given<RecoveryExit>>,
    pub rack: Option<Given<Flag>>,
    pub tlp: Option<Given<Flag>>,
    pub ce_quickack: Option<Given<Flag>>,
    pub min_rto: Option<Given<SimDuration>>,
    pub start: Option<RawDist<SimDuration>>,
    pub stop: Option<Given<SimDuration>>,
    pub size: Option<RawDist<ByteSize>>,
    pub trace: Option<Given<Flag>>,
    pub access_rate: Option<Given<DataRate>>,
    pub changes: Option<Groups<RawChange>>,
    pub ppv: Option<RawPpv>,
    pub arrivals: Option<Table<RawArrivals>>,
    pub repeat: Option<Table<RawRepeat>>,
    pub name: Option<Given<Label>>,
    pub deadline: Option<Given<SimDuration>>,
    pub deadline_control: Option<Table<RawDeadlineControl>>,
    pub direction: Option<Given<Direction>>,
    pub from: Option<super::network::RawHosts>,
    pub to: Option<super::network::RawHosts>,
    pub path: Option<Vec<Given<Label>>>,
    pub pairing: Option<Given<Kind>>,
}

/// `deadline_control = { knob = "g", low = 0.1, high = 120, interval = "1s", gain = 0.5,
/// margin = 0.1, escalate = "cubic", retune = true }`: the DA-LBE controller's settings.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDeadlineControl {
    pub knob: Option<Given<Kind>>,
    pub low: Option<Given<ParamValue>>,
    pub high: Option<Given<ParamValue>>,
    pub interval: Option<Given<SimDuration>>,
    pub gain: Option<Given<ParamValue>>,
    pub margin: Option<Given<ParamValue>>,
    pub escalate: Option<RawAlgo>,
    pub retune: Option<Given<Flag>>,
}

/// `arrivals = { poisson = "2/s", start = "10s", end = "60s" }` or `{ gap = <value or
/// distribution>, ... }`: open-loop arrivals of the group's flows.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawArrivals {
    pub poisson: Option<Given<PerSecond>>,
    pub gap: Option<RawDist<SimDuration>>,
    pub start: Option<Given<SimDuration>>,
    pub end: Option<Given<SimDuration>>,
}

/// `repeat = { times = 20, think = "1s" }`: closed-loop repeated transfers.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRepeat {
    pub times: Given<PosU32>,
    pub think: Option<RawDist<SimDuration>>,
}

/// A rate of events: `"2/s"`, `"120/min"`; zero is accepted here and refused by the caller.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct PerSecond(pub f64);

impl Leaf for PerSecond {
    fn expected() -> Cow<'static, str> {
        Cow::Borrowed("a rate of arrivals like \"2/s\" or \"30/min\"")
    }
    fn from_lit(lit: &Lit) -> Result<Self, String> {
        let Lit::S(s) = lit else {
            return Err(mismatch(&Self::expected(), lit));
        };
        let s = s.trim();
        let (number, per) = if let Some(n) = s.strip_suffix("/s") {
            (n, 1.0)
        } else if let Some(n) = s.strip_suffix("/min") {
            (n, 60.0)
        } else {
            return Err(mismatch(&Self::expected(), lit));
        };
        match number.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(PerSecond(v / per)),
            _ => Err(mismatch(&Self::expected(), lit)),
        }
    }
}

/// One `[[udp]]` group.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawUdp {
    pub count: Option<Given<PosU32>>,
    pub rate: RawDist<DataRate>,
    pub pattern: Option<Given<UdpPattern>>,
    pub packet_size: Option<Given<ByteSize>>,
    pub rtt: RawDist<SimDuration>,
    pub ecn: Option<Given<Flag>>,
    pub start: Option<RawDist<SimDuration>>,
    pub stop: Option<Given<SimDuration>>,
    pub access_rate: Option<Given<DataRate>>,
    pub ppv: Option<RawPpv>,
    pub name: Option<Given<Label>>,
    pub direction: Option<Given<Direction>>,
    pub from: Option<super::network::RawHosts>,
    pub to: Option<super::network::RawHosts>,
    pub path: Option<Vec<Given<Label>>>,
    pub pairing: Option<Given<Kind>>,
}

/// `[network]`: a general network (see `super::network`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawNetwork {
    pub kind: Option<Given<Kind>>,
    pub nodes: Option<Vec<Given<Label>>>,
    pub links: Option<Groups<Table<RawLink>>>,
    pub hops: Option<Groups<Table<RawHop>>>,
    pub ecmp: Option<Given<Flag>>,
    pub spines: Option<Given<FabricCount>>,
    pub leaves: Option<Given<FabricCount>>,
    pub hosts_per_leaf: Option<Given<FabricCount>>,
    pub host_link: Option<Table<RawHop>>,
    pub fabric_link: Option<Table<RawHop>>,
    pub queue: Option<RawAlgo>,
}

/// A leaf-spine fabric's spines, leaves or hosts per leaf: at least one, and few enough
/// that every host's links fit the engine's 28-bit link indices.
pub(super) type FabricCount = Int<1, 4096>;

/// One `[[network.links]]` entry.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLink {
    pub name: Option<Given<Label>>,
    pub from: Given<Label>,
    pub to: Given<Label>,
    pub rate: Given<DataRate>,
    pub delay: Option<Given<SimDuration>>,
    pub queue: Option<RawAlgo>,
    pub shaper: Option<Table<RawShaper>>,
    pub both_ways: Option<Given<Flag>>,
    pub loss: Option<RawLoss>,
    pub jitter: Option<Table<RawJitter>>,
    pub rate_changes: Option<Groups<Table<RawRateChange>>>,
    pub trace: Option<Given<FilePath>>,
    pub reverse_trace: Option<Given<FilePath>>,
    pub trace_dequeue: Option<Given<TraceDequeue>>,
}

/// One hop of `[network] kind = "parking_lot"` (its data direction), or a leaf-spine
/// fabric's `host_link` / `fabric_link` (every such link, both ways).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawHop {
    pub rate: Given<DataRate>,
    pub delay: Option<Given<SimDuration>>,
    pub queue: Option<RawAlgo>,
    pub shaper: Option<Table<RawShaper>>,
    pub loss: Option<RawLoss>,
    pub jitter: Option<Table<RawJitter>>,
    pub rate_changes: Option<Groups<Table<RawRateChange>>>,
    pub trace: Option<Given<FilePath>>,
    pub trace_dequeue: Option<Given<TraceDequeue>>,
}
