//! RED (Floyd & Jacobson 1993, Linux red.h / sch_red.c, ns-2 gentle) and step marking,
//! from hand-worked numbers.

mod qdisc_harness;

use ccsim_core::net::packet::Ecn;
use ccsim_core::qdisc::red::Red;
use ccsim_core::qdisc::Qdisc;
use qdisc_harness::*;

const MS: u64 = 1_000_000;

fn red(b: &Bench) -> &Red {
    match &b.q {
        Qdisc::Red(r) => r,
        other => panic!("not RED: {other:?}"),
    }
}

/// `avg ← avg + w_q·(q − avg)` with q the backlog before the arrival (bytes, Linux):
/// w_q = 0.002; arrivals find 0, 1500 and 3000 B → avg 0, 3, 3 + 0.002·2997 = 8.994.
#[test]
fn red_average_queue_update() {
    let mut b = Bench::with("red", &[], link_10mbps());
    b.advance(MS);
    b.enq(1500, 0, Ecn::NotEct, 0);
    assert_eq!(red(&b).avg(), 0.0);
    b.enq(1500, 0, Ecn::NotEct, 0);
    assert!((red(&b).avg() - 3.0).abs() < 1e-12);
    b.enq(1500, 0, Ecn::NotEct, 0);
    assert!((red(&b).avg() - 8.994).abs() < 1e-12);
}

/// Idle decay (Floyd & Jacobson): after the link has been idle for `t`, the average is
/// `avg·(1 − w_q)^m`, `m = t/(avpkt·8/rate)`. w_q = 0.5, avpkt 1000 B at 10 Mbps =
/// 0.8 ms. Three arrivals at 0 find 0, 1500, 3000 B → avg 0, 750, 1875. All three leave
/// at 0; the link is idle from the end of the last one's transmission, 1.2 ms. An
/// arrival at 2.8 ms has m = 1.6/0.8 = 2 → avg = 1875/4 = 468.75.
#[test]
fn red_idle_decay() {
    let mut b = Bench::with("red", &[("w_q", n(0.5))], link_10mbps());
    for _ in 0..3 {
        b.enq(1500, 0, Ecn::NotEct, 0);
    }
    assert_eq!(red(&b).avg(), 1875.0);
    for _ in 0..3 {
        b.deq();
    }
    b.advance(2_800_000);
    b.enq(1500, 0, Ecn::NotEct, 0);
    assert!((red(&b).avg() - 468.75).abs() < 1e-9, "{}", red(&b).avg());
}

/// `p_b` in the linear region and ns-2's gentle region: min 30 000 B, max 90 000 B,
/// max_p 0.02: avg 60 000 → 0.02·30 000/60 000 = 0.01; gentle at 135 000:
/// 0.02 + 0.98·45 000/90 000 = 0.51; at 180 000 (2·max) and beyond: 1.
/// Non-gentle (Linux): 1 from max_th on.
#[test]
fn red_drop_probability_linear_and_gentle() {
    let base = [
        ("min_th", s("30KB")),
        ("max_th", s("90KB")),
        ("max_p", n(0.02)),
    ];
    let bench = Bench::with("red", &base, link_10mbps());
    let r = red(&bench);
    assert_eq!(r.prob_b(29_999.0), 0.0);
    assert!((r.prob_b(60_000.0) - 0.01).abs() < 1e-15);
    assert_eq!(r.prob_b(90_000.0), 1.0);
    let mut g = base.to_vec();
    g.push(("gentle", b(true)));
    let bench = Bench::with("red", &g, link_10mbps());
    let r = red(&bench);
    assert!((r.prob_b(60_000.0) - 0.01).abs() < 1e-15);
    assert!((r.prob_b(90_000.0) - 0.02).abs() < 1e-15);
    assert!((r.prob_b(135_000.0) - 0.51).abs() < 1e-15);
    assert_eq!(r.prob_b(180_000.0), 1.0);
}

/// Count-based uniformisation (Floyd & Jacobson §7; Linux qcount/qR): at a constant
/// `p_b` the number of arrivals between marks is uniform on 1..1/p_b. With w_q = 1,
/// thresholds 5 and 15 packets, max_p 0.1 and the queue held at 10 packets,
/// p_b = 0.1·5/10 = 0.05: marks every 10.5 arrivals on average (fraction 0.095238),
/// not every 20 as with independent coins at p_b.
#[test]
fn red_marks_at_the_uniformised_rate() {
    let mut b = Bench::with(
        "red",
        &[
            ("unit", s("packets")),
            ("min_th", s("5p")),
            ("max_th", s("15p")),
            ("max_p", n(0.1)),
            ("w_q", n(1.0)),
            ("ecn", b(true)),
            ("limit", s("1000p")),
        ],
        link_10mbps(),
    );
    for _ in 0..10 {
        b.enq(1500, 0, Ecn::Ect0, 0);
    }
    let before = b.marked.len();
    let n_arrivals = 200_000;
    for _ in 0..n_arrivals {
        b.enq(1500, 0, Ecn::Ect0, 0);
        b.deq();
    }
    let f = (b.marked.len() - before) as f64 / n_arrivals as f64;
    assert!((f - 1.0 / 10.5).abs() < 0.002, "mark fraction {f}");
    assert!(b.dropped.is_empty());
}

