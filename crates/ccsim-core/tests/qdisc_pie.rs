//! PIE (RFC 8033 / Linux sch_pie.c, and paper 002) from hand-worked traces.

mod qdisc_harness;

use ccsim_core::net::packet::Ecn;
use ccsim_core::qdisc::pie::{Autotune, PieController, Variant};
use ccsim_core::qdisc::Qdisc;
use qdisc_harness::*;

const MS: u64 = 1_000_000;

fn ctrl(b: &Bench) -> &PieController {
    match &b.q {
        Qdisc::Pie(p) => p.controller(),
        Qdisc::PvPie(p) => p.controller(),
        other => panic!("not PIE: {other:?}"),
    }
}

fn ctrl_mut(b: &mut Bench) -> &mut PieController {
    match &mut b.q {
        Qdisc::Pie(p) => p.controller_mut(),
        Qdisc::PvPie(p) => p.controller_mut(),
        other => panic!("not PIE: {other:?}"),
    }
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-12 + 1e-9 * b.abs(), "{a} != {b}");
}

/// RFC 8033 §4.2 with Linux's tiers, timestamp delay (Linux default). Packets enqueued
/// at 0; dequeues set qdelay to the sojourn; updates every 15 ms (first_update 15 ms).
/// - 15 ms: qdelay 10 ms, old 0, p = 0 → α, β /2048:
///   Δ = (0.125·(0.010−0.015) + 1.25·(0.010−0))/2048 = 0.011875/2048 = 5.798339844e-6.
/// - 30 ms: qdelay 25 ms, old 10 ms, p ≈ 5.8e-6 (≥ 1e-6, < 1e-5) → /512:
///   Δ = (0.125·0.010 + 1.25·0.015)/512 = 0.02/512 = 3.90625e-5 → p = 4.486083984e-5.
/// - 45 ms: qdelay 40 ms, old 25 ms, p < 1e-4 → /128:
///   Δ = (0.125·0.025 + 1.25·0.015)/128 = 0.021875/128 = 1.708984375e-4
///   → p = 2.157592773e-4.
#[test]
fn pie_probability_updates_follow_the_rfc_table() {
    let mut b = Bench::with("pie", &[("first_update", s("15ms"))], link_10mbps());
    for _ in 0..100 {
        b.enq(1500, 0, Ecn::NotEct, 0);
    }
    b.advance(10 * MS);
    b.deq();
    b.advance(15 * MS);
    close(ctrl(&b).prob(), 0.011875 / 2048.0);
    b.advance(25 * MS);
    b.deq();
    b.advance(30 * MS);
    let p2 = 0.011875 / 2048.0 + 0.02 / 512.0;
    close(ctrl(&b).prob(), p2);
    b.advance(40 * MS);
    b.deq();
    b.advance(45 * MS);
    close(ctrl(&b).prob(), p2 + 0.021875 / 128.0);
    assert_eq!(ctrl(&b).qdelay_ns(), 40 * MS);
}

/// Linux caps an increase at 2% once p ≥ 10%, and adds 2% above 250 ms of delay,
/// driven through the controller's delay input (timestamp mode: `on_dequeue` sets
/// qdelay to the sojourn while a backlog remains):
/// - p = 0.2, qdelay 100 ms, old 100 ms: Δ = 0.125·0.085 = 0.010625 (< 2%) → 0.210625.
/// - qdelay 160 ms, old 100 ms: Δ = 0.125·0.145 + 1.25·0.06 = 0.093125 → capped to
///   0.02 → 0.230625.
/// - qdelay 300 ms, old 160 ms: Δ = 0.125·0.285 + 1.25·0.14 = 0.210625 → cap 0.02,
///   + 0.02 boost → 0.270625.
#[test]
fn pie_cap_and_boost_hand_worked() {
    let mut b = Bench::with("pie", &[("first_update", s("15ms"))], link_10mbps());
    let c = ctrl_mut(&mut b);
    c.on_dequeue(MS, 100 * MS, 1500, 30_000);
    c.update(30_000); // qdelay 100, old 0 (p = 0 → /2048); sets old = 100
    c.force_prob(0.2);
    c.on_dequeue(2 * MS, 100 * MS, 1500, 30_000);
    c.update(30_000);
    close(c.prob(), 0.210625);
    c.on_dequeue(3 * MS, 160 * MS, 1500, 30_000);
    c.update(30_000);
    close(c.prob(), 0.230625);
    c.on_dequeue(4 * MS, 300 * MS, 1500, 30_000);
    c.update(30_000);
    close(c.prob(), 0.270625);
}

