//! Scenario files: the one schema used by the CLI and the Python API.
//!
//! OWNED BY THE SCENARIO HELPER: parsing, unit handling, validation and errors live
//! here. The engine consumes only the public types below (keep their shapes).

pub mod dist;
pub mod link_model;
mod lit;
pub mod network;
mod raw;
pub mod units;

use std::collections::BTreeMap;

use dist::RawDist;
use lit::Given;
use raw::{RawAlgo, RawBottleneck, RawFlow, RawMeasure, RawScenario, RawUdp, Table};

use crate::engine::rng::{stream, SimRng, StreamKind};
use units::fmt_duration;

pub use dist::Dist;
pub use link_model::{JitterSpec, LossSpec};
pub use network::{Endpoints, HopSpec, LeafSpineSpec, LinkSpec, Network};
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
            message: shorten_quoted(&message.into()),
        }
    }
}

/// The longest quoted value an error echoes whole.
const ECHO_CHARS: usize = 60;

/// Cut every quoted value longer than [`ECHO_CHARS`] in `message` to its start and its
/// length: whichever layer wrote the message (the schema, the unit parsers, a
/// discipline's or a congestion control's parameters), a pasted megabyte must not become
/// the error line. The one place this is done: every error is made here.
fn shorten_quoted(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(512));
    let mut rest = message;
    while let Some(open) = rest.find('"') {
        out.push_str(&rest[..=open]);
        let after = &rest[open + 1..];
        // The closing quote, skipping escaped ones (`{:?}` output).
        let mut end = None;
        let mut escaped = false;
        for (i, c) in after.char_indices() {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => {
                    end = Some(i);
                    break;
                }
                _ => escaped = false,
            }
        }
        let Some(end) = end else {
            rest = after;
            continue;
        };
        let inner = &after[..end];
        let n = inner.chars().count();
        if n > ECHO_CHARS {
            let head: String = inner.chars().take(ECHO_CHARS).collect();
            out.push_str(&format!("{head}...\" ({n} characters)"));
        } else {
            out.push_str(inner);
            out.push('"');
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
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
    /// Queue discipline of the reverse direction (default: an ample DropTail that never
    /// drops, for ACKs); limits in BDPs resolve at `reverse_rate`.
    pub reverse_queue: Option<AlgoSpec>,
    /// A token bucket in front of the reverse queue (a cable downstream; no DOCSIS MAC).
    pub reverse_shaper: Option<ShaperSpec>,
    /// Random loss on the wire after the forward queue (`loss`), and after the reverse
    /// queue (`reverse_loss`); see [`link_model`].
    pub loss: Option<LossSpec>,
    pub reverse_loss: Option<LossSpec>,
    /// Delay jitter on the forward link (`jitter`) and the reverse (`reverse_jitter`).
    pub jitter: Option<JitterSpec>,
    pub reverse_jitter: Option<JitterSpec>,
    /// Mahimahi traces driving the forward (`trace`) and reverse (`reverse_trace`) links
    /// instead of their rates (`crate::net::link_model::mahimahi`).
    pub trace: Option<std::sync::Arc<crate::net::link_model::mahimahi::MahimahiTrace>>,
    pub reverse_trace: Option<std::sync::Arc<crate::net::link_model::mahimahi::MahimahiTrace>>,
    /// When those traces' links take a packet from the queue (`trace_dequeue`).
    pub trace_dequeue: link_model::TraceDequeue,
}

/// Which way a group's data crosses the bottleneck.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Direction {
    /// Left to right, through `bottleneck.queue` (the default).
    #[default]
    Forward,
    /// Right to left, through `bottleneck.reverse_queue` (downloads); ACKs go forward.
    Reverse,
}

/// How cwnd grows on the ACK that ends fast recovery (`recovery_exit`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RecoveryExit {
    /// Linux (the default): `tcp_end_cwnd_reduction` sets cwnd = ssthresh, then
    /// `tcp_cong_control` grows it by the packets this ACK newly delivered
    /// (`acked_sacked`).
    #[default]
    Linux,
    /// ns-3 (`TcpSocketBase::ProcessAck`, ns-3-dev src/internet/model/tcp-socket-base.cc):
    /// cwnd = ssthresh, then `IncreaseWindow` with every segment the ACK covers,
    /// `(ackNumber - oldHeadSequence) / segmentSize`, segments SACKed earlier included.
    /// For comparing with ns-3 (see bench/CAUSES.md, ns3-recovery-exit).
    Ns3,
}

/// A scheduled change of congestion-control parameters (`[[flows.changes]]`).
#[derive(Debug, Clone, PartialEq)]
pub struct ParamChange {
    pub at: SimDuration,
    pub params: BTreeMap<String, ParamValue>,
}

/// A soft deadline on each finite transfer of a group, met by the deadline-aware LBE
/// controller (`deadline = "120s"`, `deadline_control = { ... }`; see
/// [`crate::control::deadline`] for the control law).
#[derive(Debug, Clone, PartialEq)]
pub struct DeadlineSpec {
    /// The deadline, counted from each transfer's start.
    pub within: SimDuration,
    /// The parameter to turn and its range (`low`, `high`): `None` for the congestion
    /// control's own LBE knob; a range alone overrides that knob's range.
    pub knob: Option<String>,
    pub low: Option<ParamValue>,
    pub high: Option<ParamValue>,
    /// Control period (default 1 s).
    pub interval: SimDuration,
    /// Integral gain on the log rate error (default 0.5).
    pub gain: f64,
    /// Fraction of the deadline kept in reserve (default 0.1).
    pub margin: f64,
    /// The congestion control to switch to when even the knob's top falls short.
    pub escalate: Option<AlgoSpec>,
    /// Retune the congestion control (default true); false only records whether each
    /// transfer meets the deadline, for a baseline with the `cc` as configured.
    pub retune: bool,
}

