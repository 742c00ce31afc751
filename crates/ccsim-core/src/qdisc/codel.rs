//! CoDel (Controlled Delay), RFC 8289, as Linux implements it.
//!
//! References: Linux `include/net/codel.h`, `include/net/codel_impl.h` (the state
//! machine, `codel_should_drop`, `codel_dequeue`, `codel_Newton_step`,
//! `codel_control_law`) and `net/sched/sch_codel.c` (the single-queue qdisc: limit 1000
//! packets, tail drop beyond it, `mtu` = device MTU); RFC 8289 §§3–5 (algorithm and
//! pseudocode); K. Nichols, V. Jacobson, "Controlling Queue Delay", ACM Queue 2012.
//!
//! Behaviour (all at dequeue, on the packet being dequeued):
//! - `ok_to_drop`: sojourn `now − enqueue` below `target`, or backlog after removal
//!   `≤ mtu`, resets `first_above_time`; the first time above target arms
//!   `first_above_time = now + interval`; after that, `now > first_above_time` says drop.
//! - In the dropping state, every time `now ≥ drop_next`: `count += 1`, one Newton step on
//!   1/√count, then ECN-mark (one mark per dequeue, then return the packet) or drop and
//!   dequeue the next packet (several drops per dequeue are possible); `drop_next`
//!   advances by `interval/√count` from the previous `drop_next`.
//! - Entering the dropping state drops (or marks) the head packet; `count` restarts at
//!   `count − lastcount` when that is > 1 and the last `drop_next` is less than
//!   16 intervals ago, else at 1; `drop_next = now + interval/√count`.
//! - `ce_threshold` (optional): CE-mark every ECT packet whose sojourn exceeds it.
//!
//! Parameters: [`TABLE`] (`ccsim algorithms codel`), with Linux's defaults
//! (`codel_params_init`, `sch_codel.c`; mtu = the link's, [`LinkInfo::mtu_bytes`]).
//!
//! Departures:
//! - Time is kept in nanoseconds, not Linux's 1024 ns `codel_time_t` units (target and
//!   interval are exact; Linux rounds them down to 1.024 µs multiples).
//! - 1/√count is Linux's Q0.16 Newton iteration by default (so the first intervals are
//!   slightly shorter than `interval/√count`: 100 ms × 0xFFFF/2¹⁶ at count 1);
//!   `exact_sqrt = true` computes `interval/√count` exactly as RFC 8289's pseudocode.
//! - An already-CE packet is not marked again by `ce_threshold` (Linux counts it twice).
//! - `limit` may also be given in bytes or BDPs (resolved like DropTail's); Linux only
//!   has packets.
//!
//! `variant = "ns2"`: ns-2.35's `queue/codel.cc` (K. Nichols, 2011-2012), the CoDel that
//! ns-2 studies of 2012-2014 ran (paper 002 among them). Where it differs from Linux:
//! - Re-entry: on entering the dropping state, `count = count - 2` if `count > 2` and the
//!   last `drop_next` is less than 8 intervals ago (above 126 then
//!   `count = floor(0.9844 (count + 2))`), else 1; Linux keeps `count - lastcount`
//!   within 16 intervals.
//! - Re-arm: when the sojourn first goes above target less than 8 intervals after the
//!   last `drop_next` with `count > 1`, `first_above_time = now + interval/√count`
//!   instead of `now + interval`; and dropping is allowed from `now >= first_above_time`
//!   (Linux: `>`).
//! - In the dropping state `count` grows after a drop only if the next packet still
//!   says drop (Linux counts every drop first).
//! - `interval/√count` is computed exactly (double precision in ns-2).
//! - ns-2 compares the backlog with the largest packet seen (from 256 B); ccsim keeps
//!   `mtu`, the same for full-size packets. ns-2's CoDel has no ECN; with `ecn = true`
//!   ccsim marks where it would drop.

use std::collections::VecDeque;

use super::common::{resolve_limit, Limit};
use super::{LinkInfo, QdiscCtx, QueueDisc};
use crate::net::packet::{Ecn, PacketId};
use crate::params::{
    Algorithm, Family, Kind, Param, Reader, Value, ANY_DURATION, POSITIVE_DURATION,
};
use crate::scenario::{AlgoSpec, QueueLimit, ScenarioError};

