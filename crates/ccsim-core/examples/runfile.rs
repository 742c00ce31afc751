//! Run one scenario file (TOML or JSON) a few times without Python and print the
//! simulation wall time of each run: the loop to profile (`perf record`) when a
//! scenario is slower than expected.
//!
//! `cargo run --release --example runfile -- scenario.toml [repeats]`

use ccsim_core::api;

fn main() {
    let mut args = std::env::args().skip(1);
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
            Ok(out) => println!("{}", out.summary.speed_line()),
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(2);
            }
        }
    }
}
