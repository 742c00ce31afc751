//! Issue 3, done-when 4 (ABE, paper 003 / RFC 8511): a single NewReno flow over CoDel
//! with ECN at 10 Mbps / 100 ms gets more throughput with beta_ecn = 0.85 than with 0.5
//! (paper 003 Fig. 7 reports gains); every ECN reduction multiplies cwnd by beta_ecn,
//! at most once per RTT; and the queueing-delay cost matches the paper's numbers.

use ccsim_core::api;
use ccsim_core::results::{Column, RunOutput, Table};

fn run(beta_ecn: f64) -> RunOutput {
    let text = format!(
        r#"
duration = "120s"
measure = {{ start = "20s" }}
[bottleneck]
rate = "10Mbps"
queue = {{ kind = "codel", ecn = true }}
[[flows]]
cc = {{ kind = "newreno", beta_ecn = {beta_ecn:?} }}
rtt = "100ms"
ecn = true
trace = true
"#
    );
    api::run(&api::parse(&text, "toml").unwrap(), None).unwrap()
}

fn table<'a>(out: &'a RunOutput, name: &str) -> &'a Table {
    out.tables.iter().find(|t| t.name == name).unwrap()
}

fn f64s<'a>(t: &'a Table, c: &str) -> &'a [f64] {
    match t.column(c) {
        Some(Column::F64(v)) => v,
        _ => panic!("{c}"),
    }
}

/// ECN reductions inside the measurement window: (time, cwnd before, ssthresh after).
fn ecn_reductions(out: &RunOutput) -> Vec<(f64, f64, f64)> {
    let t = table(out, "cc_reductions");
    let cause = match t.column("cause") {
        Some(Column::Str(v)) => v,
        _ => panic!(),
    };
    let (time, before, after) = (
        f64s(t, "time_s"),
        f64s(t, "cwnd_before_pkts"),
        f64s(t, "ssthresh_after_pkts"),
    );
    (0..time.len())
        .filter(|&i| cause[i] == "ecn" && time[i] >= 20.0)
        .map(|i| (time[i], before[i], after[i]))
        .collect()
}

#[test]
fn abe_gets_more_throughput_than_beta_half_and_backs_off_by_beta_ecn() {
    let half = run(0.5);
    let abe = run(0.85);
    let (g_half, g_abe) = (
        half.summary.flows[0].goodput_mbps,
        abe.summary.flows[0].goodput_mbps,
    );
    println!("goodput beta_ecn 0.5: {g_half:.3} Mbps, 0.85: {g_abe:.3} Mbps");
    assert!(
        g_abe > g_half * 1.1,
        "ABE should gain throughput: {g_abe} vs {g_half}"
    );
    assert_eq!(
        half.summary.flows[0].drops + abe.summary.flows[0].drops,
        0,
        "CoDel marks, never drops ECT"
    );

    for (beta, out) in [(0.5, &half), (0.85, &abe)] {
        let r = ecn_reductions(out);
        assert!(!r.is_empty());
        for &(t, before, after) in &r {
            // NewReno: ssthresh = max(floor(cwnd * beta_ecn), 2) (Linux-style truncation).
            let expected = ((before * beta).floor()).max(2.0);
            assert_eq!(
                after, expected,
                "beta_ecn {beta} at {t:.3} s: cwnd {before} -> {after}"
            );
        }
        // RFC 3168 §6.1.2: at most one reduction per RTT (100 ms base RTT, more with queueing).
        for w in r.windows(2) {
            assert!(
                w[1].0 - w[0].0 >= 0.1,
                "two reductions {:.3} s apart",
                w[1].0 - w[0].0
            );
        }
    }
    // A sawtooth lasts (1 - beta) W RTTs: beta_ecn 0.85 reduces about (0.5 / 0.15) times
    // as often as 0.5 when cwnd peaks near the same W (the BDP).
    let (n_half, n_abe) = (
        ecn_reductions(&half).len() as f64,
        ecn_reductions(&abe).len() as f64,
    );
    let rate_ratio = n_abe / n_half;
    println!(
        "reductions/s: 0.5 -> {:.3}, 0.85 -> {:.3} (ratio {rate_ratio:.2}, model ~3.3)",
        n_half / 100.0,
        n_abe / 100.0
    );
    assert!((2.0..5.0).contains(&rate_ratio), "ratio {rate_ratio}");
}

#[test]
fn abe_queueing_delay_cost_is_small_as_paper_003_reports() {
    // Paper 003 §IV-B: at RTT 100 ms CoDel adds 1 ms / 4 ms to the median / 90th
    // percentile for beta_ecn = 0.95 compared to beta_ecn = 0.5.
    let half = run(0.5).summary.bottleneck;
    let high = run(0.95).summary.bottleneck;
    let (d50, d90) = (
        high.sojourn_p50_ms - half.sojourn_p50_ms,
        high.sojourn_p90_ms - half.sojourn_p90_ms,
    );
    println!("added median {d50:.2} ms (paper 1 ms), p90 {d90:.2} ms (paper 4 ms)");
    assert!((0.0..=2.0).contains(&d50), "median {d50}");
    assert!((2.0..=6.0).contains(&d90), "p90 {d90}");
}
