//! Values with units: `"10Mbps"`, `"50ms"`, `"1.5MB"`, `"1bdp"`. OWNED BY THE SCENARIO HELPER.

/// A link or traffic rate in bits per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct DataRate {
    pub bps: u64,
}

/// A span of simulated time in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct SimDuration {
    pub ns: u64,
}

/// A size in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ByteSize {
    pub bytes: u64,
}

/// A queue limit: a packet count, a byte count, or a multiple of the path's BDP.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum QueueLimit {
    Packets(u64),
    Bytes(u64),
    Bdp(f64),
}

impl DataRate {
    pub fn parse(_s: &str) -> Result<Self, String> {
        todo!()
    }
}
impl SimDuration {
    pub fn parse(_s: &str) -> Result<Self, String> {
        todo!()
    }
    pub fn from_secs_f64(s: f64) -> Self {
        SimDuration { ns: (s * 1e9).round() as u64 }
    }
    pub fn as_secs_f64(self) -> f64 {
        self.ns as f64 * 1e-9
    }
}
impl ByteSize {
    pub fn parse(_s: &str) -> Result<Self, String> {
        todo!()
    }
}
impl QueueLimit {
    pub fn parse(_s: &str) -> Result<Self, String> {
        todo!()
    }
}
