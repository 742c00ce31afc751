//! Issue 3, done-when 3 and 5 (CDG): paper 000's set-up from `examples/cdg_vs_cubic.toml`
//! shows CDG's share falling as G falls (paper 000 Fig. 2: G = 0.1, 2, 6, 120), and a
//! scheduled change of G mid-run takes effect.

use ccsim_core::api;
use ccsim_core::results::RunOutput;

const EXAMPLE: &str = include_str!("../../../examples/cdg_vs_cubic.toml");

fn run(text: &str) -> RunOutput {
    api::run(&api::parse(text, "toml").expect("valid scenario"), None).expect("runs")
}

/// CDG's share of the TCP goodput over the measurement window.
fn cdg_share(out: &RunOutput) -> f64 {
    let tcp: Vec<_> = out
        .summary
        .flows
        .iter()
        .filter(|f| f.protocol == "tcp")
        .collect();
    let cdg: f64 = tcp
        .iter()
        .filter(|f| f.algorithm == "cdg")
        .map(|f| f.goodput_mbps)
        .sum();
    let all: f64 = tcp.iter().map(|f| f.goodput_mbps).sum();
    cdg / all
}

fn with_g(g: f64) -> String {
    assert!(EXAMPLE.contains("g = 6.0"), "the example sets g = 6.0");
    EXAMPLE.replace("g = 6.0", &format!("g = {g:?}"))
}

#[test]
fn cdg_share_falls_as_g_falls() {
    let gs = [0.1, 2.0, 6.0, 120.0];
    let shares: Vec<f64> = gs.iter().map(|&g| cdg_share(&run(&with_g(g)))).collect();
    println!("G {gs:?} -> CDG share {shares:?} (paper 000 Fig. 2a: ~5% per flow at G = 0.1, Fig. 2d: nearly even at 120)");
    for w in shares.windows(2) {
        assert!(w[0] < w[1], "share must grow with G: {shares:?}");
    }
    // Fig. 2a: about 5% per CDG flow (10% for two) at G = 0.1; Fig. 2d: nearly even at 120.
    assert!(shares[0] < 0.2, "G = 0.1: {}", shares[0]);
    assert!(shares[3] > 0.35, "G = 120: {}", shares[3]);
}

#[test]
fn scheduled_g_change_mid_run_takes_effect() {
    // Start permissive (G = 120) and become strongly LBE (G = 0.1) at 100 s; the window
    // after the change must look like the G = 0.1 run, not the G = 120 one.
    let changed = with_g(120.0).replace(
        "trace = true\n",
        "trace = true\n[[flows.changes]]\nat = \"100s\"\ng = 0.1\n",
    );
    let share_changed = cdg_share(&run(&changed));
    let share_120 = cdg_share(&run(&with_g(120.0)));
    let share_01 = cdg_share(&run(&with_g(0.1)));
    println!("G 120 -> 0.1 at 100 s: {share_changed}; G = 120: {share_120}; G = 0.1: {share_01}");
    assert!(
        share_changed < share_120 - 0.15,
        "{share_changed} vs {share_120}"
    );
    assert!(
        (share_changed - share_01).abs() < 0.1,
        "{share_changed} vs {share_01}"
    );
}
