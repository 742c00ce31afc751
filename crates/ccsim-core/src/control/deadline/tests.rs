use super::*;

fn params(escalate: bool) -> DeadlineParams {
    DeadlineParams {
        within_ns: 100_000_000_000,
        knob: Knob {
            name: "g".into(),
            low: 0.1,
            high: 120.0,
            unit: KnobUnit::Number,
        },
        interval_ns: 1_000_000_000,
        gain: 1.0,
        margin: 0.1,
        escalate,
        retune: true,
    }
}

const S: u64 = 1_000_000_000;

/// A trace worked by hand from the law in the module documentation: 90 MB to send
/// in 100 s (plan: 90 s, so 8 Mbit/s is needed at the start).
#[test]
fn decisions_on_a_hand_worked_trace() {
    let mut c = DeadlineController::new(params(false));
    assert_eq!(c.begin(10 * S, 90_000_000), 0.1);
    assert_eq!(c.plan_ns(), 100 * S);
    assert_eq!(c.next_tick_ns, 11 * S);
    // t = 11 s: 0.5 MB acked -> r = 4 Mbit/s; left 89.5 MB over 89 s:
    // r_req = 8 * 89.5e6 / 89 = 8.0449 Mbit/s; ln G = ln 0.1 + ln(8.0449 / 4)
    // -> G = 0.1 * 2.01124 = 0.201124.
    let d = c.tick(11 * S, 500_000, 0);
    assert!((d.rate_achieved_bps - 4e6).abs() < 1e-6);
    assert!((d.rate_required_bps - 8.0 * 89.5e6 / 89.0).abs() < 1e-3);
    assert!((d.knob - 0.1 * (8.0 * 89.5e6 / 89.0) / 4e6).abs() < 1e-9);
    assert_eq!(d.bytes_left, 89_500_000);
    // t = 12 s: 1.5 MB more -> r = 12 Mbit/s, r̂ = (4 + 12) / 2 = 8 Mbit/s;
    // left 88 MB over 88 s -> r_req = 8 Mbit/s exactly: the knob rests.
    let before = d.knob;
    let d = c.tick(12 * S, 2_000_000, 0);
    assert!((d.rate_achieved_bps - 8e6).abs() < 1e-6);
    assert!((d.rate_required_bps - 8e6).abs() < 1e-6);
    assert!((d.knob - before).abs() < 1e-12);
    // t = 13 s: 2 MB more -> r = 16, r̂ = 12 Mbit/s; left 86 MB over 87 s ->
    // r_req = 7.908 Mbit/s: ahead of plan, G falls by 12 / 7.908.
    let d = c.tick(13 * S, 4_000_000, 0);
    let req = 8.0 * 86e6 / 87.0;
    assert!((d.knob - before * req / 12e6).abs() < 1e-12);
    // Clamped at low: a long stretch far ahead keeps G at 0.1, not below.
    let d = c.tick(14 * S, 20_000_000, 0);
    assert!((d.knob - 0.1).abs() < 1e-12);
    // Past the plan's end with bytes left: G jumps to high.
    let d = c.tick(100 * S, 30_000_000, 0);
    assert_eq!(d.knob, 120.0);
    assert!(d.rate_required_bps.is_infinite());
    assert!(!d.escalated);
}

/// Escalation judges the trend r̄ (τ = max(4 s, 20 x 100 ms SRTT) = 4 s, so weight
/// 1/4 per 1 s interval): 90 MB, plan at 90 s.
#[test]
fn escalates_on_a_projected_miss_and_switches_back_when_well_ahead() {
    let mut c = DeadlineController::new(params(true));
    c.begin(0, 90_000_000);
    let srtt = 100_000_000;
    // t = 1: nothing acked: r̂ = r̄ = 0, the log error ~ ln(8 Mbit/s) drives G to 120;
    // short 1. t = 2: 0.8 Mbit/s, r̄ = 0.2 Mbit/s: short 2. t = 3: r̄ = 0.35: short 3.
    let d = c.tick(S, 0, srtt);
    assert_eq!(d.knob, 120.0);
    assert!(!d.escalated);
    let d = c.tick(2 * S, 100_000, srtt);
    assert!((d.rate_trend_bps - 0.2e6).abs() < 1e-6);
    assert!(!d.escalated, "two intervals are not enough");
    let d = c.tick(3 * S, 200_000, srtt);
    assert!((d.rate_trend_bps - 0.35e6).abs() < 1e-6);
    assert!(d.escalated && d.escalate_now);
    // Switching back needs the plan within what CDG at G = 120 achieved (0.35
    // Mbit/s at the switch): at t = 4 (50 MB acked, r_req = 3.72 Mbit/s) it is not,
    // though the trend is far above. Then 89.5, 89.6, 89.7 MB: r_req 0.047, 0.038,
    // 0.029 Mbit/s, trend well above 1.5 r_req: back at the third, G at 120.
    let d = c.tick(4 * S, 50_000_000, srtt);
    assert!((d.rate_trend_bps - 99.8625e6).abs() < 1.0);
    assert!(d.escalated && !d.escalate_now);
    let d = c.tick(5 * S, 89_500_000, srtt);
    assert!(d.escalated);
    let d = c.tick(6 * S, 89_600_000, srtt);
    assert!(d.escalated);
    let d = c.tick(7 * S, 89_700_000, srtt);
    assert!(!d.escalated && d.deescalate_now);
    assert_eq!(d.knob, 120.0);
    // The integrator resumes from there: well ahead, G falls.
    let d = c.tick(8 * S, 89_800_000, srtt);
    assert!(d.knob < 120.0);
    // A long RTT stretches the trend: τ = 20 x 1 s = 20 s, weight 1/20.
    let mut c = DeadlineController::new(params(true));
    c.begin(0, 90_000_000);
    c.tick(S, 0, S);
    let d = c.tick(2 * S, 1_000_000, S);
    assert!((d.rate_trend_bps - 8e6 / 20.0).abs() < 1e-6);
    // A new transfer starts afresh.
    assert_eq!(c.begin(10 * S, 1_000), 0.1);
    assert!(!c.escalated());
}
