//! Worked by hand from Linux `sch_dualpi2.c` and RFC 9332 §2.4 / Appendix A: the
//! expected values in the comments are computed from the kernel's formulas, not read
//! back from this code.
use super::*;
use crate::engine::rng::{stream, SimRng, StreamKind};
use crate::net::packet::{Packet, PacketPool};
use crate::scenario::ParamValue;

const MS: u64 = 1_000_000;

fn link() -> LinkInfo {
    LinkInfo {
        rate_bps: 100_000_000,
        bdp_bytes: 250_000.0,
        mtu_bytes: 1500,
    }
}

fn spec(kind: &str, params: &[(&str, ParamValue)]) -> AlgoSpec {
    AlgoSpec {
        kind: kind.into(),
        params: params
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
    }
}

fn dual(params: &[(&str, ParamValue)]) -> DualPi2 {
    DualPi2::from_spec(&spec("dualpi2", params), "q", link(), Mode::Dual).unwrap()
}

struct Bench {
    pool: PacketPool,
    dropped: Vec<PacketId>,
    marked: Vec<PacketId>,
    rng: SimRng,
}

impl Bench {
    fn new() -> Self {
        Bench {
            pool: PacketPool::new(),
            dropped: Vec::new(),
            marked: Vec::new(),
            rng: stream(7, StreamKind::Qdisc, 0),
        }
    }
    fn ctx(&mut self, now: u64) -> QdiscCtx<'_> {
        QdiscCtx {
            now_ns: now,
            pool: &mut self.pool,
            dropped: &mut self.dropped,
            marked: &mut self.marked,
            rng: &mut self.rng,
        }
    }
    /// Enqueue a 1500 B packet with `ecn` at `now`, tagged by `flow` (to identify it).
    fn arrive(&mut self, q: &mut DualPi2, now: u64, ecn: Ecn, flow: u32) -> PacketId {
        let id = self.pool.alloc(Packet {
            size_bytes: 1500,
            ecn,
            flow,
            enqueue_ns: now,
            ..Packet::default()
        });
        q.enqueue(id, &mut self.ctx(now));
        id
    }
    fn depart(&mut self, q: &mut DualPi2, now: u64) -> Option<PacketId> {
        q.dequeue(&mut self.ctx(now))
    }
}

/// Linux `dualpi2_scale_alpha_beta`: tmp = param x (2^32 - 1) >> 2, / 10^9.
/// alpha 41: 41 x 4294967295 = 176093659095, >> 2 = 44023414773, / 10^9 = 44.
/// beta 819: 819 x 4294967295 = 3517578214605, >> 2 = 879394553651, / 10^9 = 879.
/// As rates: 44 x 10^9 / 64 / 2^32 = 0.16007 Hz, 879 x ... = 3.1977 Hz.
#[test]
fn linux_gain_scaling() {
    assert_eq!(scale_alpha_beta(41), 44);
    assert_eq!(scale_alpha_beta(819), 879);
    let q = dual(&[]);
    assert_eq!((q.cfg.alpha_256, q.cfg.beta_256), (41, 819));
    assert_eq!((q.cfg.alpha, q.cfg.beta), (44, 879));
    // alpha = 0.16 Hz as written in the RFC: 256 x 0.16 = 40.96, rounded 41.
    let q = dual(&[("alpha", ParamValue::Number(0.16))]);
    assert_eq!(q.cfg.alpha_256, 41);
}

/// The PI core from given queue delays (target 15 ms, tupdate 16 ms):
/// - t = 0: one C packet arrives, so at the first update (t = 16 ms) qdelay = 16 ms:
///   delta = (16e6 - 15e6) x 44 + (16e6 - 0) x 879 = 44e6 + 14064e6 = 14108e6;
///   / 64 = 220437500 → p = 220437500 (p' = 0.05132; the RFC's real-valued
///   0.16 x 0.001 + 3.2 x 0.016 = 0.05136).
/// - t = 32 ms, same head: qdelay 32 ms: (17e6) x 44 + (16e6) x 879 = 748e6 + 14064e6
///   = 14812e6, / 64 = 231437500 → p = 451875000.
/// - the packet leaves at 40 ms; t = 48 ms, empty: (-15e6) x 44 + (-32e6) x 879 =
///   -660e6 - 28128e6 = -28788e6, / 64 = 449812500 → p = 2062500.
/// - t = 64 ms, empty: -660e6 / 64 = 10312500 > p → p = 0.
#[test]
fn pi_update_worked_by_hand() {
    let mut q = dual(&[]);
    let mut b = Bench::new();
    assert_eq!(q.timer_deadline(), Some(16 * MS));
    b.arrive(&mut q, 0, Ecn::NotEct, 1);
    q.on_timer(&mut b.ctx(16 * MS));
    assert_eq!(q.prob_raw(), 220_437_500);
    assert!((q.prob() - 0.05136).abs() < 1e-4);
    assert_eq!(q.timer_deadline(), Some(32 * MS));
    q.on_timer(&mut b.ctx(32 * MS));
    assert_eq!(q.prob_raw(), 451_875_000);
    assert!(b.depart(&mut q, 40 * MS).is_some());
    q.on_timer(&mut b.ctx(48 * MS));
    assert_eq!(q.prob_raw(), 2_062_500);
    q.on_timer(&mut b.ctx(64 * MS));
    assert_eq!(q.prob_raw(), 0);
}