/// A step of the bottleneck rate at a given time (`bottleneck.rate_changes`); a zero
/// rate is an outage.
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
    /// Display name for tables and plots (`name = "Gold"`).
    pub name: Option<String>,
    /// Number of identical flows (>= 1, default 1).
    pub count: u32,
    /// Congestion control (default `newreno`).
    pub cc: AlgoSpec,
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
    /// cwnd growth on the ACK that ends fast recovery (default Linux's).
    pub recovery_exit: RecoveryExit,
    /// RACK time-based loss detection (RFC 8985 §6, Linux `tcp_recovery` bit 0); default
    /// true as in Linux since 4.18; SACK flows only.
    pub rack: bool,
    /// Tail loss probes (RFC 8985 §7, Linux `tcp_early_retrans = 3`); default true as in
    /// Linux since 3.10; SACK flows only.
    pub tlp: bool,
    /// The receiver ACKs the next two segments at once after the first CE mark (Linux's
    /// `__tcp_ecn_check_ce`) and a data segment with CWR at once (`tcp_ecn_accept_cwr`);
    /// default true; ns-3's receiver does neither.
    pub ce_quickack: bool,
    /// Minimum retransmission timeout (> 0, default 200ms).
    pub min_rto: SimDuration,
    /// Stop time (after every flow's start); `None` = run to the end.
    pub stop: Option<SimDuration>,
    /// Each flow's own values (start, RTT, transfer sizes), drawn when the scenario was
    /// read; `count` entries.
    pub drawn: Vec<TcpFlowDraw>,
    /// Record a per-flow trace (default false).
    pub trace: bool,
    /// Rate of these flows' access links (default: the bottleneck's `access_rate`).
    pub access_rate: Option<DataRate>,
    /// Scheduled congestion-control parameter changes, in time order.
    pub changes: Vec<ParamChange>,
    /// Packet-value marking of the group's data packets.
    pub ppv: Option<PpvSpec>,
    /// A soft deadline on each transfer, met by the DA-LBE controller.
    pub deadline: Option<DeadlineSpec>,
    /// Which way the data goes (default forward; ACKs go the other way).
    pub direction: Direction,
    /// Its hosts in a `[network]` (`None` in a dumbbell).
    pub endpoints: Option<Endpoints>,
}

/// One TCP flow's values, fixed or drawn from the group's distributions.
#[derive(Debug, Clone, PartialEq)]
pub struct TcpFlowDraw {
    /// Start time (< scenario duration).
    pub start: SimDuration,
    /// Base two-way propagation delay (serialisation comes on top).
    pub rtt: SimDuration,
    /// Sizes of the flow's transfers, one per transfer (`repeat.times` of them, else
    /// one); empty for a bulk (greedy) sender.
    pub sizes: Vec<ByteSize>,
    /// Think time before each transfer after the first (`sizes.len() - 1` entries).
    pub thinks: Vec<SimDuration>,
}

/// One UDP source's values, fixed or drawn from the group's distributions.
#[derive(Debug, Clone, PartialEq)]
pub struct UdpDraw {
    pub start: SimDuration,
    pub rtt: SimDuration,
    /// Mean sending rate (> 0).
    pub rate: DataRate,
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
    /// Display name for tables and plots.
    pub name: Option<String>,
    /// Number of identical sources (>= 1, default 1).
    pub count: u32,
    /// Traffic pattern (default cbr).
    pub pattern: UdpPattern,
    /// Size of each packet on the wire.
    pub packet_size: ByteSize,
    /// Send ECT(0) packets (a non-responsive ECN-capable source).
    pub ecn: bool,
    /// Each source's start, RTT and rate; `count` entries.
    pub drawn: Vec<UdpDraw>,
    /// Stop time (after every source's start); `None` = run to the end.
    pub stop: Option<SimDuration>,
    /// Rate of these sources' access links (default: the bottleneck's `access_rate`).
    pub access_rate: Option<DataRate>,
    /// Packet-value marking of the group's packets.
    pub ppv: Option<PpvSpec>,
    /// Which way the packets go (default forward).
    pub direction: Direction,
    /// Its hosts in a `[network]` (`None` in a dumbbell).
    pub endpoints: Option<Endpoints>,
}

/// When the bottleneck discipline's control state is recorded (`qdisc_state` table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QdiscStateMode {
    /// Not at all.
    Off,
    /// At every `stats_interval` (the default).
    Interval,
    /// At every stats interval and after every timer-driven update of the discipline
    /// (PIE's and PVPIE's every `tupdate`, CSAQM's `t_update`, a shaper's MAP).
    Updates,
}

/// `[trace]`: which optional recorders run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceSpec {
    pub qdisc_state: QdiscStateMode,
    /// Every drop and mark at the bottleneck (`queue_events`).
    pub queue_events: bool,
    /// Every RTT sample of the flows with `trace = true` (`rtt_samples`).
    pub rtt_samples: bool,
    /// Links whose departing packets go to a pcapng capture (`trace.pcap`), by name.
    pub pcap: Vec<String>,
    /// At most this many packets in the capture (default 1,000,000).
    pub pcap_max_packets: u64,
}

/// Default packet cap of a pcap capture: about 100 MB of headers.
pub const DEFAULT_PCAP_PACKETS: u64 = 1_000_000;

