//! Values that may be drawn at random per flow: `start`, `rtt`, `size` of a `[[flows]]`
//! group, `start`, `rtt`, `rate` of a `[[udp]]` group, open-loop arrival gaps and
//! closed-loop think times.
//!
//! Written as a fixed value (`"50ms"`) or a table with one key naming the distribution:
//!
//! | form | meaning |
//! | --- | --- |
//! | `{ uniform = ["30s", "35s"] }` | uniform on `[low, high]` |
//! | `{ exponential = "2s" }` | exponential with that mean |
//! | `{ normal = ["50ms", "10ms"] }` | normal (mean, standard deviation) truncated at 0: draws below 0 are drawn again |
//! | `{ choice = ["20ms", "100ms"] }` | one of the values, equally likely |
//! | `{ cdf = [["1KB", 0.2], ["10KB", 0.9], ["1MB", 1.0]] }` | empirical CDF, linear between its points (ns-2's `EmpiricalRandomVariable` with interpolation); the first point's probability is the mass at its value |
//!
//! Values are resolved into plain numbers per flow while the scenario is read
//! ([`super::resolve`]), each group's each field from its own stream of the scenario
//! seed, so the engine never draws a scenario value itself and adding a group does not
//! change another group's draws.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, Visitor};

use super::lit::{mismatch, Given, Leaf, Lit};
use super::units::{ByteSize, DataRate, SimDuration};
use super::{error, join, ScenarioError};
use crate::engine::rng::SimRng;

/// A distribution over a quantity in its base unit (ns, bytes or bit/s).
#[derive(Debug, Clone, PartialEq)]
pub enum Dist {
    Fixed(f64),
    Uniform {
        low: f64,
        high: f64,
    },
    Exponential {
        mean: f64,
    },
    /// Normal truncated at 0 (negative draws are redrawn).
    Normal {
        mean: f64,
        sd: f64,
    },
    Choice(Vec<f64>),
    /// `(value, cumulative probability)` points, both non-decreasing, the last at 1.
    Empirical(Vec<(f64, f64)>),
}

impl Dist {
    /// One draw (in the quantity's base unit).
    pub fn sample(&self, rng: &mut SimRng) -> f64 {
        match self {
            Dist::Fixed(v) => *v,
            Dist::Uniform { low, high } => low + (high - low) * rng.uniform(),
            Dist::Exponential { mean } => rng.exponential(*mean),
            Dist::Normal { mean, sd } => loop {
                // The mean is validated positive, so at least half of the draws are kept.
                let v = mean + sd * rng.standard_normal();
                if v >= 0.0 {
                    break v;
                }
            },
            Dist::Choice(values) => {
                let k = ((rng.uniform() * values.len() as f64) as usize).min(values.len() - 1);
                values[k]
            }
            Dist::Empirical(points) => {
                let u = rng.uniform();
                let k = points.partition_point(|&(_, p)| p <= u);
                if k == 0 {
                    return points[0].0;
                }
                if k == points.len() {
                    return points[k - 1].0;
                }
                let (x0, p0) = points[k - 1];
                let (x1, p1) = points[k];
                x0 + (x1 - x0) * (u - p0) / (p1 - p0)
            }
        }
    }

    /// The distribution's mean (for reports and tests).
    pub fn mean(&self) -> f64 {
        match self {
            Dist::Fixed(v) => *v,
            Dist::Uniform { low, high } => 0.5 * (low + high),
            Dist::Exponential { mean } => *mean,
            Dist::Normal { mean, sd } => {
                // Mean of the normal truncated below at 0.
                if *sd == 0.0 {
                    return *mean;
                }
                let a = -mean / sd;
                mean + sd * std_normal_pdf(a) / (1.0 - std_normal_cdf(a))
            }
            Dist::Choice(v) => v.iter().sum::<f64>() / v.len() as f64,
            Dist::Empirical(points) => {
                let mut m = points[0].0 * points[0].1;
                for w in points.windows(2) {
                    m += 0.5 * (w[0].0 + w[1].0) * (w[1].1 - w[0].1);
                }
                m
            }
        }
    }

