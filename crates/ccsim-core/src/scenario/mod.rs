//! Scenario files: the one schema used by the CLI and the Python API.
//!
//! OWNED BY THE SCENARIO HELPER: parsing, unit handling, validation and errors live
//! here. The engine consumes only the public types below (keep their shapes).

mod lit;
mod raw;
pub mod units;

use std::collections::BTreeMap;

use lit::Given;
use raw::{RawAlgo, RawBottleneck, RawFlow, RawMeasure, RawScenario, RawUdp, Table};
use units::fmt_duration;

pub use units::{ByteSize, DataRate, QueueLimit, SimDuration};

/// A user-input error: `path` is the key path (`flows[1].rtt`), `message` says what was
/// expected. Displayed as one line: `flows[1].rtt: expected a duration like "50ms", got "50"`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ScenarioError {
    /// Key path of the offending value, e.g. `flows[1].rtt` (`<toml>`/`<json>` for syntax errors).
    pub path: String,
    /// What was expected, on one line.
    pub message: String,
}

impl ScenarioError {
    /// An error at `path` (e.g. `flows[1].rtt`) saying `message`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// A free-form parameter value of an algorithm (`cc = { kind = "cdg", g = 0.1 }`).
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    /// A TOML/JSON integer or float.
    Number(f64),
    /// A boolean.
    Bool(bool),
    /// A string (e.g. a value with a unit: `"5ms"`).
    Str(String),
}

/// `"newreno"` or `{ kind = "newreno", beta = 0.5 }`: an algorithm name plus its
/// parameters, validated by the algorithm's own constructor, not by the schema.
#[derive(Debug, Clone, PartialEq)]
pub struct AlgoSpec {
    /// Algorithm name, lower-cased (validated by the algorithm registries, not here).
    pub kind: String,
    /// Every key of the table form except `kind`.
    pub params: BTreeMap<String, ParamValue>,
}

/// The bottleneck of the dumbbell.
#[derive(Debug, Clone, PartialEq)]
pub struct Bottleneck {
    /// Forward rate (> 0).
    pub rate: DataRate,
    /// One-way propagation delay of the bottleneck link itself (default 0).
    pub delay: SimDuration,
    /// Queue discipline at the bottleneck's egress (default droptail, limit 1bdp).
    pub queue: AlgoSpec,
    /// RTT used to turn "bdp" limits into bytes (default: largest base RTT of all flows).
    pub bdp_rtt: Option<SimDuration>,
    /// Rate of the reverse (ACK) direction (default = rate); its queue is an ample DropTail.
    pub reverse_rate: Option<DataRate>,
    /// Default rate of every host's access link (default: 10 x rate).
    pub access_rate: Option<DataRate>,
    /// Rate steps, in time order.
    pub rate_changes: Vec<RateChange>,
    pub shaper: Option<ShaperSpec>,
}

/// A scheduled change of congestion-control parameters (`[[flows.changes]]`).
#[derive(Debug, Clone, PartialEq)]
pub struct ParamChange {
    pub at: SimDuration,
    pub params: BTreeMap<String, ParamValue>,
}

/// A step of the bottleneck rate at a given time (`bottleneck.rate_changes`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateChange {
    pub at: SimDuration,
    pub rate: DataRate,
}

/// A token-bucket shaper in front of the bottleneck queue (DOCSIS 3.0 "Max Sustained
/// Rate", "Peak Traffic Rate", "Max Traffic Burst").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShaperSpec {
    pub sustained: DataRate,
    pub peak: Option<DataRate>,
    pub burst: ByteSize,
    /// Model the DOCSIS request-grant MAC (CableLabs ns-2 `DocsisLink`, MAP interval 2 ms)
    /// instead of a token bucket on departures.
    pub docsis: bool,
}

