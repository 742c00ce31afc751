//! The event queue: a binary heap keyed by (time, sequence).
//!
//! Events are small `Copy` values that name what to do by index (a link, a flow, a
//! timer); the world that owns links and flows interprets them. Nothing is allocated per
//! event once the heap has grown to its working size.
//!
//! TCP timers (one retransmission timer per flow, mostly far in the future) live in a
//! heap of their own, so the heap of network events that every packet goes through stays
//! a few entries deep even with thousands of flows. Both heaps order by the same
//! (time, global sequence) key and `pop_until` takes the smaller head, so the order of
//! events is exactly that of one heap.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What happens at an event. Indices refer to the simulation's own tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A link finished serialising a packet and may start the next one.
    LinkTxDone(u32),
    /// The packet at the head of a propagation delay line reaches the far end.
    LineArrive(u32),
    /// A link's queue discipline asked to be called at this time.
    QdiscTimer(u32),
    /// A timer of a TCP flow fires (the flow checks whether it is still due).
    TcpTimer {
        flow: u32,
        timer: TcpTimerKind,
    },
    /// A flow's application starts or stops.
    FlowStart(u32),
    FlowStop(u32),
    /// A UDP source sends its next packet.
    UdpSend(u32),
    /// Periodic statistics sample.
    StatsTick,
    /// Start or end of the measurement window.
    MeasureStart,
    MeasureEnd,
    /// A scheduled change (parameter retune, link rate change); index into the change list.
    Change(u32),
    /// The external controller is due (see `api::Control`).
    ControlTick,
}

/// The timers a TCP endpoint owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpTimerKind {
    /// Retransmission timeout (sender).
    Rto,
    /// Pacing release (sender).
    Pacing,
    /// Delayed-ACK timer (receiver).
    DelAck,
}

/// A heap entry: `key` packs (time, sequence) into one integer so that ordering is a
/// single wide comparison.
#[derive(Debug, Clone, Copy)]
struct Entry {
    key: u128,
    event: Event,
}

impl Entry {
    #[inline]
    fn time_ns(&self) -> u64 {
        (self.key >> 64) as u64
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    // Reversed so that std's max-heap pops the earliest (time, seq) first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// Deterministic event queue.
#[derive(Debug, Default)]
pub struct Scheduler {
    heap: BinaryHeap<Entry>,
    timers: BinaryHeap<Entry>,
    next_seq: u64,
    now_ns: u64,
    executed: u64,
}

impl Scheduler {
    pub fn new() -> Self {
        Self::default()
    }

    /// Current simulated time.
    #[inline]
    pub fn now(&self) -> u64 {
        self.now_ns
    }

    /// Number of events popped so far.
    pub fn executed(&self) -> u64 {
        self.executed
    }

    /// Schedule `event` at absolute time `time_ns` (never in the past).
    #[inline]
    pub fn at(&mut self, time_ns: u64, event: Event) {
        debug_assert!(time_ns >= self.now_ns, "event scheduled in the past");
        let seq = self.next_seq;
        self.next_seq += 1;
        let t = time_ns.max(self.now_ns) as u128;
        let entry = Entry {
            key: (t << 64) | seq as u128,
            event,
        };
        if matches!(event, Event::TcpTimer { .. }) {
            self.timers.push(entry);
        } else {
            self.heap.push(entry);
        }
    }

    /// Schedule `event` `delay_ns` from now.
    #[inline]
    pub fn after(&mut self, delay_ns: u64, event: Event) {
        self.at(self.now_ns + delay_ns, event);
    }

    /// Pop the next event if it is due no later than `until_ns`, advancing the clock.
    #[inline]
    pub fn pop_until(&mut self, until_ns: u64) -> Option<Event> {
        let from_timers = match (self.heap.peek(), self.timers.peek()) {
            (None, None) => return None,
            (Some(_), None) => false,
            (None, Some(_)) => true,
            (Some(a), Some(b)) => b.key < a.key,
        };
        let heap = if from_timers {
            &mut self.timers
        } else {
            &mut self.heap
        };
        if heap.peek().expect("non-empty").time_ns() > until_ns {
            return None;
        }
        let e = heap.pop().expect("peeked");
        self.now_ns = e.time_ns();
        self.executed += 1;
        Some(e.event)
    }

    /// Advance the clock to `t` when no event remains before it.
    pub fn advance_to(&mut self, t: u64) {
        if t > self.now_ns {
            self.now_ns = t;
        }
    }

    pub fn pending(&self) -> usize {
        self.heap.len() + self.timers.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_time_events_run_in_insertion_order() {
        let mut s = Scheduler::new();
        s.at(10, Event::UdpSend(2));
        s.at(5, Event::UdpSend(1));
        s.at(10, Event::UdpSend(3));
        s.at(10, Event::UdpSend(4));
        let mut got = vec![];
        while let Some(e) = s.pop_until(u64::MAX) {
            got.push((s.now(), e));
        }
        assert_eq!(
            got,
            vec![
                (5, Event::UdpSend(1)),
                (10, Event::UdpSend(2)),
                (10, Event::UdpSend(3)),
                (10, Event::UdpSend(4))
            ]
        );
    }

    #[test]
    fn timers_and_network_events_interleave_in_global_order() {
        let mut s = Scheduler::new();
        let rto = |f| Event::TcpTimer {
            flow: f,
            timer: TcpTimerKind::Rto,
        };
        s.at(10, rto(1));
        s.at(10, Event::LinkTxDone(1));
        s.at(5, rto(2));
        s.at(10, rto(3));
        s.at(7, Event::LineArrive(0));
        let mut got = vec![];
        while let Some(e) = s.pop_until(u64::MAX) {
            got.push(e);
        }
        assert_eq!(
            got,
            vec![
                rto(2),
                Event::LineArrive(0),
                rto(1),
                Event::LinkTxDone(1),
                rto(3)
            ]
        );
    }

    #[test]
    fn pop_until_stops_at_horizon() {
        let mut s = Scheduler::new();
        s.at(100, Event::StatsTick);
        assert!(s.pop_until(99).is_none());
        assert_eq!(s.pop_until(100), Some(Event::StatsTick));
    }
}
