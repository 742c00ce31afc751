//! The congestion controllers in full simulations: each reaches its reference's operating
//! point on a dumbbell, scheduled parameter changes move that point mid-run, and bad
//! parameters are reported with their key path.
//!
//! One packet is 1448 + 52 bytes, i.e. 1.2 ms at 10 Mbps.

use ccsim_core::api;
use ccsim_core::results::RunOutput;

fn run(text: &str) -> RunOutput {
    api::run(&api::parse(text, "toml").expect("valid scenario"), None).expect("runs")
}

/// Packet serialisation time at 10 Mbps, in ms.
const PKT_MS: f64 = 1.2;

#[test]
fn every_algorithm_runs_and_uses_the_link() {
    for kind in [
        "newreno", "reno", "cubic", "dctcp", "cdg", "ledbat", "vegas", "bbr",
    ] {
        let out = run(&format!(
            r#"
duration = "40s"
measure = {{ start = "10s" }}
[bottleneck]
rate = "10Mbps"
queue = {{ kind = "droptail", limit = "1bdp" }}
[[flows]]
cc = "{kind}"
rtt = "40ms"
ecn = true
"#
        ));
        let u = out.summary.utilisation;
        assert!(u > 0.85, "{kind}: utilisation {u}");
        assert_eq!(out.summary.flows[0].timeouts, 0, "{kind}");
    }
}

fn vegas_queue_ms(changes: &str) -> f64 {
    run(&format!(
        r#"
duration = "60s"
measure = {{ start = "30s" }}
[bottleneck]
rate = "10Mbps"
queue = {{ kind = "droptail", limit = "2bdp" }}
[[flows]]
cc = "vegas"
rtt = "50ms"
{changes}
"#
    ))
    .summary
    .bottleneck
    .sojourn_mean_ms
}

#[test]
fn vegas_keeps_alpha_to_beta_packets_queued_and_follows_a_retune() {
    // Linux Vegas holds diff = cwnd (minRTT - baseRTT) / baseRTT, the packets it keeps
    // queued, between alpha = 2 and beta = 4 (about one packet of slack either side for
    // the per-round minimum and integer steps).
    let q = vegas_queue_ms("");
    assert!(
        (1.0 * PKT_MS..=5.0 * PKT_MS).contains(&q),
        "default: {q} ms queued"
    );
    // Retuned at 20 s to alpha = 10, beta = 12.
    let q = vegas_queue_ms("[[flows.changes]]\nat = \"20s\"\nalpha = 10\nbeta = 12\n");
    assert!(
        (9.0 * PKT_MS..=13.0 * PKT_MS).contains(&q),
        "alpha 10, beta 12: {q} ms queued"
    );
}

fn ledbat_queue_ms(target: &str, changes: &str) -> f64 {
    run(&format!(
        r#"
duration = "60s"
measure = {{ start = "40s" }}
[bottleneck]
rate = "10Mbps"
queue = {{ kind = "droptail", limit = "3bdp" }}
[[flows]]
cc = {{ kind = "ledbat", target = "{target}" }}
rtt = "40ms"
{changes}
"#
    ))
    .summary
    .bottleneck
    .sojourn_mean_ms
}

#[test]
fn ledbat_settles_at_its_target_delay_and_follows_a_retune() {
    // RFC 6817: LEDBAT adds about TARGET of queueing delay when it is alone (the buffer,
    // 120 ms, is larger than the target).
    for (target, ms) in [("100ms", 100.0), ("25ms", 25.0)] {
        let q = ledbat_queue_ms(target, "");
        assert!((q - ms).abs() < 0.1 * ms, "target {target}: {q} ms");
    }
    let q = ledbat_queue_ms(
        "100ms",
        "[[flows.changes]]\nat = \"20s\"\ntarget = \"25ms\"\n",
    );
    assert!((q - 25.0).abs() < 2.5, "target 100 ms then 25 ms: {q} ms");
}

/// Aggregate share of 2 CDG flows against 2 CUBIC flows (paper 000 §III-B set-up:
/// 10 Mbps, 1 BDP tail drop, CDG first, co-existence heuristics off).
fn cdg_share(g: f64) -> f64 {
    let out = run(&format!(
        r#"
duration = "90s"
measure = {{ start = "40s" }}
seed = 3
[bottleneck]
rate = "10Mbps"
queue = {{ kind = "droptail", limit = "1bdp" }}
[[flows]]
count = 2
cc = {{ kind = "cdg", g = {g}, coexistence = false }}
rtt = "50ms"
[[flows]]
count = 2
cc = "cubic"
rtt = "50ms"
start = "10s"
"#
    ));
    let cdg: f64 = out.summary.flows[..2].iter().map(|f| f.goodput_mbps).sum();
    let all: f64 = out.summary.flows.iter().map(|f| f.goodput_mbps).sum();
    cdg / all
}