/// Decay when idle: both delays 0 and no backlog → after the regular step,
/// p −= p/64 (Linux) or p ×= 0.98 (RFC 8033 §4.2 via `idle_decay = 0.02`):
/// p = 0.5 → 0.5 + 0.125·(0 − 0.015) = 0.498125 → ×63/64 = 0.49034180 (Linux),
/// ×0.98 = 0.4881625 (RFC).
#[test]
fn pie_decays_when_idle() {
    for (decay, expected) in [
        (None, 0.498125 * 63.0 / 64.0),
        (Some(0.02), 0.498125 * 0.98),
    ] {
        let mut params = vec![];
        if let Some(d) = decay {
            params.push(("idle_decay", n(d)));
        }
        let mut b = Bench::with("pie", &params, link_10mbps());
        ctrl_mut(&mut b).force_prob(0.5);
        b.advance(500 * MS); // Linux's first update, 500 ms after creation
        close(ctrl(&b).prob(), expected);
    }
}

/// Burst allowance (Linux timestamp mode): 150 ms, reduced by the time between
/// dequeues. With p = 1, no de-randomisation and the guards passed (backlog ≥ 2 MTU,
/// qdelay ≥ target/2), arrivals pass until the allowance is used up: dequeues every
/// 10 ms from 10 ms; the first sets the reference time, each later one takes 10 ms, so
/// the allowance is 150 − 10·14 = 10 ms after the dequeue at 150 ms and 0 after the one
/// at 160 ms.
#[test]
fn pie_burst_allowance_delays_early_drops() {
    let mut b = Bench::with(
        "pie",
        &[("derandomize", b(false)), ("first_update", s("10s"))],
        link_10mbps(),
    );
    for _ in 0..50 {
        b.enq(1500, 0, Ecn::NotEct, 0);
    }
    ctrl_mut(&mut b).force_prob(1.0);
    for k in 1..=15u64 {
        b.advance(10 * k * MS);
        b.deq();
    }
    assert_eq!(ctrl(&b).burst_allowance_ns(), 10 * MS);
    assert!(ctrl(&b).qdelay_ns() >= 7_500_000);
    let a = b.enq(1500, 0, Ecn::NotEct, 0);
    assert!(!b.was_dropped(a), "allowance left: no early drop");
    b.advance(160 * MS);
    b.deq();
    assert_eq!(ctrl(&b).burst_allowance_ns(), 0);
    let c = b.enq(1500, 0, Ecn::NotEct, 0);
    assert!(b.was_dropped(c), "allowance used up: p = 1 drops");
}

/// ECN threshold (Linux: mark only while p ≤ 10%): at p = 0.15 ECT packets selected
/// for drop are dropped when `ecn_drop_threshold` is on (Linux default), marked when
/// off (the ABE paper's setting); at p = 0.10 they are marked either way.
#[test]
fn pie_ecn_drop_threshold_switch() {
    for (thresh, p, expect_marks, expect_drops) in [
        (true, 0.15, false, true),
        (false, 0.15, true, false),
        (true, 0.10, true, false),
    ] {
        let mut b = Bench::with(
            "pie",
            &[
                ("ecn", b(true)),
                ("ecn_drop_threshold", b(thresh)),
                ("derandomize", b(false)),
                ("first_update", s("10s")),
                ("limit", s("100000p")),
            ],
            link_10mbps(),
        );
        for _ in 0..10 {
            b.enq(1500, 0, Ecn::Ect0, 0);
        }
        b.advance(10 * MS);
        b.deq(); // qdelay = 10 ms ≥ target/2
        let c = ctrl_mut(&mut b);
        c.force_prob(p);
        c.force_burst_ns(0);
        for _ in 0..2000 {
            b.enq(1500, 0, Ecn::Ect0, 0);
        }
        assert_eq!(!b.marked.is_empty(), expect_marks, "thresh {thresh} p {p}");
        assert_eq!(!b.dropped.is_empty(), expect_drops, "thresh {thresh} p {p}");
        // Selected at rate p either way.
        let selected = (b.marked.len() + b.dropped.len()) as f64 / 2000.0;
        assert!((selected - p).abs() < 0.03, "selected {selected}");
    }
}

