//! Run one scenario file (TOML or JSON) a few times without Python and print the
//! simulation wall time of each run: the loop to profile (`perf record`) when a
//! scenario is slower than expected.
//!
//! `cargo run --release --example runfile -- scenario.toml [repeats] [--digest]`
//!
//! `--digest` also prints a hash of everything the run produced except its wall time
//! (summary and tables), to check that a change meant to be a pure speed-up leaves
//! results bit-identical.

use ccsim_core::api;

fn main() {
    let digest = std::env::args().any(|a| a == "--digest");
    let mut args = std::env::args().skip(1).filter(|a| a != "--digest");
    let Some(path) = args.next() else {
        eprintln!("usage: runfile SCENARIO.toml|.json [REPEATS]");
        std::process::exit(2);
    };
    let repeats: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(3);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    let fmt = if path.ends_with(".json") {
        "json"
    } else {
        "toml"
    };
    let sc = match api::parse(&text, fmt) {
        Ok(sc) => sc,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    for _ in 0..repeats {
        match api::run(&sc, None) {
            Ok(out) => {
                if digest {
                    use std::hash::{Hash, Hasher};
                    let mut summary = out.summary.clone();
                    summary.wall_s = 0.0;
                    // Debug text covers every field, floats to the last bit.
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    format!("{summary:?}{:?}", out.tables).hash(&mut h);
                    println!("digest {:016x} events {}", h.finish(), out.summary.events);
                }
                println!("{}", out.summary.speed_line())
            }
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(2);
            }
        }
    }
}
