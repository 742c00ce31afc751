//! Every discipline conserves packets: each packet handed to `enqueue` is returned by
//! `dequeue`, dropped through the context, or still `held()` — exactly once — under
//! random sequences of enqueues (random sizes, flows, ECN codepoints and values),
//! dequeues, timer calls and clock steps. `len_packets`/`len_bytes` match `held()`.

mod qdisc_harness;

use std::collections::HashSet;

use ccsim_core::net::packet::{Ecn, PacketId};
use ccsim_core::qdisc::{build_shaped, LinkInfo, Qdisc};
use ccsim_core::scenario::ParamValue;
use qdisc_harness::*;

struct Gen(u64);
impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn configs() -> Vec<(&'static str, Vec<(&'static str, ParamValue)>)> {
    vec![
        ("droptail", vec![("limit", s("20p"))]),
        ("codel", vec![]),
        (
            "codel",
            vec![
                ("ecn", b(true)),
                ("limit", s("30p")),
                ("ce_threshold", s("1ms")),
            ],
        ),
        (
            "codel",
            vec![
                ("exact_sqrt", b(true)),
                ("target", s("1ms")),
                ("interval", s("10ms")),
            ],
        ),
        (
            "fq_codel",
            vec![
                ("limit", s("25p")),
                ("flows", n(4.0)),
                ("drop_batch_size", n(3.0)),
            ],
        ),
        (
            "fq_codel",
            vec![
                ("ecn", b(false)),
                ("target", s("1ms")),
                ("interval", s("5ms")),
            ],
        ),
        (
            "pie",
            vec![
                ("first_update", s("5ms")),
                ("tupdate", s("5ms")),
                ("max_burst", s("0ms")),
            ],
        ),
        (
            "pie",
            vec![
                ("ecn", b(true)),
                ("dq_rate_estimator", b(true)),
                ("limit", s("30KB")),
                ("bytemode", b(true)),
            ],
        ),
        ("pie", vec![("preset", s("abe-linux")), ("limit", s("40p"))]),
        (
            "pie",
            vec![
                ("variant", s("pie2013")),
                ("ecn", b(true)),
                ("max_burst", s("1ms")),
            ],
        ),
        (
            "red",
            vec![
                ("limit", s("40KB")),
                ("min_th", s("3KB")),
                ("max_th", s("15KB")),
                ("w_q", n(0.2)),
            ],
        ),
        (
            "red",
            vec![
                ("unit", s("packets")),
                ("limit", s("30p")),
                ("min_th", s("2p")),
                ("max_th", s("6p")),
                ("gentle", b(true)),
                ("ecn", b(true)),
                ("adaptive", b(true)),
            ],
        ),
        (
            "red",
            vec![
                ("mode", s("step")),
                ("threshold", s("4p")),
                ("limit", s("25p")),
            ],
        ),
        ("csaqm", vec![("d", s("2ms")), ("d_max", s("6ms"))]),
        ("csaqm", vec![("d", s("1ms")), ("t_update", s("0ms"))]),
        (
            "pvpie",
            vec![
                ("first_update", s("5ms")),
                ("tupdate", s("5ms")),
                ("max_burst", s("0ms")),
                ("limit", s("50p")),
            ],
        ),
    ]
}

fn link() -> LinkInfo {
    LinkInfo {
        rate_bps: 10_000_000,
        bdp_bytes: 60_000.0,
        mtu_bytes: 1500,
    }
}

fn drive(mut bench: Bench, seed: u64, what: &str) {
    let mut g = Gen(seed);
    let mut live: HashSet<PacketId> = HashSet::new();
    let mut gone = 0usize; // indices into bench.dropped already processed
    let mut enqueued = 0u64;
    for _ in 0..20_000 {
        match g.below(10) {
            0..=4 => {
                let size = 40 + g.below(1461) as u32;
                let flow = g.below(6) as u32;
                let ecn = [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce][g.below(4) as usize];
                let value = g.below(65536) as u16;
                let id = bench.enq(size, flow, ecn, value);
                assert!(live.insert(id), "{what}: id {id} reused while live");
                enqueued += 1;
            }
            5..=7 => {
                if let Some(id) = bench.deq() {
                    assert!(live.remove(&id), "{what}: dequeued {id} not live");
                    bench.pool.free(id);
                }
            }
            _ => {
                let t = bench.now + g.below(3_000_000);
                bench.advance(t);
            }
        }
        for &id in &bench.dropped[gone..] {
            assert!(live.remove(&id), "{what}: dropped {id} not live");
            bench.pool.free(id);
        }
        gone = bench.dropped.len();
        for &id in &bench.marked {
            assert_eq!(bench.pool.get(id).ecn, Ecn::Ce, "{what}: marked but not CE");
        }
        bench.marked.clear();
        let held = bench.q.held();
        assert_eq!(held.len(), bench.q.len_packets(), "{what}: len_packets");
        let bytes: u64 = held
            .iter()
            .map(|&i| bench.pool.get(i).size_bytes as u64)
            .sum();
        assert_eq!(bytes, bench.q.len_bytes(), "{what}: len_bytes");
        let h: HashSet<PacketId> = held.into_iter().collect();
        assert_eq!(h, live, "{what}: held != live");
    }
    assert!(enqueued > 5_000);
    // Finally drain: every held packet comes out or is dropped.
    let mut spins = 0;
    while bench.q.len_packets() > 0 {
        match bench.deq() {
            Some(id) => {
                assert!(live.remove(&id));
                bench.pool.free(id);
            }
            None => {
                let t = bench
                    .q
                    .next_ready_ns(bench.now)
                    .unwrap_or(bench.now + 1_000_000);
                bench.advance(t.max(bench.now + 1));
                spins += 1;
                assert!(spins < 1_000_000, "{what}: stuck");
            }
        }
        for &id in &bench.dropped[gone..] {
            assert!(live.remove(&id));
            bench.pool.free(id);
        }
        gone = bench.dropped.len();
    }
    assert!(live.is_empty(), "{what}: {} packets lost", live.len());
}

#[test]
fn every_discipline_conserves_packets() {
    for (i, (kind, params)) in configs().into_iter().enumerate() {
        for seed in 0..3u64 {
            let what = format!("{kind} {params:?} seed {seed}");
            let q = try_build(kind, &params, link()).expect("valid");
            drive(Bench::new(q), seed * 1000 + i as u64, &what);
        }
    }
}

#[test]
fn shaped_disciplines_conserve_packets() {
    for (i, (kind, params)) in configs().into_iter().enumerate() {
        let what = format!("shaped {kind} {params:?}");
        let inner: Qdisc = try_build(kind, &params, link()).expect("valid");
        let q = build_shaped(inner, 2_000_000, Some(8_000_000), 6_000).unwrap();
        drive(Bench::new(q), 77 + i as u64, &what);
    }
}