/// Step marking (DCTCP's RED configuration): an arrival is CE-marked iff the queue it
/// finds is ≥ K; Not-ECT packets are dropped instead.
#[test]
fn step_marks_iff_queue_at_least_k() {
    let mut b = Bench::with(
        "red",
        &[
            ("mode", s("step")),
            ("threshold", s("5p")),
            ("unit", s("packets")),
        ],
        link_10mbps(),
    );
    let ids: Vec<_> = (0..7).map(|_| b.enq(1500, 0, Ecn::Ect0, 0)).collect();
    for (i, id) in ids.iter().enumerate() {
        assert_eq!(b.was_marked(*id), i >= 5, "packet {i} found {i} queued");
    }
    let x = b.enq(1500, 0, Ecn::NotEct, 0);
    assert!(b.was_dropped(x));
    // After draining below K, arrivals pass unmarked again.
    for _ in 0..4 {
        b.deq();
    }
    let y = b.enq(1500, 0, Ecn::Ect0, 0); // finds 3
    assert!(!b.was_marked(y));
    // In bytes: K = 6 KB with 1500 B packets → the 5th arrival (finds 6000 B) is marked.
    let mut b = Bench::with(
        "red",
        &[("mode", s("step")), ("threshold", s("6KB"))],
        link_10mbps(),
    );
    let ids: Vec<_> = (0..6).map(|_| b.enq(1500, 0, Ecn::Ect1, 0)).collect();
    let marked: Vec<bool> = ids.iter().map(|&i| b.was_marked(i)).collect();
    assert_eq!(marked, vec![false, false, false, false, true, true]);
}

/// Adaptive RED (Linux red_adaptative_algo, every 500 ms): min 5, max 15 packets →
/// targets 9 and 11. Average 12 > 11: max_p 0.02 → +min(0.01, 0.005) = 0.025 →
/// 0.03125 → 0.0390625. Then average 6 < 9: ×0.9.
#[test]
fn red_adaptive_max_p() {
    let mut b = Bench::with(
        "red",
        &[
            ("unit", s("packets")),
            ("min_th", s("5p")),
            ("max_th", s("15p")),
            ("w_q", n(1.0)),
            ("ecn", b(true)),
            ("adaptive", b(true)),
        ],
        link_10mbps(),
    );
    for _ in 0..13 {
        b.enq(1500, 0, Ecn::Ect0, 0);
    }
    assert_eq!(red(&b).avg(), 12.0);
    for (t, expect) in [(500, 0.025), (1000, 0.03125), (1500, 0.0390625)] {
        b.advance(t * MS);
        assert!((red(&b).max_p() - expect).abs() < 1e-15, "t {t}");
    }
    for _ in 0..7 {
        b.deq();
    }
    b.enq(1500, 0, Ecn::Ect0, 0); // finds 6 → avg 6
    b.advance(2000 * MS);
    assert!((red(&b).max_p() - 0.0390625 * 0.9).abs() < 1e-15);
}

#[test]
fn red_bad_parameters_name_the_key() {
    assert_eq!(
        build_err("red", &[("mode", s("step"))]).path,
        "bottleneck.queue.threshold"
    );
    assert_eq!(
        build_err("red", &[("min_th", s("50KB")), ("max_th", s("40KB"))]).path,
        "bottleneck.queue.min_th"
    );
    assert_eq!(
        build_err("red", &[("mode", s("x"))]).path,
        "bottleneck.queue.mode"
    );
    assert_eq!(
        build_err("red", &[("max_p", n(0.0))]).path,
        "bottleneck.queue.max_p"
    );
    assert_eq!(
        build_err("red", &[("w_q", n(2.0))]).path,
        "bottleneck.queue.w_q"
    );
    assert_eq!(
        build_err("red", &[("nodrop", b(true))]).path,
        "bottleneck.queue.nodrop"
    );
    assert_eq!(
        build_err("red", &[("threshold", s("5p"))]).path,
        "bottleneck.queue.threshold"
    );
}
