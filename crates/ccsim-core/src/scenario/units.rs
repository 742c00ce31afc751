//! Values with units: `"10Mbps"`, `"50ms"`, `"1.5MB"`, `"1bdp"`. OWNED BY THE SCENARIO HELPER.
//!
//! Every value is a non-negative decimal number (`"10"`, `"1.5"`, `"0.25"`; no sign, no
//! exponent) followed by a unit, optionally separated by whitespace (`"10 Mbps"`).
//! Conversions are exact decimal arithmetic, rounded half-up to the integer base unit
//! (ns, bps, bytes). Errors are one-line messages of the form
//! `expected a duration like "50ms", got "50"`.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer};

use super::lit::{mismatch, Given, Leaf, Lit};

/// A link or traffic rate in bits per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct DataRate {
    /// Bits per second.
    pub bps: u64,
}

/// A span of simulated time in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct SimDuration {
    /// Nanoseconds.
    pub ns: u64,
}

/// A size in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ByteSize {
    /// Bytes.
    pub bytes: u64,
}

/// A queue limit: a packet count, a byte count, or a multiple of the path's BDP.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum QueueLimit {
    /// At most this many packets.
    Packets(u64),
    /// At most this many bytes.
    Bytes(u64),
    /// This multiple of the bandwidth-delay product (> 0).
    Bdp(f64),
}

/// The largest rate a scenario may give (100 Tbit/s).
pub const MAX_RATE_BPS: u64 = 100_000_000_000_000;
/// The largest queue limit in packets: ten million packets is no router's buffer, and
/// each held packet costs the simulator about 100 bytes.
pub const MAX_LIMIT_PACKETS: u64 = 10_000_000;
/// The largest queue limit in bytes (10 GB).
pub const MAX_LIMIT_BYTES: u64 = 10_000_000_000;

const RATE_EXPECTED: &str = "a positive rate like \"10Mbps\"";
const DURATION_EXPECTED: &str = "a duration like \"50ms\"";
const SIZE_EXPECTED: &str = "a size like \"1500B\" or \"1.5MB\"";
const LIMIT_EXPECTED: &str = "a positive queue limit like \"100p\", \"150KB\" or \"1bdp\"";

/// `expected <what>, got "<s>"` with the user's string quoted as written.
fn bad(expected: &str, s: &str) -> String {
    format!("expected {expected}, got {s:?}")
}

/// A number split off its unit: `"1.5 Mbps"` -> (`"1"`, `"5"`, `"Mbps"`).
struct Split<'a> {
    /// The whole number text (`"1.5"`).
    number: &'a str,
    /// Digits before the decimal point (may be empty: `".5"`).
    int: &'a str,
    /// Digits after the decimal point (may be empty).
    frac: &'a str,
    /// The unit, without surrounding whitespace (may be empty).
    unit: &'a str,
}

fn split(s: &str) -> Option<Split<'_>> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(end);
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    if frac.contains('.') || (int.is_empty() && frac.is_empty()) {
        return None;
    }
    Some(Split {
        number,
        int,
        frac,
        unit: unit.trim_start(),
    })
}

/// `int.frac * mult`, rounded half-up; `None` on overflow of `u64`.
fn scale(int: &str, frac: &str, mult: u64) -> Option<u64> {
    let mult = u128::from(mult);
    let mut v: u128 = 0;
    for c in int.bytes() {
        v = v.checked_mul(10)?.checked_add(u128::from(c - b'0'))?;
    }
    v = v.checked_mul(mult)?;
    // More than 18 fractional digits cannot matter: the largest multiplier is < 1e13.
    let frac = &frac[..frac.len().min(18)];
    if !frac.is_empty() {
        let mut f: u128 = 0;
        for c in frac.bytes() {
            f = f * 10 + u128::from(c - b'0');
        }
        let den = 10u128.pow(frac.len() as u32);
        v = v.checked_add((f * mult + den / 2) / den)?;
    }
    u64::try_from(v).ok()
}

/// Parse `<number><unit>` with the unit looked up by `unit_mult`.
fn parse_scaled(
    s: &str,
    expected: &str,
    unit_mult: fn(&str) -> Option<u64>,
) -> Result<u64, String> {
    let sp = split(s).ok_or_else(|| bad(expected, s))?;
    let mult = unit_mult(sp.unit).ok_or_else(|| bad(expected, s))?;
    scale(sp.int, sp.frac, mult).ok_or_else(|| bad(expected, s))
}

fn rate_unit(unit: &str) -> Option<u64> {
    Some(match unit {
        "bps" => 1,
        "kbps" | "Kbps" => 1_000,
        "Mbps" => 1_000_000,
        "Gbps" => 1_000_000_000,
        "Tbps" => 1_000_000_000_000,
        _ => return None,
    })
}

