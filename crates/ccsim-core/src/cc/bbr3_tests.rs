//! BBRv3 driven by hand-made rate samples. Every expectation is worked by hand from the
//! google/bbr `v3` branch's `tcp_bbr.c` (the function quoted in each test), not read off
//! this code's output.
use super::*;
use crate::cc::tests::state;

const MS: u64 = 1_000_000;

/// A fresh flow: cwnd 10, srtt = min RTT = 100 ms, MSS 1448, nothing delivered, t = 0.
fn start() -> (Bbr3, CcState) {
    let mut tp = state(10);
    tp.ssthresh = INFINITE_SSTHRESH;
    tp.delivered = 0;
    tp.in_flight = 0;
    tp.ecn_ok = false;
    let mut b = Bbr3::new(1);
    b.init(&mut tp);
    (b, tp)
}

/// One ACK at `now_ms` delivering `d` packets whose newest was sent when everything before
/// this ACK had been delivered (so every call starts a packet-timed round), over a 100 ms
/// interval (rate `d` per 100 ms), RTT 100 ms (= min RTT: the filters do not move); in
/// flight `prior_in_flight` before the ACK and `in_flight` after it.
fn round(
    b: &mut Bbr3,
    tp: &mut CcState,
    now_ms: u64,
    d: u32,
    prior_in_flight: u32,
    in_flight: u32,
) {
    round_with(b, tp, now_ms, d, prior_in_flight, in_flight, |_| {});
}

fn round_with(
    b: &mut Bbr3,
    tp: &mut CcState,
    now_ms: u64,
    d: u32,
    prior_in_flight: u32,
    in_flight: u32,
    edit: impl FnOnce(&mut RateSample),
) {
    let prior = tp.delivered;
    tp.now_ns = now_ms * MS;
    tp.delivered += u64::from(d);
    tp.delivered_mstamp_ns = tp.now_ns;
    tp.in_flight = in_flight;
    let mut rs = RateSample {
        prior_mstamp_ns: Some(0),
        prior_delivered: prior,
        delivered: i64::from(d),
        interval_ns: (100 * MS) as i64,
        rtt_ns: (100 * MS) as i64,
        acked_sacked: d,
        prior_in_flight,
        tx_in_flight: prior_in_flight,
        ..RateSample::default()
    };
    edit(&mut rs);
    b.cong_control(tp, &rs);
}

/// 100 packets per 100 ms: `bbr_calculate_bw_sample()` = DIV_ROUND_UP(100 << 24, 100000)
/// = 16778; `bbr_bdp()` at gain 1 = ceil(16778 x 100000 / 2^24) = 101 packets.
const BW_100: u32 = 16778;
const BDP_100: u32 = 101;

/// STARTUP at a constant 100 packets per 100 ms: `bbr_check_full_bw_reached()` takes
/// round 1's sample as full_bw (>= 1.25 x 0), then counts rounds 2, 3, 4 below 1.25 x
/// full_bw: full at round 4. With 150 in flight (> BDP) `bbr_check_drain()` stays in DRAIN.
fn to_drain() -> (Bbr3, CcState) {
    let (mut b, mut tp) = start();
    for k in 1..=4 {
        assert_eq!(b.mode(), Mode::Startup, "round {k}");
        round(&mut b, &mut tp, 100 * k, 100, 150, 150);
    }
    assert!(b.full_bw_reached());
    assert_eq!(b.mode(), Mode::Drain);
    assert_eq!(b.max_bw(), BW_100);
    // bbr_check_drain(): ssthresh = bbr_inflight(max_bw, 1) = max(BDP, 3 x tso goal 2, 4).
    assert_eq!(tp.ssthresh, BDP_100);
    (b, tp)
}

