//! A link's datapath: a packet arrives at the egress queue, the discipline admits, drops
//! or marks it, the transmitter serialises the head packet, and the packet propagates
//! through the link's [`DelayLine`] (or, on a zero-delay link, reaches the far end when
//! its transmission ends). See [`crate::net::link`] for the event economy.
//!
//! The link reaches the world around it only through a [`LinkCtx`], as a discipline does
//! through [`QdiscCtx`] and a TCP endpoint through `TcpIo`: the clock and event queue,
//! the packet pool, the delay lines, the routes (to know where a packet goes next), and
//! [`LinkHooks`], what the simulation does with congestion signals and departures (count
//! them per flow, record them). The hooks are a generic parameter: the per-packet path
//! dispatches statically, with no virtual call.

use super::link::{DelayLine, LineEntry, Link, LinkId};
use super::packet::{PacketId, PacketPool};
use super::route::Routes;
use crate::engine::{serialisation_ns, Event, Scheduler, TimerFire};
use crate::qdisc::{Qdisc, QdiscCtx, QueueDisc};

/// What the simulation does at a link's observable points.
pub trait LinkHooks {
    /// Link `l`'s discipline dropped the packets in `dropped` and CE-marked those in
    /// `marked` (its queue as it is after acting). The link then counts them and frees
    /// the dropped packets.
    fn on_queue_signals(
        &mut self,
        l: LinkId,
        now_ns: u64,
        qdisc: &Qdisc,
        dropped: &[PacketId],
        marked: &[PacketId],
        pool: &PacketPool,
    );
    /// Link `l`'s discipline ran its timer.
    fn on_qdisc_update(&mut self, l: LinkId, now_ns: u64, qdisc: &Qdisc);
    /// Packet `id` starts its transmission on a link captured on pcapng interface
    /// `iface`.
    fn on_capture(&mut self, iface: u32, now_ns: u64, pool: &PacketPool, id: PacketId);
}

/// What a link may use while handling an event.
pub struct LinkCtx<'a, H: LinkHooks> {
    pub now_ns: u64,
    pub sched: &'a mut Scheduler,
    pub pool: &'a mut PacketPool,
    pub lines: &'a mut [DelayLine],
    pub routes: &'a Routes,
    /// The discipline's output buffers (empty between calls).
    pub dropped: &'a mut Vec<PacketId>,
    pub marked: &'a mut Vec<PacketId>,
    /// Inside the measurement window: departures feed the sojourn histogram.
    pub in_window: bool,
    pub hooks: H,
}

impl<H: LinkHooks> LinkCtx<'_, H> {
    /// The context a queue discipline sees, with the link's random stream.
    #[inline]
    fn qdisc<'b>(&'b mut self, rng: &'b mut crate::engine::rng::SimRng) -> QdiscCtx<'b> {
        QdiscCtx {
            now_ns: self.now_ns,
            pool: self.pool,
            dropped: self.dropped,
            marked: self.marked,
            rng,
        }
    }
}

impl Link {
    /// Packet `id` arrives at this link (number `l`).
    pub fn enqueue<H: LinkHooks>(&mut self, l: LinkId, id: PacketId, ctx: &mut LinkCtx<'_, H>) {
        let now = ctx.now_ns;
        self.stats.arrivals += 1;
        // An idle link with an empty DropTail queue sends the packet straight away:
        // DropTail admits it and hands it back unchanged, so skip the round trip
        // through its FIFO (most access and reverse-path hops take this path). Its
        // sojourn is zero, so `transmit` needs no enqueue time.
        if self.is_idle(now)
            && self
                .qdisc
                .is_empty_droptail_admitting(ctx.pool.get(id).size_bytes as u64)
        {
            self.transmit(l, id, ctx, false);
            return;
        }
        ctx.pool.get_mut(id).enqueue_ns = now;
        self.qdisc.enqueue(id, &mut ctx.qdisc(&mut self.rng));
        self.account_signals(l, ctx);
        if self.qdisc_uses_timer {
            self.sync_qdisc_timer(l, ctx.sched);
        }
        self.wake_transmitter(l, ctx);
    }

