//! Queue disciplines behind the [`QueueDisc`] trait.
//!
//! Modelled on ns-3's `QueueDisc` (`src/traffic-control/model/queue-disc.h`): the link
//! does the bookkeeping (arrival/departure/drop/mark counters per queue and per flow,
//! sojourn time of every departing packet) and calls the discipline only for its
//! decisions. A discipline may drop at enqueue or at dequeue (CoDel, CSAQM) and may mark
//! instead of dropping; it reports both through [`QdiscCtx`]. There is one queue layer:
//! the packet being serialised has left the queue (like Linux with a one-packet device
//! queue), and nothing hides below the discipline.
//!
//! Disciplines are selected through the [`Qdisc`] enum so the per-packet path dispatches
//! statically; the engine never names an algorithm — [`build`] maps a scenario's
//! `queue = { kind = ... }` to an instance.

pub mod codel;
pub mod common;
pub mod csaqm;
pub mod droptail;
pub mod dualpi2;
pub mod fifo;
pub mod fq_codel;
pub mod pie;
pub mod pvpie;
pub mod red;
pub mod shaper;

pub use shaper::build_shaped;

use crate::engine::rng::SimRng;
use crate::net::packet::{Ecn, PacketId, PacketPool};
use crate::scenario::{AlgoSpec, ScenarioError};

/// What a discipline may touch while deciding.
pub struct QdiscCtx<'a> {
    pub now_ns: u64,
    pub pool: &'a mut PacketPool,
    /// Packets the discipline dropped during this call (the link frees and counts them).
    pub dropped: &'a mut Vec<PacketId>,
    /// Packets the discipline CE-marked during this call (the link counts them).
    pub marked: &'a mut Vec<PacketId>,
    /// The discipline's own random stream.
    pub rng: &'a mut SimRng,
}

impl QdiscCtx<'_> {
    /// Drop `id` (already removed from, or never added to, the discipline's storage).
    #[inline]
    pub fn drop_packet(&mut self, id: PacketId) {
        self.dropped.push(id);
    }

    /// Set CE on an ECN-capable packet (RFC 3168 §5). Returns false for a Not-ECT packet,
    /// which the caller must then drop instead, as every Linux qdisc does when
    /// `INET_ECN_set_ce` fails.
    #[inline]
    pub fn mark_ce(&mut self, id: PacketId) -> bool {
        let p = self.pool.get_mut(id);
        if !p.ecn.is_ect() {
            return false;
        }
        p.ecn = Ecn::Ce;
        self.marked.push(id);
        true
    }
}