fn duration_unit(unit: &str) -> Option<u64> {
    Some(match unit {
        "ns" => 1,
        // "µs" with the micro sign (U+00B5) or the Greek mu (U+03BC).
        "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "min" => 60_000_000_000,
        _ => return None,
    })
}

fn size_unit(unit: &str) -> Option<u64> {
    Some(match unit {
        "B" => 1,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        _ => return None,
    })
}

impl DataRate {
    /// Parse a rate: `bps`, `kbps` (or `Kbps`), `Mbps`, `Gbps`, `Tbps` (SI: 1 kbps =
    /// 1000 bps); decimals allowed (`"1.5Mbps"`). Zero, negative and unit-less values
    /// are errors: `expected a positive rate like "10Mbps", got "0Mbps"`.
    pub fn parse(s: &str) -> Result<Self, String> {
        match parse_scaled(s, RATE_EXPECTED, rate_unit)? {
            0 => Err(bad(RATE_EXPECTED, s)),
            // Well above any link built (800 Gbit/s today), well below u64 overflow in the
            // engine's bit-time arithmetic.
            bps if bps > MAX_RATE_BPS => {
                Err(format!("expected a rate of at most 100Tbps, got {s:?}"))
            }
            bps => Ok(DataRate { bps }),
        }
    }
}
/// A step of a link's rate (`rate_changes`): zero is allowed there and means an outage
/// (the link holds its packets until a later step brings it back).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepRate(pub DataRate);

const STEP_RATE_EXPECTED: &str = "a rate like \"10Mbps\" (\"0Mbps\" for an outage)";

impl StepRate {
    /// Parse as [`DataRate::parse`], zero included.
    pub fn parse(s: &str) -> Result<Self, String> {
        match parse_scaled(s, STEP_RATE_EXPECTED, rate_unit)? {
            bps if bps > MAX_RATE_BPS => {
                Err(format!("expected a rate of at most 100Tbps, got {s:?}"))
            }
            bps => Ok(StepRate(DataRate { bps })),
        }
    }
}
impl SimDuration {
    /// Parse a duration: `ns`, `us` (or `µs`), `ms`, `s`, `min`; decimals allowed
    /// (`"0.25ms"`), rounded to whole nanoseconds. Zero is accepted (callers decide);
    /// negative and unit-less values are errors: `expected a duration like "50ms", got "50"`.
    pub fn parse(s: &str) -> Result<Self, String> {
        parse_scaled(s, DURATION_EXPECTED, duration_unit).map(|ns| SimDuration { ns })
    }
    /// Seconds to nanoseconds, rounded (negative or NaN inputs give 0).
    pub fn from_secs_f64(s: f64) -> Self {
        SimDuration {
            ns: (s * 1e9).round() as u64,
        }
    }
    /// The duration in seconds.
    pub fn as_secs_f64(self) -> f64 {
        self.ns as f64 * 1e-9
    }
}
impl ByteSize {
    /// Parse a size: `B`, `KB` (or `kB`), `MB`, `GB` (SI, 1000), `KiB`, `MiB`, `GiB`
    /// (1024); decimals allowed (`"1.5MB"`), rounded to whole bytes. Zero is accepted
    /// (callers decide); negative and unit-less values are errors.
    pub fn parse(s: &str) -> Result<Self, String> {
        parse_scaled(s, SIZE_EXPECTED, size_unit).map(|bytes| ByteSize { bytes })
    }
}
impl QueueLimit {
    /// Parse a queue limit: packets (`"100p"`, `"100pkts"`, `"100packets"`; whole
    /// numbers only), a byte size (`"150KB"`), or a multiple of the BDP (`"1bdp"`,
    /// `"0.25bdp"`, `"1.5BDP"`; the unit is case-insensitive). Must be > 0.
    pub fn parse(s: &str) -> Result<Self, String> {
        let err = || bad(LIMIT_EXPECTED, s);
        let sp = split(s).ok_or_else(err)?;
        let limit = match sp.unit {
            "p" | "pkt" | "pkts" | "packet" | "packets" => {
                if !sp.frac.trim_end_matches('0').is_empty() {
                    return Err(err());
                }
                QueueLimit::Packets(scale(sp.int, "", 1).ok_or_else(err)?)
            }
            u if u.eq_ignore_ascii_case("bdp") => {
                let v: f64 = sp.number.parse().map_err(|_| err())?;
                if !v.is_finite() || v <= 0.0 {
                    return Err(err());
                }
                QueueLimit::Bdp(v)
            }
            u => {
                let mult = size_unit(u).ok_or_else(err)?;
                QueueLimit::Bytes(scale(sp.int, sp.frac, mult).ok_or_else(err)?)
            }
        };
        let shown = format!("{s:?}");
        match limit {
            QueueLimit::Packets(0) | QueueLimit::Bytes(0) => Err(err()),
            QueueLimit::Packets(n) if n > MAX_LIMIT_PACKETS => Err(format!(
                "expected a queue limit of at most {MAX_LIMIT_PACKETS} packets, got {shown}"
            )),
            QueueLimit::Bytes(n) if n > MAX_LIMIT_BYTES => Err(format!(
                "expected a queue limit of at most 10GB, got {shown}"
            )),
            QueueLimit::Bdp(v) if v > 10_000.0 => Err(format!(
                "expected a queue limit of at most 10000bdp, got {shown}"
            )),
            _ => Ok(limit),
        }
    }
}