    /// This link's transmit-done event: the transmitter is free. Starts the next queued
    /// packet, if one waits, and returns a zero-delay link's packet that has now reached
    /// the far end.
    #[inline]
    pub fn on_tx_done<H: LinkHooks>(
        &mut self,
        l: LinkId,
        ctx: &mut LinkCtx<'_, H>,
    ) -> Option<LineEntry> {
        let arrived = self.in_flight.take();
        if self.tx_pending {
            self.tx_pending = false;
            self.start_tx(l, ctx);
        }
        arrived
    }

    /// This link's discipline timer fired.
    pub fn on_qdisc_timer<H: LinkHooks>(&mut self, l: LinkId, ctx: &mut LinkCtx<'_, H>) {
        let now = ctx.now_ns;
        match self.qdisc_timer.on_event(now) {
            TimerFire::Stale => return,
            TimerFire::Reschedule(t) => {
                ctx.sched.at(t, Event::QdiscTimer(l));
                return;
            }
            TimerFire::Fire => {}
        }
        self.qdisc.on_timer(&mut ctx.qdisc(&mut self.rng));
        ctx.hooks.on_qdisc_update(l, now, &self.qdisc);
        self.account_signals(l, ctx);
        self.sync_qdisc_timer(l, ctx.sched);
        // A timer may make a held packet eligible (a shaper's tokens).
        if self.qdisc.len_packets() > 0 {
            self.wake_transmitter(l, ctx);
        }
    }

    /// Keep the link's timer in step with what its discipline asks for.
    #[inline]
    pub fn sync_qdisc_timer(&mut self, l: LinkId, sched: &mut Scheduler) {
        if !self.qdisc_uses_timer {
            return;
        }
        match self.qdisc.timer_deadline() {
            Some(t) => self.qdisc_timer.arm(t),
            None => return,
        }
        if let Some(t) = self.qdisc_timer.sync() {
            sched.at(t, Event::QdiscTimer(l));
        }
    }

    /// A new rate from now; the packet being serialised keeps its time. The queue hears
    /// it too (CSAQM's capacity, RED's idle clock).
    pub fn set_rate(&mut self, rate_bps: u64) {
        self.rate_bps = rate_bps;
        self.qdisc.link_rate_changed(rate_bps);
    }

    /// Hand the discipline's drops and marks to the hooks, count them, free the drops.
    fn account_signals<H: LinkHooks>(&mut self, l: LinkId, ctx: &mut LinkCtx<'_, H>) {
        ctx.hooks.on_queue_signals(
            l,
            ctx.now_ns,
            &self.qdisc,
            ctx.dropped,
            ctx.marked,
            ctx.pool,
        );
        self.stats.marks += ctx.marked.len() as u64;
        ctx.marked.clear();
        for &id in ctx.dropped.iter() {
            self.stats.drops += 1;
            ctx.pool.free(id);
        }
        ctx.dropped.clear();
    }

    /// Send the next queued packet as soon as the transmitter is free: now if it is
    /// idle, else at the transmit-done event of the packet on the wire.
    fn wake_transmitter<H: LinkHooks>(&mut self, l: LinkId, ctx: &mut LinkCtx<'_, H>) {
        if self.tx_pending {
            return; // a transmit-done event will start it
        }
        if self.in_flight.is_some() {
            // A zero-delay link's transmit-done event is due at `busy_until_ns`
            // (possibly now, not yet run); it delivers that packet and starts this one.
            self.tx_pending = true;
        } else if ctx.now_ns >= self.busy_until_ns {
            self.start_tx(l, ctx);
        } else {
            self.tx_pending = true;
            ctx.sched.at(self.busy_until_ns, Event::LinkTxDone(l));
        }
    }

