//! FQ-CoDel: flow queueing with a CoDel instance per queue (RFC 8290, Linux
//! `net/sched/sch_fq_codel.c`).
//!
//! - Classification: the packet's flow id is hashed with a per-instance perturbation and
//!   scaled onto `flows` buckets (`reciprocal_scale(hash, flows)` as Linux
//!   `fq_codel_hash`); distinct flows may collide, as in Linux.
//! - Scheduling (RFC 8290 §4.2, Linux `fq_codel_dequeue`): deficit round robin with
//!   quantum `quantum` over two lists. A queue that gets a packet while on neither list
//!   joins the tail of *new_flows* with `deficit = quantum`. Dequeue serves the head of
//!   new_flows, else of old_flows; a head whose deficit is ≤ 0 gets `+quantum` and moves
//!   to the tail of old_flows. A queue found empty moves from new_flows to old_flows when
//!   old_flows is non-empty (anti-starvation), else leaves the lists.
//! - Each queue runs CoDel ([`super::codel`]) with shared parameters; the minimum-backlog
//!   check uses the qdisc's *total* backlog (Linux passes `sch->qstats.backlog`).
//!   `backlog_check = "flow"` compares the flow queue's own backlog instead, as ns-3's
//!   `FqCoDelQueueDisc` does (each flow queue is a `CoDelQueueDisc` whose `OkToDrop`
//!   tests `GetInternalQueue(0)->GetNBytes() < m_minBytes`, ns-3-dev
//!   `src/traffic-control/model/codel-queue-disc.cc`): a flow with one packet queued is
//!   then never dropped or marked however long it waited, so with many flows of small
//!   windows the queue runs longer than Linux's. Default `"qdisc"` (Linux).
//! - Overflow (RFC 8290 §4.1.3, Linux `fq_codel_drop`): when the packet count exceeds
//!   `limit` after an enqueue, the queue with the largest byte backlog loses packets from
//!   its head until half its backlog or `drop_batch_size` packets are gone (at least
//!   one), and its CoDel `count` grows by the number dropped.
//!
//! Defaults (Linux `fq_codel_init`): 1024 flows, limit 10240 packets (`"10240p"`; a
//! `"2bdp"` multiple is resolved to packets), quantum = MTU
//! (Linux uses the device MTU, 1514 on Ethernet; here [`LinkInfo::mtu_bytes`]), target
//! 5 ms, interval 100 ms, **ECN on**, ce_threshold off, drop_batch_size 64.
//!
//! Departures:
//! - Hashing uses the flow id (not a 5-tuple): SplitMix64 of `flow ^ seed`, where the
//!   seed is `hash_seed` if given, else drawn once from the discipline's random stream at
//!   the first enqueue (Linux draws `hashrnd` at boot).
//! - `memory_limit` (32 MiB of skb truesize in Linux) is not modelled: sizes here are
//!   wire sizes and only `limit` bounds the queue.
//! - CoDel departures as in [`super::codel`].

use std::collections::VecDeque;

use super::codel::{self, codel_dequeue, read_codel_params, CodelParams, CodelQueue, CodelVars};
use super::common::bdp_packets;
use super::{LinkInfo, QdiscCtx, QueueDisc};
use crate::engine::rng::splitmix64;
use crate::net::packet::PacketId;
use crate::params::{self, Algorithm, Family, Kind, Param, Reader, Value};
use crate::scenario::{AlgoSpec, ByteSize, ParamValue, QueueLimit, ScenarioError};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

#[derive(Debug)]
struct Flow {
    queue: VecDeque<PacketId>,
    backlog: u64,
    deficit: i64,
    vars: CodelVars,
    list: List,
}

/// FQ-CoDel.
#[derive(Debug)]
pub struct FqCodel {
    params: CodelParams,
    flows: Vec<Flow>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    quantum: i64,
    limit: u64,
    drop_batch_size: u32,
    hash_seed: Option<u64>,
    /// CoDel's minimum-backlog check looks at the flow's own backlog (ns-3), not the
    /// qdisc's (Linux).
    flow_backlog_check: bool,
    qlen: usize,
    bytes: u64,
}

/// One flow's FIFO seen by CoDel, with the qdisc totals it must keep in step.
struct FlowFifo<'a> {
    queue: &'a mut VecDeque<PacketId>,
    flow_backlog: &'a mut u64,
    total_bytes: &'a mut u64,
    total_len: &'a mut usize,
    flow_backlog_check: bool,
}

impl CodelQueue for FlowFifo<'_> {
    #[inline]
    fn pop(&mut self, ctx: &mut QdiscCtx<'_>) -> Option<PacketId> {
        let id = self.queue.pop_front()?;
        let size = ctx.pool.get(id).size_bytes as u64;
        *self.flow_backlog -= size;
        *self.total_bytes -= size;
        *self.total_len -= 1;
        Some(id)
    }
    #[inline]
    fn backlog_bytes(&self) -> u64 {
        if self.flow_backlog_check {
            *self.flow_backlog
        } else {
            *self.total_bytes
        }
    }
}