#[test]
fn phase_machine_down_cruise_refill_up_then_down_on_a_plateau() {
    let (mut b, mut tp) = to_drain();
    // Round 5: 80 in flight <= BDP: bbr_check_drain() enters PROBE_BW through
    // bbr_start_bw_probe_down() (ack_phase PROBE_STOPPING, new round). In the same ACK
    // bbr_adapt_upper_bounds() sees PROBE_STOPPING at a round start: ack_phase INIT. The
    // DOWN case: bbr_check_time_to_cruise(prior in flight 120 > bbr_inflight(bw, 1) = 101)
    // is false: DOWN holds.
    round(&mut b, &mut tp, 500, 100, 120, 80);
    assert_eq!((b.mode(), b.cycle_idx()), (Mode::ProbeBw, Phase::Down));
    assert_eq!(b.ack_phase(), AckPhase::Init);
    assert_eq!(b.pacing_gain(), BBR_UNIT * 91 / 100, "DOWN paces at 0.91");
    let wait_us = b.probe_wait_us();
    // Round 6: 90 in flight <= min(inflight_with_headroom (none: inflight_hi unset), 101):
    // CRUISE.
    round(&mut b, &mut tp, 600, 100, 90, 90);
    assert_eq!(b.cycle_idx(), Phase::Cruise);
    assert_eq!(b.pacing_gain(), BBR_UNIT);
    // CRUISE -> REFILL by bbr_check_time_to_probe_bw(): the wall clock (probe_wait_us from
    // the DOWN start at 500 ms: 2-3 s) comes before min(63, BDP) = 63 rounds (6.3 s).
    let refill_at_ms = (500_000 + wait_us) / 1000 / 100 * 100 + 100;
    let mut t = 700;
    while t < refill_at_ms {
        round(&mut b, &mut tp, t, 100, 90, 90);
        assert_eq!(
            b.cycle_idx(),
            Phase::Cruise,
            "t = {t} ms (wait {wait_us} µs)"
        );
        t += 100;
    }
    round(&mut b, &mut tp, t, 100, 90, 90);
    assert_eq!(b.cycle_idx(), Phase::Refill, "t = {t} ms");
    assert_eq!(b.ack_phase(), AckPhase::Refilling);
    assert_eq!(
        b.bw_lo(),
        UNSET,
        "bbr_start_bw_probe_refill() resets the lower bounds"
    );
    // REFILL lasts one round: the next round start enters UP (bw_probe_samples = 1).
    t += 100;
    round(&mut b, &mut tp, t, 100, 90, 90);
    assert_eq!(b.cycle_idx(), Phase::Up);
    assert_eq!(b.ack_phase(), AckPhase::ProbeStarting);
    assert_eq!(b.pacing_gain(), BBR_UNIT * 5 / 4);
    assert!(b.bw_probe_samples);
    // UP at the same rate: bbr_check_full_bw_reached() counts rounds below 1.25 x full_bw
    // (reset to this sample by bbr_start_bw_probe_up()); the third sets full_bw_now and
    // the UP case ends the probe: DOWN. The first UP round moves ack_phase to FEEDBACK.
    for k in 1..=2 {
        t += 100;
        round(&mut b, &mut tp, t, 100, 90, 90);
        assert_eq!(b.cycle_idx(), Phase::Up, "UP round {k}");
        assert_eq!(b.ack_phase(), AckPhase::ProbeFeedback);
    }
    t += 100;
    round(&mut b, &mut tp, t, 100, 90, 90);
    assert_eq!(b.cycle_idx(), Phase::Down);
    assert_eq!(b.ack_phase(), AckPhase::ProbeStopping);
    assert!(!b.prev_probe_too_high);
}

/// Into PROBE_UP as above (returns the time of the last round).
fn to_probe_up() -> (Bbr3, CcState, u64) {
    let (mut b, mut tp) = to_drain();
    round(&mut b, &mut tp, 500, 100, 80, 80);
    let mut t = 500;
    while b.cycle_idx() != Phase::Up {
        t += 100;
        round(&mut b, &mut tp, t, 100, 90, 90);
        assert!(t < 4000);
    }
    (b, tp, t)
}

#[test]
fn loss_above_two_percent_in_probe_up_cuts_inflight_hi_and_goes_down() {
    let (mut b, mut tp, t) = to_probe_up();
    assert_eq!(b.inflight_hi(), UNSET);
    let cwnd = tp.cwnd;
    assert!(cwnd >= BDP_100, "cwnd {cwnd}");
    // An ACK whose sample (tx_in_flight 100) lost 5 packets: bbr_is_inflight_too_high():
    // 5 > 100 x 5 >> 8 = 1. bbr_handle_inflight_too_high() (bw_probe_samples set):
    // inflight_hi = max(tx_in_flight 100, bbr_target_inflight() x (256 - 76) >> 8 =
    // min(101, cwnd) x 180 >> 8 = 71) = 100, then PROBE_DOWN.
    round_with(&mut b, &mut tp, t + 10, 10, 100, 100, |rs| {
        rs.lost = 5;
        rs.tx_in_flight = 100;
        rs.losses = 5;
    });
    assert_eq!(b.inflight_hi(), 100);
    assert_eq!(b.cycle_idx(), Phase::Down);
    assert!(b.prev_probe_too_high);
    assert!(!b.bw_probe_samples, "react once per probe");
}

