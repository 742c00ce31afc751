//! A bench for driving one queue discipline by hand: packets, a clock, the context's
//! drop and mark lists, and the timer. Shared by the `qdisc_*` tests.
#![allow(dead_code)]

use std::collections::BTreeMap;

use ccsim_core::engine::rng::{stream, SimRng, StreamKind};
use ccsim_core::net::packet::{Ecn, Packet, PacketId, PacketPool};
use ccsim_core::qdisc::{build, LinkInfo, Qdisc, QdiscCtx};
use ccsim_core::scenario::{AlgoSpec, ParamValue, ScenarioError};

pub use ccsim_core::qdisc::QueueDisc;

pub fn s(v: &str) -> ParamValue {
    ParamValue::Str(v.into())
}
pub fn n(v: f64) -> ParamValue {
    ParamValue::Number(v)
}
pub fn b(v: bool) -> ParamValue {
    ParamValue::Bool(v)
}

pub fn spec(kind: &str, params: &[(&str, ParamValue)]) -> AlgoSpec {
    AlgoSpec {
        kind: kind.into(),
        params: params
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect::<BTreeMap<_, _>>(),
    }
}

/// 10 Mbps, 1500-byte MTU, BDP of 100 ms (125 000 B).
pub fn link_10mbps() -> LinkInfo {
    LinkInfo {
        rate_bps: 10_000_000,
        bdp_bytes: 125_000.0,
        mtu_bytes: 1500,
    }
}

pub fn try_build(
    kind: &str,
    params: &[(&str, ParamValue)],
    link: LinkInfo,
) -> Result<Qdisc, ScenarioError> {
    build(&spec(kind, params), "bottleneck.queue", link)
}

pub fn build_err(kind: &str, params: &[(&str, ParamValue)]) -> ScenarioError {
    match try_build(kind, params, link_10mbps()) {
        Ok(q) => panic!("expected an error, built {q:?}"),
        Err(e) => e,
    }
}

pub struct Bench {
    pub q: Qdisc,
    pub pool: PacketPool,
    pub rng: SimRng,
    pub now: u64,
    /// Everything dropped so far, in order.
    pub dropped: Vec<PacketId>,
    /// Everything marked so far, in order.
    pub marked: Vec<PacketId>,
    drop_buf: Vec<PacketId>,
    mark_buf: Vec<PacketId>,
}

impl Bench {
    pub fn new(q: Qdisc) -> Bench {
        Bench {
            q,
            pool: PacketPool::new(),
            rng: stream(42, StreamKind::Qdisc, 0),
            now: 0,
            dropped: Vec::new(),
            marked: Vec::new(),
            drop_buf: Vec::new(),
            mark_buf: Vec::new(),
        }
    }

    pub fn with(kind: &str, params: &[(&str, ParamValue)], link: LinkInfo) -> Bench {
        Bench::new(try_build(kind, params, link).expect("valid parameters"))
    }

    fn ctx_run<R>(&mut self, f: impl FnOnce(&mut Qdisc, &mut QdiscCtx<'_>) -> R) -> R {
        let mut ctx = QdiscCtx {
            now_ns: self.now,
            pool: &mut self.pool,
            dropped: &mut self.drop_buf,
            marked: &mut self.mark_buf,
            rng: &mut self.rng,
        };
        let r = f(&mut self.q, &mut ctx);
        self.marked.append(&mut self.mark_buf);
        self.dropped.append(&mut self.drop_buf);
        r
    }

    /// Enqueue a packet now (the link sets `enqueue_ns`).
    pub fn enq(&mut self, size: u32, flow: u32, ecn: Ecn, value: u16) -> PacketId {
        let id = self.pool.alloc(Packet {
            size_bytes: size,
            flow,
            ecn,
            value,
            enqueue_ns: self.now,
            ..Packet::default()
        });
        self.ctx_run(|q, ctx| q.enqueue(id, ctx));
        id
    }

    pub fn deq(&mut self) -> Option<PacketId> {
        self.ctx_run(|q, ctx| q.dequeue(ctx))
    }

    /// Advance the clock to `t`, firing every timer deadline on the way (at its time).
    pub fn advance(&mut self, t: u64) {
        assert!(t >= self.now);
        if self.q.uses_timer() {
            while let Some(d) = self.q.timer_deadline() {
                if d > t {
                    break;
                }
                self.now = self.now.max(d);
                self.ctx_run(|q, ctx| q.on_timer(ctx));
            }
        }
        self.now = t;
    }

    pub fn was_dropped(&self, id: PacketId) -> bool {
        self.dropped.contains(&id)
    }

    pub fn was_marked(&self, id: PacketId) -> bool {
        self.marked.contains(&id)
    }

    pub fn ecn_of(&self, id: PacketId) -> Ecn {
        self.pool.get(id).ecn
    }
}