    /// The cumulative distribution function at `x` (for tests against the draws).
    pub fn cdf(&self, x: f64) -> f64 {
        match self {
            Dist::Fixed(v) => f64::from(u8::from(x >= *v)),
            Dist::Uniform { low, high } => {
                if x < *low {
                    0.0
                } else if x >= *high {
                    1.0
                } else {
                    (x - low) / (high - low)
                }
            }
            Dist::Exponential { mean } => {
                if x <= 0.0 {
                    0.0
                } else {
                    1.0 - (-x / mean).exp()
                }
            }
            Dist::Normal { mean, sd } => {
                if x < 0.0 {
                    return 0.0;
                }
                let below0 = std_normal_cdf(-mean / sd);
                (std_normal_cdf((x - mean) / sd) - below0) / (1.0 - below0)
            }
            Dist::Choice(v) => v.iter().filter(|&&c| c <= x).count() as f64 / v.len() as f64,
            Dist::Empirical(points) => {
                if x < points[0].0 {
                    return 0.0;
                }
                let k = points.partition_point(|&(v, _)| v <= x);
                if k == points.len() {
                    return 1.0;
                }
                let (x0, p0) = points[k - 1];
                let (x1, p1) = points[k];
                p0 + (p1 - p0) * (x - x0) / (x1 - x0)
            }
        }
    }
}

fn std_normal_pdf(x: f64) -> f64 {
    (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// Φ(x), through the complementary error function.
fn std_normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// erfc with relative error below 1.2e-7 everywhere (Numerical Recipes' `erfcc`,
/// Chebyshev fit): ample for reports and statistical tests.
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// A quantity with a unit that can be drawn: its value in the base unit.
pub(crate) trait Quantity: Leaf {
    fn base(&self) -> f64;
}
impl Quantity for SimDuration {
    fn base(&self) -> f64 {
        self.ns as f64
    }
}
impl Quantity for ByteSize {
    fn base(&self) -> f64 {
        self.bytes as f64
    }
}
impl Quantity for DataRate {
    fn base(&self) -> f64 {
        self.bps as f64
    }
}

/// A cumulative probability in `[0, 1]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Prob(pub f64);

impl Leaf for Prob {
    fn expected() -> Cow<'static, str> {
        Cow::Borrowed("a probability between 0 and 1")
    }
    fn from_lit(lit: &Lit) -> Result<Self, String> {
        let v = match *lit {
            Lit::U(v) => v as f64,
            Lit::F(v) => v,
            _ => return Err(mismatch(&Self::expected(), lit)),
        };
        if (0.0..=1.0).contains(&v) {
            Ok(Prob(v))
        } else {
            Err(mismatch(&Self::expected(), lit))
        }
    }
}

/// A value as written: fixed, a distribution, or (for `start`) `after_previous`.
pub(crate) enum RawDist<T> {
    Fixed(Given<T>),
    Uniform(Vec<Given<T>>),
    Exponential(Given<T>),
    Normal(Vec<Given<T>>),
    Choice(Vec<Given<T>>),
    Cdf(Vec<(Given<T>, Given<Prob>)>),
    /// Starts `gap` after the previous flow's start (flows in id order).
    AfterPrevious(Box<RawDist<T>>),
}

const DIST_KEYS: &[&str] = &[
    "uniform",
    "exponential",
    "normal",
    "choice",
    "cdf",
    "after_previous",
];

impl<'de, T: Quantity> Deserialize<'de> for RawDist<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(DistVisitor(PhantomData))
    }
}

struct DistVisitor<T>(PhantomData<T>);

impl<T: Quantity> DistVisitor<T> {
    fn expected() -> String {
        format!(
            "{} or a distribution like {{ uniform = [low, high] }}",
            T::expected()
        )
    }
    fn scalar<E: de::Error>(lit: Lit) -> Result<RawDist<T>, E> {
        let value = T::from_lit(&lit).map_err(E::custom)?;
        Ok(RawDist::Fixed(Given {
            value,
            text: lit.to_string(),
        }))
    }
}

