//! Issue 31, done-when 1: random loss on the wire against Mathis et al., "The
//! macroscopic behavior of the TCP congestion avoidance algorithm" (CCR 1997), Eq. (3):
//! BW = (MSS / RTT) * C / sqrt(p), C = sqrt(3 / (2 b)), b the segments per ACK.
//!
//! One NewReno flow, the bottleneck far above the loss-limited rate (the queue stays
//! nearly empty, so the RTT is the base RTT), Bernoulli loss p on the data direction.
//! The receiver does not delay ACKs (`delayed_ack = false`), so b = 1. (ccsim's NewReno
//! grows cwnd per segment acknowledged, as Linux does with appropriate byte counting,
//! so even with delayed ACKs its growth is one segment per RTT: b = 1 describes it.)

use ccsim_core::api;
use ccsim_core::results::{Column, RunOutput};

const MSS_BYTES: f64 = 1448.0;

fn run(p: f64, rtt_ms: u64, duration_s: u64) -> RunOutput {
    let text = format!(
        r#"
duration = "{duration_s}s"
measure = {{ start = "10s" }}
[bottleneck]
rate = "1Gbps"
queue = {{ kind = "droptail", limit = "50MB" }}
loss = {p}
[[flows]]
cc = "newreno"
rtt = "{rtt_ms}ms"
delayed_ack = false
"#
    );
    api::run(&api::parse(&text, "toml").unwrap(), None).unwrap()
}

fn u64_col(out: &RunOutput, table: &str, col: &str) -> Vec<u64> {
    let t = out.tables.iter().find(|t| t.name == table).unwrap();
    match t.column(col) {
        Some(Column::U64(v)) => v.clone(),
        other => panic!("{table}.{col}: {other:?}"),
    }
}

fn mathis_mbps(p: f64, rtt_ms: u64) -> f64 {
    let b = 1.0;
    MSS_BYTES * 8.0 / (rtt_ms as f64 / 1e3) * (3.0 / (2.0 * b * p)).sqrt() / 1e6
}

#[test]
fn newreno_under_bernoulli_loss_follows_mathis() {
    println!("  p       RTT   goodput  Mathis  ratio  | loss measured  (p)  10% off seen");
    let mut detects_ten_percent = 0;
    let mut rows = 0;
    for &rtt_ms in &[20u64, 60] {
        let mut last = f64::INFINITY;
        for &p in &[0.001, 0.005, 0.01, 0.02] {
            // Long enough for the loss-rate check to tell p from 1.1 p at most rates
            // (cheap: the whole table runs in seconds in release mode).
            let duration_s = if rtt_ms == 20 { 400 } else { 800 };
            let out = run(p, rtt_ms, duration_s);
            let goodput = out.summary.flows[0].goodput_mbps;
            let reference = mathis_mbps(p, rtt_ms);
            let ratio = goodput / reference;
            // The loss model's own rate: packets lost / packets serialised on the link.
            let b = &out.summary.bottleneck;
            let lost = b.losses.expect("a lossy bottleneck reports losses");
            let sent = b.departures;
            let measured_p = lost as f64 / sent as f64;
            // Would a model losing 1.1 p be told apart? 4 binomial standard deviations.
            let sigma = (p * (1.0 - p) / sent as f64).sqrt();
            let ok_p = (measured_p - p).abs() <= 4.0 * sigma;
            let off_seen = (measured_p - 1.1 * p).abs() > 4.0 * sigma;
            detects_ten_percent += off_seen as u32;
            rows += 1;
            // The Mathis check alone cannot see a 10 % error in p (sqrt: 5 % in rate).
            let ratio_off = goodput / mathis_mbps(1.1 * p, rtt_ms);
            println!(
                "{p:<7} {rtt_ms:>3}ms {goodput:>7.3} {reference:>7.3}  {ratio:.3} \
                 (1.1p: {ratio_off:.3}) | {measured_p:.5} ({p})  {off_seen}"
            );
            assert!(
                (0.8..=1.2).contains(&ratio),
                "p {p} RTT {rtt_ms} ms: goodput {goodput:.3} vs Mathis {reference:.3}"
            );
            assert!(ok_p, "measured loss {measured_p} vs p {p} (sigma {sigma})");
            assert!(goodput < last, "throughput must fall as p grows");
            last = goodput;
            // Losses are counted apart from drops, and conservation holds with them.
            assert_eq!(b.drops, 0, "the ample buffer drops nothing");
            let sent_f = u64_col(&out, "flow_packets", "sent");
            let arrived = u64_col(&out, "flow_packets", "arrived");
            let dropped = u64_col(&out, "flow_packets", "dropped");
            let lost_f = u64_col(&out, "flow_packets", "lost");
            let in_net = u64_col(&out, "flow_packets", "in_network");
            assert_eq!(sent_f[0], arrived[0] + dropped[0] + lost_f[0] + in_net[0]);
            assert!(lost_f[0] > 0);
        }
    }
    assert!(
        detects_ten_percent >= 2,
        "a 10 % error in p is seen in only {detects_ten_percent} of {rows} rows"
    );
}

#[test]
fn rtt_trend_is_inverse() {
    // Mathis: throughput ~ 1/RTT at fixed p; tripling the RTT cuts it about threefold.
    let g20 = run(0.01, 20, 60).summary.flows[0].goodput_mbps;
    let g60 = run(0.01, 60, 120).summary.flows[0].goodput_mbps;
    let r = g20 / g60;
    println!("goodput 20 ms {g20:.3}, 60 ms {g60:.3}, ratio {r:.2} (Mathis 3)");
    assert!((2.4..=3.6).contains(&r), "ratio {r}");
}

#[test]
fn a_loss_model_draws_from_its_own_stream() {
    // A loss model of probability 0 draws per packet but loses nothing: the run must be
    // identical to one without it (no other component's draws move). A RED queue and
    // Poisson UDP make the run depend on the other streams.
    let base = r#"
duration = "8s"
seed = 5
[bottleneck]
rate = "20Mbps"
queue = { kind = "red" }
[[flows]]
cc = "cubic"
rtt = "30ms"
count = 2
[[udp]]
rate = "3Mbps"
pattern = "poisson"
rtt = "30ms"
"#;
    let with = base.replace(
        "[bottleneck]\n",
        "[bottleneck]\nreverse_loss = 0.0\nloss = 0\n",
    );
    let a = api::run(&api::parse(base, "toml").unwrap(), None).unwrap();
    let b = api::run(&api::parse(&with, "toml").unwrap(), None).unwrap();
    let key = |o: &RunOutput| -> Vec<(u64, u64, u64)> {
        o.summary
            .flows
            .iter()
            .map(|f| (f.bytes_delivered, f.drops, f.packets_sent))
            .collect()
    };
    assert_eq!(key(&a), key(&b));
    assert_eq!(b.summary.bottleneck.losses, Some(0));
    assert_eq!(a.summary.bottleneck.losses, None);
}