    fn start_tx<H: LinkHooks>(&mut self, l: LinkId, ctx: &mut LinkCtx<'_, H>) {
        let now = ctx.now_ns;
        let next = self.qdisc.dequeue(&mut ctx.qdisc(&mut self.rng));
        if !ctx.dropped.is_empty() || !ctx.marked.is_empty() {
            self.account_signals(l, ctx);
        }
        if self.qdisc_uses_timer {
            self.sync_qdisc_timer(l, ctx.sched);
        }
        match next {
            Some(id) => self.transmit(l, id, ctx, true),
            None => {
                if self.qdisc.len_packets() > 0 {
                    if let Some(t) = self.qdisc.next_ready_ns(now) {
                        self.tx_pending = true;
                        ctx.sched.at(t.max(now), Event::LinkTxDone(l));
                    }
                }
            }
        }
    }

    /// Put packet `id`, just taken from the queue, on the wire: it occupies the
    /// transmitter for its serialisation time, then propagates. `may_be_queued`: it came
    /// through the queue, and others may wait behind it (false on the idle-link fast
    /// path: it arrived now and nothing waits, which saves asking the discipline).
    #[inline]
    fn transmit<H: LinkHooks>(
        &mut self,
        l: LinkId,
        id: PacketId,
        ctx: &mut LinkCtx<'_, H>,
        may_be_queued: bool,
    ) {
        let now = ctx.now_ns;
        let p = ctx.pool.get(id);
        let size = p.size_bytes;
        let sojourn_ns = if may_be_queued { now - p.enqueue_ns } else { 0 };
        self.stats.on_departure(sojourn_ns, size, ctx.in_window);
        let tx_end = now + serialisation_ns(size, self.rate_bps);
        self.busy_until_ns = tx_end;
        if self.pcap_iface != super::link::NO_PCAP {
            ctx.hooks.on_capture(self.pcap_iface, now, ctx.pool, id);
        }
        let arrive = tx_end + self.delay_ns;
        let zero_delay = self.delay_ns == 0;
        let queued = if may_be_queued {
            self.qdisc.peek()
        } else {
            None
        };
        if let Some(next) = queued {
            ctx.pool.prefetch(next);
            self.tx_pending = true;
        }
        // The transmit-done event starts the next queued packet and, on a zero-delay
        // link, delivers this one.
        if queued.is_some() || zero_delay {
            ctx.sched.at(tx_end, Event::LinkTxDone(l));
        }
        let next = {
            let p = ctx.pool.get(id);
            ctx.routes.next_after(p.route, p.hop, p.flow)
        };
        let entry = LineEntry {
            arrive_ns: arrive,
            id,
            next,
        };
        if zero_delay {
            debug_assert!(self.in_flight.is_none());
            self.in_flight = Some(entry);
            return;
        }
        let k = self.line;
        let dl = &mut ctx.lines[k as usize];
        if dl.push(entry) && dl.event_at.is_none_or(|t| arrive < t) {
            dl.event_at = Some(arrive);
            ctx.sched.at(arrive, Event::LineArrive(k));
        }
    }
}

impl DelayLine {
    /// The line's arrival event fired at `now_ns`: whether it is the current one (an
    /// event superseded by an earlier head is ignored). Arrivals follow with
    /// [`DelayLine::pop_due`], then [`DelayLine::rearm`].
    #[inline]
    pub fn begin_arrivals(&mut self, now_ns: u64) -> bool {
        if self.event_at != Some(now_ns) {
            return false;
        }
        self.event_at = None;
        true
    }

    /// The head packet, if it has reached the far end by `now_ns`.
    #[inline]
    pub fn pop_due(&mut self, now_ns: u64) -> Option<LineEntry> {
        match self.queue.front() {
            Some(e) if e.arrive_ns <= now_ns => self.queue.pop_front(),
            _ => None,
        }
    }

    /// After the arrivals: the time of an event to schedule for the new head, if one is
    /// needed (none is scheduled, or only a later one).
    #[inline]
    pub fn rearm(&mut self) -> Option<u64> {
        let t = self.queue.front()?.arrive_ns;
        if self.event_at.is_none_or(|e| t < e) {
            self.event_at = Some(t);
            Some(t)
        } else {
            None
        }
    }
}
