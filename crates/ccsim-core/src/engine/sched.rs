//! The event queue: a 4-ary min-heap keyed by (time, sequence).
//!
//! Events are small `Copy` values that name what to do by index (a link, a flow, a
//! timer); the world that owns links and flows interprets them. Nothing is allocated per
//! event once the heap has grown to its working size.
//!
//! Only the events a packet's journey consists of (transmit-done, delay-line arrival,
//! queue-discipline timer) go into the `network` heap; everything else (TCP timers, one
//! retransmission timer per flow mostly far in the future; flow start/stop; statistics
//! ticks; UDP sends; changes) lives in a heap of its own, so the heap every packet goes
//! through stays a few entries deep even with thousands of flows. Both heaps order by
//! the same (time, global sequence) key and `pop_until` takes the smaller head, so the
//! order of events is exactly that of one heap.

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

/// A 4-ary min-heap on `Entry::key`. Shallower than a binary heap (half the levels),
/// and a sift moves a hole instead of swapping, so a pop costs about half the moves of
/// `std::collections::BinaryHeap`'s; the scheduler's heaps are popped once per event.
#[derive(Debug, Default)]
struct MinHeap {
    data: Vec<Entry>,
}

impl MinHeap {
    #[inline]
    fn len(&self) -> usize {
        self.data.len()
    }

    #[inline]
    fn peek_key(&self) -> Option<u128> {
        self.data.first().map(|e| e.key)
    }

    #[inline]
    fn push(&mut self, e: Entry) {
        let mut i = self.data.len();
        self.data.push(e);
        while i > 0 {
            let parent = (i - 1) / 4;
            if self.data[parent].key <= e.key {
                break;
            }
            self.data[i] = self.data[parent];
            i = parent;
        }
        self.data[i] = e;
    }

    #[inline]
    fn pop(&mut self) -> Option<Entry> {
        let last = self.data.pop()?;
        let n = self.data.len();
        if n == 0 {
            return Some(last);
        }
        let top = self.data[0];
        // Sift the last entry down from the root.
        let mut i = 0;
        loop {
            let first = 4 * i + 1;
            if first >= n {
                break;
            }
            let end = (first + 4).min(n);
            let mut c = first;
            let mut ck = self.data[first].key;
            for j in first + 1..end {
                let k = self.data[j].key;
                if k < ck {
                    c = j;
                    ck = k;
                }
            }
            if last.key <= ck {
                break;
            }
            self.data[i] = self.data[c];
            i = c;
        }
        self.data[i] = last;
        Some(top)
    }
}

/// Deterministic event queue.
#[derive(Debug, Default)]
pub struct Scheduler {
    /// Events of packets on their way: transmit-done, line arrivals, qdisc timers.
    network: MinHeap,
    /// Every other event (TCP timers, flow starts and stops, statistics ticks, ...).
    other: MinHeap,
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
        if matches!(
            event,
            Event::LinkTxDone(_) | Event::LineArrive(_) | Event::QdiscTimer(_)
        ) {
            self.network.push(entry);
        } else {
            self.other.push(entry);
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
        let (key, from_other) = match (self.network.peek_key(), self.other.peek_key()) {
            (None, None) => return None,
            (Some(a), None) => (a, false),
            (None, Some(b)) => (b, true),
            (Some(a), Some(b)) => {
                if b < a {
                    (b, true)
                } else {
                    (a, false)
                }
            }
        };
        if (key >> 64) as u64 > until_ns {
            return None;
        }
        let heap = if from_other {
            &mut self.other
        } else {
            &mut self.network
        };
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
        self.network.len() + self.other.len()
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
    fn min_heap_pops_in_key_order_under_interleaved_pushes() {
        // A fixed pseudo-random sequence of pushes and pops, checked against a sorted
        // reference.
        let mut rng = crate::engine::rng::stream(7, crate::engine::rng::StreamKind::Udp, 0);
        let mut next = || rng.next_u64();
        let mut h = MinHeap::default();
        let mut reference: Vec<u128> = Vec::new();
        for round in 0..5000u32 {
            if next() % 3 != 0 || reference.is_empty() {
                let key = ((next() % 1000) as u128) << 64 | round as u128;
                h.push(Entry {
                    key,
                    event: Event::StatsTick,
                });
                reference.push(key);
                reference.sort_unstable_by(|a, b| b.cmp(a));
            } else {
                assert_eq!(h.pop().map(|e| e.key), reference.pop());
            }
            assert_eq!(h.len(), reference.len());
        }
        while let Some(k) = reference.pop() {
            assert_eq!(h.pop().map(|e| e.key), Some(k));
        }
        assert!(h.pop().is_none());
    }

    #[test]
    fn pop_until_stops_at_horizon() {
        let mut s = Scheduler::new();
        s.at(100, Event::StatsTick);
        assert!(s.pop_until(99).is_none());
        assert_eq!(s.pop_until(100), Some(Event::StatsTick));
    }
}
