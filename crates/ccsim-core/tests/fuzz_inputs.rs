//! Seeded fuzzing of scenario input (issue 17): the shipped scenarios, mutated a few
//! hundred times (a leaf replaced by a hostile value, a key removed, an unknown key
//! added), must each either run or fail with a one-line error naming a key path. No
//! panic, no abort, no unbounded allocation.
//!
//! `CCSIM_FUZZ_CASES=10000 cargo test --release --test fuzz_inputs -- --nocapture` is
//! the long version; `CCSIM_FUZZ_SEED` replays one seed.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ccsim_core::api;
use ccsim_core::scenario::Scenario;

/// SplitMix64: deterministic choices.
struct Gen(u64);
impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const SOURCES: &[&str] = &[
    include_str!("../../../examples/bbr.toml"),
    include_str!("../../../examples/cdg_vs_cubic.toml"),
    include_str!("../../../examples/csaqm_gold_silver.toml"),
    include_str!("../../../examples/csaqm_unresponsive_udp.toml"),
    include_str!("../../../examples/demo.toml"),
    include_str!("../../../examples/http_pie2013_docsis.toml"),
    include_str!("../../../examples/pie2013_docsis.toml"),
    include_str!("../../../examples/single_newreno.toml"),
    include_str!("../../../examples/udp_cbr.toml"),
];

/// Values that have broken simulators: empty, negative, zero, huge, tiny, wrong type,
/// unit-less, non-finite spellings, long strings, tables and arrays where scalars go.
fn hostile(g: &mut Gen) -> toml::Value {
    use toml::Value as V;
    let strings = [
        "",
        "-5ms",
        "0",
        "0ns",
        "1ns",
        "1e9p",
        "1000000000p",
        "NaNMbps",
        "infs",
        "0Mbps",
        "18000000Tbps",
        "100Tbps",
        "1Tbps",
        "0.0000001bdp",
        "99999999999999999999s",
        "1bdp",
        "0p",
        "1p",
        "50 ms",
        "10mbps",
        "gold",
        "cubic",
        "pie",
        "codel",
        "flow",
        "1e-9s",
        "5000min",
        "9000B",
        "63B",
        "1.5MB",
    ];
    match g.below(9) {
        0..=2 => V::String(strings[g.below(strings.len())].to_owned()),
        3 => V::Integer([0, -1, 1, 2, 1_000_000_000, i64::MAX, 64, 9001][g.below(8)]),
        4 => V::Float([0.0, -0.5, 1e300, 1e-300, 0.5, 1.0, 120.0][g.below(7)]),
        5 => V::Boolean(g.next().is_multiple_of(2)),
        6 => V::Array(vec![V::String("1ms".into()), V::Integer(2)]),
        7 => {
            let mut t = toml::Table::new();
            let key = ["uniform", "exponential", "cdf", "kind", "x"][g.below(5)];
            t.insert(key.into(), V::String("5ms".into()));
            V::Table(t)
        }
        _ => V::String("x".repeat(1 + g.below(400))),
    }
}

/// Every leaf's path in `v`: table keys and array indices.
fn leaves(v: &toml::Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        toml::Value::Table(t) => {
            for (k, x) in t {
                path.push(k.clone());
                leaves(x, path, out);
                path.pop();
            }
        }
        toml::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                path.push(format!("#{i}"));
                leaves(x, path, out);
                path.pop();
            }
        }
        _ => out.push(path.clone()),
    }
}

fn at<'a>(v: &'a mut toml::Value, path: &[String]) -> Option<&'a mut toml::Value> {
    path.iter()
        .try_fold(v, |v, step| match step.strip_prefix('#') {
            Some(i) => v.as_array_mut()?.get_mut(i.parse::<usize>().ok()?),
            None => v.as_table_mut()?.get_mut(step),
        })
}

fn mutate(g: &mut Gen, doc: &mut toml::Value) {
    for _ in 0..1 + g.below(3) {
        // The leaves again: an earlier mutation may have changed the tree.
        let mut all = Vec::new();
        leaves(doc, &mut Vec::new(), &mut all);
        if all.is_empty() {
            return;
        }
        let path = all[g.below(all.len())].clone();
        let (last, parent) = path.split_last().unwrap();
        match g.below(6) {
            0 => {
                // Remove the key holding this leaf.
                if let Some(t) = at(doc, parent).and_then(|p| p.as_table_mut()) {
                    t.remove(last);
                }
            }
            1 => {
                if let Some(t) = at(doc, parent).and_then(|p| p.as_table_mut()) {
                    t.insert("rat".into(), hostile(g));
                }
            }
            _ => {
                let value = hostile(g);
                if let Some(v) = at(doc, &path) {
                    *v = value;
                }
            }
        }
    }
}