impl Default for TraceSpec {
    fn default() -> Self {
        TraceSpec {
            qdisc_state: QdiscStateMode::Interval,
            queue_events: false,
            rtt_samples: false,
            pcap: Vec::new(),
            pcap_max_packets: DEFAULT_PCAP_PACKETS,
        }
    }
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
    /// The bottleneck link; with a `[network]`, its first link's rate, delay and queue.
    pub bottleneck: Bottleneck,
    /// A general network instead of the dumbbell (`[network]`).
    pub network: Option<Network>,
    /// TCP flow groups, in file order.
    pub flows: Vec<TcpFlowGroup>,
    /// UDP source groups, in file order.
    pub udp: Vec<UdpGroup>,
    /// Optional recorders.
    pub trace: TraceSpec,
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
        let mut non_finite = Vec::new();
        let value = toml_to_json(toml::Value::Table(table), &mut path, &mut non_finite)?;
        let parsed = from_value(value, "<toml>");
        // A non-finite number was read as 0 so that the schema's errors (an unknown key,
        // a wrong type elsewhere) come first, as for any other value: `bogus = nan` is an
        // unknown key (issue 33). Then the number itself is refused, naming its key.
        let Some((at, written)) = non_finite.first() else {
            return parsed;
        };
        let finite = error(
            at.clone(),
            format!("expected a finite number, got {written}"),
        );
        let about_it = |e: &ScenarioError| {
            non_finite
                .iter()
                .any(|(p, _)| e.path.starts_with(p.as_str()) || p.starts_with(e.path.as_str()))
        };
        match parsed {
            Err(e) if e.message.starts_with("unknown key") || !about_it(&e) => Err(e),
            _ => Err(finite),
        }
    }
    /// Parse and validate the same schema given as JSON (what the Python API sends for dicts).
    ///
    /// JSON `null` is treated like an absent key wherever a key is optional. JSON
    /// syntax errors use the path `<json>`.
    pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
        // JSON allows a key twice (the last wins); TOML does not, and a scenario should
        // mean one thing: refuse it, naming the key.
        let value = serde_json::from_str::<NoDuplicates>(text)
            .map_err(|e| error("<json>", format!("syntax error: {e}")))?
            .0;
        from_value(value, "<json>")
    }
}

/// A JSON value tree read with every object's keys distinct.
struct NoDuplicates(serde_json::Value);

impl<'de> serde::Deserialize<'de> for NoDuplicates {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NoDuplicatesVisitor)
    }
}

struct NoDuplicatesVisitor;