/// CoDel's parameters (shared with FQ-CoDel).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CodelParams {
    pub target_ns: u64,
    pub interval_ns: u64,
    /// Minimum backlog (bytes, after removing the packet) for dropping.
    pub mtu_bytes: u64,
    pub ecn: bool,
    /// CE-mark ECT packets whose sojourn exceeds this (disabled when `None`).
    pub ce_threshold_ns: Option<u64>,
    /// Use exact `1/sqrt(count)` instead of Linux's Newton iteration.
    pub exact_sqrt: bool,
    /// ns-2.35's `codel.cc` rules instead of Linux's (module documentation).
    pub ns2: bool,
}

/// CoDel's per-queue state (Linux `struct codel_vars`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CodelVars {
    /// Drops (or marks) since entering the dropping state.
    pub count: u32,
    /// `count` when the dropping state was last entered.
    pub lastcount: u32,
    pub dropping: bool,
    /// 1/√count in Q0.16 (Linux `rec_inv_sqrt`).
    pub rec_inv_sqrt: u16,
    /// When the sojourn will have been above target for an interval (`None` = below).
    pub first_above_time: Option<u64>,
    /// Time of the next drop, or of the last one.
    pub drop_next: u64,
    /// Sojourn of the last dequeued packet.
    pub ldelay: u64,
}

/// Linux `REC_INV_SQRT_SHIFT`: a Q0.16 value shifted to Q0.32.
const REC_INV_SQRT_SHIFT: u32 = 16;

