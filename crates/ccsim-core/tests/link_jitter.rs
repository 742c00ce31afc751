//! Issue 31: delay jitter on a link, checked at the receiver. Arrival order is read from
//! a pcap of the receiver's access link (a FIFO: it sends packets in the order they came
//! off the jittered link).
//!
//! - Reordering allowed (netem's default, `tfifo` files packets by `time_to_send`):
//!   constant-bit-rate packets `g` apart with uniform jitter on [0, w] are reordered in
//!   the sense of RFC 4737 §3.3 (a packet arrives after one sent later) with probability
//!   1 - (1/w) ∫_0^w ∏_{m ≥ 1, mg < x} (1 - (x - mg)/w) dx: packet k, jittered by x, is
//!   in order iff every later packet k+m draws at least x - mg. The measured fraction is
//!   within its tolerance of that model and not of the model at 0.9 w or 1.1 w.
//! - Reordering prevented (netem with `rate`: a packet leaves no earlier than the one
//!   before it): no packet arrives after one sent later, for UDP and for TCP.
//! - With reordering on a lossless path every retransmission is spurious: NewReno
//!   without SACK (three duplicate ACKs, RFC 6582) retransmits far more than with SACK
//!   and RACK (RFC 8985 §6.2: a reordering window before marking a segment lost).

use ccsim_core::api;
use ccsim_core::results::RunOutput;

fn run(text: &str) -> RunOutput {
    api::run(&api::parse(text, "toml").expect("valid scenario"), None).expect("runs")
}

/// (IP protocol, IP identification, TCP sequence number or 0) of every packet of the
/// capture, in capture order.
fn packets(pcap: &[u8]) -> Vec<(u8, u16, u32)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < pcap.len() {
        let kind = u32::from_le_bytes(pcap[at..at + 4].try_into().unwrap());
        let total = u32::from_le_bytes(pcap[at + 4..at + 8].try_into().unwrap()) as usize;
        if kind == 6 {
            let ip = &pcap[at + 8 + 20 + 14..at + total - 4];
            let id = u16::from_be_bytes([ip[4], ip[5]]);
            let seq = if ip[9] == 6 {
                let tcp = &ip[((ip[0] & 0xf) as usize) * 4..];
                u32::from_be_bytes(tcp[4..8].try_into().unwrap())
            } else {
                0
            };
            out.push((ip[9], id, seq));
        }
        at += total;
    }
    out
}

/// RFC 4737 §3.3's reordered packets among `seqs` (in arrival order): those arriving
/// below the next expected number (one above the largest seen). Repeats of a number
/// already seen (retransmissions of data that had arrived) are not counted.
fn reordered(seqs: &[u64]) -> (usize, usize) {
    let mut seen = std::collections::HashSet::new();
    let (mut next_exp, mut count, mut first) = (0u64, 0, 0);
    for &s in seqs {
        if !seen.insert(s) {
            continue;
        }
        first += 1;
        if s < next_exp {
            count += 1;
        } else {
            next_exp = s + 1;
        }
    }
    (count, first)
}

/// The UDP packets' numbers from their 16-bit IP identification, unwrapped (reordering
/// moves a packet by far less than 2^15 places).
fn udp_numbers(pcap: &[u8]) -> Vec<u64> {
    let mut last = 0u64;
    packets(pcap)
        .into_iter()
        .filter(|p| p.0 == 17)
        .map(|(_, id, _)| {
            let delta = (id as u64).wrapping_sub(last) as u16 as i16 as i64;
            last = (last as i64 + delta) as u64;
            last
        })
        .collect()
}

/// One CBR source of 1500-byte packets every 2 ms over a 100 Mbit/s bottleneck (no
/// queue builds), with `jitter` on the bottleneck; 100,000 packets.
fn cbr(jitter: &str) -> Vec<u64> {
    let out = run(&format!(
        r#"
duration = "200s"
[trace]
pcap = ["udp0.0-access-down"]
pcap_max_packets = 200000
[bottleneck]
rate = "100Mbps"
jitter = {jitter}
[[udp]]
rate = "6Mbps"
packet_size = "1500B"
rtt = "20ms"
"#
    ));
    udp_numbers(out.pcap.as_deref().expect("a capture"))
}

