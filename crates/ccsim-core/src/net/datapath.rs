//! A link's datapath: a packet arrives at the egress queue, the discipline admits, drops
//! or marks it, the transmitter serialises the head packet, and the packet propagates
//! through the link's [`DelayLine`] (or, on a zero-delay link, reaches the far end when
//! its transmission ends). See [`crate::net::link`] for the event economy.
//!
//! The link reaches the world around it only through a [`LinkEnv`], as a discipline does
//! through [`QdiscCtx`] and a TCP endpoint through `TcpIo`: the env lends a link's
//! [`LinkIo`] (the clock and event queue, the packet pool, the delay lines, the routes,
//! the discipline's output buffers) and hears the link's observable points (congestion
//! signals, timer updates, captured departures), which the simulation counts per flow
//! and hands to its recorders. The env is a type parameter: the per-packet path
//! dispatches statically, with no virtual call.

use super::link::{
    DelayLine, LineEntry, Link, LinkId, HELD_NS, MODEL_RETIMED, MODEL_TRACE, NO_PACKET,
};
use super::packet::{PacketId, PacketPool};
use super::route::Routes;
use crate::engine::{serialisation_ns, Event, Scheduler, TimerFire, NS_PER_SEC};
use crate::qdisc::{Qdisc, QdiscCtx, QueueDisc};

/// The parts of the world a link's datapath works on, borrowed together: the link, the
/// clock and event queue, the packet pool, the delay lines, the routes (where a packet
/// goes next) and the discipline's output buffers.
pub struct LinkIo<'a> {
    pub link: &'a mut Link,
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
}

impl LinkIo<'_> {
    /// The context the link's queue discipline sees.
    #[inline]
    fn qdisc(&mut self) -> (&mut Qdisc, QdiscCtx<'_>) {
        let ctx = QdiscCtx {
            now_ns: self.now_ns,
            pool: self.pool,
            dropped: self.dropped,
            marked: self.marked,
            rng: &mut self.link.rng,
        };
        (&mut self.link.qdisc, ctx)
    }
}

/// The world a link runs in: it lends a link's [`LinkIo`] and hears what the link's
/// observable points report. Implemented by the simulation's world (a type parameter,
/// so the per-packet path dispatches statically and the accessors inline: the datapath
/// passes one pointer around, as a method of the world would).
pub trait LinkEnv {
    /// Link `l` and what its datapath works on.
    fn link_io(&mut self, l: LinkId) -> LinkIo<'_>;
    /// Link `l`'s discipline dropped the packets in the `dropped` buffer and CE-marked
    /// those in `marked` (its queue as it is after acting): count them per flow, record
    /// them. The link then counts them itself and frees the dropped packets.
    fn on_queue_signals(&mut self, l: LinkId);
    /// Link `l`'s discipline ran its timer.
    fn on_qdisc_update(&mut self, l: LinkId);
    /// Packet `id` starts its transmission on link `l`, which is captured.
    fn on_capture(&mut self, l: LinkId, id: PacketId);
    /// Packet `id`, just serialised on link `l`, was lost on the wire (the link's loss
    /// model): count it for its flow and free it.
    fn on_wire_loss(&mut self, l: LinkId, id: PacketId);
}

/// Packet `id` arrives at link `l`.
pub fn enqueue<E: LinkEnv>(env: &mut E, l: LinkId, id: PacketId) {
    let mut io = env.link_io(l);
    let now = io.now_ns;
    io.link.stats.arrivals += 1;
    // An idle link with an empty DropTail queue sends the packet straight away:
    // DropTail admits it and hands it back unchanged, so skip the round trip
    // through its FIFO (most access and reverse-path hops take this path). Its
    // sojourn is zero, so `transmit` needs no enqueue time.
    if io.link.is_idle(now)
        && io.link.models & MODEL_TRACE == 0
        && io
            .link
            .qdisc
            .is_empty_droptail_admitting(io.pool.get(id).size_bytes as u64)
    {
        transmit(env, l, id, false);
        return;
    }
    io.pool.get_mut(id).enqueue_ns = now;
    let wants_timer = io.link.qdisc_uses_timer;
    let (qdisc, mut ctx) = io.qdisc();
    qdisc.enqueue(id, &mut ctx);
    account_signals(env, l);
    if wants_timer {
        let io = env.link_io(l);
        io.link.sync_qdisc_timer(l, io.sched);
    }
    wake_transmitter(env, l);
}

