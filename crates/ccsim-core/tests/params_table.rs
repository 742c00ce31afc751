//! The parameter tables (`ccsim_core::params`) against the algorithms they describe: every
//! name is unique, every table is reachable by its name and aliases, and every default the
//! table shows as a plain value is the algorithm's real default (building with that value
//! given explicitly yields the same algorithm), so `ccsim algorithms` and the docs cannot
//! state a default the code does not have.

use std::collections::{BTreeMap, BTreeSet};

use ccsim_core::params::{self, Family};
use ccsim_core::qdisc::LinkInfo;
use ccsim_core::scenario::{AlgoSpec, ParamValue};
use ccsim_core::{cc, qdisc};

fn link() -> LinkInfo {
    LinkInfo {
        rate_bps: 10_000_000,
        bdp_bytes: 125_000.0,
        mtu_bytes: 1500,
    }
}

fn spec(kind: &str, params: &[(&str, ParamValue)]) -> AlgoSpec {
    AlgoSpec {
        kind: kind.to_owned(),
        params: params
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect::<BTreeMap<_, _>>(),
    }
}

/// The default as a value a scenario could write, when it is one (`0.5`, `true`,
/// `"2ms"`); `None` for a default described in words.
fn literal(default: &str) -> Option<ParamValue> {
    match default {
        "true" => return Some(ParamValue::Bool(true)),
        "false" => return Some(ParamValue::Bool(false)),
        _ => {}
    }
    if let Some(inner) = default.strip_prefix('"').and_then(|d| d.strip_suffix('"')) {
        return (!inner.contains('"')).then(|| ParamValue::Str(inner.to_owned()));
    }
    default.parse::<f64>().ok().map(ParamValue::Number)
}

/// What was built, for comparison.
fn built(family: Family, s: &AlgoSpec) -> String {
    match family {
        Family::CongestionControl => format!("{:?}", cc::build(s, "cc").unwrap()),
        Family::QueueDiscipline => format!("{:?}", qdisc::build(s, "q", link()).unwrap()),
    }
}

#[test]
fn names_are_unique_and_every_kind_has_a_table() {
    let all = params::all();
    let mut kinds = BTreeSet::new();
    for a in &all {
        let names: BTreeSet<_> = a.params.iter().map(|p| p.name).collect();
        assert_eq!(names.len(), a.params.len(), "{}: a name twice", a.name);
        for k in std::iter::once(a.name).chain(a.aliases.iter().copied()) {
            assert!(kinds.insert(k), "{k} twice");
        }
    }
    for k in cc::KNOWN_KINDS.iter().chain(qdisc::KNOWN_KINDS) {
        assert!(kinds.contains(k), "{k} has no table");
    }
}

#[test]
fn stated_defaults_are_the_real_defaults() {
    // `beta_ecn` also switches ABE on when given, so giving its default is not neutral.
    let not_neutral = ["beta_ecn"];
    let mut checked = 0;
    for a in params::all() {
        let plain = built(a.family, &spec(a.name, &[]));
        for p in &a.params {
            let Some(value) = literal(p.default) else {
                continue;
            };
            if not_neutral.contains(&p.name) {
                continue;
            }
            let given = built(a.family, &spec(a.name, &[(p.name, value)]));
            assert!(
                given == plain,
                "{}.{}: the table says default {}, but giving it changes the algorithm",
                a.name,
                p.name,
                p.default
            );
            checked += 1;
        }
    }
    assert!(checked > 80, "only {checked} defaults checked");
}