/// Implements [`Leaf`] (string input parsed by `parse`) and `Deserialize` for a unit type.
macro_rules! unit_leaf {
    ($ty:ty, $expected:expr) => {
        impl Leaf for $ty {
            fn expected() -> Cow<'static, str> {
                Cow::Borrowed($expected)
            }
            fn from_lit(lit: &Lit) -> Result<Self, String> {
                match lit {
                    Lit::S(s) => <$ty>::parse(s),
                    other => Err(mismatch($expected, other)),
                }
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            /// Deserializes from a string with a unit; any other value (e.g. a bare
            /// number) is an error naming the expected form.
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                Given::<$ty>::deserialize(deserializer).map(|g| g.value)
            }
        }
    };
}

unit_leaf!(DataRate, RATE_EXPECTED);
unit_leaf!(StepRate, STEP_RATE_EXPECTED);
unit_leaf!(SimDuration, DURATION_EXPECTED);
unit_leaf!(ByteSize, SIZE_EXPECTED);
unit_leaf!(QueueLimit, LIMIT_EXPECTED);

/// Format a duration compactly for messages: `0s`, `60s`, `1.5s`, `250ms`, `20us`, `7ns`.
pub(crate) fn fmt_duration(d: SimDuration) -> String {
    let ns = d.ns;
    let (div, unit) = match ns {
        0 => return "0s".to_owned(),
        n if n >= 1_000_000_000 => (1_000_000_000u64, "s"),
        n if n >= 1_000_000 => (1_000_000, "ms"),
        n if n >= 1_000 => (1_000, "us"),
        _ => (1, "ns"),
    };
    let (whole, rest) = (ns / div, ns % div);
    if rest == 0 {
        format!("{whole}{unit}")
    } else {
        let width = div.ilog10() as usize;
        let frac = format!("{rest:0width$}");
        format!("{whole}.{}{unit}", frac.trim_end_matches('0'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deserialize_from_strings_only() {
        let d: SimDuration = serde_json::from_str("\"1.5s\"").unwrap();
        assert_eq!(d.ns, 1_500_000_000);
        let r: DataRate = serde_json::from_str("\"10 Mbps\"").unwrap();
        assert_eq!(r.bps, 10_000_000);
        let b: ByteSize = serde_json::from_str("\"64KiB\"").unwrap();
        assert_eq!(b.bytes, 65_536);
        let q: QueueLimit = serde_json::from_str("\"0.5bdp\"").unwrap();
        assert_eq!(q, QueueLimit::Bdp(0.5));

        let e = serde_json::from_str::<SimDuration>("50").unwrap_err();
        assert!(e
            .to_string()
            .starts_with("expected a duration like \"50ms\", got 50"));
        let e = serde_json::from_str::<DataRate>("\"0Mbps\"").unwrap_err();
        assert!(e
            .to_string()
            .starts_with("expected a positive rate like \"10Mbps\", got \"0Mbps\""));
        let e = serde_json::from_str::<ByteSize>("[1]").unwrap_err();
        assert!(e.to_string().contains("got an array"), "{e}");

        #[derive(Debug, serde::Deserialize)]
        struct Link {
            rate: DataRate,
            delay: SimDuration,
        }
        let l: Link = toml::from_str("rate = \"1Gbps\"\ndelay = \"2ms\"").unwrap();
        assert_eq!((l.rate.bps, l.delay.ns), (1_000_000_000, 2_000_000));
        let e = toml::from_str::<Link>("rate = \"1Gbps\"\ndelay = 2").unwrap_err();
        assert_eq!(e.message(), "expected a duration like \"50ms\", got 2");
    }

    #[test]
    fn formats_durations() {
        let f = |ns| fmt_duration(SimDuration { ns });
        assert_eq!(f(0), "0s");
        assert_eq!(f(60_000_000_000), "60s");
        assert_eq!(f(1_500_000_000), "1.5s");
        assert_eq!(f(1_000_000_001), "1.000000001s");
        assert_eq!(f(250_000_000), "250ms");
        assert_eq!(f(250_000), "250us");
        assert_eq!(f(1_250), "1.25us");
        assert_eq!(f(7), "7ns");
    }
}