/// FQ-CoDel's parameters.
pub const TABLE: Algorithm = Algorithm {
    name: "fq_codel",
    aliases: &[],
    family: Family::QueueDiscipline,
    summary: "flow queueing (deficit round robin) with a CoDel instance per queue",
    reference: "Linux net/sched/sch_fq_codel.c; RFC 8290",
    params: &[
        codel::TARGET,
        codel::INTERVAL,
        Param {
            default: "true",
            ..codel::ECN
        },
        codel::CE_THRESHOLD,
        codel::MTU,
        codel::EXACT_SQRT,
        Param {
            name: "limit",
            kind: Kind::Custom {
                unit: "queue limit",
                accepts: "a packet limit like \"10240p\" or \"2bdp\"",
                read: packet_limit,
            },
            default: "\"10240p\"",
            help: "packets in all queues, like Linux's (`\"Np\"`, or a BDP multiple `\"2bdp\"` resolved to packets); a byte limit is refused",
        },
        Param {
            name: "flows",
            kind: Kind::Number {
                what: "a whole number of flow queues in 1..=65536",
                ok: |x| x.fract() == 0.0 && (1.0..=65536.0).contains(&x),
            },
            default: "1024",
            help: "number of queues",
        },
        Param {
            name: "quantum",
            kind: Kind::Custom {
                unit: "size",
                accepts: "a size between \"256B\" and \"1MiB\"",
                read: quantum,
            },
            default: "the link's MTU",
            help: "DRR quantum",
        },
        Param {
            name: "drop_batch_size",
            kind: Kind::Number {
                what: "a whole number of packets in 1..=1000000",
                ok: |x| x.fract() == 0.0 && (1.0..=1e6).contains(&x),
            },
            default: "64",
            help: "most packets dropped from the fattest queue at once when over limit",
        },
        Param {
            name: "hash_seed",
            kind: Kind::Number {
                what: "a non-negative whole number",
                ok: |x| x.fract() == 0.0 && (0.0..=9.007_199_254_740_992e15).contains(&x),
            },
            default: "drawn from the run's seed",
            help: "fixes the flow-to-queue hash",
        },
        Param {
            name: "backlog_check",
            kind: Kind::Keyword {
                values: &["qdisc", "flow"],
                unknown: "expected \"qdisc\" (Linux: the qdisc's backlog) or \"flow\" (ns-3: the flow queue's), got {got}",
                trim: false,
            },
            default: "\"qdisc\"",
            help: "the backlog CoDel's minimum-backlog check compares with `mtu`: `\"qdisc\"`, the whole qdisc's (Linux passes `sch->qstats.backlog`), or `\"flow\"`, the flow queue's own (ns-3's `FqCoDelQueueDisc`, whose per-flow `CoDelQueueDisc` tests its own bytes against `MinBytes`): then a flow with one packet queued is never dropped or marked, however long it waited",
        },
    ],
};

/// Linux's fq_codel `limit` counts packets: "10240p", or a BDP multiple in packets; a
/// byte limit has no meaning for it.
fn packet_limit(value: &ParamValue) -> Result<Value, String> {
    let s = params::text(value)?;
    match QueueLimit::parse(s)? {
        QueueLimit::Bytes(_) => Err(format!(
            "fq_codel's limit counts packets, as Linux's does: expected a limit like \"10240p\" or \"2bdp\", got {s:?}"
        )),
        l => Ok(Value::Limit(l)),
    }
}

/// Linux: max(256, quantum), at most FQ_CODEL_QUANTUM_MAX (1 << 20).
fn quantum(value: &ParamValue) -> Result<Value, String> {
    let s = params::text(value)?;
    let b = ByteSize::parse(s)?;
    if b.bytes < 256 || b.bytes > 1 << 20 {
        return Err(format!(
            "expected a quantum between \"256B\" and \"1MiB\" (Linux bounds), got {s:?}"
        ));
    }
    Ok(Value::Bytes(b.bytes))
}

impl FqCodel {
    /// `flows` ≥ 1 buckets, `quantum` bytes, `limit` packets; `flow_backlog_check`: CoDel's
    /// minimum-backlog test on the flow queue (ns-3) instead of the qdisc (Linux).
    pub fn new(
        params: CodelParams,
        flows: u32,
        quantum: u32,
        limit: u64,
        drop_batch_size: u32,
        hash_seed: Option<u64>,
        flow_backlog_check: bool,
    ) -> Self {
        let flows = (0..flows)
            .map(|_| Flow {
                queue: VecDeque::new(),
                backlog: 0,
                deficit: 0,
                vars: CodelVars::default(),
                list: List::None,
            })
            .collect();
        FqCodel {
            params,
            flows,
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            quantum: quantum as i64,
            limit,
            drop_batch_size,
            hash_seed,
            flow_backlog_check,
            qlen: 0,
            bytes: 0,
        }
    }