/// Where a PPV marker's throughput-value function comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum TvfSpec {
    /// A preset of paper 001's Fig. 1: gold, silver, background, voice.
    Preset(String),
    /// Piecewise points (throughput in bit/s, packet value).
    Points(Vec<(f64, f64)>),
}

/// Whether each connection of a group is metered alone or the group as one subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PpvScope {
    Flow,
    Group,
}

/// Per Packet Value marking at the senders' edge (paper 001).
#[derive(Debug, Clone, PartialEq)]
pub struct PpvSpec {
    pub tvf: TvfSpec,
    /// Time constant of the marker's rate estimate.
    pub tau: SimDuration,
    pub scope: PpvScope,
}

/// A `[[flows]]` group of `count` identical TCP flows.
#[derive(Debug, Clone, PartialEq)]
pub struct TcpFlowGroup {
    /// Number of identical flows (>= 1, default 1).
    pub count: u32,
    /// Congestion control (default `newreno`).
    pub cc: AlgoSpec,
    /// Base two-way propagation delay (serialisation comes on top).
    pub rtt: SimDuration,
    /// Negotiate ECN (default false).
    pub ecn: bool,
    /// Use SACK (default true).
    pub sack: bool,
    /// Receiver delays ACKs (default true).
    pub delayed_ack: bool,
    /// Initial congestion window in packets (>= 1, default 10).
    pub initial_window: u32,
    /// Maximum segment size in bytes (64..=9000, default 1448).
    pub mss: u32,
    /// Pace transmissions (default false).
    pub pacing: bool,
    /// Minimum retransmission timeout (> 0, default 200ms).
    pub min_rto: SimDuration,
    /// Start time (< scenario duration, default 0).
    pub start: SimDuration,
    /// Stop time (> start); `None` = run to the end.
    pub stop: Option<SimDuration>,
    /// Finite transfer size; `None` = bulk (greedy) sender.
    pub size: Option<ByteSize>,
    /// Record a per-flow trace (default false).
    pub trace: bool,
    /// Rate of these flows' access links (default: the bottleneck's `access_rate`).
    pub access_rate: Option<DataRate>,
    /// Scheduled congestion-control parameter changes, in time order.
    pub changes: Vec<ParamChange>,
    /// Packet-value marking of the group's data packets.
    pub ppv: Option<PpvSpec>,
}

/// UDP traffic pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UdpPattern {
    /// Constant bit rate.
    Cbr,
    /// Poisson arrivals with the given mean rate.
    Poisson,
}

/// A `[[udp]]` group of `count` identical UDP sources.
#[derive(Debug, Clone, PartialEq)]
pub struct UdpGroup {
    /// Number of identical sources (>= 1, default 1).
    pub count: u32,
    /// Mean sending rate (> 0).
    pub rate: DataRate,
    /// Traffic pattern (default cbr).
    pub pattern: UdpPattern,
    /// Size of each packet on the wire.
    pub packet_size: ByteSize,
    /// Base two-way propagation delay.
    pub rtt: SimDuration,
    /// Send ECT(0) packets (a non-responsive ECN-capable source).
    pub ecn: bool,
    /// Start time (< scenario duration, default 0).
    pub start: SimDuration,
    /// Stop time (> start); `None` = run to the end.
    pub stop: Option<SimDuration>,
    /// Rate of these sources' access links (default: the bottleneck's `access_rate`).
    pub access_rate: Option<DataRate>,
    /// Packet-value marking of the group's packets.
    pub ppv: Option<PpvSpec>,
}

/// A whole scenario, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Length of the run (> 0).
    pub duration: SimDuration,
    /// Random seed (default 1).
    pub seed: u64,
    /// Statistics sampling period (> 0, <= duration, default 100ms or the duration if shorter).
    pub stats_interval: SimDuration,
    /// Measurement window, resolved: default second half of the run.
    pub measure_start: SimDuration,
    /// End of the measurement window (default: the duration).
    pub measure_end: SimDuration,
    /// The bottleneck link.
    pub bottleneck: Bottleneck,
    /// TCP flow groups, in file order.
    pub flows: Vec<TcpFlowGroup>,
    /// UDP source groups, in file order.
    pub udp: Vec<UdpGroup>,
}