/// The PI input is the larger of the two head delays (`get_queue_delays`): an L
/// packet queued at 0 and a C packet at 16 ms give heads of 20 ms and 4 ms at an
/// update at 20 ms, so qdelay = 20 ms: delta = 5e6 x 44 + 20e6 x 879 = 220e6 +
/// 17580e6 = 17800e6, / 64 = 278125000.
#[test]
fn pi_uses_the_larger_head_delay() {
    let mut q = dual(&[]);
    let mut b = Bench::new();
    b.arrive(&mut q, 0, Ecn::Ect1, 1);
    b.arrive(&mut q, 16 * MS, Ecn::Ect0, 2);
    q.update(20 * MS);
    assert_eq!(q.prob_raw(), 278_125_000);
}

/// `drop_overload = false` caps p' at MAX_PROB / k (Linux `calculate_probability`):
/// with k = 2, (2^32 - 1) / 2 = 2147483647.
#[test]
fn no_drop_overload_caps_at_one_over_k() {
    let mut q = dual(&[("drop_overload", ParamValue::Bool(false))]);
    let mut b = Bench::new();
    b.arrive(&mut q, 0, Ecn::Ect0, 1);
    q.update(5_000 * MS);
    assert_eq!(q.prob_raw(), 2_147_483_647);
}

/// RFC 9331 §5.1 with the default mask (l4s_ect = 1): ECT(1) (01) and CE (11) to L;
/// Not-ECT (00) and ECT(0) (10) to C. cla_ect (2): ECT(0) and CE. any_ect (3): all ECT.
#[test]
fn classification_by_ecn_field() {
    let q = dual(&[]);
    assert!(!q.classify(Ecn::NotEct));
    assert!(!q.classify(Ecn::Ect0));
    assert!(q.classify(Ecn::Ect1));
    assert!(q.classify(Ecn::Ce));
    let q = dual(&[("ecn_mask", ParamValue::Str("cla_ect".into()))]);
    assert_eq!(
        [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce].map(|e| q.classify(e)),
        [false, false, true, true]
    );
    let q = dual(&[("ecn_mask", ParamValue::Str("any_ect".into()))]);
    assert_eq!(
        [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce].map(|e| q.classify(e)),
        [false, true, true, true]
    );
}

fn fraction(q: &DualPi2, l4s: bool, ecn: Ecn, want: Verdict, n: u32) -> f64 {
    let mut rng = stream(3, StreamKind::Qdisc, 1);
    let hits = (0..n)
        .filter(|_| q.aqm_verdict(l4s, ecn, 10 * 1500, &mut rng) == want)
        .count();
    hits as f64 / n as f64
}

/// RFC 9332 §2.4 coupling with p' = 1/4 (k = 2): p_C = p'^2 = 1/16 and
/// p_CL = k p' = 1/2. ECT(0) C packets are marked with 1/16 (classic ECN), Not-ECT C
/// packets dropped with 1/16, ECT(1) L packets marked with 1/2. 200000 draws: the
/// standard error of 1/16 is 0.00054, of 1/2 0.0011; allow 5 of them.
#[test]
fn coupling_squares_for_c_and_scales_for_l() {
    let mut q = dual(&[]);
    q.force_prob_raw(MAX_PROB / 4);
    let n = 200_000;
    let c_mark = fraction(&q, false, Ecn::Ect0, Verdict::Mark, n);
    let c_drop = fraction(&q, false, Ecn::NotEct, Verdict::Drop, n);
    let l_mark = fraction(&q, true, Ecn::Ect1, Verdict::Mark, n);
    assert!((c_mark - 0.0625).abs() < 0.0027, "{c_mark}");
    assert!((c_drop - 0.0625).abs() < 0.0027, "{c_drop}");
    assert!((l_mark - 0.5).abs() < 0.0056, "{l_mark}");
    assert_eq!(fraction(&q, false, Ecn::Ect0, Verdict::Drop, 1000), 0.0);
    assert_eq!(fraction(&q, true, Ecn::Ect1, Verdict::Drop, 1000), 0.0);
    // Below 2 MTU of backlog nothing is touched (must_drop's guard).
    let mut rng = stream(3, StreamKind::Qdisc, 2);
    assert!((0..1000).all(|_| q.aqm_verdict(true, Ecn::Ect1, 2999, &mut rng) == Verdict::Pass));
}

