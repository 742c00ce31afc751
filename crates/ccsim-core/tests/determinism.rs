//! Done-when check (core side): the same scenario and seed give bit-identical results;
//! another seed changes them wherever randomness is present. The Python tests check the
//! same on the Parquet files byte for byte.

use ccsim_core::api;
use ccsim_core::results::{Column, RunOutput};

const SCENARIO: &str = r#"
duration = "20s"
seed = SEED
[bottleneck]
rate = "10Mbps"
queue = { kind = "droptail", limit = "0.5bdp" }
[[flows]]
count = 3
rtt = "60ms"
trace = true
[[flows]]
rtt = "120ms"
sack = false
[[udp]]
rate = "2Mbps"
pattern = "poisson"
rtt = "40ms"
"#;

fn run(seed: u64) -> RunOutput {
    let sc = api::parse(&SCENARIO.replace("SEED", &seed.to_string()), "toml").unwrap();
    api::run(&sc, None).unwrap()
}

/// Every column as bytes (bit patterns for floats, so NaN compares equal to itself).
fn fingerprint(out: &RunOutput) -> Vec<(String, Vec<u8>)> {
    out.tables
        .iter()
        .flat_map(|t| {
            t.columns.iter().map(move |(name, col)| {
                let bytes: Vec<u8> = match col {
                    Column::F64(v) => v.iter().flat_map(|x| x.to_bits().to_le_bytes()).collect(),
                    Column::U64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
                    Column::U32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
                    Column::Str(v) => v.join("\u{0}").into_bytes(),
                };
                (format!("{}.{}", t.name, name), bytes)
            })
        })
        .collect()
}

#[test]
fn same_seed_gives_identical_tables() {
    let a = run(7);
    let b = run(7);
    assert_eq!(fingerprint(&a), fingerprint(&b));
    assert_eq!(a.summary.events, b.summary.events);
}

#[test]
fn different_seed_changes_results_with_poisson_traffic() {
    let a = fingerprint(&run(7));
    let b = fingerprint(&run(8));
    let differing: Vec<&String> = a
        .iter()
        .zip(b.iter())
        .filter(|(x, y)| x.1 != y.1)
        .map(|(x, _)| &x.0)
        .collect();
    assert!(
        differing
            .iter()
            .any(|n| n.starts_with("flow_series.goodput")),
        "differing: {differing:?}"
    );
    assert!(
        differing
            .iter()
            .any(|n| n.starts_with("queue_series.sojourn")),
        "differing: {differing:?}"
    );
}

#[test]
fn without_randomness_the_seed_does_not_matter() {
    // Only TCP over DropTail: nothing draws random numbers, so the seed is irrelevant.
    let text = |seed: u64| {
        format!("duration = \"10s\"\nseed = {seed}\n[bottleneck]\nrate = \"5Mbps\"\n[[flows]]\ncount = 2\nrtt = \"30ms\"\n")
    };
    let a = api::run(&api::parse(&text(1), "toml").unwrap(), None).unwrap();
    let b = api::run(&api::parse(&text(2), "toml").unwrap(), None).unwrap();
    assert_eq!(fingerprint(&a), fingerprint(&b));
}
