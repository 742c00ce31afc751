use super::*;
use crate::cc::tests::state;
use crate::cc::INFINITE_SSTHRESH;

const MS: u64 = 1_000_000;

/// Linux's constants.
const BETA: f64 = 717.0 / 1024.0;
const C: f64 = 410.0 / 1024.0;

/// Drive congestion avoidance for `dur_ns` with an ACK clock of `rtt_ns`: each round
/// delivers one ACK per packet of the round's starting cwnd, evenly spaced. Returns
/// (time since start, cwnd) after every round.
fn run_rounds(cc: &mut Cubic, tp: &mut CcState, rtt_ns: u64, rounds: u32) -> Vec<(f64, u32)> {
    let start = tp.now_ns;
    let mut out = vec![];
    for _ in 0..rounds {
        let n = tp.cwnd;
        let gap = rtt_ns / n as u64;
        for _ in 0..n {
            tp.now_ns += gap;
            tp.snd_una += 1;
            tp.snd_nxt += 1;
            cc.pkts_acked(
                tp,
                &AckSample {
                    pkts_acked: 1,
                    rtt_ns: Some(rtt_ns),
                    in_flight: tp.cwnd,
                },
            );
            cc.cong_avoid(tp, 1);
        }
        tp.now_ns = tp.now_ns - gap * n as u64 + rtt_ns;
        out.push(((tp.now_ns - start) as f64 / 1e9, tp.cwnd));
    }
    out
}

/// A CUBIC in congestion avoidance right after a loss at `w_max`, with minimum RTT
/// `rtt_ns` already measured.
fn after_loss(w_max: u32, rtt_ns: u64) -> (Cubic, CcState) {
    let mut cc = Cubic::default();
    let mut tp = state(w_max);
    tp.now_ns = 10_000 * MS;
    cc.init(&mut tp);
    cc.pkts_acked(
        &mut tp,
        &AckSample {
            pkts_acked: 1,
            rtt_ns: Some(rtt_ns),
            in_flight: w_max,
        },
    );
    let ss = cc.ssthresh(&tp, ReductionCause::Loss);
    tp.ssthresh = ss;
    tp.cwnd = ss; // end of the reduction (tcp_end_cwnd_reduction)
    (cc, tp)
}

fn w_cubic(t: f64, k: f64, w_max: f64) -> f64 {
    C * (t - k).powi(3) + w_max
}

/// Linux aims each ACK at the curve one minimum RTT ahead, with the curve's offset
/// truncated to whole packets (towards W_max), so the window at the end of the round
/// ending at t lies within one packet of [W(t), W(t + min_rtt)].
fn assert_on_curve(traj: &[(f64, u32)], k: f64, w_max: f64, rtt_s: f64) {
    for &(t, cwnd) in traj {
        let (a, b) = (w_cubic(t, k, w_max), w_cubic(t + rtt_s, k, w_max));
        let (lo, hi) = (a.min(b) - 1.0, a.max(b) + 1.0);
        assert!(
            (lo..=hi).contains(&(cwnd as f64)),
            "t = {t:.1} s: cwnd {cwnd} outside [{lo:.2}, {hi:.2}] (W_max {w_max}, K {k:.3})"
        );
    }
}

#[test]
fn ssthresh_and_w_max_follow_linux_constants() {
    let mut cc = Cubic::default();
    let tp = state(100);
    // 100 x 717 / 1024 = 70.02.
    assert_eq!(cc.ssthresh(&tp, ReductionCause::Loss), 70);
    assert_eq!(cc.w_max(), 100);
    // Linux treats an ECN echo exactly like a loss.
    assert_eq!(cc.ssthresh(&tp, ReductionCause::Ecn), 70);
    assert_eq!(beta_scale(BETA), 15, "Linux's precomputed beta_scale");
}

