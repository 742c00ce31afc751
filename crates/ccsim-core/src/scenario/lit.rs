//! Scalar ("leaf") values of a scenario file, and the machinery that turns them into
//! typed values with error messages of the form `expected <what>, got <value>`.
//!
//! Every leaf type (durations, rates, integers, booleans, ...) is deserialized the
//! same way: first into a [`Lit`] (whatever scalar the user wrote), then converted
//! by [`Leaf::from_lit`]. Tables and arrays where a scalar is expected are rejected
//! while deserializing, with the same message form.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, Visitor};

/// A scalar exactly as the user wrote it (after TOML/JSON decoding).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Lit {
    /// A non-negative integer.
    U(u64),
    /// A negative integer.
    I(i64),
    /// A floating-point number.
    F(f64),
    /// A boolean.
    B(bool),
    /// A string.
    S(String),
    /// JSON `null`.
    Null,
}

impl fmt::Display for Lit {
    /// Shows the value the way the user wrote it: strings quoted, floats with a
    /// decimal point (`50.0`, not `50`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lit::U(v) => write!(f, "{v}"),
            Lit::I(v) => write!(f, "{v}"),
            Lit::F(v) => write!(f, "{v:?}"),
            Lit::B(v) => write!(f, "{v}"),
            Lit::S(s) => write!(f, "{s:?}"),
            Lit::Null => f.write_str("null"),
        }
    }
}

/// `expected <expected>, got <lit>`.
pub(crate) fn mismatch(expected: &str, lit: &Lit) -> String {
    format!("expected {expected}, got {lit}")
}

/// A type that is written as one scalar in a scenario file.
pub(crate) trait Leaf: Sized {
    /// What a correct value looks like, e.g. `a duration like "50ms"`.
    fn expected() -> Cow<'static, str>;
    /// Convert the scalar; the error is a complete message (`expected ..., got ...`).
    fn from_lit(lit: &Lit) -> Result<Self, String>;
}

/// A leaf value together with the text the user wrote (for later validation messages).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Given<T> {
    pub value: T,
    /// The value as written: `"50ms"` (quoted) for strings, `50` for numbers.
    pub text: String,
}

impl<'de, T: Leaf> Deserialize<'de> for Given<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let expected = T::expected();
        let lit = deserializer.deserialize_any(LitVisitor {
            expected: &expected,
        })?;
        let value = T::from_lit(&lit).map_err(de::Error::custom)?;
        Ok(Given {
            value,
            text: lit.to_string(),
        })
    }
}

/// Deserializes any scalar into a [`Lit`]; tables and arrays are errors.
pub(crate) struct LitVisitor<'a> {
    pub expected: &'a str,
}

impl<'de> Visitor<'de> for LitVisitor<'_> {
    type Value = Lit;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expected)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Lit, E> {
        Ok(Lit::B(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Lit, E> {
        Ok(match u64::try_from(v) {
            Ok(u) => Lit::U(u),
            Err(_) => Lit::I(v),
        })
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Lit, E> {
        Ok(Lit::U(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Lit, E> {
        Ok(Lit::F(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Lit, E> {
        Ok(Lit::S(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Lit, E> {
        Ok(Lit::S(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Lit, E> {
        Ok(Lit::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Lit, E> {
        Ok(Lit::Null)
    }
    fn visit_map<A: de::MapAccess<'de>>(self, _map: A) -> Result<Lit, A::Error> {
        Err(de::Error::custom(format!(
            "expected {}, got a table",
            self.expected
        )))
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, _seq: A) -> Result<Lit, A::Error> {
        Err(de::Error::custom(format!(
            "expected {}, got an array",
            self.expected
        )))
    }
}
