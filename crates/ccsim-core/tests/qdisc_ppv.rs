//! Value-based disciplines: CSAQM (paper 001 §3) and PVPIE (paper 001 §2 / ANRW 2017),
//! from hand-worked histograms.

mod qdisc_harness;

use ccsim_core::net::packet::Ecn;
use ccsim_core::qdisc::csaqm::Csaqm;
use ccsim_core::qdisc::pvpie::PvPie;
use ccsim_core::qdisc::{LinkInfo, Qdisc};
use qdisc_harness::*;

const MS: u64 = 1_000_000;

/// C = 1 Mbps.
fn link_1mbps() -> LinkInfo {
    LinkInfo {
        rate_bps: 1_000_000,
        bdp_bytes: 12_500.0,
        mtu_bytes: 1500,
    }
}

fn csaqm(b: &Bench) -> &Csaqm {
    match &b.q {
        Qdisc::Csaqm(c) => c,
        other => panic!("not CSAQM: {other:?}"),
    }
}

fn pvpie(b: &mut Bench) -> &mut PvPie {
    match &mut b.q {
        Qdisc::PvPie(c) => c,
        other => panic!("not PVPIE: {other:?}"),
    }
}

/// CTV = argmin_v Σ_{i≥v} H_IN(i) ≤ l with l = C·D. C = 1 Mbps:
/// queue (bits) H_IN(50) = 12 000 + 4 000, H_IN(700) = 10 000, H_IN(900) = 8 000;
/// q = 34 000.
/// - D = 20 ms → l = 20 000: Σ from 900 = 8 000, from 700 = 18 000 ≤ l, from 50 =
///   34 000 > l → CTV = 51: both value-50 packets are marked, 700 and 900 pass.
/// - D = 10 ms → l = 10 000: from 700 = 18 000 > l → CTV = 701: 700 is marked too.
#[test]
fn csaqm_ctv_from_histogram() {
    for (d, ctv, marked_700) in [("20ms", 51u32, false), ("10ms", 701, true)] {
        let mut b = Bench::with("csaqm", &[("d", s(d))], link_1mbps());
        let p1 = b.enq(1500, 0, Ecn::Ect0, 50);
        let p2 = b.enq(500, 1, Ecn::Ect0, 50);
        let p3 = b.enq(1250, 2, Ecn::Ect0, 700);
        let p4 = b.enq(1000, 3, Ecn::Ect0, 900);
        assert_eq!(csaqm(&b).h_in(50), 16_000);
        assert_eq!(b.deq(), Some(p1));
        assert_eq!(csaqm(&b).ctv(), ctv);
        // Same instant: no recomputation within T_update (1 ms).
        assert_eq!(b.deq(), Some(p2));
        assert_eq!(b.deq(), Some(p3));
        assert_eq!(b.deq(), Some(p4));
        assert!(b.was_marked(p1) && b.was_marked(p2));
        assert_eq!(b.was_marked(p3), marked_700);
        assert!(!b.was_marked(p4));
        assert!(b.dropped.is_empty());
    }
}

/// Below-CTV Not-ECT packets are dropped and the dequeue runs again; q ≤ l gives
/// CTV = 0; the CTV is recomputed once T_update has passed.
#[test]
fn csaqm_drops_not_ect_below_ctv() {
    let mut b = Bench::with("csaqm", &[], link_1mbps()); // D = 20 ms: l = 20 000 bits
    let a = b.enq(1000, 0, Ecn::Ect0, 100);
    let c = b.enq(1000, 0, Ecn::NotEct, 200);
    let d = b.enq(1000, 0, Ecn::Ect0, 300);
    let e = b.enq(1000, 0, Ecn::Ect0, 400);
    // q = 32 000 > 20 000: from 400 8 000, from 300 16 000, from 200 24 000 → CTV 201.
    assert_eq!(b.deq(), Some(a));
    assert_eq!(csaqm(&b).ctv(), 201);
    assert!(b.was_marked(a));
    assert_eq!(b.deq(), Some(d)); // c (Not-ECT, 200 < 201) dropped on the way
    assert_eq!(b.dropped, vec![c]);
    assert!(!b.was_marked(d));
    // 1 ms later: q = 8 000 ≤ 20 000 → CTV 0.
    b.advance(MS);
    assert_eq!(b.deq(), Some(e));
    assert_eq!(csaqm(&b).ctv(), 0);
}

