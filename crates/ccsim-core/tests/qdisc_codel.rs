//! CoDel (RFC 8289, Linux codel_impl.h) and FQ-CoDel (RFC 8290, Linux sch_fq_codel.c)
//! from hand-worked traces.
//!
//! Trace set-up used below: 1000 packets of 1500 B all enqueued at t = 0, then one
//! dequeue every millisecond from t = 1 ms. Every dequeued packet's sojourn equals the
//! current time, so it is ≥ target (5 ms) from t = 5 ms on, whatever CoDel drops, and
//! the backlog stays far above one MTU.
//! - t = 5 ms: sojourn reaches target → `first_above_time = 5 + 100 = 105 ms`.
//! - t = 106 ms: `now > first_above_time` → drop, enter the dropping state, `count = 1`,
//!   `drop_next = now + interval/√1`.
//! - then a drop at the first dequeue with `now ≥ drop_next`, `count += 1`,
//!   `drop_next += interval/√count`.
//!
//! Exact control law (RFC 8289 pseudocode, `exact_sqrt = true`), drop_next in ms:
//! 106 + 100 = 206; 206 + 100/√2 = 276.710678; then adding 100/√3, 100/√4, 100/√5,
//! 100/√6, 100/√7: 334.445705, 384.445705, 429.167065, 469.991894, 507.788341. Drops
//! happen at the first whole millisecond at or after each: 106, 206, 277, 335, 385,
//! 430, 470, 508 ms.
//!
//! Linux (default): 1/√count is a Q0.16 Newton iterate: 0xFFFF at count 1 (interval ×
//! 0xFFFF/2¹⁶: drop_next = 106 + 99.998474 = 205.998474 ms), then 0x8001 (0.50002) at
//! count 2 (+50.001525 → 255.999999), 0x9000 (0.5625) at 3 (+56.25 → 312.249999),
//! 0x7CE0 at 4 (+48.779296 → 361.029295), 0x7107 at 5 (+44.151306 → 405.180601),
//! 0x6771 at 6 (+40.406799 → 445.587400), 0x600C at 7 (+37.518310 → 483.105710) →
//! drops at 106, 206, 256, 313, 362, 406, 446, 484 ms.

mod qdisc_harness;

use ccsim_core::net::packet::Ecn;
use qdisc_harness::*;

const MS: u64 = 1_000_000;

/// Load `n` packets at t = 0, then dequeue once per ms up to `until_ms`; return the
/// times (ms) at which dequeues dropped packets, once per drop.
fn drop_times(bench: &mut Bench, n: usize, ecn: Ecn, until_ms: u64) -> Vec<u64> {
    for _ in 0..n {
        bench.enq(1500, 0, ecn, 0);
    }
    let mut times = Vec::new();
    for ms in 1..=until_ms {
        bench.advance(ms * MS);
        let before = bench.dropped.len();
        bench.deq();
        for _ in before..bench.dropped.len() {
            times.push(ms);
        }
    }
    times
}

#[test]
fn codel_drop_times_exact_control_law() {
    let mut b = Bench::with("codel", &[("exact_sqrt", b(true))], link_10mbps());
    let t = drop_times(&mut b, 1000, Ecn::NotEct, 520);
    assert_eq!(t, vec![106, 206, 277, 335, 385, 430, 470, 508]);
}

#[test]
fn codel_drop_times_linux_newton() {
    let mut b = Bench::with("codel", &[], link_10mbps());
    let t = drop_times(&mut b, 1000, Ecn::NotEct, 490);
    assert_eq!(t, vec![106, 206, 256, 313, 362, 406, 446, 484]);
}

