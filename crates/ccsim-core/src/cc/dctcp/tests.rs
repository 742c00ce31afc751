use super::*;
use crate::cc::tests::state;

/// One observation window: `w` packets delivered, `marked` of them with ECE.
fn window(cc: &mut Dctcp, tp: &mut CcState, w: u64, marked: u64) {
    tp.snd_una = tp.snd_nxt;
    tp.snd_nxt += w;
    tp.delivered += w;
    tp.delivered_ce += marked;
    cc.in_ack_event(tp, AckFlags::default());
}

fn started(tp: &mut CcState) -> Dctcp {
    let mut cc = Dctcp::default();
    cc.init(tp);
    cc
}

#[test]
fn alpha_starts_at_one_and_decays_by_g_per_window() {
    let mut tp = state(40);
    let mut cc = started(&mut tp);
    assert_eq!(cc.alpha, 1024);
    window(&mut cc, &mut tp, 40, 0);
    assert_eq!(cc.alpha, 1024 - 64, "α(1 - 1/16)");
    // Within a window (snd_una below next_seq) nothing changes.
    tp.snd_una = tp.snd_nxt - 1;
    tp.delivered += 39;
    cc.in_ack_event(&mut tp, AckFlags::default());
    assert_eq!(cc.alpha, 960);
    // Unmarked windows drive α to exactly 0 (the snap when α >> 4 is 0).
    for _ in 0..200 {
        window(&mut cc, &mut tp, 40, 0);
    }
    assert_eq!(cc.alpha, 0);
}

#[test]
fn alpha_converges_to_the_marking_fraction() {
    // Fixed point of α' = α - floor(α/16) + floor(M·64/D): floor(α/16) = floor(64F),
    // so α ∈ [16 floor(64F), 16 floor(64F) + 15] / 1024.
    for (w, marked) in [(40u64, 10u64), (50, 5), (64, 48)] {
        let mut tp = state(w as u32);
        let mut cc = started(&mut tp);
        for _ in 0..300 {
            window(&mut cc, &mut tp, w, marked);
        }
        let lo = 16 * (64 * marked / w) as u32;
        assert!(
            (lo..=lo + 15).contains(&cc.alpha),
            "F = {marked}/{w}: α = {} not in [{lo}, {}]",
            cc.alpha,
            lo + 15
        );
        let f = marked as f64 / w as f64;
        assert!((cc.alpha() - f).abs() <= 16.0 / 1024.0);
    }
}

#[test]
fn ece_reduction_is_cwnd_times_one_minus_alpha_over_two() {
    let mut tp = state(100);
    let mut cc = started(&mut tp);
    // α = 1: halve.
    assert_eq!(cc.ssthresh(&tp, ReductionCause::Ecn), 50);
    cc.alpha = 256; // α = 0.25: 100 (1 - 0.125) = 87.5; Linux 100 - (25600 >> 11) = 88
    assert_eq!(cc.ssthresh(&tp, ReductionCause::Ecn), 88);
    cc.alpha = 0;
    assert_eq!(cc.ssthresh(&tp, ReductionCause::Ecn), 100);
}

#[test]
fn loss_halves_whatever_alpha() {
    let mut tp = state(100);
    let mut cc = started(&mut tp);
    cc.alpha = 100;
    // Recovery entry: the ssthresh hook, then set_state(Recovery) overrides.
    tp.ssthresh = cc.ssthresh(&tp, ReductionCause::Loss);
    cc.set_state(&mut tp, CaState::Recovery);
    assert_eq!(tp.ssthresh, 50);
    // RTO.
    let mut tp = state(60);
    tp.ssthresh = cc.ssthresh(&tp, ReductionCause::Loss);
    cc.cwnd_event(&mut tp, CaEvent::Loss);
    assert_eq!(tp.ssthresh, 30);
    // Undo restores the cwnd of the last reduction.
    tp.cwnd = 31;
    assert_eq!(cc.undo_cwnd(&tp), 60);
}

#[test]
fn without_ecn_it_is_reno() {
    let mut tp = state(100);
    tp.ecn_ok = false;
    let mut cc = started(&mut tp);
    cc.alpha = 0;
    assert_eq!(cc.ssthresh(&tp, ReductionCause::Ecn), 50);
    window(&mut cc, &mut tp, 100, 100);
    assert_eq!(cc.alpha, 0, "no α updates in dctcp-reno");
}

#[test]
fn shift_g_change_mid_flow_changes_the_gain() {
    let mut tp = state(40);
    let mut cc = started(&mut tp);
    cc.set_param("p", "shift_g", &ParamValue::Number(1.0))
        .unwrap();
    window(&mut cc, &mut tp, 40, 0);
    assert_eq!(cc.alpha, 512, "g = 1/2");
    let e = cc
        .set_param("flows[0].cc", "shift_g", &ParamValue::Number(11.0))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "flows[0].cc.shift_g: expected an integer in [0, 10], got 11"
    );
}

#[test]
fn alpha_on_init_sets_the_starting_alpha() {
    let mut cc = Dctcp::default();
    cc.set_param("p", "alpha_on_init", &ParamValue::Number(0.0))
        .unwrap();
    let mut tp = state(100);
    cc.init(&mut tp);
    assert_eq!(cc.ssthresh(&tp, ReductionCause::Ecn), 100);
}