impl CodelVars {
    /// One Newton step `x ← x/2 · (3 − count·x²)` on 1/√count (Linux `codel_Newton_step`,
    /// same fixed-point arithmetic, including its wrap-around).
    pub fn newton_step(&mut self) {
        let invsqrt = (self.rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT;
        let invsqrt2 = ((invsqrt as u64 * invsqrt as u64) >> 32) as u32;
        let mut val: u64 = (3u64 << 32).wrapping_sub(self.count as u64 * invsqrt2 as u64);
        val >>= 2;
        val = val.wrapping_mul(invsqrt as u64) >> (32 - 2 + 1);
        self.rec_inv_sqrt = (val >> REC_INV_SQRT_SHIFT) as u16;
    }

    /// `t + interval/√count` (Linux `codel_control_law`, or exact).
    fn control_law(&self, t: u64, params: &CodelParams) -> u64 {
        if params.exact_sqrt || params.ns2 {
            let c = self.count.max(1) as f64;
            t + (params.interval_ns as f64 / c.sqrt()).round() as u64
        } else {
            let scale = ((self.rec_inv_sqrt as u64) << REC_INV_SQRT_SHIFT) as u128;
            t + ((params.interval_ns as u128 * scale) >> 32) as u64
        }
    }
}

/// What CoDel dequeues from: one FIFO and the backlog its minimum-backlog check uses.
pub(crate) trait CodelQueue {
    /// Remove the head packet and account for it; `None` when empty.
    fn pop(&mut self, ctx: &mut QdiscCtx<'_>) -> Option<PacketId>;
    /// Backlog (bytes) compared with `mtu`, after the pop.
    fn backlog_bytes(&self) -> u64;
}

/// Linux `codel_should_drop`.
fn should_drop<Q: CodelQueue>(
    id: Option<PacketId>,
    q: &Q,
    params: &CodelParams,
    vars: &mut CodelVars,
    ctx: &QdiscCtx<'_>,
) -> bool {
    let Some(id) = id else {
        vars.first_above_time = None;
        return false;
    };
    let now = ctx.now_ns;
    vars.ldelay = now.saturating_sub(ctx.pool.get(id).enqueue_ns);
    if vars.ldelay < params.target_ns || q.backlog_bytes() <= params.mtu_bytes {
        vars.first_above_time = None;
        return false;
    }
    match vars.first_above_time {
        None => {
            let since_last = now as i128 - vars.drop_next as i128;
            vars.first_above_time = Some(
                if params.ns2 && since_last < 8 * params.interval_ns as i128 && vars.count > 1 {
                    vars.control_law(now, params)
                } else {
                    now + params.interval_ns
                },
            );
            false
        }
        Some(t) if params.ns2 => now >= t,
        Some(t) => now > t,
    }
}

/// Linux `codel_dequeue`: dequeue from `q`, dropping or marking per CoDel's control law.
pub(crate) fn codel_dequeue<Q: CodelQueue>(
    q: &mut Q,
    params: &CodelParams,
    vars: &mut CodelVars,
    ctx: &mut QdiscCtx<'_>,
) -> Option<PacketId> {
    let mut skb = q.pop(ctx);
    if skb.is_none() {
        vars.dropping = false;
        return None;
    }
    let now = ctx.now_ns;
    let drop = should_drop(skb, q, params, vars, ctx);
    if params.ns2 {
        return ns2_dequeue(q, skb, drop, params, vars, ctx);
    }
    'end: {
        if vars.dropping {
            if !drop {
                vars.dropping = false;
            } else if now >= vars.drop_next {
                while vars.dropping && now >= vars.drop_next {
                    vars.count = vars.count.wrapping_add(1);
                    vars.newton_step();
                    let id = skb.expect("dropping state holds a packet");
                    if params.ecn && ctx.mark_ce(id) {
                        vars.drop_next = vars.control_law(vars.drop_next, params);
                        break 'end;
                    }
                    ctx.drop_packet(id);
                    skb = q.pop(ctx);
                    if !should_drop(skb, q, params, vars, ctx) {
                        vars.dropping = false;
                    } else {
                        vars.drop_next = vars.control_law(vars.drop_next, params);
                    }
                }
            }
        } else if drop {
            let id = skb.expect("drop decision was made on a packet");
            if !(params.ecn && ctx.mark_ce(id)) {
                ctx.drop_packet(id);
                skb = q.pop(ctx);
                // Linux re-evaluates here only for its side effects on the state.
                should_drop(skb, q, params, vars, ctx);
            }
            vars.dropping = true;
            let delta = vars.count.wrapping_sub(vars.lastcount);
            let since_last = now as i128 - vars.drop_next as i128;
            if delta > 1 && since_last < 16 * params.interval_ns as i128 {
                vars.count = delta;
                vars.newton_step();
            } else {
                vars.count = 1;
                vars.rec_inv_sqrt = (!0u32 >> REC_INV_SQRT_SHIFT) as u16;
            }
            vars.lastcount = vars.count;
            vars.drop_next = vars.control_law(now, params);
        }
    }
    if let (Some(id), Some(th)) = (skb, params.ce_threshold_ns) {
        if vars.ldelay > th && ctx.pool.get(id).ecn != Ecn::Ce {
            ctx.mark_ce(id);
        }
    }
    skb
}

/// ns-2.35 `CoDelQueue::deque()` after the first `dodeque()` (`skb`, `drop`).
fn ns2_dequeue<Q: CodelQueue>(
    q: &mut Q,
    mut skb: Option<PacketId>,
    drop: bool,
    params: &CodelParams,
    vars: &mut CodelVars,
    ctx: &mut QdiscCtx<'_>,
) -> Option<PacketId> {
    let now = ctx.now_ns;
    if vars.dropping {
        if !drop {
            vars.dropping = false;
        }
        while now >= vars.drop_next && vars.dropping {
            let id = skb.expect("dropping state holds a packet");
            if params.ecn && ctx.mark_ce(id) {
                vars.count = vars.count.wrapping_add(1);
                vars.drop_next = vars.control_law(vars.drop_next, params);
                break;
            }
            ctx.drop_packet(id);
            skb = q.pop(ctx);
            if !should_drop(skb, q, params, vars, ctx) {
                vars.dropping = false;
            } else {
                vars.count = vars.count.wrapping_add(1);
                vars.drop_next = vars.control_law(vars.drop_next, params);
            }
        }
    } else if drop {
        let id = skb.expect("drop decision was made on a packet");
        if !(params.ecn && ctx.mark_ce(id)) {
            ctx.drop_packet(id);
            skb = q.pop(ctx);
            should_drop(skb, q, params, vars, ctx);
        }
        vars.dropping = true;
        let since_last = now as i128 - vars.drop_next as i128;
        if vars.count > 2 && since_last < 8 * params.interval_ns as i128 {
            vars.count -= 2;
            if vars.count > 126 {
                // `count_` is an int in ns-2: the product is truncated.
                vars.count = (0.9844 * f64::from(vars.count + 2)) as u32;
            }
        } else {
            vars.count = 1;
        }
        vars.drop_next = vars.control_law(now, params);
    }
    skb
}

/// CoDel's parameters shared with FQ-CoDel.
pub(crate) const TARGET: Param = Param {
    name: "target",
    kind: POSITIVE_DURATION,
    default: "\"5ms\"",
    help: "target sojourn time",
};
pub(crate) const INTERVAL: Param = Param {
    name: "interval",
    kind: POSITIVE_DURATION,
    default: "\"100ms\"",
    help: "interval: about a worst-case RTT",
};
pub(crate) const ECN: Param = Param {
    name: "ecn",
    kind: Kind::Bool,
    default: "false",
    help: "CE-mark ECT packets instead of dropping",
};
pub(crate) const CE_THRESHOLD: Param = Param {
    name: "ce_threshold",
    kind: ANY_DURATION,
    default: "none",
    help: "CE-mark every ECT packet whose sojourn exceeds it",
};
pub(crate) const MTU: Param = Param {
    name: "mtu",
    kind: Kind::Size {
        what: None,
        ok: |_| true,
    },
    default: "the link's MTU",
    help: "below this backlog nothing is dropped",
};
pub(crate) const EXACT_SQRT: Param = Param {
    name: "exact_sqrt",
    kind: Kind::Bool,
    default: "false",
    help:
        "`true`: exact `interval/√count` (RFC 8289 pseudocode); `false`: Linux's Q0.16 Newton step",
};
pub(crate) const LIMIT: Param = Param {
    name: "limit",
    kind: Kind::Limit,
    default: "\"1000p\"",
    help: "tail-drop limit (Linux: packets; here also bytes or BDPs)",
};

/// CoDel's parameters.
pub const TABLE: Algorithm = Algorithm {
    name: "codel",
    aliases: &[],
    family: Family::QueueDiscipline,
    summary: "Controlled Delay: drops at dequeue when the sojourn time stays above target",
    reference: "Linux net/sched/sch_codel.c, include/net/codel_impl.h; RFC 8289; ns-2 codel.cc (variant ns2)",
    params: &[
        TARGET,
        INTERVAL,
        ECN,
        CE_THRESHOLD,
        MTU,
        EXACT_SQRT,
        LIMIT,
        Param {
            name: "variant",
            kind: Kind::Keyword {
                values: &["linux", "ns2"],
                unknown: "expected \"linux\" or \"ns2\", got {got}",
                trim: true,
            },
            default: "\"linux\"",
            help: "`\"ns2\"`: ns-2.35's `queue/codel.cc` (Nichols 2012), which 2012-2014 ns-2 studies ran (paper 002): re-entry at `count − 2` within 8 intervals (Linux: `count − lastcount` within 16), re-arm after `interval/√count` when the delay rises again within 8 intervals of the last drop, drops from `now ≥ first_above_time`, `count` grown after a drop only if the next packet also says drop, exact square root",
        },
    ],
};

/// Read the CoDel parameters common to CoDel and FQ-CoDel.
pub(crate) fn read_codel_params(
    r: &Reader<'_>,
    link: LinkInfo,
    default_ecn: bool,
) -> Result<CodelParams, ScenarioError> {
    let target_ns = r.ns("target", 5_000_000)?;
    let interval_ns = r.ns("interval", 100_000_000)?;
    let ecn = r.boolean("ecn", default_ecn)?;
    let ce_threshold_ns = r.get("ce_threshold")?.map(Value::ns);
    let mtu_bytes = r.bytes("mtu", link.mtu_bytes as u64)?;
    let exact_sqrt = r.boolean("exact_sqrt", false)?;
    Ok(CodelParams {
        target_ns,
        interval_ns,
        mtu_bytes,
        ecn,
        ce_threshold_ns,
        exact_sqrt,
        ns2: false,
    })
}

/// The single-queue CoDel qdisc (Linux `sch_codel.c`).
#[derive(Debug)]
pub struct Codel {
    params: CodelParams,
    vars: CodelVars,
    limit: Limit,
    queue: VecDeque<PacketId>,
    bytes: u64,
}

/// The FIFO CoDel dequeues from.
struct Fifo<'a> {
    queue: &'a mut VecDeque<PacketId>,
    bytes: &'a mut u64,
}