/// Re-entry (RFC 8289 §5.5 / Linux `codel_dequeue`): the first episode ends with
/// count 6 (drops at 106, 206, 277, 335, 385, 430 ms) and lastcount 1. Re-entering with
/// the last `drop_next` (469.99 ms) less than 16 intervals ago restarts at
/// count = 6 − 1 = 5, so the second drop comes interval/√5 = 44.72 ms after the first
/// (106 + 44.72 → the dequeue at 151 ms); re-entering later restarts at count 1
/// (second drop 100 ms later, at 206 ms).
#[test]
fn codel_reentry_reuses_count() {
    // Reload at 600 ms: re-entry at 706 ms, 706 − 470 = 236 ms < 1.6 s.
    // Reload at 2100 ms: re-entry at 2206 ms, 1736 ms > 1.6 s.
    for (reload_ms, second) in [(600u64, 151u64), (2100, 206)] {
        let mut b = Bench::with("codel", &[("exact_sqrt", b(true))], link_10mbps());
        let t = drop_times(&mut b, 1000, Ecn::NotEct, 430);
        assert_eq!(t, vec![106, 206, 277, 335, 385, 430]);
        // Drain everything at 431 ms (drop_next = 469.99 ms: no drop); the last
        // dequeues see a backlog ≤ 1 MTU and leave the dropping state.
        b.advance(431 * MS);
        while b.deq().is_some() {}
        let vars = match &b.q {
            ccsim_core::qdisc::Qdisc::Codel(c) => *c.vars(),
            _ => unreachable!(),
        };
        assert_eq!((vars.count, vars.lastcount, vars.dropping), (6, 1, false));
        // Reload and overload again: the first drop comes 106 ms after the reload.
        b.advance(reload_ms * MS);
        for _ in 0..1000 {
            b.enq(1500, 0, Ecn::NotEct, 0);
        }
        let mut times = Vec::new();
        for ms in reload_ms + 1..=reload_ms + 220 {
            b.advance(ms * MS);
            let before = b.dropped.len();
            b.deq();
            if b.dropped.len() > before {
                times.push(ms - reload_ms);
            }
        }
        assert_eq!(&times[..2], &[106, second], "reload at {reload_ms} ms");
    }
}

/// ECN: CoDel marks one packet per dequeue and returns it, where with drops it would
/// drop every packet whose drop_next has passed. Dequeue at 106 ms (enter the dropping
/// state), then once at 600 ms: exact drop_next values ≤ 600 ms are 206, 276.7, 334.4,
/// 384.4, 429.2, 470.0, 507.8, 543.1, 576.5 → nine drops in that one dequeue; with ECN,
/// one mark.
#[test]
fn codel_several_drops_but_one_mark_per_dequeue() {
    for (ecn, params) in [
        (Ecn::NotEct, vec![("exact_sqrt", b(true))]),
        (Ecn::Ect0, vec![("exact_sqrt", b(true)), ("ecn", b(true))]),
    ] {
        let mut bench = Bench::with("codel", &params, link_10mbps());
        for _ in 0..1000 {
            bench.enq(1500, 0, ecn, 0);
        }
        for ms in [1u64, 5, 106] {
            bench.advance(ms * MS);
            bench.deq();
        }
        let (d0, m0) = (bench.dropped.len(), bench.marked.len());
        assert_eq!((d0 + m0), 1, "entry at 106 ms drops or marks the head");
        bench.advance(600 * MS);
        let got = bench.deq().expect("a packet");
        if ecn == Ecn::NotEct {
            assert_eq!(bench.dropped.len() - d0, 9);
            assert_eq!(bench.ecn_of(got), Ecn::NotEct);
        } else {
            assert_eq!(bench.dropped.len(), 0);
            assert_eq!(bench.marked.len() - m0, 1);
            assert_eq!(bench.ecn_of(got), Ecn::Ce);
        }
    }
}

/// No drop while the backlog left after the dequeue is at most one MTU, however long
/// the sojourn.
#[test]
fn codel_does_not_drop_below_one_mtu() {
    let mut bench = Bench::with("codel", &[], link_10mbps());
    // Two packets: after removing the head, 1500 B ≤ mtu (1500) remain.
    for ms in 0..400u64 {
        bench.advance(ms * MS);
        while bench.q.len_packets() < 2 {
            bench.now = 0; // old packets: huge sojourn
            bench.enq(1500, 0, Ecn::NotEct, 0);
            bench.now = ms * MS;
        }
        bench.deq();
    }
    assert!(bench.dropped.is_empty());
}