impl Scenario {
    /// Parse and validate a TOML scenario.
    ///
    /// Errors name the offending key (`flows[1].rtt: expected a duration like "50ms",
    /// got "50"`); TOML syntax errors use the path `<toml>` and give the line number.
    pub fn from_toml(text: &str) -> Result<Scenario, ScenarioError> {
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| toml_syntax_error(text, &e))?;
        let mut path = String::new();
        let value = toml_to_json(toml::Value::Table(table), &mut path)?;
        from_value(value, "<toml>")
    }
    /// Parse and validate the same schema given as JSON (what the Python API sends for dicts).
    ///
    /// JSON `null` is treated like an absent key wherever a key is optional. JSON
    /// syntax errors use the path `<json>`.
    pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| error("<json>", format!("syntax error: {e}")))?;
        from_value(value, "<json>")
    }
}

/// Build an error, forcing the message onto one line.
fn error(path: impl Into<String>, message: impl AsRef<str>) -> ScenarioError {
    let message = message
        .as_ref()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    ScenarioError::new(path, message)
}

/// `<toml>: syntax error at line 3, column 7: <message>`.
fn toml_syntax_error(text: &str, e: &toml::de::Error) -> ScenarioError {
    let location = e
        .span()
        .and_then(|span| text.get(..span.start))
        .map(|before| {
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
            format!(" at line {line}, column {column}")
        })
        .unwrap_or_default();
    error("<toml>", format!("syntax error{location}: {}", e.message()))
}

/// Append a key to a dotted path, quoting keys that are not bare TOML keys.
fn push_key(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        path.push_str(key);
    } else {
        path.push_str(&format!("{key:?}"));
    }
}

/// Join a parent path and a key.
fn join(parent: &str, key: &str) -> String {
    let mut path = parent.to_owned();
    push_key(&mut path, key);
    path
}

/// Convert a parsed TOML document to the JSON value tree both formats are read from.
/// Dates/times and non-finite floats have no JSON equivalent and are rejected here.
fn toml_to_json(value: toml::Value, path: &mut String) -> Result<serde_json::Value, ScenarioError> {
    use serde_json::Value as J;
    Ok(match value {
        toml::Value::String(s) => J::String(s),
        toml::Value::Integer(i) => J::from(i),
        toml::Value::Float(f) => match serde_json::Number::from_f64(f) {
            Some(n) => J::Number(n),
            None => {
                let written = if f.is_nan() {
                    "nan"
                } else if f > 0.0 {
                    "inf"
                } else {
                    "-inf"
                };
                return Err(error(
                    path.clone(),
                    format!("expected a finite number, got {written}"),
                ));
            }
        },
        toml::Value::Boolean(b) => J::Bool(b),
        toml::Value::Datetime(d) => {
            return Err(error(
                path.clone(),
                format!("dates and times are not supported in scenarios, got {d}"),
            ))
        }
        toml::Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                out.push(toml_to_json(item, path)?);
                path.truncate(len);
            }
            J::Array(out)
        }
        toml::Value::Table(table) => {
            let mut out = serde_json::Map::new();
            for (key, item) in table {
                let len = path.len();
                push_key(path, &key);
                let v = toml_to_json(item, path)?;
                path.truncate(len);
                out.insert(key, v);
            }
            J::Object(out)
        }
    })
}

/// Deserialize the raw schema (tracking key paths), then validate it.
fn from_value(value: serde_json::Value, root: &str) -> Result<Scenario, ScenarioError> {
    let Table(raw): Table<RawScenario> =
        serde_path_to_error::deserialize(value).map_err(|e| serde_error(&e, root))?;
    resolve(raw)
}