impl CodelQueue for Fifo<'_> {
    #[inline]
    fn pop(&mut self, ctx: &mut QdiscCtx<'_>) -> Option<PacketId> {
        let id = self.queue.pop_front()?;
        *self.bytes -= ctx.pool.get(id).size_bytes as u64;
        Some(id)
    }
    #[inline]
    fn backlog_bytes(&self) -> u64 {
        *self.bytes
    }
}

impl Codel {
    pub fn new(params: CodelParams, limit: Limit) -> Self {
        Codel {
            params,
            vars: CodelVars::default(),
            limit,
            queue: VecDeque::new(),
            bytes: 0,
        }
    }

    pub fn from_spec(spec: &AlgoSpec, path: &str, link: LinkInfo) -> Result<Self, ScenarioError> {
        let r = Reader::new(&TABLE, spec, path);
        let mut params = read_codel_params(&r, link, false)?;
        params.ns2 = r.word("variant", "linux")? == "ns2";
        let limit = r.limit("limit")?.unwrap_or(QueueLimit::Packets(1000));
        r.finish()?;
        Ok(Codel::new(params, resolve_limit(limit, link)))
    }

    pub fn params(&self) -> &CodelParams {
        &self.params
    }

    /// The control state (for tests and traces).
    pub fn vars(&self) -> &CodelVars {
        &self.vars
    }
}