#[test]
fn cdg_yields_to_cubic_less_as_g_grows() {
    // Paper 000 Fig. 2/3 at 50 ms: about 5 % per CDG flow at G = 0.1, nearly an even
    // split at G = 120, monotonic in between.
    let shares: Vec<f64> = [0.1, 2.0, 6.0, 120.0]
        .iter()
        .map(|&g| cdg_share(g))
        .collect();
    assert!(shares.windows(2).all(|w| w[0] < w[1]), "{shares:?}");
    assert!(shares[0] < 0.2, "G = 0.1: {shares:?}");
    assert!(shares[3] > 0.35, "G = 120: {shares:?}");
}

fn marking_run(kind: &str) -> RunOutput {
    run(&format!(
        r#"
duration = "40s"
measure = {{ start = "10s" }}
[bottleneck]
rate = "10Mbps"
queue = {{ kind = "codel", ce_threshold = "6ms", ecn = true }}
[[flows]]
count = 2
cc = "{kind}"
rtt = "20ms"
ecn = true
"#
    ))
}

#[test]
fn dctcp_fills_the_link_with_a_shallow_marking_threshold() {
    // A step-marking queue at K = 6 ms (5 packets) on a 20 ms, 10 Mbps path (BDP 16.7
    // packets): DCTCP's α/2 cuts keep the link busy for K > BDP / 7 (Alizadeh et al.,
    // SIGCOMM 2010, §3.3), with the queue held near K; classic ECN halving cannot.
    let dctcp = marking_run("dctcp");
    let reno = marking_run("newreno");
    let u = dctcp.summary.utilisation;
    assert!(u > 0.97, "dctcp utilisation {u}");
    assert!(dctcp.summary.bottleneck.marks > 0);
    assert!(dctcp.summary.bottleneck.sojourn_mean_ms < 6.0);
    assert!(
        u > reno.summary.utilisation + 0.1,
        "dctcp {u} vs newreno {}",
        reno.summary.utilisation
    );
}

fn error_of(cc: &str, changes: &str) -> String {
    let text = format!(
        r#"
duration = "10s"
[bottleneck]
rate = "10Mbps"
[[flows]]
cc = {cc}
rtt = "100ms"
{changes}
"#
    );
    api::parse(&text, "toml")
        .and_then(|sc| api::validate(&sc))
        .unwrap_err()
        .to_string()
}

#[test]
fn bad_parameters_are_one_line_errors_with_their_path() {
    assert_eq!(
        error_of(r#"{ kind = "cubic", beta = 1.5 }"#, ""),
        "flows[0].cc.beta: expected a number in (0, 1), got 1.5"
    );
    assert_eq!(
        error_of(r#"{ kind = "newreno", beta_ecn = 0 }"#, ""),
        "flows[0].cc.beta_ecn: expected a number in (0, 1), got 0"
    );
    assert_eq!(
        error_of(r#"{ kind = "dctcp", shift_g = 11 }"#, ""),
        "flows[0].cc.shift_g: expected an integer in [0, 10], got 11"
    );
    assert_eq!(
        error_of(r#"{ kind = "cdg", window = 6 }"#, ""),
        "flows[0].cc.window: expected a power of two in [1, 256], got 6"
    );
    assert!(
        error_of(r#"{ kind = "cdg", g = 3, backoff_factor = 42 }"#, "")
            .starts_with("flows[0].cc.backoff_factor: cannot be given together with g")
    );
    assert!(error_of(r#"{ kind = "ledbat", target = "150ms" }"#, "")
        .starts_with("flows[0].cc.target: expected a duration in (0, 100ms]"));
    assert!(error_of(r#"{ kind = "vegas", delta = 1 }"#, "")
        .starts_with("flows[0].cc.delta: unknown parameter for vegas (expected one of: alpha"));
    assert_eq!(
        error_of(r#""bbr4""#, "").split(" (").next().unwrap(),
        "flows[0].cc.kind: unknown congestion control \"bbr4\""
    );
    // Scheduled changes are checked when the scenario is built.
    assert_eq!(
        error_of(
            r#"{ kind = "cdg" }"#,
            "[[flows.changes]]\nat = \"5s\"\ng = -1\n"
        ),
        "flows[0].changes[0].g: expected a positive number (milliseconds), got -1"
    );
}