/// What one case did: ran, or refused with a one-line error.
fn case(seed: u64) -> Result<bool, String> {
    let mut g = Gen(seed);
    let mut doc: toml::Value = toml::from_str(SOURCES[g.below(SOURCES.len())]).unwrap();
    mutate(&mut g, &mut doc);
    let text = toml::to_string(&doc).unwrap_or_default();
    let outcome = catch_unwind(AssertUnwindSafe(|| -> Result<bool, String> {
        let sc = match Scenario::from_toml(&text) {
            Ok(sc) => sc,
            Err(e) => return check_error(&e.to_string()).map(|_| false),
        };
        if let Err(e) = api::validate(&sc) {
            return check_error(&e.to_string()).map(|_| false);
        }
        // Run what is cheap to run (a bounded number of bottleneck packets).
        // Packets the bottleneck can carry plus those the UDP sources create.
        let udp_bps: f64 = sc
            .udp
            .iter()
            .flat_map(|u| u.drawn.iter().map(|d| d.rate.bps as f64))
            .sum();
        let packets =
            (sc.bottleneck.rate.bps as f64 + udp_bps) * sc.duration.as_secs_f64() / 12_000.0;
        let flows: u32 = sc.flows.iter().map(|f| f.count).sum::<u32>()
            + sc.udp.iter().map(|u| u.count).sum::<u32>();
        if packets < 1e6 && flows <= 200 {
            api::run(&sc, None).map_err(|e| format!("validated but did not run: {e}"))?;
            return Ok(true);
        }
        Ok(false)
    }));
    match outcome {
        Ok(r) => r.map_err(|e| format!("seed {seed}: {e}\n{text}")),
        Err(_) => Err(format!("seed {seed}: panicked on\n{text}")),
    }
}

/// `path: message`, one line, short enough to read, naming a key path.
fn check_error(e: &str) -> Result<(), String> {
    if e.contains('\n') {
        return Err(format!("error on several lines: {e}"));
    }
    if e.len() > 400 {
        return Err(format!("error of {} characters: {e}", e.len()));
    }
    let (path, message) = e
        .split_once(": ")
        .ok_or_else(|| format!("error without a key path: {e}"))?;
    if path.is_empty() || message.is_empty() || path.contains(' ') && !path.starts_with('"') {
        return Err(format!("error without a clear key path: {e}"));
    }
    Ok(())
}

#[test]
fn mutated_scenarios_run_or_fail_with_one_line() {
    if let Ok(seed) = std::env::var("CCSIM_FUZZ_SEED") {
        case(seed.parse().unwrap()).unwrap();
        return;
    }
    let n: u64 = std::env::var("CCSIM_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let (mut ran, mut refused) = (0, 0);
    let mut failures = Vec::new();
    for seed in 0..n {
        let started = std::time::Instant::now();
        if std::env::var("CCSIM_FUZZ_VERBOSE").is_ok() {
            eprintln!("seed {seed} ...");
        }
        let outcome = case(seed);
        if std::env::var("CCSIM_FUZZ_VERBOSE").is_ok() && started.elapsed().as_secs_f64() > 2.0 {
            eprintln!("seed {seed}: {:.1} s", started.elapsed().as_secs_f64());
        }
        match outcome {
            Ok(true) => ran += 1,
            Ok(false) => refused += 1,
            Err(e) => failures.push(e),
        }
    }
    eprintln!(
        "{n} cases: {ran} ran, {refused} refused or validated only, {} broke",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{}",
        failures[..failures.len().min(3)].join("\n\n")
    );
    assert!(
        ran > 0 && refused > 0,
        "the mutations must exercise both outcomes"
    );
}

#[test]
#[ignore = "debugging aid: prints the mutated scenario of CCSIM_FUZZ_SEED"]
fn print_case() {
    let seed: u64 = std::env::var("CCSIM_FUZZ_SEED").unwrap().parse().unwrap();
    let mut g = Gen(seed);
    let mut doc: toml::Value = toml::from_str(SOURCES[g.below(SOURCES.len())]).unwrap();
    mutate(&mut g, &mut doc);
    println!("{}", toml::to_string(&doc).unwrap());
}