/// `ce_threshold`: CE-mark ECT packets whose sojourn exceeds it, drop nothing.
#[test]
fn codel_ce_threshold_marks_by_sojourn() {
    let mut bench = Bench::with("codel", &[("ce_threshold", s("2ms"))], link_10mbps());
    let a = bench.enq(1500, 0, Ecn::Ect0, 0);
    let c = bench.enq(1500, 0, Ecn::Ect0, 0);
    let d = bench.enq(1500, 0, Ecn::NotEct, 0);
    bench.advance(2 * MS);
    assert_eq!(bench.deq(), Some(a)); // sojourn 2 ms: not above
    bench.advance(2 * MS + 1);
    assert_eq!(bench.deq(), Some(c)); // above: marked
    assert_eq!(bench.deq(), Some(d)); // Not-ECT: untouched
    assert_eq!(bench.ecn_of(a), Ecn::Ect0);
    assert_eq!(bench.ecn_of(c), Ecn::Ce);
    assert_eq!(bench.ecn_of(d), Ecn::NotEct);
    assert!(bench.dropped.is_empty());
}

/// sch_codel's limit: 1000 packets by default, tail drop beyond.
#[test]
fn codel_tail_drops_beyond_limit() {
    let mut bench = Bench::with("codel", &[], link_10mbps());
    for _ in 0..1001 {
        bench.enq(100, 0, Ecn::NotEct, 0);
    }
    assert_eq!(bench.q.len_packets(), 1000);
    assert_eq!(bench.dropped.len(), 1);
    let mut small = Bench::with("codel", &[("limit", s("3p"))], link_10mbps());
    for _ in 0..5 {
        small.enq(100, 0, Ecn::NotEct, 0);
    }
    assert_eq!(small.q.len_packets(), 3);
}

#[test]
fn codel_bad_parameters_name_the_key() {
    let e = build_err("codel", &[("target", s("0ms"))]);
    assert_eq!(
        e.to_string(),
        "bottleneck.queue.target: expected a positive duration like \"5ms\", got \"0ms\""
    );
    let e = build_err("codel", &[("interval", n(100.0))]);
    assert_eq!(e.path, "bottleneck.queue.interval");
    let e = build_err("codel", &[("ecn", s("yes"))]);
    assert_eq!(e.path, "bottleneck.queue.ecn");
    let e = build_err("codel", &[("beta", n(0.5))]);
    assert_eq!(e.path, "bottleneck.queue.beta");
    let e = build_err("fq_codel", &[("flows", n(0.0))]);
    assert_eq!(e.path, "bottleneck.queue.flows");
    let e = build_err("fq_codel", &[("quantum", s("100B"))]);
    assert_eq!(e.path, "bottleneck.queue.quantum");
    // fq_codel's limit is written like the other disciplines' but counts packets.
    let e = build_err("fq_codel", &[("limit", s("1MB"))]);
    assert_eq!(e.path, "bottleneck.queue.limit");
    assert!(e.message.contains("counts packets"), "{e}");
    let e = build_err("fq_codel", &[("limit", n(100.0))]);
    assert_eq!(e.path, "bottleneck.queue.limit");
}

#[test]
fn fq_codel_limit_in_packets_bounds_the_total_backlog() {
    let mut small = Bench::with("fq_codel", &[("limit", s("3p"))], link_10mbps());
    for _ in 0..5 {
        small.enq(100, 0, Ecn::NotEct, 0);
    }
    assert!(small.q.len_packets() <= 3);
    assert_eq!(small.q.len_packets() + small.dropped.len(), 5);
}

// ---------------------------------------------------------------------------------
// FQ-CoDel

