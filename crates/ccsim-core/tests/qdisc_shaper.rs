//! Token-bucket shaper (DOCSIS 3.0 sustained/peak/burst; Linux tbf with peakrate):
//! departure times of a burst, hand-computed.

mod qdisc_harness;

use ccsim_core::net::packet::Ecn;
use ccsim_core::qdisc::shaper::Shaped;
use ccsim_core::qdisc::{build_shaped, Qdisc};
use qdisc_harness::*;

/// Drain everything, retrying at `next_ready_ns` whenever the shaper holds the head;
/// return the departure times in µs (fractional).
fn departures(b: &mut Bench) -> Vec<f64> {
    let mut out = Vec::new();
    while b.q.len_packets() > 0 {
        match b.deq() {
            Some(_) => out.push(b.now as f64 / 1000.0),
            None => {
                let t =
                    b.q.next_ready_ns(b.now)
                        .expect("a held packet has a ready time");
                assert!(t > b.now);
                b.advance(t);
            }
        }
    }
    out
}

fn droptail() -> Qdisc {
    try_build("droptail", &[("limit", s("100p"))], link_10mbps()).unwrap()
}

/// Sustained 1 Mbps (125 B/ms), burst 10 000 B; peak 4 Mbps (500 B/ms) with a 1522 B
/// peak bucket; both full at t = 0; twenty 1000 B packets queued at 0.
/// - #1 at 0 (sustained 9000 B left, peak 522 B).
/// - #2 when the peak bucket holds 1000 B: 478/500 ms = 0.956 ms.
/// - #3..#12 every 2 ms (peak rate): 2.956, 4.956, ..., 20.956 ms. The sustained
///   bucket holds 10 000 + 125·t − 1000·(n−1) B before #n: 1619.5 B before #12.
/// - #13: peak-ready at 22.956 ms, but sustained has 869.5 B; 130.5 B more take
///   1.044 ms → 24 ms. From then on every 8 ms (sustained rate): 32, 40, ... ms.
#[test]
fn shaper_peak_then_sustained() {
    let q = build_shaped(droptail(), 1_000_000, Some(4_000_000), 10_000).unwrap();
    let mut b = Bench::new(q);
    for _ in 0..20 {
        b.enq(1000, 0, Ecn::NotEct, 0);
    }
    let t = departures(&mut b);
    let mut expected = vec![0.0, 956.0];
    for k in 3..=12 {
        expected.push(956.0 + 2000.0 * (k - 2) as f64);
    }
    for k in 13..=20 {
        expected.push(24_000.0 + 8000.0 * (k - 13) as f64);
    }
    assert_eq!(t, expected);
}

/// Without a peak rate the full bucket lets ten 1000 B packets leave at once, then one
/// every 8 ms; after an idle second the bucket is full again (capped at its depth).
#[test]
fn shaper_sustained_only_and_refill_cap() {
    let q = build_shaped(droptail(), 1_000_000, None, 10_000).unwrap();
    let mut b = Bench::new(q);
    for _ in 0..12 {
        b.enq(1000, 0, Ecn::NotEct, 0);
    }
    let t = departures(&mut b);
    let mut expected = vec![0.0; 10];
    expected.extend([8000.0, 16_000.0]);
    assert_eq!(t, expected);
    b.advance(2_000_000_000);
    match &b.q {
        Qdisc::Shaped(s) => assert_eq!(s.sustained_tokens_bytes(b.now), 10_000.0),
        _ => unreachable!(),
    }
    for _ in 0..11 {
        b.enq(1000, 0, Ecn::NotEct, 0);
    }
    let t = departures(&mut b);
    assert_eq!(t.len(), 11);
    assert!(t[..10].iter().all(|&x| x == 2_000_000.0));
    assert_eq!(t[10], 2_008_000.0);
}

#[test]
fn shaper_rejects_bad_parameters() {
    assert!(build_shaped(droptail(), 0, None, 10_000).is_err());
    assert!(build_shaped(droptail(), 1_000_000, None, 0).is_err());
    let e = build_shaped(droptail(), 5_000_000, Some(1_000_000), 10_000).unwrap_err();
    assert!(e.starts_with("peak:"), "{e}");
    assert!(Shaped::new(droptail(), 1_000_000, 10_000, Some(2_000_000), 0).is_err());
}

/// The held packet (Linux `tbf_dequeue` peeking a child whose `.peek` is
/// `qdisc_peek_dequeued`; ns-3 `QueueDisc::DoPeek`): CoDel decides on a packet when the
/// shaper first looks at it, not when the tokens release it.
///
/// Sustained 1 Mbps (125 B/ms), bucket 1000 B (one packet), no peak; CoDel 5 ms / 100 ms;
/// thirty 1000 B packets queued at t = 0. Packet #n is released at 8(n−1) ms, and right
/// after each release the shaper looks at the next head: CoDel dequeues #m at 8(m−2) ms
/// (#2 at 0) with sojourn 8(m−2) ms.
/// - #3 at 8 ms: sojourn 8 ms ≥ 5 ms, backlog > MTU: `first_above_time` = 108 ms.
/// - #16 at 112 ms ≥ 108 ms: `ok_to_drop`; CoDel enters dropping, drops #16 and returns
///   #17, which waits for tokens and leaves at 120 ms.
///
/// Were CoDel to decide at release (the peek-only shaper), #2's sojourn at 8 ms would
/// set `first_above_time` and #15 (at 112 ms) would be the first dropped.
#[test]
fn shaper_holds_a_packet_codel_dequeued_at_peek() {
    let codel = try_build(
        "codel",
        &[
            ("target", s("5ms")),
            ("interval", s("100ms")),
            ("limit", s("1000p")),
        ],
        link_10mbps(),
    )
    .unwrap();
    let q = build_shaped(codel, 1_000_000, None, 1000).unwrap();
    let mut b = Bench::new(q);
    let ids: Vec<_> = (0..30).map(|_| b.enq(1000, 0, Ecn::NotEct, 0)).collect();
    let mut out = Vec::new();
    // the first head conforms; the second is taken out of CoDel and held
    assert_eq!(b.deq(), Some(ids[0]));
    assert_eq!(b.deq(), None);
    match &b.q {
        Qdisc::Shaped(sh) => {
            assert_eq!(sh.inner().len_packets(), 28, "#2 left CoDel");
            assert_eq!(b.q.len_packets(), 29, "and is held by the shaper");
            assert_eq!(b.q.len_bytes(), 29_000);
        }
        _ => unreachable!(),
    }
    assert_eq!(b.q.peek(), Some(ids[1]));
    assert_eq!(b.q.next_ready_ns(0), Some(8_000_000));
    while b.now < 130_000_000 {
        match b.deq() {
            Some(id) => out.push((ids.iter().position(|&x| x == id).unwrap() + 1, b.now)),
            None => {
                let t =
                    b.q.next_ready_ns(b.now)
                        .expect("a held packet has a ready time");
                b.advance(t);
            }
        }
    }
    let first_drop = ids.iter().position(|&x| b.was_dropped(x)).map(|i| i + 1);
    assert_eq!(first_drop, Some(16));
    assert_eq!(b.dropped.len(), 1);
    let mut expected: Vec<(usize, u64)> =
        (2..=15).map(|n| (n, 8_000_000 * (n as u64 - 1))).collect();
    expected.push((17, 120_000_000));
    expected.push((18, 128_000_000));
    assert_eq!(out, expected);
}