/// Link `l`'s transmit-done event: the transmitter is free. Starts the next queued
/// packet, if one waits, and returns a zero-delay link's packet that has now reached
/// the far end.
#[inline]
pub fn on_tx_done<E: LinkEnv>(env: &mut E, l: LinkId) -> Option<LineEntry> {
    let io = env.link_io(l);
    let link = io.link;
    // Only a link whose rate changes has re-timings (its flag is in the hot line; the
    // list of superseded events is not).
    if link.models & MODEL_RETIMED != 0 && link.take_stale_tx_done(io.now_ns) {
        return None; // superseded by a re-timing
    }
    let arrived = link.take_in_flight();
    if link.tx_pending {
        link.tx_pending = false;
        start_tx(env, l);
    }
    arrived
}

/// Link `l`'s discipline timer fired.
pub fn on_qdisc_timer<E: LinkEnv>(env: &mut E, l: LinkId) {
    let mut io = env.link_io(l);
    match io.link.qdisc_timer.on_event(io.now_ns) {
        TimerFire::Stale => return,
        TimerFire::Reschedule(t) => {
            io.sched.at(t, Event::QdiscTimer(l));
            return;
        }
        TimerFire::Fire => {}
    }
    let (qdisc, mut ctx) = io.qdisc();
    qdisc.on_timer(&mut ctx);
    env.on_qdisc_update(l);
    account_signals(env, l);
    let io = env.link_io(l);
    io.link.sync_qdisc_timer(l, io.sched);
    // A timer may make a held packet eligible (a shaper's tokens).
    if io.link.qdisc.len_packets() > 0 {
        wake_transmitter(env, l);
    }
}

impl Link {
    /// Keep the link's (number `l`) timer in step with what its discipline asks for.
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

    /// A new rate from now (the packet on the transmitter is re-timed by
    /// [`change_rate`]). The queue hears it too (CSAQM's capacity, RED's idle clock),
    /// except a zero rate: an outage leaves the discipline's idea of the link's rate as
    /// it was (RED's idle clock divides by it; CSAQM's capacity would read zero).
    pub fn set_rate(&mut self, now_ns: u64, rate_bps: u64) {
        let o = &mut self.offered;
        o.offered_bits_e9 += (now_ns - o.since_ns) as u128 * self.rate_bps as u128;
        o.since_ns = now_ns;
        o.rate_changed = true;
        self.rate_bps = rate_bps;
        if rate_bps > 0 {
            self.qdisc.link_rate_changed(rate_bps);
        }
    }

    /// Whether a transmit-done event firing at `now_ns` was superseded by a re-timing
    /// (and forget it: each stale time stands for one event).
    #[cold]
    #[inline(never)]
    fn take_stale_tx_done(&mut self, now_ns: u64) -> bool {
        let stale = &mut self.service.stale_tx_done_ns;
        if stale.is_empty() {
            return false;
        }
        match stale.iter().position(|&t| t == now_ns) {
            Some(i) => {
                stale.swap_remove(i);
                true
            }
            None => false,
        }
    }
}

/// Link `l`'s rate becomes `rate_bps` now (a scheduled change; zero is an outage). The
/// packet on the transmitter is re-timed: the bits it has sent count, the rest go at the
/// new rate, or wait while the rate is zero. A link coming back from an outage starts its
/// queue.
pub fn change_rate<E: LinkEnv>(env: &mut E, l: LinkId, rate_bps: u64) {
    let mut io = env.link_io(l);
    let now = io.now_ns;
    // Its packets were recorded from the start (`Link::expect_rate_changes`, when the
    // changes were scheduled): a plain link keeps no record to re-time.
    debug_assert!(io.link.models & MODEL_RETIMED != 0);
    let was_out = io.link.rate_bps == 0;
    if now < io.link.busy_until_ns {
        retime_in_service(&mut io, l, rate_bps);
    } else {
        // Nothing on the transmitter: nothing left unsent at the new rate either.
        io.link.service.since_ns = now;
        io.link.service.unsent_bits_e9 = 0;
    }
    let link = io.link;
    link.set_rate(now, rate_bps);
    if was_out && link.is_idle(now) && link.qdisc.len_packets() > 0 {
        start_tx(env, l);
    }
}