/// Turn a serde error into `path: message`, rewriting serde's stock messages
/// (unknown/missing fields, invalid types) into the scenario's wording.
fn serde_error(err: &serde_path_to_error::Error<serde_json::Error>, root: &str) -> ScenarioError {
    use serde_path_to_error::Segment;
    let mut path = String::new();
    for segment in err.path().iter() {
        match segment {
            Segment::Seq { index } => path.push_str(&format!("[{index}]")),
            Segment::Map { key } => push_key(&mut path, key),
            Segment::Enum { variant } => push_key(&mut path, variant),
            Segment::Unknown => {}
        }
    }
    let message = err.inner().to_string();

    if let Some(rest) = message.strip_prefix("unknown field `") {
        if let Some(expected) = split_unknown_field(rest) {
            // serde_path_to_error has already recorded the unknown key as the last
            // path segment (`bottleneck.rat`); the tests pin this down.
            let path = if path.is_empty() {
                root.to_owned()
            } else {
                path
            };
            return error(path, format!("unknown key ({expected})"));
        }
    }
    if let Some(key) = message
        .strip_prefix("missing field `")
        .and_then(|r| r.strip_suffix('`'))
    {
        push_key(&mut path, key);
        return error(path, "missing required key");
    }
    let message = match message.strip_prefix("invalid type: ") {
        Some(rest) => match rest.rsplit_once(", expected ") {
            Some((got, expected)) => {
                format!("expected {expected}, got {}", describe_unexpected(got))
            }
            None => message.clone(),
        },
        None => message.clone(),
    };
    let path = if path.is_empty() {
        root.to_owned()
    } else {
        path
    };
    error(path, message)
}

/// Turn the tail of serde's "unknown field `x`, expected one of `a`, `b`" into
/// "expected one of: a, b".
fn split_unknown_field(rest: &str) -> Option<String> {
    if rest.ends_with("`, there are no fields") {
        return Some("no keys are allowed here".to_owned());
    }
    let (_key, expected) = rest.rsplit_once("`, expected ")?;
    // serde writes "`a`", "`a` or `b`", or "one of `a`, `b`, `c`".
    let names: Vec<&str> = expected
        .trim_start_matches("one of ")
        .split(", ")
        .flat_map(|n| n.split(" or "))
        .map(|n| n.trim_matches('`'))
        .collect();
    Some(format!("expected one of: {}", names.join(", ")))
}

/// serde's description of an unexpected value (`integer `5``, `map`) in scenario words.
fn describe_unexpected(got: &str) -> String {
    for prefix in ["integer ", "floating point ", "boolean ", "character "] {
        if let Some(v) = got.strip_prefix(prefix) {
            return v.trim_matches('`').to_owned();
        }
    }
    match got {
        "map" => "a table".to_owned(),
        "sequence" => "an array".to_owned(),
        "unit value" | "null" => "null".to_owned(),
        _ => got.strip_prefix("string ").unwrap_or(got).to_owned(),
    }
}

/// `ns` of a duration that must be > 0.
fn positive(g: &Given<SimDuration>, path: impl Into<String>) -> Result<SimDuration, ScenarioError> {
    if g.value.ns == 0 {
        Err(error(
            path,
            format!("expected a positive duration like \"50ms\", got {}", g.text),
        ))
    } else {
        Ok(g.value)
    }
}

/// Default queue: DropTail with a limit of one BDP.
fn default_queue() -> AlgoSpec {
    let mut params = BTreeMap::new();
    params.insert("limit".to_owned(), ParamValue::Str("1bdp".to_owned()));
    AlgoSpec {
        kind: "droptail".to_owned(),
        params,
    }
}

