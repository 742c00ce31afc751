//! Worked by hand from `tcp_prague.c` (units: α and the window in 2^-20).
use super::*;
use crate::cc::tests::state;

fn started(tp: &mut CcState) -> Prague {
    let mut cc = Prague::default();
    cc.init(tp);
    cc
}

/// One round of `w` packets delivered in one ACK, `ce` of them CE-marked.
fn round(cc: &mut Prague, tp: &mut CcState, w: u64, ce: u64) {
    tp.snd_una = tp.snd_nxt;
    tp.snd_nxt += w;
    tp.delivered += w;
    tp.delivered_ce += ce;
    cc.in_ack_event(tp, AckFlags::default());
}

/// Pacing (tcp_prague.c v0.6 `prague_update_pacing_rate`), by hand: MSS 1448 B,
/// cwnd 100 (in flight 100), srtt 20 ms: 1448 x 100 / 0.020 s = 7 240 000 B/s
/// (57.92 Mbit/s of payload, 100 % of cwnd per RTT); with 120 in flight the larger
/// counts: 8 688 000 B/s; with ssthresh 300 (cwnd < ssthresh/2) doubled: 17 376 000.
#[test]
fn pacing_rate_by_hand() {
    let mut tp = state(100);
    tp.srtt_ns = 20_000_000;
    let _cc = started(&mut tp);
    assert!(tp.paced, "Prague always paces");
    Prague::update_pacing_rate(&mut tp);
    assert_eq!(tp.pacing_rate, 7_240_000);
    tp.in_flight = 120;
    Prague::update_pacing_rate(&mut tp);
    assert_eq!(tp.pacing_rate, 8_688_000);
    tp.ssthresh = 300;
    Prague::update_pacing_rate(&mut tp);
    assert_eq!(tp.pacing_rate, 17_376_000);
}

/// cwnd 100 in congestion avoidance, 20 ms RTT; one round of 100 packets, 10 CE:
/// - growth counts the 90 unmarked packets: 90 x 2^20 / 100 = 943718 (0.9 packet),
///   frac_cwnd = 100.9;
/// - α (from 1, upscaled x16): 16 - 1 + 10/100 = 15.1, α = 15.1/16 = 0.94375;
/// - the ECN echo then cuts cwnd α/2: 100.9 x 0.94375 / 2 = 47.612, leaving 53.288,
///   ssthresh ceil = 54 (no halving);
/// - a loss halves what is left: 26.644, ssthresh 27.
#[test]
fn alpha_ewma_and_reductions_by_hand() {
    let mut tp = state(100);
    tp.srtt_ns = 20_000_000;
    let mut cc = started(&mut tp);
    assert_eq!(cc.alpha(), 1.0);
    round(&mut cc, &mut tp, 100, 10);
    assert!((cc.frac_cwnd() - 100.9).abs() < 1e-5, "{}", cc.frac_cwnd());
    assert!((cc.alpha() - 0.94375).abs() < 1e-5, "{}", cc.alpha());
    let ss = cc.ssthresh(&tp, ReductionCause::Ecn);
    assert!((cc.frac_cwnd() - 53.288).abs() < 1e-3, "{}", cc.frac_cwnd());
    assert_eq!(ss, 54);
    let ss = cc.ssthresh(&tp, ReductionCause::Loss);
    assert!((cc.frac_cwnd() - 26.644).abs() < 1e-3);
    assert_eq!(ss, 27);
}

/// α stays at 1 until a CE mark has been seen (`saw_ce`), and then decays by 1/16 per
/// round without marks: 1 → 15/16 → 225/256.
#[test]
fn alpha_waits_for_the_first_mark() {
    let mut tp = state(50);
    let mut cc = started(&mut tp);
    round(&mut cc, &mut tp, 50, 0);
    round(&mut cc, &mut tp, 50, 0);
    assert_eq!(cc.alpha(), 1.0);
    // A round with every packet marked: α = 1 still (16 - 1 + 1 = 16).
    round(&mut cc, &mut tp, 50, 50);
    assert_eq!(cc.alpha(), 1.0);
    round(&mut cc, &mut tp, 50, 0);
    assert!((cc.alpha() - 15.0 / 16.0).abs() < 1e-6);
    round(&mut cc, &mut tp, 50, 0);
    assert!((cc.alpha() - 225.0 / 256.0).abs() < 1e-6);
}

/// RTT independence (`rate`, target 25 ms): srtt 20 ms is 156 units of 128 µs, the
/// target 195; after 500 rounds the increase per ACKed packet is
/// (156^2 x 2^20 + 195^2/2) / 195^2 = 671089 / 2^20 ≈ (20/25)^2 = 0.64 of Reno's;
/// before, and with `rtt_scaling = "none"`, Reno's 2^20.
#[test]
fn rtt_scaled_additive_increase() {
    let mut tp = state(100);
    tp.srtt_ns = 20_000_000;
    let mut cc = started(&mut tp);
    assert_eq!(cc.ai_ack_increase(&tp), ONE_CWND);
    cc.round = 500;
    assert_eq!(cc.ai_ack_increase(&tp), 671_089);
    tp.srtt_ns = 30_000_000;
    assert_eq!(
        cc.ai_ack_increase(&tp),
        ONE_CWND,
        "above the target: unscaled"
    );
    let mut none = Prague::default();
    none.set_param("cc", "rtt_scaling", &ParamValue::Str("none".into()))
        .unwrap();
    none.init(&mut tp);
    none.round = 500;
    tp.srtt_ns = 20_000_000;
    assert_eq!(none.ai_ack_increase(&tp), ONE_CWND);
}

/// RFC 9331: ECT(1) with ECN; Linux's "prague-reno" (Reno halving) without.
#[test]
fn ect1_and_reno_fallback() {
    let mut tp = state(40);
    let cc = started(&mut tp);
    assert_eq!(cc.ecn_codepoint(), Ecn::Ect1);
    assert!(cc.needs_accurate_ecn());
    tp.ecn_ok = false;
    let mut cc = started(&mut tp);
    assert_eq!(cc.ssthresh(&tp, ReductionCause::Loss), 20);
    assert_eq!(cc.ecn_codepoint(), Ecn::Ect0);
}

#[test]
fn parameters_are_checked() {
    let mut cc = Prague::default();
    let e = cc
        .set_param("f.cc", "rtt_scaling", &ParamValue::Str("fast".into()))
        .unwrap_err();
    assert_eq!(e.path, "f.cc.rtt_scaling");
    let e = cc
        .set_param("f.cc", "rtt_target", &ParamValue::Str("1s".into()))
        .unwrap_err();
    assert_eq!(e.path, "f.cc.rtt_target");
    let e = cc
        .set_param("f.cc", "shift_g", &ParamValue::Number(4.0))
        .unwrap_err();
    assert!(e.message.contains("unknown parameter"), "{}", e.message);
    cc.set_param("f.cc", "rtt_target", &ParamValue::Str("10ms".into()))
        .unwrap();
    assert_eq!(cc.cfg.rtt_target, 78);
}