/// Re-time the packet on link `io.link`'s transmitter for the new rate: its end, the
/// transmit-done event that follows it (if one is due), and its arrival at the far end.
fn retime_in_service(io: &mut LinkIo<'_>, l: LinkId, rate_bps: u64) {
    let now = io.now_ns;
    let link = &mut *io.link;
    let unsent = link.unsent_bits_e9(now);
    let old_end = link.busy_until_ns;
    let new_end = match rate_bps {
        0 => HELD_NS,
        r => now + unsent.div_ceil(r as u128) as u64,
    };
    link.service.since_ns = now;
    link.service.unsent_bits_e9 = unsent;
    link.busy_until_ns = new_end;
    // While the packet is on the transmitter, a transmit-done event is due at its end
    // exactly when one is pending (another packet waits) or the link has no delay line.
    let event_due = link.tx_pending || link.has_in_flight();
    if event_due && old_end != HELD_NS {
        link.service.stale_tx_done_ns.push(old_end);
    }
    if event_due && new_end != HELD_NS {
        io.sched.at(new_end, Event::LinkTxDone(l));
    }
    if link.has_in_flight() {
        // HELD_NS while held: delivered by the next event only.
        link.in_flight_entry.arrive_ns = new_end;
        return;
    }
    if link.service.id == NO_PACKET {
        return; // lost on the wire: nothing propagates
    }
    let line = &mut io.lines[link.line as usize];
    let entry = match link.service.held.take() {
        Some(e) => Some(e),
        None => line
            .queue
            .iter()
            .rposition(|e| e.id == link.service.id && e.arrive_ns == old_end + link.delay_ns)
            .and_then(|i| line.queue.remove(i)),
    };
    let Some(mut entry) = entry else { return };
    if new_end == HELD_NS {
        link.service.held = Some(entry);
        return;
    }
    entry.arrive_ns = new_end + link.delay_ns;
    let arrive = entry.arrive_ns;
    if line.push(entry) && line.event_at.is_none_or(|t| arrive < t) {
        line.event_at = Some(arrive);
        io.sched.at(arrive, Event::LineArrive(link.line));
    }
}

/// Hand link `l`'s discipline's drops and marks, if any, to the world, count them on the
/// link, free the drops. (Checked here, inline: most calls have none.)
#[inline]
fn account_signals<E: LinkEnv>(env: &mut E, l: LinkId) {
    let io = env.link_io(l);
    if !io.dropped.is_empty() || !io.marked.is_empty() {
        count_signals(env, l);
    }
}

fn count_signals<E: LinkEnv>(env: &mut E, l: LinkId) {
    env.on_queue_signals(l);
    let io = env.link_io(l);
    io.link.stats.marks += io.marked.len() as u64;
    io.marked.clear();
    for &id in io.dropped.iter() {
        io.link.stats.drops += 1;
        io.pool.free(id);
    }
    io.dropped.clear();
}

/// Have link `l` send its next queued packet as soon as its transmitter is free: now if
/// it is idle, else at the transmit-done event of the packet on the wire.
fn wake_transmitter<E: LinkEnv>(env: &mut E, l: LinkId) {
    let io = env.link_io(l);
    let link = io.link;
    if link.tx_pending {
        return; // a transmit-done event will start it
    }
    if link.has_in_flight() {
        // A zero-delay link's transmit-done event is due at `busy_until_ns`
        // (possibly now, not yet run); it delivers that packet and starts this one.
        link.tx_pending = true;
    } else if io.now_ns >= link.busy_until_ns {
        // In an outage the queue waits: `change_rate` starts it when the link is back.
        if link.rate_bps > 0 {
            start_tx(env, l);
        }
    } else {
        link.tx_pending = true;
        // An outage holds the packet on the transmitter: `change_rate` schedules the
        // event when the link is back.
        if link.busy_until_ns != HELD_NS {
            io.sched.at(link.busy_until_ns, Event::LinkTxDone(l));
        }
    }
}