#[test]
fn window_follows_the_cubic_curve_after_a_loss() {
    // W_max = 100, RTT = min RTT = 100 ms: K = cbrt(100 x 0.3 / 0.4) = 4.2 s. The
    // Reno estimate (0.53 packets/RTT from 70) stays below the curve throughout.
    let rtt = 100 * MS;
    let (mut cc, mut tp) = after_loss(100, rtt);
    assert_eq!(tp.cwnd, 70);
    let w_max = 100.0;
    let k = ((w_max - 70.0) / C).cbrt();
    let traj = run_rounds(&mut cc, &mut tp, rtt, 90);
    assert_on_curve(&traj, k, w_max, 0.1);
    // The plateau: around t = K the window is at W_max.
    let at_k = traj.iter().find(|&&(t, _)| t >= k).unwrap();
    assert!((at_k.1 as f64 - w_max).abs() <= 1.0, "{at_k:?}");
    // Convex region beyond: W(9 s) = 100 + 0.4 x 4.78^3 = 144.
    let last = traj.last().unwrap();
    assert!(last.1 > 140, "{last:?}");
}

#[test]
fn fast_convergence_lowers_w_max_on_a_loss_below_it() {
    let rtt = 100 * MS;
    for (fc, expect_w_max) in [(true, 765u32), (false, 900)] {
        let (mut cc, mut tp) = after_loss(1000, rtt);
        cc.set_param("p", "fast_convergence", &ParamValue::Bool(fc))
            .unwrap();
        // Second loss at 900 < W_max = 1000: W_max = 900 (1 + 0.7) / 2 = 765.1.
        tp.cwnd = 900;
        let ss = cc.ssthresh(&tp, ReductionCause::Loss);
        assert_eq!(ss, 630, "900 x 717 / 1024");
        assert_eq!(cc.w_max(), expect_w_max);
        tp.ssthresh = ss;
        tp.cwnd = ss;
        // Observed: the next epoch follows the curve with the new W_max (K = 7.0 s with
        // fast convergence, 8.8 s without).
        let k = ((expect_w_max - ss) as f64 / C).cbrt();
        let traj = run_rounds(&mut cc, &mut tp, rtt, 80);
        assert_on_curve(&traj, k, expect_w_max as f64, 0.1);
    }
}

#[test]
fn reno_friendly_region_dominates_at_low_bdp() {
    // W_max = 10 at 10 ms: the curve needs K = cbrt(3 / 0.4) = 1.96 s to regain 3
    // packets; the Reno estimate gains cwnd / ((cwnd x 15) >> 3) ~ 0.53 packets per
    // 10 ms round (RFC 9438: 3 (1 - beta) / (1 + beta) = 0.53).
    let rtt = 10 * MS;
    let (mut cc, mut tp) = after_loss(10, rtt);
    assert_eq!(tp.cwnd, 7);
    let traj = run_rounds(&mut cc, &mut tp, rtt, 100);
    let slope = (traj[99].1 - traj[29].1) as f64 / 70.0;
    assert!(
        (slope - 8.0 / 15.0).abs() < 0.05,
        "slope {slope} packets/RTT"
    );
    // Without the Reno-friendly region the window stays on the curve, below W_max.
    let (mut cc, mut tp) = after_loss(10, rtt);
    cc.set_param("p", "tcp_friendliness", &ParamValue::Bool(false))
        .unwrap();
    let traj = run_rounds(&mut cc, &mut tp, rtt, 100);
    assert_on_curve(&traj, (3.0 / C).cbrt(), 10.0, 0.01);
    assert!(traj.last().unwrap().1 <= 10);
}

#[test]
fn rfc9438_alpha_switches_the_reno_estimate_to_one_packet_per_rtt() {
    let rtt = 10 * MS;
    let (mut cc, mut tp) = after_loss(10, rtt);
    cc.set_param("p", "rfc9438_friendly_alpha", &ParamValue::Bool(true))
        .unwrap();
    let traj = run_rounds(&mut cc, &mut tp, rtt, 100);
    // 0.53/RTT until W_est reaches cwnd_prior = 10 (about 6 rounds), then 1/RTT.
    let got = traj.last().unwrap().1 as f64;
    assert!(got > 95.0 && got < 106.0, "cwnd {got}");
    // Linux's estimate reaches about 7 + 0.53 x 100 = 60 (previous test).
}