/// DRR with quantum 1500 (the link MTU) between flow A (1500 B packets) and flow B
/// (500 B), both backlogged from t = 0 and entering new_flows in order A, B with
/// deficit 1500 (Linux checks `deficit <= 0` before serving):
/// - A sends 1500 (deficit 0); next turn A gets +1500 and moves to old_flows;
/// - B (new) sends 500, 500, 500 (deficit 0), then +1500 and moves to old_flows;
/// - old_flows A, B: A sends 1500 and goes to the tail with 1500; B sends 3 × 500; ...
///
/// So the order is A, B, B, B, A, B, B, B, ... and bytes are equal in every round.
#[test]
fn fq_codel_drr_is_byte_fair() {
    let mut bench = Bench::with("fq_codel", &[("hash_seed", n(7.0))], link_10mbps());
    // Flow ids chosen to land in distinct buckets with this seed (checked below).
    let (fa, fb) = (1u32, 2u32);
    for _ in 0..40 {
        bench.enq(1500, fa, Ecn::NotEct, 0);
    }
    for _ in 0..120 {
        bench.enq(500, fb, Ecn::NotEct, 0);
    }
    let mut order = String::new();
    let mut bytes = [0u64; 2];
    for _ in 0..80 {
        let id = bench.deq().unwrap();
        let p = *bench.pool.get(id);
        if p.flow == fa {
            order.push('A');
            bytes[0] += p.size_bytes as u64;
        } else {
            order.push('B');
            bytes[1] += p.size_bytes as u64;
        }
    }
    assert_eq!(&order[..12], "ABBBABBBABBB");
    assert_eq!(bytes[0], bytes[1]);
}

/// A new flow is served before the backlogged old flow's next packet (RFC 8290 §4.2).
#[test]
fn fq_codel_new_flow_goes_first() {
    let mut bench = Bench::with("fq_codel", &[("hash_seed", n(7.0))], link_10mbps());
    for _ in 0..10 {
        bench.enq(1500, 1, Ecn::NotEct, 0);
    }
    // Serve A until it sits in old_flows.
    bench.deq();
    bench.deq();
    let c = bench.enq(200, 2, Ecn::NotEct, 0);
    assert_eq!(bench.deq(), Some(c));
    let next = bench.deq().unwrap();
    assert_eq!(bench.pool.get(next).flow, 1);
}

/// Overflow drops from the head of the fattest queue, half of its backlog at most 64
/// packets: limit 10 packets; flow 1 holds 8 × 1000 B, flow 2 holds 2 × 1000 B; the
/// 11th packet (flow 2) makes 11 > 10 → flow 1 (8000 B) loses 4 head packets (4000 B,
/// half its backlog).
#[test]
fn fq_codel_overflow_drops_half_the_fattest_flow() {
    let mut bench = Bench::with(
        "fq_codel",
        &[("hash_seed", n(7.0)), ("limit", s("10p"))],
        link_10mbps(),
    );
    let f1: Vec<_> = (0..8).map(|_| bench.enq(1000, 1, Ecn::NotEct, 0)).collect();
    bench.enq(1000, 2, Ecn::NotEct, 0);
    bench.enq(1000, 2, Ecn::NotEct, 0);
    assert!(bench.dropped.is_empty());
    bench.enq(1000, 2, Ecn::NotEct, 0);
    assert_eq!(bench.dropped, f1[..4].to_vec());
    assert_eq!(bench.q.len_packets(), 7);
}

/// CoDel's minimum-backlog check in FQ-CoDel: flow 1 never has more than one packet
/// queued, and that packet is always old (sojourn ≥ 1 s); flow 2 keeps a backlog of
/// hundreds of packets. Linux (`backlog_check = "qdisc"`, the default) compares the
/// qdisc's backlog with the MTU, so flow 1's CoDel enters the dropping state after one
/// interval and drops its packets; ns-3 (`"flow"`) compares flow 1's own backlog, which is
/// 0 B after the dequeue, so flow 1 is never dropped.
///
/// Linux count: flow 1's sojourn passes 5 ms at t ≈ 5 ms (first_above_time ≈ 105 ms); its
/// first packet served after that is dropped (≈ 106 ms), and the empty flow that leaves
/// (`codel_should_drop` on no packet) resets `first_above_time`, so each drop needs a
/// fresh interval above target: drops near 106, 207 and 308 ms, three in 400 ms.
fn lone_packet_flow_drops(check: &str) -> usize {
    let mut bench = Bench::with(
        "fq_codel",
        &[("hash_seed", n(7.0)), ("backlog_check", s(check))],
        link_10mbps(),
    );
    for _ in 0..600 {
        bench.enq(1500, 2, Ecn::NotEct, 0);
    }
    let mut lone = Vec::new();
    for ms in 1..=400u64 {
        bench.advance(ms * MS);
        let held = bench.q.held();
        if !held.iter().any(|&id| bench.pool.get(id).flow == 1) {
            bench.now = 0; // an old packet: its sojourn is the current time
            lone.push(bench.enq(1500, 1, Ecn::NotEct, 0));
            bench.now = ms * MS;
        }
        bench.deq();
    }
    lone.iter().filter(|&&id| bench.was_dropped(id)).count()
}

