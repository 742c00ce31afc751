use super::*;
use crate::cc::tests::state;

const MS: u64 = 1_000_000;

/// One RTT of ACKs (one per packet, 1 packet each) at `rtt_ms`, flight = cwnd.
fn rtt_of_acks(cc: &mut Ledbat, tp: &mut CcState, rtt_ms: u64) {
    let n = tp.cwnd;
    for _ in 0..n {
        tp.now_ns += rtt_ms * MS / n as u64;
        cc.pkts_acked(
            tp,
            &AckSample {
                pkts_acked: 1,
                rtt_ns: Some(rtt_ms * MS),
                in_flight: tp.cwnd,
            },
        );
        cc.cong_avoid(tp, 1);
    }
}

fn started(cwnd: u32) -> (Ledbat, CcState) {
    let mut cc = Ledbat::default();
    cc.set_param("p", "init_cwnd", &ParamValue::Number(cwnd as f64))
        .unwrap();
    let mut tp = state(cwnd);
    tp.srtt_ns = 50 * MS;
    cc.init(&mut tp);
    // The base delay: 50 ms.
    rtt_of_acks(&mut cc, &mut tp, 50);
    (cc, tp)
}

#[test]
fn window_grows_one_packet_per_rtt_without_queueing() {
    let (mut cc, mut tp) = started(20);
    // off_target = 1, GAIN 1: +acked/cwnd per ACK, about +1 per RTT (like Reno).
    let w0 = cc.cwnd;
    for _ in 0..10 {
        rtt_of_acks(&mut cc, &mut tp, 50);
    }
    assert!((cc.cwnd - w0 - 10.0).abs() < 1.0, "{} -> {}", w0, cc.cwnd);
}

#[test]
fn window_holds_at_target_and_shrinks_above_it() {
    // Queueing delay = TARGET (100 ms): off_target = 0. (The first RTT at a new delay
    // still sees older, lower samples in the filter.)
    let (mut cc, mut tp) = started(20);
    rtt_of_acks(&mut cc, &mut tp, 150);
    let w0 = cc.cwnd;
    rtt_of_acks(&mut cc, &mut tp, 150);
    assert!((cc.cwnd - w0).abs() < 1e-9);
    // Twice the target: off_target = -1, -acked/cwnd per ACK, about -1 packet per RTT.
    rtt_of_acks(&mut cc, &mut tp, 250);
    let w1 = cc.cwnd;
    rtt_of_acks(&mut cc, &mut tp, 250);
    assert!((cc.cwnd - (w1 - 1.0)).abs() < 0.1, "{w1} -> {}", cc.cwnd);
    assert_eq!(tp.cwnd, cc.cwnd as u32);
}

#[test]
fn growth_is_limited_to_flightsize_plus_allowed_increase() {
    let (mut cc, mut tp) = started(20);
    // Application-limited: only 5 packets in flight.
    for _ in 0..100 {
        tp.now_ns += MS;
        cc.pkts_acked(
            &mut tp,
            &AckSample {
                pkts_acked: 1,
                rtt_ns: Some(50 * MS),
                in_flight: 5,
            },
        );
        cc.cong_avoid(&mut tp, 1);
    }
    assert_eq!(tp.cwnd, 6);
}

#[test]
fn base_delay_forgets_minima_older_than_base_history_minutes() {
    let (mut cc, mut tp) = started(20);
    // The path delay rises to 80 ms for 11 minutes: the 50 ms minimum ages out after
    // BASE_HISTORY = 10 one-minute buckets.
    let mut seen = vec![];
    for minute in 1..=11u64 {
        tp.now_ns = minute * MINUTE_NS + 1;
        cc.pkts_acked(
            &mut tp,
            &AckSample {
                pkts_acked: 1,
                rtt_ns: Some(80 * MS),
                in_flight: 20,
            },
        );
        seen.push(cc.queuing_delay_ns(&tp).unwrap() / MS);
    }
    assert_eq!(seen[..9], [30; 9], "old minimum still remembered");
    assert_eq!(seen[9..], [0, 0], "the 50 ms minute has rolled out");
}

#[test]
fn current_filter_is_the_minimum_of_recent_samples() {
    let (mut cc, mut tp) = started(20);
    for d in [90, 60, 70, 80] {
        tp.now_ns += MS;
        cc.update_current_delay(tp.now_ns, d * MS);
    }
    assert_eq!(cc.queuing_delay_ns(&tp), Some(10 * MS));
    // Samples older than one RTT (srtt 50 ms) no longer count.
    tp.now_ns += 60 * MS;
    cc.update_current_delay(tp.now_ns, 95 * MS);
    assert_eq!(cc.queuing_delay_ns(&tp), Some(45 * MS));
}

#[test]
fn target_change_mid_flow_is_observed() {
    let (mut cc, mut tp) = started(20);
    // 60 ms of queueing: below the 100 ms target the window grows ...
    let w0 = cc.cwnd;
    rtt_of_acks(&mut cc, &mut tp, 110);
    assert!(cc.cwnd > w0);
    // ... above a 25 ms target it shrinks.
    cc.set_param("p", "target", &ParamValue::Str("25ms".into()))
        .unwrap();
    let w1 = cc.cwnd;
    rtt_of_acks(&mut cc, &mut tp, 110);
    assert!(cc.cwnd < w1 - 1.0, "{w1} -> {}", cc.cwnd);
}

#[test]
fn loss_halves_with_min_cwnd_floor() {
    let mut cc = Ledbat::default();
    assert_eq!(cc.ssthresh(&state(30), ReductionCause::Loss), 15);
    assert_eq!(cc.ssthresh(&state(3), ReductionCause::Loss), 2);
}

#[test]
fn rfc_limits_are_enforced() {
    let mut cc = Ledbat::default();
    let e = cc
        .set_param("flows[0].cc", "target", &ParamValue::Str("200ms".into()))
        .unwrap_err();
    assert_eq!(e.path, "flows[0].cc.target");
    let e = cc
        .set_param("flows[0].cc", "gain", &ParamValue::Number(2.0))
        .unwrap_err();
    assert_eq!(e.path, "flows[0].cc.gain");
    assert!(e.message.ends_with("got 2"), "{e}");
}