/// A trace link takes its next packet from the queue only when an opportunity can carry
/// it (mm-link's `rationalize` dequeues a packet at the opportunity that starts it, so the
/// wait for an opportunity, an outage's included, is queueing delay the discipline sees):
/// if none can now, a transmit-done event is set for the next one and this returns true.
#[cold]
#[inline(never)]
fn trace_defers(
    link: &mut crate::net::link::Link,
    l: LinkId,
    sched: &mut Scheduler,
    now: u64,
) -> bool {
    let Some(trace) = link.trace.as_mut() else {
        return false;
    };
    if !trace.dequeue_at_opportunity {
        return false; // `transmit_modelled` holds the packet until its opportunity
    }
    let ready = trace.next_capacity_ns(now);
    if ready <= now || link.qdisc.len_packets() == 0 {
        return false;
    }
    link.tx_pending = true;
    sched.at(ready, Event::LinkTxDone(l));
    true
}

fn start_tx<E: LinkEnv>(env: &mut E, l: LinkId) {
    let mut io = env.link_io(l);
    let now = io.now_ns;
    if io.link.rate_bps == 0 {
        return; // an outage (a shaper's timer fired in it): `change_rate` restarts
    }
    if io.link.models & MODEL_TRACE != 0 && trace_defers(io.link, l, io.sched, now) {
        return;
    }
    let wants_timer = io.link.qdisc_uses_timer;
    let (qdisc, mut ctx) = io.qdisc();
    let next = qdisc.dequeue(&mut ctx);
    account_signals(env, l);
    let io = env.link_io(l);
    if wants_timer {
        io.link.sync_qdisc_timer(l, io.sched);
    }
    match next {
        Some(id) => transmit(env, l, id, true),
        None => {
            let link = io.link;
            if link.qdisc.len_packets() > 0 {
                if let Some(t) = link.qdisc.next_ready_ns(now) {
                    link.tx_pending = true;
                    io.sched.at(t.max(now), Event::LinkTxDone(l));
                }
            }
        }
    }
}

/// Put packet `id`, just taken from link `l`'s queue, on the wire: it occupies the
/// transmitter for its serialisation time, then propagates. `may_be_queued`: it came
/// through the queue, and others may wait behind it (false on the idle-link fast path:
/// it arrived now and nothing waits, which saves asking the discipline).
///
/// A plain link (`models == 0`: no loss, no jitter, a rate that never changes) takes the
/// short path written out here; any other goes out of line through [`transmit_modelled`]
/// (the same steps plus the models'), so that the link models cost a link without them
/// one test of a byte in its hot cache line.
#[inline]
fn transmit<E: LinkEnv>(env: &mut E, l: LinkId, id: PacketId, may_be_queued: bool) {
    let io = env.link_io(l);
    let now = io.now_ns;
    let link = io.link;
    let p = io.pool.get(id);
    let size = p.size_bytes;
    let sojourn_ns = if may_be_queued { now - p.enqueue_ns } else { 0 };
    link.stats.on_departure(sojourn_ns, size, io.in_window);
    if link.models != 0 {
        transmit_modelled(env, l, id, size, may_be_queued);
        return;
    }
    let tx_end = now + serialisation_ns(size, link.rate_bps);
    link.busy_until_ns = tx_end;
    // With `busy_until_ns` and the rate, all a plain link needs to tell how much of the
    // packet is still unsent (`Link::unsent_bits_e9`).
    link.in_service_bytes = size;
    if link.pcap_iface != super::link::NO_PCAP {
        env.on_capture(l, id);
    }
    let io = env.link_io(l);
    let link = io.link;
    let arrive = tx_end + link.delay_ns;
    let zero_delay = link.delay_ns == 0;
    let queued = if may_be_queued {
        link.qdisc.peek()
    } else {
        None
    };
    if let Some(next) = queued {
        io.pool.prefetch(next);
        link.tx_pending = true;
    }
    // The transmit-done event starts the next queued packet and, on a zero-delay link,
    // delivers this one.
    if queued.is_some() || zero_delay {
        io.sched.at(tx_end, Event::LinkTxDone(l));
    }
    let next = {
        let p = io.pool.get(id);
        io.routes.next_after(p.route, p.hop, p.flow)
    };
    let entry = LineEntry {
        arrive_ns: arrive,
        id,
        next,
    };
    if zero_delay {
        debug_assert!(!link.has_in_flight());
        link.in_flight_entry = entry;
        return;
    }
    let k = link.line;
    let dl = &mut io.lines[k as usize];
    if dl.push(entry) && dl.event_at.is_none_or(|t| arrive < t) {
        dl.event_at = Some(arrive);
        io.sched.at(arrive, Event::LineArrive(k));
    }
}