/// Paper 002 §III-C departure-rate estimate and §III-B three-tier update (variant
/// pie2013, §IV parameters: ref_del 20 ms, T_update 15 ms, α 0.25, β 2.5,
/// dq_threshold 4500 B, ε = 1/8). 20 packets of 1500 B at t = 0, one departure every
/// 1.2 ms (10 Mbps):
/// - departure 0 (t = 0) leaves 28 500 B > 4500: cycle starts, dq_count = 1500;
///   departures 1, 2 → 3000, 4500 (not > 4500); departure 3 (3.6 ms) → 6000 > 4500:
///   dq_rate = 6000/3.6 ms = 1666.67 B/ms (first sample taken as is);
/// - departures 4–7: 6000 B over 4.8 ms = 1250 B/ms → avg = 7/8·1666.67 + 1/8·1250 =
///   1614.583 B/ms; departures 8–11: again 1250 → avg = 1569.010 B/ms;
/// - update at 15 ms: qlen = 7 × 1500 = 10 500 B → cur_del = 10500/1569.010 =
///   6.692116 ms; p = 0 < 1% → α/8, β/8: Δ = 0.03125·(0.006692116 − 0.020) +
///   0.3125·(0.006692116 − 0) = 0.001675415.
#[test]
fn pie2013_departure_rate_and_three_tier_update() {
    let mut b = Bench::with("pie", &[("variant", s("pie2013"))], link_10mbps());
    for _ in 0..20 {
        b.enq(1500, 0, Ecn::NotEct, 0);
    }
    for k in 0..=12u64 {
        b.advance(k * 1_200_000);
        b.deq();
    }
    let rate_bytes_per_ms = ctrl(&b).avg_dq_rate_bps() / 8.0 / 1000.0;
    assert!(
        (rate_bytes_per_ms - 1569.0104166666667).abs() < 1e-6,
        "{rate_bytes_per_ms}"
    );
    b.advance(15 * MS);
    let cur = 10_500.0 / 1569.0104166666667; // ms
    assert!((ctrl(&b).qdelay_ns() as f64 / 1e6 - cur).abs() < 1e-6);
    let dp = 0.25 / 8.0 * (cur / 1000.0 - 0.020) + 2.5 / 8.0 * (cur / 1000.0);
    assert!(
        (ctrl(&b).prob() - dp).abs() < 1e-9,
        "{} vs {dp}",
        ctrl(&b).prob()
    );
    assert!((dp - 0.001675415).abs() < 1e-9);
}

/// Paper 002 §III-D: burst_allow decreases by dq_int at each rate update and resets to
/// max_burst (50 ms) while p = 0 and both delays are below ref_del/2. Here p > 0 after
/// a forced value, so the allowance drains: 50 − 3.6 − 4.8 − 4.8 = 36.8 ms.
#[test]
fn pie2013_burst_allowance_follows_rate_updates() {
    let mut b = Bench::with("pie", &[("variant", s("pie2013"))], link_10mbps());
    for _ in 0..20 {
        b.enq(1500, 0, Ecn::NotEct, 0);
    }
    ctrl_mut(&mut b).force_prob(0.01);
    for k in 0..=12u64 {
        b.advance(k * 1_200_000);
        b.deq();
    }
    assert_eq!(ctrl(&b).burst_allowance_ns(), 36_800_000);
    // With p = 0 and no delay estimate yet, every rate update re-arms it.
    let mut b = Bench::with("pie", &[("variant", s("pie2013"))], link_10mbps());
    for _ in 0..20 {
        b.enq(1500, 0, Ecn::NotEct, 0);
    }
    for k in 0..=12u64 {
        b.advance(k * 1_200_000);
        b.deq();
    }
    assert_eq!(ctrl(&b).burst_allowance_ns(), 50 * MS);
}