/// Overload (k p' > 1) with p' = 3/4: C packets hit with p'^2 = 9/16 are dropped even
/// when ECT; L packets are dropped with 9/16 (drop_overload) and otherwise marked
/// (7/16); without drop_overload every L packet is marked.
#[test]
fn overload_drops_by_the_square() {
    let mut q = dual(&[]);
    q.force_prob_raw(MAX_PROB / 4 * 3);
    let n = 200_000;
    let c_drop = fraction(&q, false, Ecn::Ect0, Verdict::Drop, n);
    let l_drop = fraction(&q, true, Ecn::Ect1, Verdict::Drop, n);
    let l_mark = fraction(&q, true, Ecn::Ect1, Verdict::Mark, n);
    assert!((c_drop - 0.5625).abs() < 0.0056, "{c_drop}");
    assert!((l_drop - 0.5625).abs() < 0.0056, "{l_drop}");
    assert!((l_mark - 0.4375).abs() < 0.0056, "{l_mark}");
    let mut q = dual(&[("drop_overload", ParamValue::Bool(false))]);
    q.force_prob_raw(MAX_PROB / 4 * 3);
    assert_eq!(fraction(&q, true, Ecn::Ect1, Verdict::Mark, 1000), 1.0);
}

/// The step (1 ms, strictly greater, `do_step_aqm`) with p' = 0: L packets that
/// waited 1.5 ms are marked, those that waited exactly 1 ms or 0.5 ms are not; C
/// packets never get the step.
#[test]
fn step_marks_l_packets_above_one_ms() {
    let mut q = dual(&[]);
    let mut b = Bench::new();
    let a = b.arrive(&mut q, 0, Ecn::Ect1, 1);
    let c = b.arrive(&mut q, 0, Ecn::Ect0, 2);
    let l2 = b.arrive(&mut q, 500_000, Ecn::Ect1, 3);
    let l3 = b.arrive(&mut q, 1_000_000, Ecn::Ect1, 4);
    // L first (credit starts negative): a waited 1.5 ms.
    assert_eq!(b.depart(&mut q, 1_500_000), Some(a));
    assert_eq!(b.pool.get(a).ecn, Ecn::Ce);
    assert_eq!(b.depart(&mut q, 1_500_000), Some(l2)); // waited 1.0 ms
    assert_eq!(b.pool.get(l2).ecn, Ecn::Ect1);
    assert_eq!(b.depart(&mut q, 1_500_000), Some(l3)); // 0.5 ms
    assert_eq!(b.pool.get(l3).ecn, Ecn::Ect1);
    assert_eq!(b.depart(&mut q, 9 * MS), Some(c));
    assert_eq!(b.pool.get(c).ecn, Ecn::Ect0);
    assert_eq!(q.step_marks(), 1);
    assert_eq!(b.marked, vec![a]);
}

