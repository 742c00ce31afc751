//! Done-when check: a single long-lived NewReno flow over DropTail matches the
//! utilisation model of paper 003 (Khademi et al., "Alternative Backoff"), Eq. (5)/(6):
//! U = 1 - (delta - beta (b + delta))^2 / (2 delta (1 - beta) (b + delta)) when
//! b < delta (1 - beta) / beta, else 1.

use ccsim_core::api;

/// Paper 003 Eq. (6) as a utilisation.
fn model_utilisation(beta: f64, b_over_bdp: f64) -> f64 {
    let delta = 1.0;
    let b = b_over_bdp;
    if b >= delta * (1.0 - beta) / beta {
        return 1.0;
    }
    1.0 - (delta - beta * (b + delta)).powi(2) / (2.0 * delta * (1.0 - beta) * (b + delta))
}

fn scenario(buffer_bdp: f64, duration_s: u64) -> String {
    // The measurement starts well after slow start and spans many sawteeth: with
    // beta = 0.5 a sawtooth lasts (1 - beta)(b + delta) RTTs, at most ~8.3 s here.
    format!(
        r#"
duration = "{duration_s}s"
seed = 1
measure = {{ start = "40s" }}
[bottleneck]
rate = "10Mbps"
queue = {{ kind = "droptail", limit = "{buffer_bdp}bdp" }}
[[flows]]
cc = {{ kind = "newreno", beta = 0.5 }}
rtt = "100ms"
"#
    )
}

#[test]
fn newreno_droptail_utilisation_matches_paper_003_model() {
    let mut report = String::new();
    let mut worst: f64 = 0.0;
    for &b in &[0.1, 0.25, 0.5, 1.0] {
        let sc = api::parse(&scenario(b, 440), "toml").expect("valid scenario");
        let out = api::run(&sc, None).expect("runs");
        let measured = out.summary.utilisation;
        let model = model_utilisation(0.5, b);
        let err = (measured - model).abs();
        worst = worst.max(err);
        report +=
            &format!("b/BDP={b}: measured {measured:.4}, model {model:.4}, |diff| {err:.4}\n");
    }
    println!("{report}");
    assert!(
        worst <= 0.03,
        "utilisation differs from paper 003 Eq. (5) by more than 3 points:\n{report}"
    );
}

#[test]
fn model_reference_values() {
    // Paper 003, text after Eq. (6): b = 0 and beta = 0.5 gives 3/4 of capacity.
    assert!((model_utilisation(0.5, 0.0) - 0.75).abs() < 1e-12);
    // Eq. (1): beta = 0.5 needs b >= BDP for full utilisation.
    assert_eq!(model_utilisation(0.5, 1.0), 1.0);
}