#[test]
fn no_loss_yet_caps_growth_at_five_percent_per_rtt() {
    // HyStart ended slow start at 100 before any loss (W_max = 0): cnt <= 20.
    let mut cc = Cubic::default();
    let mut tp = state(100);
    cc.init(&mut tp);
    let traj = run_rounds(&mut cc, &mut tp, 100 * MS, 10);
    // 1.05^10 = 1.63 would be the cap; the Reno estimate is far below.
    let got = traj.last().unwrap().1;
    assert!((155..=165).contains(&got), "{got}");
}

#[test]
fn rto_resets_w_max_and_delay_min() {
    let (mut cc, mut tp) = after_loss(100, 100 * MS);
    assert_eq!(cc.w_max(), 100);
    cc.set_state(&mut tp, CaState::Loss);
    assert_eq!(cc.w_max(), 0);
    assert_eq!(cc.delay_min_us, 0);
}

#[test]
fn idle_time_shifts_the_epoch() {
    let rtt = 100 * MS;
    let (mut cc, mut tp) = after_loss(100, rtt);
    run_rounds(&mut cc, &mut tp, rtt, 5);
    let epoch = cc.epoch_start.unwrap();
    // The application goes idle: everything is ACKed, then 3 s later new data.
    cc.pkts_acked(
        &mut tp,
        &AckSample {
            pkts_acked: 1,
            rtt_ns: None,
            in_flight: 1,
        },
    );
    // The last data went out at this last ACK (the sender sets lsndtime).
    tp.lsndtime_ns = tp.now_ns;
    let last_send = tp.now_ns;
    tp.now_ns += 3000 * MS;
    cc.cwnd_event(&mut tp, CaEvent::TxStart);
    // Linux bictcp_cwnd_event(): the epoch moves by now - lsndtime (3000 jiffies).
    let shift = cc.epoch_start.unwrap() - epoch;
    let expect = (tp.now_ns - last_send) / MS;
    assert_eq!(shift, expect, "shift {shift} jiffies, idle {expect}");
}

fn sample(tp: &mut CcState, cc: &mut Cubic, rtt_ms: u64) {
    cc.pkts_acked(
        tp,
        &AckSample {
            pkts_acked: 1,
            rtt_ns: Some(rtt_ms * MS),
            in_flight: tp.cwnd,
        },
    );
}

#[test]
fn hystart_delay_detection_uses_linux_thresholds() {
    // delay_min = 100 ms: threshold = 100 + clamp(12.5, 4, 16) = 112.5 ms, after 8
    // samples in a round, at cwnd >= 16. ACKs 5 ms apart: no ACK train.
    for (rtt_ms, hystart, expect_exit) in
        [(113, true, true), (112, true, false), (113, false, false)]
    {
        let mut cc = Cubic::default();
        cc.set_param("p", "hystart", &ParamValue::Bool(hystart))
            .unwrap();
        let mut tp = state(32);
        tp.ssthresh = INFINITE_SSTHRESH;
        tp.snd_nxt = 32;
        cc.init(&mut tp);
        sample(&mut tp, &mut cc, 100);
        // Next round.
        tp.snd_una = 33;
        tp.snd_nxt = 64;
        for _ in 0..12 {
            tp.now_ns += 5 * MS;
            sample(&mut tp, &mut cc, rtt_ms);
        }
        let exited = tp.ssthresh == tp.cwnd;
        assert_eq!(exited, expect_exit, "rtt {rtt_ms} hystart {hystart}");
    }
}