#[test]
fn fq_codel_backlog_check_qdisc_or_flow() {
    assert_eq!(lone_packet_flow_drops("qdisc"), 3);
    assert_eq!(lone_packet_flow_drops("flow"), 0);
    let e = build_err("fq_codel", &[("backlog_check", s("queue"))]);
    assert!(e.to_string().contains("backlog_check"), "{e}");
}

/// ns-2.35's `queue/codel.cc` (`variant = "ns2"`), worked by hand on the same trace:
/// dropping may start at `now >= first_above_time` (105 ms, not 106), `count` grows after
/// a drop when the next packet still says drop, and `interval/√count` is exact:
/// drop_next = 105 + 100 = 205, then adding 100/√2, 100/√3, 50, 100/√5, 100/√6 and
/// 100/√7: 275.71, 333.45, 383.45, 428.17, 468.99, 506.79 → drops at 105, 205, 276, 334,
/// 384, 429, 469, 507 ms.
#[test]
fn codel_ns2_drop_times() {
    let mut b = Bench::with("codel", &[("variant", s("ns2"))], link_10mbps());
    let t = drop_times(&mut b, 1000, Ecn::NotEct, 520);
    assert_eq!(t, vec![105, 205, 276, 334, 384, 429, 469, 507]);
}

/// ns-2's re-entry and re-arm: the first episode ends at count 6 with drop_next =
/// 468.99 ms. Reloaded at 600 ms, the sojourn reaches target at 605 ms, 136 ms after
/// drop_next with count 6 > 1, so `first_above_time = 605 + 100/√6 = 645.82` (not
/// 705); the drop at 646 re-enters with count 6 − 2 = 4 (177 ms < 8 intervals), next
/// drops at 646 + 100/√4 = 696 and then count 5: 696 + 44.72 = 740.72 → 741.
/// Reloaded at 2100 ms (1.6 s > 8 intervals later), everything starts afresh: drops at
/// 2205 (first_above 2105 + 100) and 2305 (count 1).
#[test]
fn codel_ns2_reentry_and_rearm() {
    for (reload_ms, expect) in [(600u64, vec![46u64, 96, 141]), (2100, vec![105, 205])] {
        let mut b = Bench::with("codel", &[("variant", s("ns2"))], link_10mbps());
        let t = drop_times(&mut b, 1000, Ecn::NotEct, 430);
        assert_eq!(t, vec![105, 205, 276, 334, 384, 429]);
        b.advance(431 * MS);
        while b.deq().is_some() {}
        let vars = match &b.q {
            ccsim_core::qdisc::Qdisc::Codel(c) => *c.vars(),
            _ => unreachable!(),
        };
        assert_eq!((vars.count, vars.dropping), (6, false));
        b.advance(reload_ms * MS);
        for _ in 0..1000 {
            b.enq(1500, 0, Ecn::NotEct, 0);
        }
        let mut times = Vec::new();
        for ms in reload_ms + 1..=reload_ms + 220 {
            b.advance(ms * MS);
            let before = b.dropped.len();
            b.deq();
            if b.dropped.len() > before {
                times.push(ms - reload_ms);
            }
        }
        assert_eq!(
            &times[..expect.len()],
            &expect[..],
            "reload at {reload_ms} ms"
        );
    }
}

#[test]
fn codel_variant_is_checked() {
    let e = build_err("codel", &[("variant", s("bsd"))]);
    assert!(e.to_string().contains("variant"), "{e}");
    assert!(e.to_string().contains("\"linux\" or \"ns2\""), "{e}");
}