/// Resolve `start`/`stop` of a traffic group: start < duration, stop > start.
fn start_stop(
    start: Option<&Given<SimDuration>>,
    stop: Option<&Given<SimDuration>>,
    duration: SimDuration,
    prefix: &str,
) -> Result<(SimDuration, Option<SimDuration>), ScenarioError> {
    let start_value = start.map_or(SimDuration::default(), |g| g.value);
    if let Some(g) = start {
        if g.value >= duration {
            return Err(error(
                join(prefix, "start"),
                format!(
                    "must be before the end of the run ({}), got {}",
                    fmt_duration(duration),
                    g.text
                ),
            ));
        }
    }
    let stop_value = match stop {
        None => None,
        Some(g) if g.value <= start_value => {
            return Err(error(
                join(prefix, "stop"),
                format!(
                    "must be after the start ({}), got {}",
                    fmt_duration(start_value),
                    g.text
                ),
            ))
        }
        Some(g) => Some(g.value),
    };
    Ok((start_value, stop_value))
}

fn resolve_measure(
    measure: Option<&RawMeasure>,
    duration: SimDuration,
) -> Result<(SimDuration, SimDuration), ScenarioError> {
    let start_g = measure.and_then(|m| m.start.as_ref());
    let end_g = measure.and_then(|m| m.end.as_ref());
    let start = start_g.map_or(
        SimDuration {
            ns: duration.ns / 2,
        },
        |g| g.value,
    );
    let end = end_g.map_or(duration, |g| g.value);
    let got = format!("{}..{}", fmt_duration(start), fmt_duration(end));
    let outside = format!(
        "measurement window must lie inside the run (0s..{}), got {got}",
        fmt_duration(duration)
    );
    if end > duration {
        return Err(error("measure.end", outside));
    }
    if start >= duration {
        return Err(error("measure.start", outside));
    }
    if start >= end {
        let path = if end_g.is_some() {
            "measure.end"
        } else {
            "measure.start"
        };
        return Err(error(
            path,
            format!("measurement window must end after it starts, got {got}"),
        ));
    }
    Ok((start, end))
}

fn resolve_bottleneck(
    b: RawBottleneck,
    duration: SimDuration,
) -> Result<Bottleneck, ScenarioError> {
    let bdp_rtt = match &b.bdp_rtt {
        Some(g) => Some(positive(g, "bottleneck.bdp_rtt")?),
        None => None,
    };
    let mut rate_changes = Vec::new();
    for (i, Table(c)) in b
        .rate_changes
        .map(|g| g.0)
        .unwrap_or_default()
        .into_iter()
        .enumerate()
    {
        let path = format!("bottleneck.rate_changes[{i}]");
        check_at(&c.at, duration, &path)?;
        rate_changes.push(RateChange {
            at: c.at.value,
            rate: c.rate.value,
        });
    }
    rate_changes.sort_by_key(|c| c.at);
    let shaper = match b.shaper {
        None => None,
        Some(Table(sh)) => {
            if let Some(peak) = &sh.peak {
                if peak.value < sh.sustained.value {
                    return Err(error(
                        "bottleneck.shaper.peak",
                        format!(
                            "must be at least the sustained rate ({}), got {}",
                            sh.sustained.text, peak.text
                        ),
                    ));
                }
            }
            if sh.burst.value.bytes == 0 {
                return Err(error(
                    "bottleneck.shaper.burst",
                    format!(
                        "expected a positive size like \"10MB\", got {}",
                        sh.burst.text
                    ),
                ));
            }
            Some(ShaperSpec {
                sustained: sh.sustained.value,
                peak: sh.peak.map(|g| g.value),
                burst: sh.burst.value,
                docsis: sh.docsis.is_some_and(|g| g.value.0),
            })
        }
    };
    Ok(Bottleneck {
        rate: b.rate.value,
        delay: b.delay.map_or(SimDuration::default(), |g| g.value),
        queue: b.queue.map_or_else(default_queue, |RawAlgo(a)| a),
        bdp_rtt,
        reverse_rate: b.reverse_rate.map(|g| g.value),
        access_rate: b.access_rate.map(|g| g.value),
        rate_changes,
        shaper,
    })
}

