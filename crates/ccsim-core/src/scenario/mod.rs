//! Scenario files: the one schema used by the CLI and the Python API.
//!
//! OWNED BY THE SCENARIO HELPER: parsing, unit handling, validation and errors live
//! here. The engine consumes only the public types below (keep their shapes).

pub mod units;

use std::collections::BTreeMap;

pub use units::{ByteSize, DataRate, QueueLimit, SimDuration};

/// A user-input error: `path` is the key path (`flows[1].rtt`), `message` says what was
/// expected. Displayed as one line: `flows[1].rtt: expected a duration like "50ms", got "50"`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ScenarioError {
    pub path: String,
    pub message: String,
}

impl ScenarioError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError { path: path.into(), message: message.into() }
    }
}

/// A free-form parameter value of an algorithm (`cc = { kind = "cdg", g = 0.1 }`).
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    Number(f64),
    Bool(bool),
    Str(String),
}

/// `"newreno"` or `{ kind = "newreno", beta = 0.5 }`: an algorithm name plus its
/// parameters, validated by the algorithm's own constructor, not by the schema.
#[derive(Debug, Clone, PartialEq)]
pub struct AlgoSpec {
    pub kind: String,
    pub params: BTreeMap<String, ParamValue>,
}

/// The bottleneck of the dumbbell.
#[derive(Debug, Clone, PartialEq)]
pub struct Bottleneck {
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
}

/// A `[[flows]]` group of `count` identical TCP flows.
#[derive(Debug, Clone, PartialEq)]
pub struct TcpFlowGroup {
    pub count: u32,
    pub cc: AlgoSpec,
    /// Base two-way propagation delay (serialisation comes on top).
    pub rtt: SimDuration,
    pub ecn: bool,
    pub sack: bool,
    pub delayed_ack: bool,
    pub initial_window: u32,
    pub mss: u32,
    pub pacing: bool,
    pub min_rto: SimDuration,
    pub start: SimDuration,
    pub stop: Option<SimDuration>,
    /// Finite transfer size; `None` = bulk (greedy) sender.
    pub size: Option<ByteSize>,
    pub trace: bool,
    pub access_rate: Option<DataRate>,
}

/// UDP traffic pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UdpPattern {
    Cbr,
    Poisson,
}

/// A `[[udp]]` group of `count` identical UDP sources.
#[derive(Debug, Clone, PartialEq)]
pub struct UdpGroup {
    pub count: u32,
    pub rate: DataRate,
    pub pattern: UdpPattern,
    /// Size of each packet on the wire.
    pub packet_size: ByteSize,
    pub rtt: SimDuration,
    /// Send ECT(0) packets (a non-responsive ECN-capable source).
    pub ecn: bool,
    pub start: SimDuration,
    pub stop: Option<SimDuration>,
    pub access_rate: Option<DataRate>,
}

/// A whole scenario, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub duration: SimDuration,
    pub seed: u64,
    pub stats_interval: SimDuration,
    /// Measurement window, resolved: default second half of the run.
    pub measure_start: SimDuration,
    pub measure_end: SimDuration,
    pub bottleneck: Bottleneck,
    pub flows: Vec<TcpFlowGroup>,
    pub udp: Vec<UdpGroup>,
}

impl Scenario {
    /// Parse and validate a TOML scenario.
    pub fn from_toml(_text: &str) -> Result<Scenario, ScenarioError> {
        todo!("scenario helper")
    }
    /// Parse and validate the same schema given as JSON (what the Python API sends for dicts).
    pub fn from_json(_text: &str) -> Result<Scenario, ScenarioError> {
        todo!("scenario helper")
    }
}