impl<'de> serde::de::Visitor<'de> for NoDuplicatesVisitor {
    type Value = NoDuplicates;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates(v.into()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates(
            serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, Into::into),
        ))
    }
    fn visit_str<E>(self, v: &str) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates(v.into()))
    }
    fn visit_string<E>(self, v: String) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates(v.into()))
    }
    fn visit_unit<E>(self) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates(serde_json::Value::Null))
    }
    fn visit_none<E>(self) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates(serde_json::Value::Null))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<NoDuplicates, A::Error> {
        let mut out = Vec::new();
        while let Some(NoDuplicates(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(NoDuplicates(out.into()))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<NoDuplicates, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let NoDuplicates(v) = map.next_value()?;
            if out.contains_key(&key) {
                return Err(serde::de::Error::custom(format!("duplicate key {key:?}")));
            }
            out.insert(key, v);
        }
        Ok(NoDuplicates(out.into()))
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
    // toml says "duplicate key" without the key: take it from the text the error points at.
    let mut message = e.message().trim().to_owned();
    if message == "duplicate key" {
        if let Some(key) = e.span().and_then(|span| text.get(span)) {
            message = format!("duplicate key {:?}", key.trim());
        }
    }
    error("<toml>", format!("syntax error{location}: {message}"))
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
/// Dates/times have no JSON equivalent and are rejected here; non-finite floats are read
/// as 0 and listed in `non_finite` (key path, as written) for the caller to refuse.
fn toml_to_json(
    value: toml::Value,
    path: &mut String,
    non_finite: &mut Vec<(String, &'static str)>,
) -> Result<serde_json::Value, ScenarioError> {
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
                non_finite.push((path.clone(), written));
                J::from(0)
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
                out.push(toml_to_json(item, path, non_finite)?);
                path.truncate(len);
            }
            J::Array(out)
        }
        toml::Value::Table(table) => {
            let mut out = serde_json::Map::new();
            for (key, item) in table {
                let len = path.len();
                push_key(path, &key);
                let v = toml_to_json(item, path, non_finite)?;
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
    let rate_changes = resolve_rate_changes(b.rate_changes, duration, "bottleneck")?;
    let trace = link_model::resolve_trace(b.trace.as_ref(), "bottleneck.trace")?;
    let reverse_trace =
        link_model::resolve_trace(b.reverse_trace.as_ref(), "bottleneck.reverse_trace")?;
    if trace.is_some() && !rate_changes.is_empty() {
        return Err(error(
            "bottleneck.trace",
            "a trace and rate_changes both set the forward link's capacity: give one",
        ));
    }
    let trace_dequeue = link_model::resolve_trace_dequeue(
        b.trace_dequeue,
        trace.is_some() || reverse_trace.is_some(),
        "bottleneck",
    )?;
    let shaper = b
        .shaper
        .map(|Table(sh)| resolve_shaper(sh, "bottleneck.shaper", true))
        .transpose()?;
    let reverse_shaper = b
        .reverse_shaper
        .map(|Table(sh)| resolve_shaper(sh, "bottleneck.reverse_shaper", false))
        .transpose()?;
    Ok(Bottleneck {
        rate: b.rate.value,
        delay: b.delay.map_or(SimDuration::default(), |g| g.value),
        queue: b.queue.map_or_else(default_queue, |RawAlgo(a)| a),
        bdp_rtt,
        reverse_rate: b.reverse_rate.map(|g| g.value),
        access_rate: b.access_rate.map(|g| g.value),
        rate_changes,
        shaper,
        reverse_queue: b.reverse_queue.map(|RawAlgo(a)| a),
        reverse_shaper,
        loss: b
            .loss
            .map(|l| link_model::resolve_raw_loss(l, "bottleneck.loss"))
            .transpose()?,
        reverse_loss: b
            .reverse_loss
            .map(|l| link_model::resolve_raw_loss(l, "bottleneck.reverse_loss"))
            .transpose()?,
        jitter: b
            .jitter
            .map(|Table(j)| link_model::resolve_jitter(j, "bottleneck.jitter"))
            .transpose()?,
        reverse_jitter: b
            .reverse_jitter
            .map(|Table(j)| link_model::resolve_jitter(j, "bottleneck.reverse_jitter"))
            .transpose()?,
        trace,
        reverse_trace,
        trace_dequeue,
    })
}

/// `rate_changes` under `prefix` (`bottleneck`, `network.links[2]`), in time order; each
/// inside the run.
fn resolve_rate_changes(
    raw: Option<raw::Groups<Table<raw::RawRateChange>>>,
    duration: SimDuration,
    prefix: &str,
) -> Result<Vec<RateChange>, ScenarioError> {
    let mut rate_changes = Vec::new();
    for (i, Table(c)) in raw.map(|g| g.0).unwrap_or_default().into_iter().enumerate() {
        let path = format!("{prefix}.rate_changes[{i}]");
        check_at(&c.at, duration, &path)?;
        rate_changes.push(RateChange {
            at: c.at.value,
            rate: c.rate.value.0,
        });
    }
    rate_changes.sort_by_key(|c| c.at);
    Ok(rate_changes)
}

/// A token bucket's settings; `docsis_ok`: the DOCSIS MAC may be asked for (upstream only).
fn resolve_shaper(
    sh: raw::RawShaper,
    path: &str,
    docsis_ok: bool,
) -> Result<ShaperSpec, ScenarioError> {
    if let Some(peak) = &sh.peak {
        if peak.value < sh.sustained.value {
            return Err(error(
                join(path, "peak"),
                format!(
                    "must be at least the sustained rate ({}), got {}",
                    sh.sustained.text, peak.text
                ),
            ));
        }
    }
    if sh.burst.value.bytes == 0 {
        return Err(error(
            join(path, "burst"),
            format!(
                "expected a positive size like \"10MB\", got {}",
                sh.burst.text
            ),
        ));
    }
    let docsis = sh.docsis.is_some_and(|g| g.value.0);
    if docsis && !docsis_ok {
        return Err(error(
            join(path, "docsis"),
            "the DOCSIS request-grant MAC is an upstream mechanism; the downstream is a plain token bucket",
        ));
    }
    Ok(ShaperSpec {
        sustained: sh.sustained.value,
        peak: sh.peak.map(|g| g.value),
        burst: sh.burst.value,
        docsis,
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

/// A group's start as written: a value or distribution per flow, or a gap after the
/// previous flow's start (flows in id order: TCP groups, then UDP groups, in file order).
enum StartSpec {
    Each(Dist),
    AfterPrevious(Dist),
    /// Open-loop arrivals: the starts are already drawn.
    Drawn,
}

/// Which drawn field a stream belongs to: each group's each field has its own stream.
#[derive(Clone, Copy)]
enum Field {
    Start = 0,
    Rtt = 1,
    Size = 2,
    Rate = 3,
    Arrivals = 4,
    Think = 5,
}

/// The random stream of one field of one group (`udp`: a `[[udp]]` group).
fn value_stream(seed: u64, udp: bool, group: usize, field: Field) -> SimRng {
    let index = (u64::from(udp) << 48) | ((group as u64) << 8) | field as u64;
    stream(seed, StreamKind::Scenario, index)
}

/// A drawn duration in whole nanoseconds.
fn draw_ns(d: &Dist, rng: &mut SimRng) -> u64 {
    d.sample(rng).round().max(0.0) as u64
}

fn start_spec(raw: Option<&RawDist<SimDuration>>, path: &str) -> Result<StartSpec, ScenarioError> {
    Ok(match raw {
        None => StartSpec::Each(Dist::Fixed(0.0)),
        Some(RawDist::AfterPrevious(gap)) => {
            let gap_path = join(path, "after_previous");
            if matches!(**gap, RawDist::AfterPrevious(_)) {
                return Err(error(
                    join(&gap_path, "after_previous"),
                    "after_previous cannot be nested",
                ));
            }
            StartSpec::AfterPrevious(gap.resolve(&gap_path)?)
        }
        Some(d) => StartSpec::Each(d.resolve(path)?),
    })
}

/// The most flows (TCP and UDP together) a scenario may have: events name flows and
/// links by 28-bit indices (`Event::MAX_INDEX`), and each flow brings four access links.
pub const MAX_FLOWS: usize = (crate::engine::Event::MAX_INDEX as usize - 2) / 4;

/// The longest run a scenario may ask for: a year of simulated time (the engine's
/// nanosecond clock itself would overflow after 584 years).
const MAX_DURATION_NS: u64 = 365 * 86_400 * 1_000_000_000;

/// The most closed-loop transfers one group may ask for (each is drawn up front).
const MAX_TRANSFERS: usize = 10_000_000;

/// The most rows of per-interval series a run may produce (about 2 GB of tables).
const MAX_SERIES_ROWS: u64 = 100_000_000;

/// Refuse a group that would take the scenario past [`MAX_FLOWS`], before anything is
/// drawn for it (a huge `count` would otherwise exhaust memory while drawing).
fn check_flow_budget(
    before: usize,
    count: usize,
    ticks: u64,
    path: &str,
) -> Result<(), ScenarioError> {
    let total = before.saturating_add(count);
    if total > MAX_FLOWS {
        return Err(error(
            path,
            format!("{total} flows in all; at most {MAX_FLOWS} are supported"),
        ));
    }
    // The series check of `resolve`, before this group's values are drawn: drawing 67
    // million flows to refuse them afterwards took 38 s and 7.9 GB (issue 33).
    let rows = ticks.saturating_mul(total as u64);
    if rows > MAX_SERIES_ROWS {
        return Err(error(
            "stats_interval",
            format!(
                "{ticks} intervals x at least {total} rows each = at least {rows} rows of \
                 time series, at most {MAX_SERIES_ROWS}: use a longer stats_interval"
            ),
        ));
    }
    Ok(())
}

/// Draw `count` positive durations (RTTs).
fn draw_rtts(
    raw: &RawDist<SimDuration>,
    path: &str,
    count: usize,
    mut rng: SimRng,
) -> Result<Vec<SimDuration>, ScenarioError> {
    if let Some(g) = raw.fixed() {
        let v = positive(g, path)?;
        return Ok(vec![v; count]);
    }
    let d = raw.resolve(path)?;
    (0..count)
        .map(|k| match draw_ns(&d, &mut rng) {
            0 => Err(error(
                path,
                format!("drew a zero RTT for flow {k} of the group; use a distribution of positive values"),
            )),
            ns => Ok(SimDuration { ns }),
        })
        .collect()
}

/// Open-loop arrival times in `[start, end)`.
fn draw_arrivals(
    a: &raw::RawArrivals,
    path: &str,
    duration: SimDuration,
    mut rng: SimRng,
) -> Result<Vec<SimDuration>, ScenarioError> {
    /// Bound on the flows one arrivals group may create (the engine's own limit is lower).
    const MAX_ARRIVALS: usize = 10_000_000;
    let gap = match (&a.poisson, &a.gap) {
        (Some(_), Some(_)) => {
            return Err(error(
                join(path, "gap"),
                "give either poisson or gap, not both",
            ))
        }
        (None, None) => {
            return Err(error(
                join(path, "poisson"),
                "missing required key (or give gap)",
            ))
        }
        (Some(rate), None) => {
            if rate.value.0 <= 0.0 {
                return Err(error(
                    join(path, "poisson"),
                    format!("expected a positive arrival rate, got {}", rate.text),
                ));
            }
            Dist::Exponential {
                mean: 1e9 / rate.value.0,
            }
        }
        (None, Some(g)) => {
            let d = g.resolve(&join(path, "gap"))?;
            if d.mean() <= 0.0 {
                return Err(error(
                    join(path, "gap"),
                    "expected gaps with a positive mean (an arrival rate of zero gaps is infinite)",
                ));
            }
            d
        }
    };
    let start = a.start.as_ref().map_or(0, |g| g.value.ns);
    let end = a.end.as_ref().map_or(duration.ns, |g| g.value.ns);
    if end > duration.ns {
        return Err(error(
            join(path, "end"),
            format!(
                "must lie inside the run (0s..{}), got {}",
                fmt_duration(duration),
                a.end.as_ref().map_or("", |g| g.text.as_str())
            ),
        ));
    }
    if start >= end {
        return Err(error(
            join(path, "start"),
            format!(
                "the arrival window must end after it starts, got {}..{}",
                fmt_duration(SimDuration { ns: start }),
                fmt_duration(SimDuration { ns: end })
            ),
        ));
    }
    let mut out = Vec::new();
    let mut t = start;
    loop {
        t = t.saturating_add(draw_ns(&gap, &mut rng));
        if t >= end {
            break;
        }
        if out.len() == MAX_ARRIVALS {
            return Err(error(
                path,
                format!("more than {MAX_ARRIVALS} arrivals in the window; lower the rate"),
            ));
        }
        out.push(SimDuration { ns: t });
    }
    Ok(out)
}

/// `deadline` and `deadline_control` of a `[[flows]]` group. The knob itself is checked
/// against the congestion control when the scenario is built.
fn resolve_deadline(
    deadline: Option<Given<SimDuration>>,
    control: Option<Table<raw::RawDeadlineControl>>,
    finite: bool,
    prefix: &str,
) -> Result<Option<DeadlineSpec>, ScenarioError> {
    let Some(within) = deadline else {
        if control.is_some() {
            return Err(error(
                join(prefix, "deadline_control"),
                "needs a deadline (add deadline = \"120s\")",
            ));
        }
        return Ok(None);
    };
    let path = join(prefix, "deadline");
    if !finite {
        return Err(error(
            path,
            "a deadline needs a finite transfer (add size = \"50MB\")",
        ));
    }
    let within = positive(&within, path)?;
    let c = control.map(|Table(c)| c);
    let cpath = join(prefix, "deadline_control");
    let number = |g: &Option<Given<ParamValue>>,
                  key: &str,
                  default: f64,
                  what: &str,
                  ok: fn(f64) -> bool|
     -> Result<f64, ScenarioError> {
        match g {
            None => Ok(default),
            Some(g) => match g.value {
                ParamValue::Number(v) if ok(v) => Ok(v),
                _ => Err(error(
                    join(&cpath, key),
                    format!("expected {what}, got {}", g.text),
                )),
            },
        }
    };
    let Some(c) = c else {
        return Ok(Some(DeadlineSpec {
            within,
            knob: None,
            low: None,
            high: None,
            interval: SimDuration { ns: 1_000_000_000 },
            gain: 0.5,
            margin: 0.1,
            escalate: None,
            retune: true,
        }));
    };
    let interval = match &c.interval {
        None => SimDuration { ns: 1_000_000_000 },
        Some(g) => positive(g, join(&cpath, "interval"))?,
    };
    let gain = number(&c.gain, "gain", 0.5, "a positive number like 0.5", |v| {
        v > 0.0 && v <= 1e3
    })?;
    let margin = number(
        &c.margin,
        "margin",
        0.1,
        "a number in [0, 1) like 0.1",
        |v| (0.0..1.0).contains(&v),
    )?;
    if c.knob.is_some() && (c.low.is_none() || c.high.is_none()) {
        return Err(error(
            join(&cpath, if c.low.is_none() { "low" } else { "high" }),
            "a named knob needs its range: give low and high",
        ));
    }
    Ok(Some(DeadlineSpec {
        within,
        knob: c.knob.map(|k| k.value.0),
        low: c.low.map(|g| g.value),
        high: c.high.map(|g| g.value),
        interval,
        gain,
        margin,
        escalate: c.escalate.map(|RawAlgo(a)| a),
        retune: c.retune.is_none_or(|g| g.value.0),
    }))
}

fn resolve_flow(
    mut f: RawFlow,
    i: usize,
    duration: SimDuration,
    seed: u64,
    flows_before: usize,
    ticks: u64,
) -> Result<(TcpFlowGroup, StartSpec), ScenarioError> {
    let prefix = format!("flows[{i}]");
    let min_rto = match &f.min_rto {
        Some(g) => positive(g, join(&prefix, "min_rto"))?,
        None => SimDuration { ns: 200_000_000 },
    };
    let endpoints = network::resolve_endpoints(
        (f.from.take(), f.to.take(), f.path.take(), f.pairing.take()),
        &prefix,
        stream(seed, StreamKind::Pairing, i as u64),
    )?;
    // A group spread over several hosts defaults to one flow per host.
    let default_count = endpoints.as_ref().map_or(1, Endpoints::default_count);
    let (count, arrivals, start) = match &f.arrivals {
        None => (
            f.count
                .as_ref()
                .map_or(default_count, |g| g.value.0 as usize),
            None,
            start_spec(f.start.as_ref(), &join(&prefix, "start"))?,
        ),
        Some(Table(a)) => {
            if f.count.is_some() {
                return Err(error(
                    join(&prefix, "count"),
                    "give either count or arrivals, not both (arrivals decide the count)",
                ));
            }
            if f.start.is_some() {
                return Err(error(
                    join(&prefix, "start"),
                    "give either start or arrivals, not both (arrivals decide the starts)",
                ));
            }
            let path = join(&prefix, "arrivals");
            let times = draw_arrivals(
                a,
                &path,
                duration,
                value_stream(seed, false, i, Field::Arrivals),
            )?;
            (times.len(), Some(times), StartSpec::Drawn)
        }
    };
    check_flow_budget(flows_before, count, ticks, &join(&prefix, "count"))?;
    let rtts = draw_rtts(
        &f.rtt,
        &join(&prefix, "rtt"),
        count,
        value_stream(seed, false, i, Field::Rtt),
    )?;
    let times = match &f.repeat {
        None => 1,
        Some(Table(r)) => {
            if f.size.is_none() {
                return Err(error(
                    join(&prefix, "repeat"),
                    "repeated transfers need a finite size (add size = \"75KB\")",
                ));
            }
            let times = r.times.value.0 as usize;
            // Each transfer's size and think time are drawn now: bound what that holds.
            if count.saturating_mul(times) > MAX_TRANSFERS {
                return Err(error(
                    join(&join(&prefix, "repeat"), "times"),
                    format!(
                        "{count} flows x {times} transfers; at most {MAX_TRANSFERS} transfers \
                         per group"
                    ),
                ));
            }
            times
        }
    };
    let sizes = match &f.size {
        None => vec![Vec::new(); count],
        Some(raw) => {
            let path = join(&prefix, "size");
            let d = match raw.fixed() {
                Some(g) if g.value.bytes == 0 => {
                    return Err(error(
                        path,
                        format!(
                            "expected a positive size like \"1500B\" or \"1.5MB\", got {}",
                            g.text
                        ),
                    ))
                }
                _ => raw.resolve(&path)?,
            };
            let mut rng = value_stream(seed, false, i, Field::Size);
            // Whole bytes, at least one: a transfer of zero bytes has no completion.
            (0..count)
                .map(|_| {
                    (0..times)
                        .map(|_| ByteSize {
                            bytes: (d.sample(&mut rng).ceil() as u64).max(1),
                        })
                        .collect()
                })
                .collect()
        }
    };
    let thinks: Vec<Vec<SimDuration>> = match f.repeat.as_ref().and_then(|r| r.0.think.as_ref()) {
        None => vec![vec![SimDuration::default(); times - 1]; count],
        Some(raw) => {
            let d = raw.resolve(&join(&join(&prefix, "repeat"), "think"))?;
            let mut rng = value_stream(seed, false, i, Field::Think);
            (0..count)
                .map(|_| {
                    (1..times)
                        .map(|_| SimDuration {
                            ns: draw_ns(&d, &mut rng),
                        })
                        .collect()
                })
                .collect()
        }
    };
    let drawn = (0..count)
        .map(|k| TcpFlowDraw {
            start: arrivals.as_ref().map_or(SimDuration::default(), |t| t[k]),
            rtt: rtts[k],
            sizes: sizes[k].clone(),
            thinks: thinks[k].clone(),
        })
        .collect();
    let flag = |g: Option<Given<raw::Flag>>, default: bool| g.map_or(default, |g| g.value.0);
    // RFC 7323 §2.3: no TCP window exceeds 1 GiB; a larger initial window would only
    // make the simulator allocate for packets no sender could have in flight.
    let mss = f.mss.as_ref().map_or(1448, |g| g.value.0);
    let initial_window = f.initial_window.as_ref().map_or(10, |g| g.value.0);
    if initial_window * mss > 1 << 30 {
        return Err(error(
            join(&prefix, "initial_window"),
            format!(
                "at most {} packets of {mss} B (TCP's largest window, 1 GiB, RFC 7323 §2.3), got {}",
                (1u64 << 30) / mss,
                initial_window
            ),
        ));
    }
    let initial_window = initial_window as u32;
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
    let group = TcpFlowGroup {
        name: f.name.map(|g| g.value.0),
        count: count as u32,
        cc: f.cc.map_or_else(
            || AlgoSpec {
                kind: "newreno".to_owned(),
                params: BTreeMap::new(),
            },
            |RawAlgo(a)| a,
        ),
        ecn: flag(f.ecn, false),
        sack: flag(f.sack, true),
        delayed_ack: flag(f.delayed_ack, true),
        initial_window,
        mss: f.mss.map_or(1448, |g| g.value.0 as u32),
        pacing: flag(f.pacing, false),
        recovery_exit: f.recovery_exit.map_or(RecoveryExit::Linux, |g| g.value),
        rack: flag(f.rack, true),
        tlp: flag(f.tlp, true),
        ce_quickack: flag(f.ce_quickack, true),
        min_rto,
        stop: f.stop.map(|g| g.value),
        drawn,
        trace: flag(f.trace, false),
        access_rate: f.access_rate.map(|g| g.value),
        changes,
        ppv: f
            .ppv
            .map(|p| resolve_ppv(p, &join(&prefix, "ppv")))
            .transpose()?,
        deadline: resolve_deadline(f.deadline, f.deadline_control, f.size.is_some(), &prefix)?,
        direction: f.direction.map_or(Direction::Forward, |g| g.value),
        endpoints,
    };
    Ok((group, start))
}

fn resolve_udp(
    mut u: RawUdp,
    i: usize,
    seed: u64,
    flows_before: usize,
    ticks: u64,
) -> Result<(UdpGroup, StartSpec), ScenarioError> {
    let prefix = format!("udp[{i}]");
    // The UDP groups' permutations from streams apart from the TCP groups' (index + 2^32).
    let endpoints = network::resolve_endpoints(
        (u.from.take(), u.to.take(), u.path.take(), u.pairing.take()),
        &prefix,
        stream(seed, StreamKind::Pairing, (1 << 32) + i as u64),
    )?;
    let default_count = endpoints.as_ref().map_or(1, Endpoints::default_count);
    let count = u.count.map_or(default_count, |g| g.value.0 as usize);
    check_flow_budget(flows_before, count, ticks, &join(&prefix, "count"))?;
    let rtts = draw_rtts(
        &u.rtt,
        &join(&prefix, "rtt"),
        count,
        value_stream(seed, true, i, Field::Rtt),
    )?;
    let rate = u.rate.resolve(&join(&prefix, "rate"))?;
    let mut rng = value_stream(seed, true, i, Field::Rate);
    let mut drawn = Vec::with_capacity(count);
    for (k, rtt) in rtts.into_iter().enumerate() {
        let bps = rate.sample(&mut rng).round() as u64;
        if bps == 0 {
            return Err(error(
                join(&prefix, "rate"),
                format!("drew a zero rate for source {k} of the group; use a distribution of positive rates"),
            ));
        }
        drawn.push(UdpDraw {
            start: SimDuration::default(),
            rtt,
            rate: DataRate { bps },
        });
    }
    let start = start_spec(u.start.as_ref(), &join(&prefix, "start"))?;
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
    let group = UdpGroup {
        name: u.name.map(|g| g.value.0),
        count: count as u32,
        pattern: u.pattern.map_or(UdpPattern::Cbr, |g| g.value),
        packet_size,
        ecn: u.ecn.is_some_and(|g| g.value.0),
        drawn,
        stop: u.stop.map(|g| g.value),
        access_rate: u.access_rate.map(|g| g.value),
        direction: u.direction.map_or(Direction::Forward, |g| g.value),
        endpoints,
        ppv: u
            .ppv
            .map(|p| resolve_ppv(p, &join(&prefix, "ppv")))
            .transpose()?,
    };
    Ok((group, start))
}

/// One group's starts to draw: its key-path prefix, whether it is a `[[udp]]` group, its
/// index, how its starts are given, its `stop`, and where the starts go.
struct StartPlan<'a> {
    prefix: String,
    udp: bool,
    group: usize,
    spec: StartSpec,
    stop: Option<SimDuration>,
    starts: Vec<&'a mut SimDuration>,
}

/// Draw every flow's start, in flow-id order (TCP groups, then UDP groups, in file
/// order), so `after_previous` follows the previous flow across groups. Every start must
/// lie inside the run and before its group's `stop`.
fn draw_starts(
    groups: Vec<StartPlan<'_>>,
    duration: SimDuration,
    seed: u64,
) -> Result<(), ScenarioError> {
    let mut previous: Option<u64> = None;
    for StartPlan {
        prefix,
        udp,
        group,
        spec,
        stop,
        starts,
    } in groups
    {
        let mut rng = value_stream(seed, udp, group, Field::Start);
        let path = join(&prefix, "start");
        for (k, start) in starts.into_iter().enumerate() {
            let ns = match &spec {
                StartSpec::Drawn => start.ns,
                StartSpec::Each(d) => draw_ns(d, &mut rng),
                // The first flow of all has no previous one: it starts at 0 s.
                StartSpec::AfterPrevious(gap) => {
                    previous.map_or(0, |p| p.saturating_add(draw_ns(gap, &mut rng)))
                }
            };
            let at = SimDuration { ns };
            // A fixed value is shown as written; a drawn one says which flow drew it.
            let fixed = matches!(spec, StartSpec::Each(Dist::Fixed(_)));
            let shown = if fixed {
                format!("{:?}", fmt_duration(at))
            } else {
                fmt_duration(at)
            };
            let which = if fixed {
                String::new()
            } else {
                format!(" (flow {k} of the group)")
            };
            if ns >= duration.ns {
                return Err(error(
                    path,
                    format!(
                        "must be before the end of the run ({}), got {shown}{which}",
                        fmt_duration(duration),
                    ),
                ));
            }
            if let Some(stop) = stop {
                if stop.ns <= ns {
                    return Err(error(
                        join(&prefix, "stop"),
                        format!(
                            "must be after the start ({}{which}), got {:?}",
                            fmt_duration(at),
                            fmt_duration(stop)
                        ),
                    ));
                }
            }
            *start = at;
            previous = Some(ns);
        }
    }
    Ok(())
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
    if duration.ns > MAX_DURATION_NS {
        return Err(error(
            "duration",
            format!(
                "at most 365 days of simulated time, got {}",
                raw.duration.text
            ),
        ));
    }
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
    let (bottleneck, network) = match (raw.bottleneck, raw.network) {
        (Some(Table(b)), None) => (resolve_bottleneck(b, duration)?, None),
        (None, Some(Table(n))) => {
            let n = network::resolve_network(n, duration)?;
            (network_bottleneck(&n), Some(n))
        }
        (Some(_), Some(_)) => {
            return Err(error(
                "network",
                "give either [bottleneck] (a dumbbell) or [network], not both",
            ))
        }
        (None, None) => {
            return Err(error(
                "bottleneck",
                "missing required key (or give [network])",
            ))
        }
    };
    let ticks = duration.ns / stats_interval.ns;
    // flows so far, counted as they come: summing every group again per group made
    // validation quadratic in the number of groups (80 k groups took 23 s, issue 33)
    let mut before = 0usize;
    let mut flows = Vec::new();
    let mut flow_starts = Vec::new();
    for (i, Table(f)) in raw
        .flows
        .map(|g| g.0)
        .unwrap_or_default()
        .into_iter()
        .enumerate()
    {
        let (group, start) = resolve_flow(f, i, duration, seed, before, ticks)?;
        before += group.count as usize;
        flows.push(group);
        flow_starts.push(start);
    }
    let mut udp = Vec::new();
    let mut udp_starts = Vec::new();
    for (i, Table(u)) in raw
        .udp
        .map(|g| g.0)
        .unwrap_or_default()
        .into_iter()
        .enumerate()
    {
        let (group, start) = resolve_udp(u, i, seed, before, ticks)?;
        before += group.count as usize;
        udp.push(group);
        udp_starts.push(start);
    }
    let plan = flows
        .iter_mut()
        .zip(flow_starts)
        .enumerate()
        .map(|(i, (g, spec))| StartPlan {
            prefix: format!("flows[{i}]"),
            udp: false,
            group: i,
            spec,
            stop: g.stop,
            starts: g.drawn.iter_mut().map(|d| &mut d.start).collect(),
        })
        .chain(
            udp.iter_mut()
                .zip(udp_starts)
                .enumerate()
                .map(|(i, (g, spec))| StartPlan {
                    prefix: format!("udp[{i}]"),
                    udp: true,
                    group: i,
                    spec,
                    stop: g.stop,
                    starts: g.drawn.iter_mut().map(|d| &mut d.start).collect(),
                }),
        )
        .collect();
    draw_starts(plan, duration, seed)?;
    // Every stats tick adds a row per flow (flow_series), per group (group_series), one
    // for the queue and a few of discipline state, and one per traced flow plus its
    // controller's variables: refuse before running what could not be held in memory.
    let n_flows: u64 = flows.iter().map(|g| u64::from(g.count)).sum::<u64>()
        + udp.iter().map(|g| u64::from(g.count)).sum::<u64>();
    let traced: u64 = flows
        .iter()
        .filter(|g| g.trace)
        .map(|g| u64::from(g.count))
        .sum();
    let rows_per_tick =
        n_flows + (flows.len() + udp.len()) as u64 + 8 + (1 + crate::cc::MAX_DIAGNOSTICS) * traced;
    if ticks.saturating_mul(rows_per_tick) > MAX_SERIES_ROWS {
        return Err(error(
            "stats_interval",
            format!(
                "{ticks} intervals x {rows_per_tick} rows each = {} rows of time series, \
                 at most {MAX_SERIES_ROWS}: use a longer stats_interval",
                ticks.saturating_mul(rows_per_tick)
            ),
        ));
    }
    let trace = match raw.trace {
        None => TraceSpec::default(),
        Some(Table(t)) => {
            let rtt_samples = t.rtt_samples.is_some_and(|g| g.value.0);
            if rtt_samples && !flows.iter().any(|g| g.trace) {
                return Err(error(
                    "trace.rtt_samples",
                    "records the flows with trace = true, and no [[flows]] group has it",
                ));
            }
            TraceSpec {
                qdisc_state: t.qdisc_state.map_or(QdiscStateMode::Interval, |g| g.value),
                queue_events: t.queue_events.is_some_and(|g| g.value.0),
                rtt_samples,
                pcap: t
                    .pcap
                    .unwrap_or_default()
                    .into_iter()
                    .map(|g| g.value.0)
                    .collect(),
                pcap_max_packets: t
                    .pcap_max_packets
                    .map_or(DEFAULT_PCAP_PACKETS, |g| g.value.0),
            }
        }
    };
    if flows.iter().all(|g| g.count == 0) && udp.is_empty() {
        let why = if flows.is_empty() {
            "add a [[flows]] or [[udp]] group"
        } else {
            "its arrivals drew no flow inside their windows"
        };
        return Err(error(
            "flows",
            format!("the scenario has no traffic: {why}"),
        ));
    }
    let sc = Scenario {
        duration,
        seed,
        stats_interval,
        measure_start,
        measure_end,
        bottleneck,
        network,
        flows,
        udp,
        trace,
    };
    check_endpoints(&sc)?;
    Ok(sc)
}

/// With a `[network]`, the `bottleneck` the dumbbell-shaped outputs and estimates read:
/// its first link's rate, delay and queue, nothing else.
fn network_bottleneck(n: &Network) -> Bottleneck {
    let (rate, delay, queue) = n.first_link();
    Bottleneck {
        rate,
        delay,
        queue,
        bdp_rtt: None,
        reverse_rate: None,
        access_rate: None,
        rate_changes: Vec::new(),
        shaper: None,
        reverse_queue: None,
        reverse_shaper: None,
        loss: None,
        reverse_loss: None,
        jitter: None,
        reverse_jitter: None,
        trace: None,
        reverse_trace: None,
        trace_dequeue: link_model::TraceDequeue::Opportunity,
    }
}

/// Every group of a `[network]` scenario names its hosts; none of a dumbbell's does.
fn check_endpoints(sc: &Scenario) -> Result<(), ScenarioError> {
    let groups = sc
        .flows
        .iter()
        .map(|g| (&g.endpoints, g.direction))
        .enumerate()
        .map(|(i, e)| (format!("flows[{i}]"), e))
        .chain(
            sc.udp
                .iter()
                .map(|g| (&g.endpoints, g.direction))
                .enumerate()
                .map(|(i, e)| (format!("udp[{i}]"), e)),
        );
    for (prefix, (endpoints, direction)) in groups {
        match (sc.network.is_some(), endpoints.is_some()) {
            (true, false) => {
                return Err(error(
                    join(&prefix, "from"),
                    "missing: in a [network] every group names its hosts (from, to)",
                ))
            }
            (false, true) => {
                return Err(error(
                    join(&prefix, "from"),
                    "hosts are named only in a [network] scenario, not in a dumbbell",
                ))
            }
            (true, true) if direction == Direction::Reverse => {
                return Err(error(
                    join(&prefix, "direction"),
                    "not in a [network]: swap from and to",
                ))
            }
            _ => {}
        }
    }
    Ok(())
}