/// Buffer full (C·D_max = 1 Mbps × 40 ms = 40 000 bits = five 1000 B packets): arrivals
/// mark the bits of the smallest values below their own for dropping; the marked
/// packets are dropped at dequeue; an arrival with no smaller value to push out is
/// dropped. Queue 50, 10, 30, 20, 40; arrival 25 pushes out 10; arrival 5 is dropped;
/// arrival 60 pushes out 20 (10 is already gone from H_IN).
#[test]
fn csaqm_buffer_full_drops_smallest_values() {
    let mut b = Bench::with(
        "csaqm",
        &[("d_max", s("40ms")), ("d", s("40ms"))],
        link_1mbps(),
    );
    let ids: Vec<_> = [50u16, 10, 30, 20, 40]
        .iter()
        .map(|&v| b.enq(1000, 0, Ecn::Ect0, v))
        .collect();
    let p25 = b.enq(1000, 0, Ecn::Ect0, 25);
    assert_eq!((csaqm(&b).h_in(10), csaqm(&b).h_drop(10)), (0, 8000));
    let p5 = b.enq(1000, 0, Ecn::Ect0, 5);
    assert_eq!(b.dropped, vec![p5]);
    let p60 = b.enq(1000, 0, Ecn::Ect0, 60);
    assert_eq!((csaqm(&b).h_in(20), csaqm(&b).h_drop(20)), (0, 8000));
    let mut out = Vec::new();
    while let Some(id) = b.deq() {
        out.push(id);
    }
    assert_eq!(out, vec![ids[0], ids[2], ids[4], p25, p60]);
    assert_eq!(b.dropped, vec![p5, ids[1], ids[3]]);
    assert_eq!((csaqm(&b).h_drop(10), csaqm(&b).h_drop(20)), (0, 0));
    assert!(b.marked.is_empty(), "q never exceeded C·D = 40 000 bits");
}

/// Marking for drop moves bits, not packets: a 4000-bit shortfall marks half of a
/// 1000 B packet of value 10; that packet is dropped at dequeue and the 4000 bits
/// still in H_IN(10) are taken out (H_DROP(10) − 8000 < 0).
#[test]
fn csaqm_partial_bits() {
    let mut b = Bench::with(
        "csaqm",
        &[("d_max", s("16ms")), ("d", s("16ms"))],
        link_1mbps(),
    );
    let p10 = b.enq(1000, 0, Ecn::Ect0, 10);
    let p40 = b.enq(1000, 0, Ecn::Ect0, 40);
    let p30 = b.enq(500, 0, Ecn::Ect0, 30);
    assert_eq!((csaqm(&b).h_in(10), csaqm(&b).h_drop(10)), (4000, 4000));
    assert_eq!(b.deq(), Some(p40));
    assert_eq!(b.dropped, vec![p10]);
    assert_eq!((csaqm(&b).h_in(10), csaqm(&b).h_drop(10)), (0, 0));
    assert_eq!(b.deq(), Some(p30));
    assert_eq!(csaqm(&b).h_in(30), 0);
}

#[test]
fn csaqm_bad_parameters_name_the_key() {
    let e = build_err("csaqm", &[("d", s("20ms")), ("d_max", s("10ms"))]);
    assert_eq!(e.path, "bottleneck.queue.d_max");
    assert_eq!(e.message, "must be at least d (20ms), got 10ms");
    assert_eq!(
        build_err("csaqm", &[("d", s("0ms"))]).path,
        "bottleneck.queue.d"
    );
    assert_eq!(
        build_err("csaqm", &[("capacity", s("0Mbps"))]).path,
        "bottleneck.queue.capacity"
    );
    assert_eq!(
        build_err("csaqm", &[("target", s("5ms"))]).path,
        "bottleneck.queue.target"
    );
}

/// PVPIE's CTV is the p-quantile of the coded values that arrived in the last window
/// (100 ms): values 1..=100 at t = 0: p = 0.25 → k = ⌈25⌉ → the 25th smallest = 25;
/// p = 0.031 → k = 4 → 4; p = 0 → 0. At 150 ms, after values 201..=300 arrived at
/// 120 ms, the window holds only those: p = 0.25 → 225.
#[test]
fn pvpie_ctv_is_the_p_quantile_of_recent_values() {
    let mut b = Bench::with("pvpie", &[("first_update", s("10s"))], link_10mbps());
    for v in 1..=100u16 {
        b.enq(100, 0, Ecn::Ect0, v);
    }
    for (p, ctv) in [(0.25, 25u32), (0.031, 4), (0.0, 0), (1.0, 100)] {
        let q = pvpie(&mut b);
        q.controller_mut().force_prob(p);
        q.recompute_ctv(0);
        assert_eq!(q.ctv(), ctv, "p = {p}");
    }
    b.advance(120 * MS);
    for v in 201..=300u16 {
        b.enq(100, 0, Ecn::Ect0, v);
    }
    let q = pvpie(&mut b);
    q.controller_mut().force_prob(0.25);
    q.recompute_ctv(150 * MS);
    assert_eq!(q.ctv(), 225);
}

/// Packets below the CTV are marked if ECT, dropped otherwise; at or above pass.
#[test]
fn pvpie_acts_below_ctv_only() {
    let mut b = Bench::with("pvpie", &[("first_update", s("10s"))], link_10mbps());
    for v in 1..=100u16 {
        b.enq(1500, 0, Ecn::Ect0, v);
    }
    let q = pvpie(&mut b);
    q.controller_mut().force_prob(0.25);
    q.controller_mut().force_burst_ns(0);
    q.recompute_ctv(0);
    assert_eq!(q.ctv(), 25);
    let x = b.enq(1500, 0, Ecn::NotEct, 24);
    let y = b.enq(1500, 0, Ecn::NotEct, 25);
    let z = b.enq(1500, 0, Ecn::Ect0, 10);
    assert!(b.was_dropped(x));
    assert!(!b.was_dropped(y) && !b.was_marked(y));
    assert!(b.was_marked(z) && !b.was_dropped(z));
}