impl QueueDisc for Codel {
    /// Linux `sch_codel.c`: `.peek = qdisc_peek_dequeued`.
    fn peek_dequeues(&self) -> bool {
        true
    }
    #[inline]
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx<'_>) {
        let size = ctx.pool.get(id).size_bytes as u64;
        if self.limit.admits(self.queue.len(), self.bytes, size) {
            self.queue.push_back(id);
            self.bytes += size;
        } else {
            ctx.drop_packet(id);
        }
    }

    #[inline]
    fn dequeue(&mut self, ctx: &mut QdiscCtx<'_>) -> Option<PacketId> {
        let mut fifo = Fifo {
            queue: &mut self.queue,
            bytes: &mut self.bytes,
        };
        codel_dequeue(&mut fifo, &self.params, &mut self.vars, ctx)
    }

    fn peek(&self) -> Option<PacketId> {
        self.queue.front().copied()
    }

    fn len_packets(&self) -> usize {
        self.queue.len()
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }

    fn held(&self) -> Vec<PacketId> {
        self.queue.iter().copied().collect()
    }
    fn state(&self, _now_ns: u64, out: &mut Vec<(&'static str, f64)>) {
        out.push(("dropping", f64::from(u8::from(self.vars.dropping))));
        out.push(("count", f64::from(self.vars.count)));
        out.push(("ldelay_ms", self.vars.ldelay as f64 / 1e6));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Newton iterates from Linux's arithmetic, worked by hand in Q0.16: count 2 from
    /// 0xFFFF: invsqrt = 0xFFFF0000, invsqrt² >> 32 = 0xFFFE0001,
    /// (3·2³² − 2·0xFFFE0001) >> 2 = 0x4000FFFF, × 0xFFFF0000 >> 31 >> 16 = 0x8001
    /// (x/2·(3 − 2x²) at x ≈ 1 is 0.5, not 1/√2: Linux's second drop interval is
    /// interval/2). Count 3 from there: 0.25·(3 − 3·0.25) = 0.5625 = 0x9000.
    #[test]
    fn newton_step_matches_linux_fixed_point() {
        let mut v = CodelVars {
            count: 2,
            rec_inv_sqrt: 0xFFFF,
            ..Default::default()
        };
        v.newton_step();
        assert_eq!(v.rec_inv_sqrt, 0x8001);
        v.count = 3;
        v.newton_step();
        assert_eq!(v.rec_inv_sqrt, 0x9000);
        // Converges towards 1/sqrt(count) with repeated steps at a fixed count.
        let mut w = CodelVars {
            count: 4,
            rec_inv_sqrt: 0xFFFF,
            ..Default::default()
        };
        for _ in 0..8 {
            w.newton_step();
        }
        assert!((w.rec_inv_sqrt as f64 / 65536.0 - 0.5).abs() < 1e-3);
    }
}
