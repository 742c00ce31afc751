use super::*;
use crate::cc::tests::state;
use crate::cc::INFINITE_SSTHRESH;

/// One round at `cwnd` with `samples` RTT samples of `rtt_ms` (base 100 ms seen
/// before), ended by an ACK beyond the round's start.
fn round(cc: &mut Vegas, tp: &mut CcState, rtt_us: u64, samples: u32) {
    for _ in 0..samples {
        cc.pkts_acked(
            tp,
            &AckSample {
                pkts_acked: 1,
                rtt_ns: Some(rtt_us * 1000),
                in_flight: tp.cwnd,
            },
        );
    }
    let mark = tp.snd_nxt;
    tp.snd_nxt += tp.cwnd as u64;
    tp.snd_una = mark + 1;
    cc.cong_avoid(tp, 1);
}

fn vegas_at(cwnd: u32) -> (Vegas, CcState) {
    let mut cc = Vegas::default();
    let mut tp = state(cwnd);
    tp.ssthresh = 20; // congestion avoidance
    cc.init(&mut tp);
    round(&mut cc, &mut tp, 100_000, 3); // baseRTT = 100 ms
    (cc, tp)
}

#[test]
fn congestion_avoidance_keeps_alpha_to_beta_packets_queued() {
    // cwnd 50, baseRTT 100.001 ms. diff = 50 (rtt - base) / base:
    for (rtt_us, expect) in [
        (103_000, 51), // diff 1 < alpha 2: +1
        (110_000, 50), // diff 4.99 -> 4: in [alpha, beta]: hold
        (111_000, 49), // diff 5 > beta 4: -1
    ] {
        let (mut cc, mut tp) = vegas_at(50);
        tp.cwnd = 50;
        round(&mut cc, &mut tp, rtt_us, 3);
        assert_eq!(tp.cwnd, expect, "rtt {rtt_us} µs");
    }
}

#[test]
fn too_few_samples_fall_back_to_reno() {
    let (mut cc, mut tp) = vegas_at(50);
    tp.cwnd = 50;
    tp.cwnd_cnt = 49;
    round(&mut cc, &mut tp, 111_000, 2);
    assert_eq!(
        tp.cwnd, 51,
        "Reno's additive increase, not Vegas's decrease"
    );
}

#[test]
fn slow_start_ends_at_the_actual_rate() {
    let mut cc = Vegas::default();
    let mut tp = state(64);
    tp.ssthresh = INFINITE_SSTHRESH;
    cc.init(&mut tp);
    round(&mut cc, &mut tp, 100_000, 3);
    tp.cwnd = 64;
    // minRTT 200 ms: diff 63 > gamma; cwnd = 64 x 100001 / 200001 (= 32 in integer
    // arithmetic) + 1 = 33, and ssthresh follows.
    round(&mut cc, &mut tp, 200_000, 3);
    assert_eq!(tp.cwnd, 33);
    assert_eq!(tp.ssthresh, 33);
}

#[test]
fn beta_change_mid_flow_is_observed() {
    let (mut cc, mut tp) = vegas_at(50);
    tp.cwnd = 50;
    cc.set_param("p", "beta", &ParamValue::Number(10.0))
        .unwrap();
    round(&mut cc, &mut tp, 111_000, 3);
    assert_eq!(tp.cwnd, 50, "diff 5 <= beta 10: hold");
    let e = cc
        .set_param("flows[0].cc", "alpha", &ParamValue::Number(1.5))
        .unwrap_err();
    assert_eq!(e.path, "flows[0].cc.alpha");
}

#[test]
fn vegas_pauses_outside_open() {
    let (mut cc, mut tp) = vegas_at(50);
    tp.cwnd = 50;
    cc.set_state(&mut tp, CaState::Disorder);
    tp.cwnd_cnt = 49;
    round(&mut cc, &mut tp, 111_000, 3);
    assert_eq!(tp.cwnd, 51, "Reno growth while not Open");
}