/// The WRR credit (`dequeue_packet`) with c_protection 10 % and 1500 B packets:
/// credit starts at 1500 x (10 - 90) = -120000. With both queues backlogged each L
/// departure adds 10 x 1500 = 15000 and L is served while the credit is <= 0: after
/// 8 L departures it is 0, so a 9th L goes (15000), then C (15000 - 90 x 1500 =
/// -120000): 9 L, 1 C, 9 L, 1 C. With only one queue backlogged the credit does not
/// move, and it returns to -120000 when both are empty.
#[test]
fn wrr_credit_serves_nine_l_per_c() {
    let mut q = dual(&[]);
    let mut b = Bench::new();
    assert_eq!(q.credit(), -120_000);
    for i in 0..20 {
        b.arrive(&mut q, 0, Ecn::Ect1, 100 + i);
        b.arrive(&mut q, 0, Ecn::Ect0, 200 + i);
    }
    let mut order = String::new();
    for _ in 0..20 {
        let id = b.depart(&mut q, 0).unwrap();
        order.push(if b.pool.get(id).flow < 200 { 'L' } else { 'C' });
    }
    assert_eq!(order, "LLLLLLLLLCLLLLLLLLLC");
    assert_eq!(q.credit(), -120_000);
    // 2 L and 18 C left: L, L (credit +30000 → -90000), then C alone: no change.
    let mut order = String::new();
    for _ in 0..20 {
        let id = b.depart(&mut q, 0).unwrap();
        order.push(if b.pool.get(id).flow < 200 { 'L' } else { 'C' });
    }
    assert_eq!(order, "LLCCCCCCCCCCCCCCCCCC");
    assert_eq!(q.credit(), -90_000);
    assert!(b.depart(&mut q, 0).is_none());
    assert_eq!(q.credit(), -120_000);
    // c_protection 50: credit starts at 0, so L still goes first (<= 0), then they
    // alternate: L (+75000), C (0), L, C ...
    let mut q = dual(&[("c_protection", ParamValue::Number(50.0))]);
    for i in 0..4 {
        b.arrive(&mut q, 0, Ecn::Ect1, 100 + i);
        b.arrive(&mut q, 0, Ecn::Ect0, 200 + i);
    }
    let order: String = (0..8)
        .map(|_| {
            let id = b.depart(&mut q, 0).unwrap();
            if b.pool.get(id).flow < 200 {
                'L'
            } else {
                'C'
            }
        })
        .collect();
    assert_eq!(order, "LCLCLCLC");
}

/// PI2 in one queue: FIFO order whatever the class; an L4S packet is marked with
/// min(k p', 1) = 1 at p' = 1/2, a Classic ECT(0) one with p'^2 = 1/4.
#[test]
fn pi2_single_queue_keeps_fifo_order() {
    let mut q = DualPi2::from_spec(&spec("pi2", &[]), "q", link(), Mode::Single).unwrap();
    let mut b = Bench::new();
    let ids: Vec<_> = [Ecn::Ect0, Ecn::Ect1, Ecn::NotEct, Ecn::Ect1, Ecn::Ect0]
        .iter()
        .enumerate()
        .map(|(i, &e)| b.arrive(&mut q, i as u64, e, i as u32))
        .collect();
    let out: Vec<_> = (0..5).map(|_| b.depart(&mut q, 10).unwrap()).collect();
    assert_eq!(out, ids);
    q.force_prob_raw(MAX_PROB / 2);
    assert_eq!(fraction(&q, true, Ecn::Ect1, Verdict::Mark, 1000), 1.0);
    let c = fraction(&q, false, Ecn::Ect0, Verdict::Mark, 100_000);
    assert!((c - 0.25).abs() < 0.007, "{c}");
}

#[test]
fn parameters_are_checked_with_their_key() {
    let err = |kind: &str, params: &[(&str, ParamValue)]| {
        let mode = if kind == "pi2" {
            Mode::Single
        } else {
            Mode::Dual
        };
        DualPi2::from_spec(&spec(kind, params), "q", link(), mode).unwrap_err()
    };
    let s = |v: &str| ParamValue::Str(v.into());
    assert_eq!(err("dualpi2", &[("limit", s("10MB"))]).path, "q.limit");
    assert_eq!(
        err("dualpi2", &[("coupling", ParamValue::Number(0.0))]).path,
        "q.coupling"
    );
    assert_eq!(
        err("dualpi2", &[("step_thresh", s("fast"))]).path,
        "q.step_thresh"
    );
    assert_eq!(
        err("dualpi2", &[("c_protection", ParamValue::Number(101.0))]).path,
        "q.c_protection"
    );
    assert_eq!(
        err("dualpi2", &[("alpha", ParamValue::Number(0.001))]).path,
        "q.alpha"
    );
    assert_eq!(
        err("dualpi2", &[("ecn_mask", s("ect1"))]).path,
        "q.ecn_mask"
    );
    let e = err("pi2", &[("step_thresh", s("1ms"))]);
    assert_eq!(e.path, "q.step_thresh");
    assert!(e.message.contains("unknown parameter"), "{}", e.message);
    let q = dual(&[("step_thresh", s("5p")), ("limit", s("2bdp"))]);
    assert_eq!(q.cfg.step, Step::Packets(5));
    assert_eq!(q.cfg.limit, 333);
    assert_eq!(q.cfg.memory_limit, 333 * 3000);
}