#[test]
fn is_inflight_too_high_at_two_percent_loss_and_half_ce() {
    let (mut b, _tp) = start();
    let rs = |lost: i64, tx: u32, delivered: i64, ce: i64| RateSample {
        lost,
        tx_in_flight: tx,
        delivered,
        delivered_ce: ce,
        ..RateSample::default()
    };
    // loss_thresh = 256 x 2 / 100 = 5: the limit is tx_in_flight x 5 >> 8.
    assert!(
        !b.is_inflight_too_high(&rs(1, 100, 0, 0)),
        "100 x 5 >> 8 = 1"
    );
    assert!(b.is_inflight_too_high(&rs(2, 100, 0, 0)));
    assert!(
        !b.is_inflight_too_high(&rs(19, 1000, 0, 0)),
        "5000 >> 8 = 19"
    );
    assert!(b.is_inflight_too_high(&rs(20, 1000, 0, 0)));
    assert!(
        !b.is_inflight_too_high(&rs(5, 0, 0, 0)),
        "no tx_in_flight: no verdict"
    );
    // CE counts only for an ECN-eligible flow: ecn_thresh = 128, limit delivered x 128 >> 8.
    assert!(!b.is_inflight_too_high(&rs(0, 100, 10, 9)));
    b.ecn_eligible = true;
    assert!(
        !b.is_inflight_too_high(&rs(0, 100, 10, 5)),
        "10 x 128 >> 8 = 5"
    );
    assert!(b.is_inflight_too_high(&rs(0, 100, 10, 6)));
}

#[test]
fn inflight_hi_from_lost_skb_solves_for_the_crossing_point() {
    let (b, _tp) = start();
    let rs = |lost: i64, tx: u32| RateSample {
        lost,
        tx_in_flight: tx,
        ..RateSample::default()
    };
    // tx_in_flight 101, lost 3: inflight_prev 100, lost_prev 2, loss_budget =
    // (100 x 5 + 255) >> 8 = 2 <= lost_prev: lost_prefix 0, inflight_hi 100.
    assert_eq!(b.inflight_hi_from_lost_skb(&rs(3, 101)), 100);
    // tx_in_flight 201, lost 2: prev 200, lost_prev 1, budget (1000 + 255) >> 8 = 4,
    // lost_prefix = (4 - 1) << 8 / (256 - 5) = 768 / 251 = 3: 203.
    assert_eq!(b.inflight_hi_from_lost_skb(&rs(2, 201)), 203);
    // Nothing in flight before the skb: ~0U.
    assert_eq!(b.inflight_hi_from_lost_skb(&rs(1, 0)), UNSET);
}

#[test]
fn adapt_lower_bounds_cuts_by_beta_and_by_ecn_alpha_but_not_while_probing() {
    let (mut b, mut tp) = start();
    tp.cwnd = 100;
    b.mode = Mode::ProbeBw;
    b.cycle_idx = Phase::Down;
    b.bw_hi = [1000, 0];
    // Loss round: bbr_init_lower_bounds(true): bw_lo = max_bw 1000, inflight_lo = cwnd
    // 100; bbr_loss_lower_bounds(): x (256 - 76) / 256, not below the latest round's.
    b.loss_in_round = true;
    b.bw_latest = 500;
    b.inflight_latest = 50;
    b.adapt_lower_bounds(&tp);
    // 1000 x 180 >> 8 = 703 and 100 x 180 >> 8 = 70.
    assert_eq!(b.bw_lo, (1000 * 180) >> 8);
    assert_eq!(b.inflight_lo, (100 * 180) >> 8);
    // Next lossy round: 70 x 180 >> 8 = 49 < inflight_latest 60: 60; 703 x 180 >> 8 = 494
    // < bw_latest 600: 600.
    b.inflight_latest = 60;
    b.bw_latest = 600;
    b.adapt_lower_bounds(&tp);
    assert_eq!((b.bw_lo, b.inflight_lo), (600, 60));
    // ECN round (alpha 1.0): bbr_ecn_cut() = 256 - (256 x 85 >> 8) = 171; inflight_lo =
    // 60 x 171 >> 8 = 40; bw_lo unchanged.
    b.loss_in_round = false;
    b.ecn_in_round = true;
    b.adapt_lower_bounds(&tp);
    assert_eq!((b.bw_lo, b.inflight_lo), (600, 40));
    // Both at once from fresh bounds: loss gives max(50, 70) = 70, ECN 100 x 171 >> 8 = 66:
    // the lower, 66.
    b.reset_lower_bounds();
    b.loss_in_round = true;
    b.inflight_latest = 50;
    b.bw_latest = 0;
    b.adapt_lower_bounds(&tp);
    assert_eq!(b.inflight_lo, 66);
    // While probing (UP, REFILL, STARTUP) the bounds are left alone.
    b.reset_lower_bounds();
    for (mode, phase) in [
        (Mode::ProbeBw, Phase::Up),
        (Mode::ProbeBw, Phase::Refill),
        (Mode::Startup, Phase::Up),
    ] {
        b.mode = mode;
        b.cycle_idx = phase;
        b.adapt_lower_bounds(&tp);
        assert_eq!((b.bw_lo, b.inflight_lo), (UNSET, UNSET));
    }
}