#[test]
fn hystart_ack_train_ends_slow_start_after_half_the_min_rtt() {
    let mut cc = Cubic::default();
    cc.set_param("p", "hystart_detect", &ParamValue::Number(1.0))
        .unwrap();
    let mut tp = state(32);
    tp.ssthresh = INFINITE_SSTHRESH;
    cc.init(&mut tp);
    sample(&mut tp, &mut cc, 100);
    tp.snd_una = 33;
    tp.snd_nxt = 64;
    // A train of ACKs 1 ms apart from the round's first ACK (t = 1 ms): it fires once
    // it spans more than (100 ms + 1 ms cushion) / 2 = 50.5 ms, i.e. at t = 52 ms.
    let round_start = tp.now_ns;
    let mut fired_at = None;
    for i in 1..80u64 {
        tp.now_ns = round_start + i * MS;
        sample(&mut tp, &mut cc, 100);
        if tp.ssthresh == tp.cwnd {
            fired_at = Some(i);
            break;
        }
    }
    assert_eq!(fired_at, Some(52));
    // Trains with gaps beyond hystart_ack_delta (2 ms) never fire.
    let mut cc = Cubic::default();
    let mut tp = state(32);
    tp.ssthresh = INFINITE_SSTHRESH;
    cc.init(&mut tp);
    cc.set_param("p", "hystart_detect", &ParamValue::Number(1.0))
        .unwrap();
    sample(&mut tp, &mut cc, 100);
    tp.snd_una = 33;
    tp.snd_nxt = 64;
    for _ in 1..40u64 {
        tp.now_ns += 3 * MS;
        sample(&mut tp, &mut cc, 100);
    }
    assert_eq!(tp.ssthresh, INFINITE_SSTHRESH);
}

#[test]
fn abe_cubic_uses_beta_ecn_and_keeps_w_max() {
    let mut cc = Cubic::default();
    cc.set_param("p", "abe", &ParamValue::Bool(true)).unwrap();
    let tp = state(100);
    assert_eq!(cc.ssthresh(&tp, ReductionCause::Ecn), 85);
    assert_eq!(cc.w_max(), 100);
    assert_eq!(cc.ssthresh(&tp, ReductionCause::Loss), 70);
    let mut tp = state(100);
    tp.ssthresh = INFINITE_SSTHRESH;
    assert_eq!(
        cc.ssthresh(&tp, ReductionCause::Ecn),
        70,
        "end of slow start: loss beta (RFC 8511 §3)"
    );
}

#[test]
fn beta_change_mid_flow_changes_the_next_reduction_and_reno_slope() {
    let (mut cc, mut tp) = after_loss(100, 100 * MS);
    run_rounds(&mut cc, &mut tp, 100 * MS, 3);
    cc.set_param("p", "beta", &ParamValue::Number(0.5)).unwrap();
    let cwnd = tp.cwnd;
    assert_eq!(cc.ssthresh(&tp, ReductionCause::Loss), cwnd / 2);
    assert_eq!(cc.cfg.beta_scale, 8, "Reno slope 1 packet/RTT at beta 0.5");
}

#[test]
fn c_change_mid_epoch_restarts_the_curve_with_the_new_c() {
    let rtt = 100 * MS;
    let (mut a, mut tpa) = after_loss(100, rtt);
    let (mut b, mut tpb) = after_loss(100, rtt);
    run_rounds(&mut a, &mut tpa, rtt, 5);
    run_rounds(&mut b, &mut tpb, rtt, 5);
    b.set_param("p", "c", &ParamValue::Number(4.0)).unwrap();
    let ta = run_rounds(&mut a, &mut tpa, rtt, 15);
    let tb = run_rounds(&mut b, &mut tpb, rtt, 15);
    // Ten times C: the new curve from cwnd ~80 has K = cbrt(20 / 4) = 1.7 s, so at
    // t = 2 s the window is at W_max; with C = 0.4 (K = 4.2 s) W(2 s) = 95.7.
    assert!(tb.last().unwrap().1 >= 99, "{tb:?}");
    assert!(ta.last().unwrap().1 <= 97, "{ta:?}");
}

#[test]
fn bad_values_name_the_parameter() {
    let mut cc = Cubic::default();
    let e = cc
        .set_param("flows[0].cc", "beta", &ParamValue::Number(1.5))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "flows[0].cc.beta: expected a number in (0, 1), got 1.5"
    );
    let e = cc
        .set_param("flows[0].cc", "hystart_ack_delta", &ParamValue::Number(2.0))
        .unwrap_err();
    assert_eq!(e.path, "flows[0].cc.hystart_ack_delta");
    let e = cc
        .set_param("flows[0].cc", "hystart_detect", &ParamValue::Number(4.0))
        .unwrap_err();
    assert_eq!(e.path, "flows[0].cc.hystart_detect");
    let e = cc
        .set_param("flows[0].cc", "gamma", &ParamValue::Number(4.0))
        .unwrap_err();
    assert_eq!(e.path, "flows[0].cc.gamma");
}
