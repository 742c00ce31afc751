//! The core's standard benchmark scenarios, run without Python (`cargo run --release
//! --example bench`). `ccsim bench` runs the same scenarios through the Python API.

use ccsim_core::api;

fn main() {
    let cases = [
        (
            "1 NewReno, 10 Mbps, 100 ms, 300 s",
            1,
            "10Mbps",
            "100ms",
            "300s",
            0.15,
        ),
        (
            "10 NewReno, 1 Gbps, 20 ms, 10 s",
            10,
            "1Gbps",
            "20ms",
            "10s",
            0.35,
        ),
        (
            "1000 NewReno, 10 Gbps, 20 ms, 2 s",
            1000,
            "10Gbps",
            "20ms",
            "2s",
            0.6,
        ),
    ];
    let filter = std::env::args().nth(1);
    for (name, n, rate, rtt, dur, target) in cases {
        if let Some(f) = &filter {
            if !name.contains(f.as_str()) {
                continue;
            }
        }
        let toml = format!(
            "duration = \"{dur}\"\n[bottleneck]\nrate = \"{rate}\"\nqueue = {{ kind = \"droptail\", limit = \"1bdp\" }}\n[[flows]]\ncount = {n}\ncc = \"newreno\"\nrtt = \"{rtt}\"\n"
        );
        let sc = api::parse(&toml, "toml").unwrap();
        let out = api::run(&sc, None).unwrap();
        let s = &out.summary;
        println!(
            "{name:38} {} | target {target} s | util {:.3}",
            s.speed_line(),
            s.utilisation
        );
    }
}