/// A change time must lie inside the run.
fn check_at(
    at: &Given<SimDuration>,
    duration: SimDuration,
    path: &str,
) -> Result<(), ScenarioError> {
    if at.value > duration {
        return Err(error(
            join(path, "at"),
            format!(
                "must lie inside the run (0s..{}), got {}",
                fmt_duration(duration),
                at.text
            ),
        ));
    }
    Ok(())
}

fn resolve_flow(
    f: RawFlow,
    i: usize,
    duration: SimDuration,
) -> Result<TcpFlowGroup, ScenarioError> {
    let prefix = format!("flows[{i}]");
    let rtt = positive(&f.rtt, join(&prefix, "rtt"))?;
    let min_rto = match &f.min_rto {
        Some(g) => positive(g, join(&prefix, "min_rto"))?,
        None => SimDuration { ns: 200_000_000 },
    };
    let (start, stop) = start_stop(f.start.as_ref(), f.stop.as_ref(), duration, &prefix)?;
    let size = match f.size {
        Some(g) if g.value.bytes == 0 => {
            return Err(error(
                join(&prefix, "size"),
                format!(
                    "expected a positive size like \"1500B\" or \"1.5MB\", got {}",
                    g.text
                ),
            ))
        }
        Some(g) => Some(g.value),
        None => None,
    };
    let flag = |g: Option<Given<raw::Flag>>, default: bool| g.map_or(default, |g| g.value.0);
    let mut changes = Vec::new();
    for (k, c) in f
        .changes
        .map(|g| g.0)
        .unwrap_or_default()
        .into_iter()
        .enumerate()
    {
        check_at(&c.at, duration, &format!("{prefix}.changes[{k}]"))?;
        changes.push(ParamChange {
            at: c.at.value,
            params: c.params,
        });
    }
    changes.sort_by_key(|c| c.at);
    Ok(TcpFlowGroup {
        count: f.count.map_or(1, |g| g.value.0 as u32),
        cc: f.cc.map_or_else(
            || AlgoSpec {
                kind: "newreno".to_owned(),
                params: BTreeMap::new(),
            },
            |RawAlgo(a)| a,
        ),
        rtt,
        ecn: flag(f.ecn, false),
        sack: flag(f.sack, true),
        delayed_ack: flag(f.delayed_ack, true),
        initial_window: f.initial_window.map_or(10, |g| g.value.0 as u32),
        mss: f.mss.map_or(1448, |g| g.value.0 as u32),
        pacing: flag(f.pacing, false),
        min_rto,
        start,
        stop,
        size,
        trace: flag(f.trace, false),
        access_rate: f.access_rate.map(|g| g.value),
        changes,
        ppv: f
            .ppv
            .map(|p| resolve_ppv(p, &join(&prefix, "ppv")))
            .transpose()?,
    })
}

fn resolve_udp(u: RawUdp, i: usize, duration: SimDuration) -> Result<UdpGroup, ScenarioError> {
    let prefix = format!("udp[{i}]");
    let rtt = positive(&u.rtt, join(&prefix, "rtt"))?;
    let packet_size = match u.packet_size {
        Some(g) if !(64..=9000).contains(&g.value.bytes) => {
            return Err(error(
                join(&prefix, "packet_size"),
                format!(
                    "expected a packet size between 64B and 9000B, got {}",
                    g.text
                ),
            ))
        }
        Some(g) => g.value,
        None => ByteSize { bytes: 1500 },
    };
    let (start, stop) = start_stop(u.start.as_ref(), u.stop.as_ref(), duration, &prefix)?;
    Ok(UdpGroup {
        count: u.count.map_or(1, |g| g.value.0 as u32),
        rate: u.rate.value,
        pattern: u.pattern.map_or(UdpPattern::Cbr, |g| g.value),
        packet_size,
        rtt,
        ecn: u.ecn.is_some_and(|g| g.value.0),
        start,
        stop,
        access_rate: u.access_rate.map(|g| g.value),
        ppv: u
            .ppv
            .map(|p| resolve_ppv(p, &join(&prefix, "ppv")))
            .transpose()?,
    })
}