/// Linux's integer departure-rate estimator (`dq_rate_estimator = true`):
/// QUEUE_THRESHOLD 16384 B, rate = (dq_count << 8) / dtime_ticks (64 ns ticks).
/// 40 × 1500 B at t = 0, one departure per 1.2 ms: the first measurement counts
/// departures 0–10 (16 500 B ≥ 16 384) over 12 ms = 187 500 ticks:
/// 4 224 000 / 187 500 = 22 (22.528 truncated); the next counts departures 11–21 over
/// 13.2 ms = 206 250 ticks: 20 (20.48) → avg = 22 − 22/8 + 20/8 = 22 − 2 + 2 = 22.
/// 22 B/tick/256 = 10 742 187.5 bps. The burst allowance loses each measurement's
/// 12 ms and 13.2 ms: 150 − 25.2 = 124.8 ms.
#[test]
fn pie_linux_rate_estimator_integer_arithmetic() {
    let mut b = Bench::with("pie", &[("dq_rate_estimator", b(true))], link_10mbps());
    for _ in 0..40 {
        b.enq(1500, 0, Ecn::NotEct, 0);
    }
    for k in 0..=10u64 {
        b.advance(k * 1_200_000);
        b.deq();
    }
    assert_eq!(ctrl(&b).avg_dq_rate_bps(), 10_742_187.5);
    assert_eq!(ctrl(&b).burst_allowance_ns(), 138 * MS);
    for k in 11..=21u64 {
        b.advance(k * 1_200_000);
        b.deq();
    }
    assert_eq!(ctrl(&b).avg_dq_rate_bps(), 10_742_187.5);
    assert_eq!(ctrl(&b).burst_allowance_ns(), 124_800_000);
}

/// Presets and explicit overrides.
#[test]
fn pie_presets() {
    let b = Bench::with("pie", &[("preset", s("abe-linux"))], link_10mbps());
    let c = &ctrl(&b).cfg;
    assert_eq!(c.variant, Variant::Rfc8033);
    assert_eq!(
        (c.target_ns, c.tupdate_ns, c.max_burst_ns),
        (20 * MS, 30 * MS, 100 * MS)
    );
    assert_eq!((c.alpha, c.beta), (0.125, 1.25));
    assert!(c.dq_rate_estimator && c.dq_threshold_bytes == 10_000);
    assert_eq!(c.autotune, Autotune::Pie2013);
    assert_eq!(c.idle_decay, 0.02);
    assert!(!c.derandomize && c.clamp_prob && c.ecn && !c.ecn_drop_threshold);
    let b = Bench::with(
        "pie",
        &[("preset", s("pie2013")), ("target", s("30ms"))],
        link_10mbps(),
    );
    let c = &ctrl(&b).cfg;
    assert_eq!(c.variant, Variant::Pie2013);
    assert_eq!(c.target_ns, 30 * MS);
    assert_eq!(
        (c.tupdate_ns, c.max_burst_ns, c.dq_threshold_bytes),
        (15 * MS, 50 * MS, 4500)
    );
    assert_eq!((c.alpha, c.beta), (0.25, 2.5));
    let b = Bench::with("pie", &[], link_10mbps());
    let c = &ctrl(&b).cfg;
    assert_eq!(
        (c.target_ns, c.tupdate_ns, c.first_update_ns, c.max_burst_ns),
        (15 * MS, 15 * MS, 500 * MS, 150 * MS)
    );
    assert_eq!(c.idle_decay, 1.0 / 64.0);
    assert!(c.derandomize && !c.clamp_prob && !c.ecn && c.ecn_drop_threshold);
}

#[test]
fn pie_bad_parameters_name_the_key() {
    let e = build_err("pie", &[("target", s("0ms"))]);
    assert_eq!(
        e.to_string(),
        "bottleneck.queue.target: expected a positive duration like \"5ms\", got \"0ms\""
    );
    assert_eq!(
        build_err("pie", &[("variant", s("x"))]).path,
        "bottleneck.queue.variant"
    );
    assert_eq!(
        build_err("pie", &[("variant", n(1.0))]).path,
        "bottleneck.queue.variant"
    );
    assert_eq!(
        build_err("pie", &[("preset", s("x"))]).path,
        "bottleneck.queue.preset"
    );
    assert_eq!(
        build_err("pie", &[("alpha", n(-1.0))]).path,
        "bottleneck.queue.alpha"
    );
    assert_eq!(
        build_err(
            "pie",
            &[("variant", s("pie2013")), ("dq_rate_estimator", b(false))]
        )
        .path,
        "bottleneck.queue.dq_rate_estimator"
    );
    assert_eq!(
        build_err("pie", &[("rate_ewma", n(0.5))]).path,
        "bottleneck.queue.rate_ewma"
    );
    assert_eq!(
        build_err("pie", &[("ecn_threshold", n(0.0))]).path,
        "bottleneck.queue.ecn_threshold"
    );
    assert_eq!(
        build_err("pvpie", &[("bytemode", b(true))]).path,
        "bottleneck.queue.bytemode"
    );
    assert_eq!(
        build_err("pvpie", &[("window", s("0s"))]).path,
        "bottleneck.queue.window"
    );
}