/// [`transmit`] on a link with models: the packet on the transmitter is recorded for a
/// rate change to re-time ([`crate::net::link::InService`]), then it may be lost on the
/// wire or have its delay jittered. Otherwise the same steps as the plain path.
#[cold]
#[inline(never)]
fn transmit_modelled<E: LinkEnv>(
    env: &mut E,
    l: LinkId,
    id: PacketId,
    size: u32,
    may_be_queued: bool,
) {
    let io = env.link_io(l);
    let now = io.now_ns;
    let link = io.link;
    let tx_end = match link.trace.as_mut() {
        Some(trace) => trace.departure_ns(now, size),
        None => now + serialisation_ns(size, link.rate_bps),
    };
    link.busy_until_ns = tx_end;
    link.in_service_bytes = size;
    link.service.id = id;
    link.service.since_ns = now;
    link.service.unsent_bits_e9 = size as u128 * 8 * NS_PER_SEC as u128;
    if link.pcap_iface != super::link::NO_PCAP {
        env.on_capture(l, id);
    }
    let io = env.link_io(l);
    let link = io.link;
    let arrive = tx_end + link.delay_ns;
    // A jittered link propagates through its line even without delay (its packets do
    // not arrive when their transmission ends).
    let zero_delay = link.delay_ns == 0 && link.jitter.is_none();
    let queued = if may_be_queued {
        link.qdisc.peek()
    } else {
        None
    };
    if let Some(next) = queued {
        io.pool.prefetch(next);
        link.tx_pending = true;
    }
    if queued.is_some() || zero_delay {
        io.sched.at(tx_end, Event::LinkTxDone(l));
    }
    // The link models' one hook: the packet has occupied the transmitter (it counts in
    // the link's departures and utilisation) and is lost on the wire.
    if link.loss.as_mut().is_some_and(|m| m.lose()) {
        link.stats.losses += 1;
        link.service.id = NO_PACKET;
        env.on_wire_loss(l, id);
        return;
    }
    // Delay jitter, the other link model: a per-packet extra delay (lost packets draw
    // none, from a stream apart from the loss model's).
    let arrive = match link.jitter.as_mut() {
        Some(j) => j.arrival_ns(arrive),
        None => arrive,
    };
    let next = {
        let p = io.pool.get(id);
        io.routes.next_after(p.route, p.hop, p.flow)
    };
    let entry = LineEntry {
        arrive_ns: arrive,
        id,
        next,
    };
    if zero_delay {
        debug_assert!(!link.has_in_flight());
        link.in_flight_entry = entry;
        return;
    }
    let k = link.line;
    let dl = &mut io.lines[k as usize];
    if dl.push(entry) && dl.event_at.is_none_or(|t| arrive < t) {
        dl.event_at = Some(arrive);
        io.sched.at(arrive, Event::LineArrive(k));
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