/// Check a `ppv` value's structure; the function itself is validated when built.
fn resolve_ppv(p: raw::RawPpv, path: &str) -> Result<PpvSpec, ScenarioError> {
    let tvf = match (p.tvf, p.points) {
        (Some(_), Some(_)) => {
            return Err(error(
                join(path, "points"),
                "give either tvf or points, not both",
            ))
        }
        (None, None) => {
            return Err(error(
                join(path, "tvf"),
                "missing required key (or give points)",
            ))
        }
        (Some(name), None) => TvfSpec::Preset(name),
        (None, Some(points)) => {
            let mut out = Vec::with_capacity(points.len());
            for (i, (rate, value)) in points.into_iter().enumerate() {
                let at = format!("{}[{i}]", join(path, "points"));
                let rate_bps = match &rate.value {
                    ParamValue::Str(s) => {
                        DataRate::parse(s).map_err(|m| error(at.clone(), m))?.bps as f64
                    }
                    ParamValue::Number(n) if *n > 0.0 => *n,
                    _ => {
                        return Err(error(
                            at,
                            format!(
                                "expected a throughput like \"10Mbps\" (or bit/s), got {}",
                                rate.text
                            ),
                        ))
                    }
                };
                let value = match value.value {
                    ParamValue::Number(n) if n >= 0.0 => n,
                    _ => {
                        return Err(error(
                            at,
                            format!("expected a non-negative packet value, got {}", value.text),
                        ))
                    }
                };
                out.push((rate_bps, value));
            }
            TvfSpec::Points(out)
        }
    };
    let tau = match p.tau {
        Some(g) => positive(&g, join(path, "tau"))?,
        None => SimDuration { ns: 100_000_000 },
    };
    let scope = match p.scope.as_deref() {
        None | Some("flow") => PpvScope::Flow,
        Some("group") => PpvScope::Group,
        Some(other) => {
            return Err(error(
                join(path, "scope"),
                format!("expected \"flow\" or \"group\", got {other:?}"),
            ))
        }
    };
    Ok(PpvSpec { tvf, tau, scope })
}

/// Apply defaults and cross-field checks to the raw schema.
fn resolve(raw: RawScenario) -> Result<Scenario, ScenarioError> {
    let duration = positive(&raw.duration, "duration")?;
    let seed = raw.seed.map_or(1, |g| g.value.0);
    let stats_interval = match &raw.stats_interval {
        Some(g) => {
            let v = positive(g, "stats_interval")?;
            if v > duration {
                return Err(error(
                    "stats_interval",
                    format!(
                        "must not exceed the run duration ({}), got {}",
                        fmt_duration(duration),
                        g.text
                    ),
                ));
            }
            v
        }
        // 100ms, or the whole run if that is shorter.
        None => SimDuration { ns: 100_000_000 }.min(duration),
    };
    let (measure_start, measure_end) =
        resolve_measure(raw.measure.as_ref().map(|t| &t.0), duration)?;
    let bottleneck = resolve_bottleneck(raw.bottleneck.0, duration)?;
    let flows = raw
        .flows
        .map(|g| g.0)
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, Table(f))| resolve_flow(f, i, duration))
        .collect::<Result<Vec<_>, _>>()?;
    let udp = raw
        .udp
        .map(|g| g.0)
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, Table(u))| resolve_udp(u, i, duration))
        .collect::<Result<Vec<_>, _>>()?;
    if flows.is_empty() && udp.is_empty() {
        return Err(error(
            "flows",
            "the scenario has no traffic: add a [[flows]] or [[udp]] group",
        ));
    }
    Ok(Scenario {
        duration,
        seed,
        stats_interval,
        measure_start,
        measure_end,
        bottleneck,
        flows,
        udp,
    })
}