#[test]
fn ecn_alpha_is_an_ewma_with_gain_one_sixteenth_for_eligible_flows_only() {
    let (mut b, mut tp) = start();
    tp.ecn_ok = true;
    // min RTT 100 ms > bbr_ecn_max_rtt_us 5 ms: not eligible, alpha stays at its init 1.0.
    tp.delivered = 100;
    tp.delivered_ce = 50;
    assert_eq!(b.update_ecn_alpha(&tp), None);
    assert_eq!(b.ecn_alpha(), BBR_UNIT);
    // At 1 ms it is. Round 1: 100 delivered, 50 with CE: ce_ratio = 50 << 8 / 100 = 128;
    // alpha = (256 - 16) x 256 >> 8 + 16 x 128 >> 8 = 240 + 8 = 248.
    b.min_rtt_us = 1000;
    assert_eq!(b.update_ecn_alpha(&tp), Some(128));
    assert!(b.ecn_eligible);
    assert_eq!(b.ecn_alpha(), 248);
    // Round 2: 100 more, no CE: alpha = 240 x 248 >> 8 = 232.
    tp.delivered = 200;
    assert_eq!(b.update_ecn_alpha(&tp), Some(0));
    assert_eq!(b.ecn_alpha(), 232);
    // Round 3: all 100 CE: 240 x 232 >> 8 = 217, + 16 x 256 >> 8 = 16: 233.
    tp.delivered = 300;
    tp.delivered_ce = 150;
    assert_eq!(b.update_ecn_alpha(&tp), Some(256));
    assert_eq!(b.ecn_alpha(), 233);
    // Without ECN on the route (ecn_low = false) a flow is never eligible.
    let (mut c, mut tp) = start();
    c.cfg.ecn_low = false;
    tp.ecn_ok = true;
    c.min_rtt_us = 1000;
    tp.delivered = 100;
    assert_eq!(c.update_ecn_alpha(&tp), None);
}

#[test]
fn probe_wait_is_two_to_three_seconds_and_zero_or_one_round() {
    // bbr_pick_probe_wait(): rounds_since_probe = get_random_u32_below(2);
    // probe_wait_us = 2 s + get_random_u32_below(1 s).
    let (mut lo, mut hi) = (u64::MAX, 0);
    let mut rounds = [0u32; 2];
    for seed in 0..2000 {
        let (mut b, _) = start();
        b.seed_rng(stream(seed, StreamKind::Cc, 0));
        b.pick_probe_wait();
        assert!(b.rounds_since_probe() < 2);
        rounds[b.rounds_since_probe() as usize] += 1;
        let w = b.probe_wait_us();
        assert!((2_000_000..3_000_000).contains(&w), "{w}");
        lo = lo.min(w);
        hi = hi.max(w);
    }
    assert!(lo < 2_010_000 && hi > 2_990_000, "{lo}..{hi}");
    assert!(rounds.iter().all(|&n| n > 800), "{rounds:?}");
}

#[test]
fn parameters_take_the_sources_units_and_refuse_bad_values() {
    let d = Bbr3Config::default();
    // The source's constants.
    assert_eq!(d.beta, 76);
    assert_eq!(d.loss_thresh, 5);
    assert_eq!(d.ecn_factor, 85);
    assert_eq!(d.inflight_headroom, 38);
    assert_eq!(d.startup_pacing_gain, 710);
    assert_eq!(d.drain_gain, 88);
    assert_eq!(d.pacing_gain, [320, 232, 256, 256]);
    assert_eq!(TABLE.params.len(), 38);
    let path = "flows[0].cc";
    let mut p = Bbr3::new(1);
    let set = |b: &mut Bbr3, name: &str, v: &ParamValue| params::set(&TABLE, b, path, name, v);
    set(&mut p, "beta", &ParamValue::Number(0.3)).unwrap();
    set(&mut p, "loss_thresh", &ParamValue::Number(0.02)).unwrap();
    set(&mut p, "bw_probe_base", &ParamValue::Str("2s".into())).unwrap();
    set(&mut p, "probe_rtt_mode", &ParamValue::Str("200ms".into())).unwrap();
    assert_eq!(
        p.cfg, d,
        "the source's values written as numbers give its constants"
    );
    for (name, bad) in [
        ("loss_thresh", ParamValue::Number(1.0)),
        ("full_bw_cnt", ParamValue::Number(4.0)),
        ("bw_probe_base", ParamValue::Number(2.0)),
        ("probe_rtt_mode", ParamValue::Str("1.5ms".into())),
        ("ect1", ParamValue::Number(1.0)),
    ] {
        let e = set(&mut p, name, &bad).unwrap_err();
        assert_eq!(e.path, format!("{path}.{name}"));
        assert!(!e.message.contains('\n'));
    }
    assert!(set(&mut p, "nope", &ParamValue::Number(1.0)).is_err());
}