    pub fn from_spec(spec: &AlgoSpec, path: &str, link: LinkInfo) -> Result<Self, ScenarioError> {
        let r = Reader::new(&TABLE, spec, path);
        let params = read_codel_params(&r, link, true)?;
        let limit = match r.limit("limit")?.unwrap_or(QueueLimit::Packets(10240)) {
            QueueLimit::Packets(n) => n,
            QueueLimit::Bdp(f) => bdp_packets(f, link),
            QueueLimit::Bytes(_) => unreachable!("packet_limit refuses byte limits"),
        };
        let flows = r.number("flows", 1024.0)? as u32;
        let quantum = r.bytes("quantum", link.mtu_bytes as u64)?;
        let batch = r.number("drop_batch_size", 64.0)? as u32;
        let seed = r.number("hash_seed", -1.0)?;
        let flow_backlog_check = r.word("backlog_check", "qdisc")? == "flow";
        r.finish()?;
        let seed = (seed >= 0.0).then_some(seed as u64);
        Ok(FqCodel::new(
            params,
            flows,
            quantum as u32,
            limit,
            batch,
            seed,
            flow_backlog_check,
        ))
    }

    /// The bucket of a flow id (Linux `fq_codel_hash`: `reciprocal_scale(hash, flows)`).
    fn bucket(&self, flow: u32, seed: u64) -> usize {
        let h = splitmix64(flow as u64 ^ seed) >> 32;
        ((h * self.flows.len() as u64) >> 32) as usize
    }

    /// Number of flow queues.
    pub fn flows(&self) -> usize {
        self.flows.len()
    }

    /// Linux `fq_codel_drop`: drop from the head of the fattest queue.
    fn drop_from_fattest(&mut self, ctx: &mut QdiscCtx<'_>) {
        let mut maxbacklog = 0;
        let mut idx = 0;
        for (i, f) in self.flows.iter().enumerate() {
            if f.backlog > maxbacklog {
                maxbacklog = f.backlog;
                idx = i;
            }
        }
        let threshold = maxbacklog >> 1;
        let flow = &mut self.flows[idx];
        let mut len = 0u64;
        let mut i = 0u32;
        while let Some(id) = flow.queue.pop_front() {
            let size = ctx.pool.get(id).size_bytes as u64;
            len += size;
            ctx.drop_packet(id);
            i += 1;
            if i >= self.drop_batch_size || len >= threshold {
                break;
            }
        }
        flow.vars.count = flow.vars.count.wrapping_add(i);
        flow.backlog -= len;
        self.bytes -= len;
        self.qlen -= i as usize;
    }
}

impl QueueDisc for FqCodel {
    /// Linux `sch_fq_codel.c`: `.peek = qdisc_peek_dequeued`.
    fn peek_dequeues(&self) -> bool {
        true
    }
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx<'_>) {
        let seed = match self.hash_seed {
            Some(s) => s,
            None => {
                let s = ctx.rng.next_u64();
                self.hash_seed = Some(s);
                s
            }
        };
        let p = ctx.pool.get(id);
        let (flow_id, size) = (p.flow, p.size_bytes as u64);
        let idx = self.bucket(flow_id, seed);
        let flow = &mut self.flows[idx];
        flow.queue.push_back(id);
        flow.backlog += size;
        self.bytes += size;
        if flow.list == List::None {
            flow.list = List::New;
            flow.deficit = self.quantum;
            self.new_flows.push_back(idx as u32);
        }
        self.qlen += 1;
        if self.qlen as u64 > self.limit {
            self.drop_from_fattest(ctx);
        }
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx<'_>) -> Option<PacketId> {
        loop {
            let from_new = !self.new_flows.is_empty();
            let idx = if from_new {
                self.new_flows[0]
            } else {
                *self.old_flows.front()?
            } as usize;
            let flow = &mut self.flows[idx];
            if flow.deficit <= 0 {
                flow.deficit += self.quantum;
                flow.list = List::Old;
                if from_new {
                    self.new_flows.pop_front();
                } else {
                    self.old_flows.pop_front();
                }
                self.old_flows.push_back(idx as u32);
                continue;
            }
            let Flow {
                queue,
                backlog,
                vars,
                ..
            } = flow;
            let mut fifo = FlowFifo {
                queue,
                flow_backlog: backlog,
                total_bytes: &mut self.bytes,
                total_len: &mut self.qlen,
                flow_backlog_check: self.flow_backlog_check,
            };
            let skb = codel_dequeue(&mut fifo, &self.params, vars, ctx);
            let Some(id) = skb else {
                if from_new {
                    self.new_flows.pop_front();
                } else {
                    self.old_flows.pop_front();
                }
                if from_new && !self.old_flows.is_empty() {
                    flow.list = List::Old;
                    self.old_flows.push_back(idx as u32);
                } else {
                    flow.list = List::None;
                }
                continue;
            };
            flow.deficit -= ctx.pool.get(id).size_bytes as i64;
            return Some(id);
        }
    }

    fn peek(&self) -> Option<PacketId> {
        // The queue DRR would most likely serve next: the first non-empty listed queue.
        self.new_flows
            .iter()
            .chain(self.old_flows.iter())
            .find_map(|&i| self.flows[i as usize].queue.front().copied())
    }

    fn len_packets(&self) -> usize {
        self.qlen
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }

    fn held(&self) -> Vec<PacketId> {
        self.flows
            .iter()
            .flat_map(|f| f.queue.iter().copied())
            .collect()
    }
}