/// RFC 4737 reordered fraction for uniform jitter on [0, w] and spacing g (trapezoid
/// rule on 20,000 steps).
fn uniform_model(w: f64, g: f64) -> f64 {
    let n = 20_000;
    let f = |x: f64| {
        let mut p = 1.0;
        let mut m = 1.0;
        while m * g < x {
            p *= 1.0 - (x - m * g) / w;
            m += 1.0;
        }
        p
    };
    let h = w / n as f64;
    let integral: f64 = (0..n)
        .map(|i| 0.5 * h * (f(i as f64 * h) + f((i + 1) as f64 * h)))
        .sum();
    1.0 - integral / w
}

#[test]
fn uniform_jitter_reorders_as_the_model_says() {
    let seqs = cbr(r#"{ dist = { uniform = ["0ms", "10ms"] } }"#);
    let (count, n) = reordered(&seqs);
    assert!(n > 99_000, "{n} packets captured");
    let measured = count as f64 / n as f64;
    let model = uniform_model(10.0, 2.0);
    // Binomial standard error ~0.0016; neighbours' indicators are correlated (a packet
    // drawn late is overtaken by several), so allow 0.01, about 3 x a doubled error.
    let tolerance = 0.01;
    println!("reordered {measured:.4} of {n}, model {model:.4}");
    assert!(
        (measured - model).abs() < tolerance,
        "reordered {measured:.4}, model {model:.4}"
    );
    for off in [0.9, 1.1] {
        let wrong = uniform_model(10.0 * off, 2.0);
        assert!(
            (measured - wrong).abs() > tolerance,
            "a jitter of {off} x 10 ms ({wrong:.4}) is not told apart"
        );
    }
}

#[test]
fn with_reordering_prevented_udp_arrives_in_order() {
    let seqs = cbr(r#"{ dist = { uniform = ["0ms", "10ms"] }, reorder = false }"#);
    assert!(seqs.len() > 99_000);
    assert_eq!(reordered(&seqs).0, 0);
}

/// One NewReno transfer of 15 MB over 10 Mbit/s with jitter on the data direction. The
/// buffer holds more than the transfer, so nothing is ever dropped: every retransmission
/// is spurious. The data's TCP sequence numbers in arrival order, and the output (its
/// summary over the whole run).
fn tcp(jitter: &str, flow: &str) -> (Vec<u64>, RunOutput) {
    let out = run(&format!(
        r#"
duration = "30s"
measure = {{ start = "0s" }}
[trace]
pcap = ["tcp0.0-access-down"]
pcap_max_packets = 1000000
[bottleneck]
rate = "10Mbps"
queue = {{ kind = "droptail", limit = "20MB" }}
jitter = {jitter}
[[flows]]
cc = "newreno"
rtt = "40ms"
size = "15MB"
{flow}
"#
    ));
    let q = &out.summary.bottleneck;
    assert_eq!(q.drops, 0, "the path must be lossless");
    let seqs = packets(out.pcap.as_deref().expect("a capture"))
        .into_iter()
        .filter(|p| p.0 == 6)
        .map(|p| p.2 as u64)
        .collect();
    (seqs, out)
}

#[test]
fn with_reordering_prevented_tcp_data_arrives_in_order() {
    let normal = r#"{ dist = { normal = ["5ms", "3ms"] }, reorder = false }"#;
    let (seqs, _) = tcp(normal, "");
    let (count, n) = reordered(&seqs);
    assert!(n > 10_000, "{n} segments");
    assert_eq!(count, 0, "{count} of {n} segments arrived out of order");
    // The same jitter with reordering allowed does reorder (the check can fail).
    let (seqs, _) = tcp(&normal.replace("false", "true"), "");
    let (count, n) = reordered(&seqs);
    assert!(count * 20 > n, "only {count} of {n} reordered");
}

#[test]
fn reordering_makes_dupack_newreno_retransmit_spuriously_more_than_sack_rack() {
    let jitter = r#"{ dist = { uniform = ["0ms", "5ms"] } }"#;
    let retransmits_with = |jitter: &str, flow: &str| {
        let (_, out) = tcp(jitter, flow);
        let f = &out.summary.flows[0];
        (f.retransmits, f.fct_s.expect("the transfer completes"))
    };
    let retransmits = |flow: &str| retransmits_with(jitter, flow);
    let (dupack, dupack_fct) = retransmits("sack = false");
    let (sack, sack_fct) = retransmits("sack = true\nrack = true");
    // A jitter of exactly 0: the same path without reordering.
    let (none, _) = retransmits_with(r#"{ dist = "0ms" }"#, "sack = false");
    println!(
        "spurious retransmissions of a 15 MB transfer: NewReno without SACK {dupack} \
         (completed in {dupack_fct:.2} s), with SACK and RACK {sack} ({sack_fct:.2} s), \
         without jitter {none}"
    );
    assert!(dupack > 50, "{dupack}");
    // Three duplicate ACKs are reached whenever a segment is overtaken by three others;
    // SACK and RACK wait for a reordering window of time, which absorbs most of them
    // (not all: ccsim's sender has no DSACK undo nor Linux's adaptive `reordering`).
    assert!(dupack > 3 * sack, "no SACK {dupack}, SACK+RACK {sack}");
    assert!(sack_fct <= dupack_fct);
    assert_eq!(none, 0);
}

/// Jitter draws from a stream of its own: with Bernoulli loss on the same link, the UDP
/// packets that arrive are the same ones with and without jitter (the loss stream does
/// not move), only their order changes; and one seed gives byte-identical captures.
#[test]
fn jitter_moves_no_other_draw_and_one_seed_repeats() {
    let with_loss = |jitter: &str| {
        let out = run(&format!(
            r#"
duration = "20s"
[trace]
pcap = ["udp0.0-access-down"]
[bottleneck]
rate = "100Mbps"
loss = 0.05
{jitter}
[[udp]]
rate = "6Mbps"
packet_size = "1500B"
rtt = "20ms"
"#
        ));
        out.pcap.expect("a capture")
    };
    let plain = udp_numbers(&with_loss(""));
    let jitter = r#"jitter = { dist = { uniform = ["0ms", "10ms"] } }"#;
    let capture = with_loss(jitter);
    let jittered = udp_numbers(&capture);
    assert!(reordered(&jittered).0 > 0, "the jitter reorders");
    let sorted = |v: &[u64]| {
        let mut v = v.to_vec();
        v.sort_unstable();
        v
    };
    // Packets still in flight at the end differ by at most the jitter's reach.
    let arrived = |v: &[u64]| {
        sorted(v)
            .into_iter()
            .filter(|&k| k < 9_000)
            .collect::<Vec<_>>()
    };
    assert!(plain.len() > 9_000 * 9 / 10);
    assert_eq!(arrived(&plain), arrived(&jittered));
    assert_eq!(capture, with_loss(jitter), "same seed, same bytes");
}

/// netem's `reorder 25%` with `delay 10ms` (gap 1): a quarter of the packets skip the
/// 10 ms. A delayed packet is overtaken iff one of the next four (sent less than 10 ms
/// after it, 2 ms apart) skips, so the RFC 4737 reordered fraction is (1 - p)(1 - (1 -
/// p)^4) = 0.5127 for p = 0.25 (0.4468 at p = 0.2, 0.5468 at p = 0.3).
#[test]
fn reorder_probability_reorders_as_netem_reorder_does() {
    let seqs = cbr(r#"{ dist = "10ms", reorder_probability = 0.25 }"#);
    let (count, n) = reordered(&seqs);
    let measured = count as f64 / n as f64;
    let model = |p: f64| (1.0 - p) * (1.0 - (1.0 - p).powi(4));
    println!("reordered {measured:.4}, model {:.4}", model(0.25));
    assert!((measured - model(0.25)).abs() < 0.01, "{measured}");
    assert!((measured - model(0.25 * 0.9)).abs() > 0.01);
    assert!((measured - model(0.25 * 1.1)).abs() > 0.01);
}