/// What a link asks of a queue discipline.
pub trait QueueDisc {
    /// Accept `id` into the queue, or drop it (or another packet) through `ctx`.
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx<'_>);
    /// The next packet to transmit, if any. May drop or mark packets on the way.
    fn dequeue(&mut self, ctx: &mut QdiscCtx<'_>) -> Option<PacketId>;
    /// The packet `dequeue` would most likely return next, without removing it.
    fn peek(&self) -> Option<PacketId>;
    /// Packets held.
    fn len_packets(&self) -> usize;
    /// Bytes held.
    fn len_bytes(&self) -> u64;
    /// For shapers: the earliest time a held packet may leave, when `dequeue` returned
    /// `None` although packets are held.
    fn next_ready_ns(&self, _now_ns: u64) -> Option<u64> {
        None
    }
    /// Every packet held, for end-of-run accounting.
    fn held(&self) -> Vec<PacketId>;
    /// Whether a parent that peeks this discipline (a shaper waiting for tokens) takes
    /// the packet out at once, as Linux does for disciplines whose `.peek` is
    /// `qdisc_peek_dequeued` (include/net/sch_generic.h: pie, codel, fq_codel): their
    /// dequeue (drop decision, delay sample) then runs when the parent first looks at
    /// the packet, not when the tokens let it go. `false`: the parent peeks the head
    /// without dequeuing it (Linux `qdisc_peek_head`: pfifo, bfifo, red's child).
    fn peek_dequeues(&self) -> bool {
        false
    }
    /// Whether the discipline ever uses [`QueueDisc::timer_deadline`]; asked once when the
    /// link is built, so that timer-free disciplines cost nothing per packet.
    fn uses_timer(&self) -> bool {
        false
    }
    /// When the discipline next wants [`QueueDisc::on_timer`] called (periodic updates
    /// such as PIE's drop-probability calculation every `tupdate`), or `None`.
    /// Asked after every enqueue, dequeue and timer call.
    fn timer_deadline(&self) -> Option<u64> {
        None
    }
    /// The time returned by `timer_deadline` has come.
    fn on_timer(&mut self, _ctx: &mut QdiscCtx<'_>) {}
    /// The discipline's control state for the `qdisc_state` trace, as `(name, value)`
    /// pairs with the unit in the name (PIE's `drop_prob` and `qdelay_ms`, CoDel's
    /// `dropping` and `count`, ...). Called only when the trace samples it, never on the
    /// per-packet path.
    fn state(&self, _now_ns: u64, _out: &mut Vec<(&'static str, f64)>) {}
}

/// The disciplines ccsim knows, dispatched statically. The AQMs are boxed so that a
/// link (and thousands of uncongested DropTail access links) stays small in cache.
#[derive(Debug)]
pub enum Qdisc {
    DropTail(droptail::DropTail),
    Pie(Box<pie::Pie>),
    Codel(Box<codel::Codel>),
    Red(Box<red::Red>),
    FqCodel(Box<fq_codel::FqCodel>),
    Csaqm(Box<csaqm::Csaqm>),
    PvPie(Box<pvpie::PvPie>),
    /// DualPI2 (`dualpi2`) or PI2 in one queue (`pi2`).
    DualPi2(Box<dualpi2::DualPi2>),
    /// A token-bucket shaper in front of another discipline.
    Shaped(Box<shaper::Shaped>),
}

macro_rules! each_qdisc {
    ($self:expr, $q:ident => $body:expr) => {
        match $self {
            Qdisc::DropTail($q) => $body,
            Qdisc::Pie($q) => $body,
            Qdisc::Codel($q) => $body,
            Qdisc::Red($q) => $body,
            Qdisc::FqCodel($q) => $body,
            Qdisc::Csaqm($q) => $body,
            Qdisc::PvPie($q) => $body,
            Qdisc::DualPi2($q) => $body,
            Qdisc::Shaped($q) => $body,
        }
    };
}

impl Qdisc {
    /// An empty DropTail queue that would admit a packet of `size_bytes`: enqueueing it
    /// and dequeueing it at once would return it with no other effect
    /// (`net::datapath::enqueue`'s fast path).
    #[inline]
    pub fn is_empty_droptail_admitting(&self, size_bytes: u64) -> bool {
        match self {
            Qdisc::DropTail(q) => q.len_packets() == 0 && q.admits(size_bytes),
            _ => false,
        }
    }

    /// The discipline's name as written in scenario files.
    pub fn kind(&self) -> &'static str {
        match self {
            Qdisc::DropTail(_) => "droptail",
            Qdisc::Pie(_) => "pie",
            Qdisc::Codel(_) => "codel",
            Qdisc::Red(_) => "red",
            Qdisc::FqCodel(_) => "fq_codel",
            Qdisc::Csaqm(_) => "csaqm",
            Qdisc::PvPie(_) => "pvpie",
            Qdisc::DualPi2(q) => match q.config().mode {
                dualpi2::Mode::Dual => "dualpi2",
                dualpi2::Mode::Single => "pi2",
            },
            Qdisc::Shaped(s) => s.inner().kind(),
        }
    }

    /// Tell rate-aware disciplines that the link rate changed (CSAQM's capacity when it
    /// defaulted to the link rate; RED's idle-decay clock).
    pub fn link_rate_changed(&mut self, rate_bps: u64) {
        match self {
            Qdisc::Csaqm(q) => q.link_rate_changed(rate_bps),
            Qdisc::Red(q) => q.link_rate_changed(rate_bps),
            Qdisc::Shaped(s) => s.link_rate_changed(rate_bps),
            _ => {}
        }
    }
}

impl QueueDisc for Qdisc {
    #[inline]
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx<'_>) {
        each_qdisc!(self, q => q.enqueue(id, ctx))
    }
    #[inline]
    fn dequeue(&mut self, ctx: &mut QdiscCtx<'_>) -> Option<PacketId> {
        each_qdisc!(self, q => q.dequeue(ctx))
    }
    #[inline]
    fn peek(&self) -> Option<PacketId> {
        each_qdisc!(self, q => q.peek())
    }
    #[inline]
    fn len_packets(&self) -> usize {
        each_qdisc!(self, q => q.len_packets())
    }
    #[inline]
    fn len_bytes(&self) -> u64 {
        each_qdisc!(self, q => q.len_bytes())
    }
    fn next_ready_ns(&self, now_ns: u64) -> Option<u64> {
        each_qdisc!(self, q => q.next_ready_ns(now_ns))
    }
    fn held(&self) -> Vec<PacketId> {
        each_qdisc!(self, q => q.held())
    }
    fn peek_dequeues(&self) -> bool {
        each_qdisc!(self, q => q.peek_dequeues())
    }
    fn uses_timer(&self) -> bool {
        each_qdisc!(self, q => q.uses_timer())
    }
    #[inline]
    fn timer_deadline(&self) -> Option<u64> {
        each_qdisc!(self, q => q.timer_deadline())
    }
    fn on_timer(&mut self, ctx: &mut QdiscCtx<'_>) {
        each_qdisc!(self, q => q.on_timer(ctx))
    }
    fn state(&self, now_ns: u64, out: &mut Vec<(&'static str, f64)>) {
        each_qdisc!(self, q => q.state(now_ns, out))
    }
}

/// What a discipline needs to know about its link to resolve its parameters.
#[derive(Debug, Clone, Copy)]
pub struct LinkInfo {
    pub rate_bps: u64,
    /// Bandwidth-delay product in bytes, for `"1bdp"`-style limits.
    pub bdp_bytes: f64,
    /// Packet size used to turn BDPs into packet counts.
    pub mtu_bytes: u32,
}

/// Every queue discipline's parameter table, in [`KNOWN_KINDS`] order.
pub fn tables() -> Vec<crate::params::AlgorithmDoc> {
    vec![
        droptail::TABLE.describe(),
        pie::TABLE.describe(),
        codel::TABLE.describe(),
        red::TABLE.describe(),
        fq_codel::TABLE.describe(),
        csaqm::TABLE.describe(),
        pvpie::TABLE.describe(),
        dualpi2::DUALPI2.describe(),
        dualpi2::PI2.describe(),
    ]
}

/// Names accepted in `queue = { kind = ... }`.
pub const KNOWN_KINDS: &[&str] = &[
    "droptail", "pie", "codel", "red", "fq_codel", "csaqm", "pvpie", "dualpi2", "pi2",
];

/// Build the discipline a scenario asks for at a link. `path` is the key path of the spec
/// (e.g. `bottleneck.queue`) for error messages.
pub fn build(spec: &AlgoSpec, path: &str, link: LinkInfo) -> Result<Qdisc, ScenarioError> {
    match spec.kind.as_str() {
        "droptail" | "pfifo" | "bfifo" | "fifo" => Ok(Qdisc::DropTail(
            droptail::DropTail::from_spec(spec, path, link)?,
        )),
        "pie" => Ok(Qdisc::Pie(Box::new(pie::Pie::from_spec(spec, path, link)?))),
        "codel" => Ok(Qdisc::Codel(Box::new(codel::Codel::from_spec(
            spec, path, link,
        )?))),
        "red" => Ok(Qdisc::Red(Box::new(red::Red::from_spec(spec, path, link)?))),
        "fq_codel" => Ok(Qdisc::FqCodel(Box::new(fq_codel::FqCodel::from_spec(
            spec, path, link,
        )?))),
        "csaqm" => Ok(Qdisc::Csaqm(Box::new(csaqm::Csaqm::from_spec(
            spec, path, link,
        )?))),
        "pvpie" => Ok(Qdisc::PvPie(Box::new(pvpie::PvPie::from_spec(
            spec, path, link,
        )?))),
        "dualpi2" => Ok(Qdisc::DualPi2(Box::new(dualpi2::DualPi2::from_spec(
            spec,
            path,
            link,
            dualpi2::Mode::Dual,
        )?))),
        "pi2" => Ok(Qdisc::DualPi2(Box::new(dualpi2::DualPi2::from_spec(
            spec,
            path,
            link,
            dualpi2::Mode::Single,
        )?))),
        other => Err(ScenarioError::new(
            format!("{path}.kind"),
            format!(
                "unknown queue discipline {other:?} (known: {})",
                KNOWN_KINDS.join(", ")
            ),
        )),
    }
}