impl<'de, T: Quantity> Visitor<'de> for DistVisitor<T> {
    type Value = RawDist<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&Self::expected())
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawDist<T>, E> {
        Self::scalar(Lit::B(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawDist<T>, E> {
        Self::scalar(match u64::try_from(v) {
            Ok(u) => Lit::U(u),
            Err(_) => Lit::I(v),
        })
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawDist<T>, E> {
        Self::scalar(Lit::U(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawDist<T>, E> {
        Self::scalar(Lit::F(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<RawDist<T>, E> {
        Self::scalar(Lit::S(v.to_owned()))
    }
    fn visit_unit<E: de::Error>(self) -> Result<RawDist<T>, E> {
        Self::scalar(Lit::Null)
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, _seq: A) -> Result<RawDist<T>, A::Error> {
        Err(de::Error::custom(format!(
            "expected {}, got an array",
            Self::expected()
        )))
    }
    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<RawDist<T>, A::Error> {
        let Some(key) = map.next_key::<String>()? else {
            return Err(de::Error::custom(format!(
                "expected {}, got an empty table",
                Self::expected()
            )));
        };
        let out = match key.as_str() {
            "uniform" => RawDist::Uniform(map.next_value()?),
            "exponential" => RawDist::Exponential(map.next_value()?),
            "normal" => RawDist::Normal(map.next_value()?),
            "choice" => RawDist::Choice(map.next_value()?),
            "cdf" => RawDist::Cdf(map.next_value()?),
            "after_previous" => RawDist::AfterPrevious(Box::new(map.next_value()?)),
            other => {
                return Err(de::Error::custom(format!(
                    "unknown distribution {other:?} (expected one of: {})",
                    DIST_KEYS.join(", ")
                )))
            }
        };
        if let Some(extra) = map.next_key::<String>()? {
            return Err(de::Error::custom(format!(
                "a distribution has exactly one key, got {key:?} and {extra:?}"
            )));
        }
        Ok(out)
    }
}

impl<T: Quantity> RawDist<T> {
    /// Whether the value is a plain fixed value.
    pub(crate) fn fixed(&self) -> Option<&Given<T>> {
        match self {
            RawDist::Fixed(g) => Some(g),
            _ => None,
        }
    }

    /// Check the distribution's parameters and turn it into a [`Dist`]; `after_previous`
    /// is refused here (callers that allow it unwrap it first).
    pub(crate) fn resolve(&self, path: &str) -> Result<Dist, ScenarioError> {
        let texts = |v: &[Given<T>]| {
            format!(
                "[{}]",
                v.iter()
                    .map(|g| g.text.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        Ok(match self {
            RawDist::Fixed(g) => Dist::Fixed(g.value.base()),
            RawDist::Uniform(v) => {
                let p = join(path, "uniform");
                let [low, high] = v.as_slice() else {
                    return Err(error(
                        p,
                        format!("expected [low, high], got {} values", v.len()),
                    ));
                };
                if low.value.base() > high.value.base() {
                    return Err(error(
                        p,
                        format!("empty range: low must not exceed high, got {}", texts(v)),
                    ));
                }
                Dist::Uniform {
                    low: low.value.base(),
                    high: high.value.base(),
                }
            }
            RawDist::Exponential(g) => {
                if g.value.base() <= 0.0 {
                    return Err(error(
                        join(path, "exponential"),
                        format!("expected a positive mean, got {}", g.text),
                    ));
                }
                Dist::Exponential {
                    mean: g.value.base(),
                }
            }
            RawDist::Normal(v) => {
                let p = join(path, "normal");
                let [mean, sd] = v.as_slice() else {
                    return Err(error(
                        p,
                        format!(
                            "expected [mean, standard deviation], got {} values",
                            v.len()
                        ),
                    ));
                };
                if mean.value.base() <= 0.0 {
                    return Err(error(
                        p,
                        format!("expected a positive mean, got {}", mean.text),
                    ));
                }
                Dist::Normal {
                    mean: mean.value.base(),
                    sd: sd.value.base(),
                }
            }
            RawDist::Choice(v) => {
                if v.is_empty() {
                    return Err(error(
                        join(path, "choice"),
                        "expected at least one value, got []",
                    ));
                }
                Dist::Choice(v.iter().map(|g| g.value.base()).collect())
            }
            RawDist::Cdf(points) => {
                let p = join(path, "cdf");
                if points.is_empty() {
                    return Err(error(p, "expected [[value, probability], ...], got []"));
                }
                let mut out: Vec<(f64, f64)> = Vec::with_capacity(points.len());
                for (i, (v, q)) in points.iter().enumerate() {
                    let (x, prob) = (v.value.base(), q.value.0);
                    if let Some(&(x0, p0)) = out.last() {
                        if x < x0 || prob < p0 {
                            return Err(error(
                                format!("{p}[{i}]"),
                                format!(
                                    "a CDF must not decrease: got [{}, {}] after a point at probability {p0}",
                                    v.text, q.text
                                ),
                            ));
                        }
                        if x == x0 && prob > p0 {
                            return Err(error(
                                format!("{p}[{i}]"),
                                format!(
                                    "a CDF cannot step at one value twice: got {} again",
                                    v.text
                                ),
                            ));
                        }
                    }
                    out.push((x, prob));
                }
                let last = out[out.len() - 1].1;
                if last != 1.0 {
                    return Err(error(
                        p,
                        format!("the last point's probability must be 1, got {last}"),
                    ));
                }
                Dist::Empirical(out)
            }
            RawDist::AfterPrevious(_) => {
                return Err(error(
                    join(path, "after_previous"),
                    "after_previous is only allowed for start",
                ))
            }
        })
    }
}
