//! The event queue: a 4-ary min-heap keyed by (time, sequence), with a one-entry front
//! slot for an event due before everything pending (a packet's next hop mostly is).
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
    /// A flow's deadline-aware LBE controller decides (`control::deadline`).
    DeadlineTick(u32),
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

impl Event {
    /// Bits of an event's code that hold its index; the four above hold its kind.
    const INDEX_BITS: u32 = 28;
    /// The largest link, flow or change index an event can carry (see `World` build).
    pub const MAX_INDEX: u32 = (1 << Self::INDEX_BITS) - 1;
    /// Kinds below this go to the network heap.
    const FIRST_OTHER_KIND: u32 = 3;

    /// Pack into 32 bits: kind in the top four, index below.
    #[inline(always)]
    fn encode(self) -> u32 {
        let (kind, index) = match self {
            Event::LinkTxDone(l) => (0, l),
            Event::LineArrive(k) => (1, k),
            Event::QdiscTimer(l) => (2, l),
            Event::TcpTimer { flow, timer } => (
                match timer {
                    TcpTimerKind::Rto => 3,
                    TcpTimerKind::Pacing => 4,
                    TcpTimerKind::DelAck => 5,
                },
                flow,
            ),
            Event::FlowStart(f) => (6, f),
            Event::FlowStop(f) => (7, f),
            Event::UdpSend(u) => (8, u),
            Event::StatsTick => (9, 0),
            Event::MeasureStart => (10, 0),
            Event::MeasureEnd => (11, 0),
            Event::Change(i) => (12, i),
            Event::ControlTick => (13, 0),
            Event::DeadlineTick(f) => (14, f),
        };
        debug_assert!(index <= Self::MAX_INDEX, "event index {index} too large");
        (kind << Self::INDEX_BITS) | index
    }

    #[inline]
    fn decode(code: u32) -> Event {
        let index = code & Self::MAX_INDEX;
        let timer = |timer| Event::TcpTimer { flow: index, timer };
        match code >> Self::INDEX_BITS {
            0 => Event::LinkTxDone(index),
            1 => Event::LineArrive(index),
            2 => Event::QdiscTimer(index),
            3 => timer(TcpTimerKind::Rto),
            4 => timer(TcpTimerKind::Pacing),
            5 => timer(TcpTimerKind::DelAck),
            6 => Event::FlowStart(index),
            7 => Event::FlowStop(index),
            8 => Event::UdpSend(index),
            9 => Event::StatsTick,
            10 => Event::MeasureStart,
            11 => Event::MeasureEnd,
            12 => Event::Change(index),
            13 => Event::ControlTick,
            _ => Event::DeadlineTick(index),
        }
    }
}

/// A heap entry: (time, sequence, event code) packed into one integer, time in the top
/// 64 bits and a 32-bit sequence number below it, so that ordering is a single wide
/// comparison (sequence numbers are unique, so the code never decides) and four
/// children of a heap node fill one 64-byte cache line.
#[derive(Debug, Clone, Copy)]
struct Entry {
    key: u128,
}

impl Entry {
    #[cfg(test)]
    fn new(time_ns: u64, seq: u32, event: Event) -> Self {
        Self::from_code(time_ns, seq, event.encode())
    }

    #[inline]
    fn from_code(time_ns: u64, seq: u32, code: u32) -> Self {
        Entry {
            key: (time_ns as u128) << 64 | (seq as u128) << 32 | code as u128,
        }
    }

    #[inline]
    fn time_ns(&self) -> u64 {
        (self.key >> 64) as u64
    }

    #[inline]
    fn code(&self) -> u32 {
        self.key as u32
    }

    #[inline]
    fn event(&self) -> Event {
        Event::decode(self.code())
    }

    #[inline]
    fn is_network(&self) -> bool {
        self.code() >> Event::INDEX_BITS < Event::FIRST_OTHER_KIND
    }

    /// The same entry with another sequence number.
    #[inline]
    fn with_seq(self, seq: u32) -> Self {
        let keep = !((u32::MAX as u128) << 32);
        Entry {
            key: (self.key & keep) | (seq as u128) << 32,
        }
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
    /// The earliest pending event when it was scheduled earlier than everything in both
    /// heaps, as a packet's next hop mostly is (a transmit-done a serialisation time
    /// away): it is popped next without passing through a heap. Invariant: when set, its
    /// key is below every key in `network` and `other`.
    front: Option<Entry>,
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
    ///
    /// Always inlined so that packing a variant known at the call site folds to a
    /// constant instead of a jump through the variant table.
    #[inline(always)]
    pub fn at(&mut self, time_ns: u64, event: Event) {
        self.at_code(time_ns, event.encode());
    }

    #[inline]
    fn at_code(&mut self, time_ns: u64, code: u32) {
        debug_assert!(time_ns >= self.now_ns, "event scheduled in the past");
        if self.next_seq > u32::MAX as u64 {
            self.renumber();
        }
        let seq = self.next_seq as u32;
        self.next_seq += 1;
        let entry = Entry::from_code(time_ns.max(self.now_ns), seq, code);
        match self.front {
            // Keys grow with the sequence number, so a new entry is below the front only
            // when it is due earlier; the old front then goes to its heap.
            Some(f) if entry.key < f.key => {
                self.front = Some(entry);
                self.push_heap(f);
            }
            Some(_) => self.push_heap(entry),
            None => {
                let below = |h: &MinHeap| h.peek_key().is_none_or(|k| entry.key < k);
                if below(&self.network) && below(&self.other) {
                    self.front = Some(entry);
                } else {
                    self.push_heap(entry);
                }
            }
        }
    }

    #[inline]
    fn push_heap(&mut self, entry: Entry) {
        if entry.is_network() {
            self.network.push(entry);
        } else {
            self.other.push(entry);
        }
    }

    /// Sequence numbers are 32 bits wide: after 2^32 schedulings, number the pending
    /// events afresh from zero in their current order (which is thereby unchanged).
    #[cold]
    fn renumber(&mut self) {
        let mut all: Vec<Entry> = self.front.take().into_iter().collect();
        all.append(&mut self.network.data);
        all.append(&mut self.other.data);
        all.sort_unstable_by_key(|e| e.key);
        // A sorted array is a valid heap, and so is each order-preserving part of it.
        for (i, e) in all.into_iter().enumerate() {
            let e = e.with_seq(i as u32);
            if e.is_network() {
                self.network.data.push(e);
            } else {
                self.other.data.push(e);
            }
        }
        self.next_seq = self.pending() as u64;
    }

    /// Schedule `event` `delay_ns` from now.
    #[inline]
    pub fn after(&mut self, delay_ns: u64, event: Event) {
        self.at(self.now_ns + delay_ns, event);
    }

    /// Pop the next event if it is due no later than `until_ns`, advancing the clock.
    #[inline]
    pub fn pop_until(&mut self, until_ns: u64) -> Option<Event> {
        let e = match self.front {
            Some(f) if f.time_ns() > until_ns => return None,
            Some(f) => {
                self.front = None;
                f
            }
            None => self.pop_heaps_until(until_ns)?,
        };
        self.now_ns = e.time_ns();
        self.executed += 1;
        Some(e.event())
    }

    /// The smaller of the two heaps' heads, if due no later than `until_ns`.
    #[inline]
    fn pop_heaps_until(&mut self, until_ns: u64) -> Option<Entry> {
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
        heap.pop()
    }

    /// Advance the clock to `t` when no event remains before it.
    pub fn advance_to(&mut self, t: u64) {
        if t > self.now_ns {
            self.now_ns = t;
        }
    }

    /// When the next pending event is due, if any (the real-time emulator sleeps until
    /// then).
    pub fn next_time_ns(&self) -> Option<u64> {
        let heads = [self.network.peek_key(), self.other.peek_key()];
        let front = self.front.map(|f| f.key);
        heads
            .into_iter()
            .chain(std::iter::once(front))
            .flatten()
            .min()
            .map(|k| (k >> 64) as u64)
    }

    pub fn pending(&self) -> usize {
        self.network.len() + self.other.len() + self.front.is_some() as usize
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
                h.push(Entry { key });
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
    fn every_event_survives_its_packing() {
        let max = Event::MAX_INDEX;
        let timer = |timer| Event::TcpTimer { flow: max, timer };
        for e in [
            Event::LinkTxDone(max),
            Event::LineArrive(3),
            Event::QdiscTimer(0),
            timer(TcpTimerKind::Rto),
            timer(TcpTimerKind::Pacing),
            timer(TcpTimerKind::DelAck),
            Event::FlowStart(7),
            Event::FlowStop(max),
            Event::UdpSend(1),
            Event::StatsTick,
            Event::MeasureStart,
            Event::MeasureEnd,
            Event::Change(2),
            Event::ControlTick,
        ] {
            let entry = Entry::new(u64::MAX, u32::MAX, e);
            assert_eq!(entry.event(), e);
            assert_eq!(entry.time_ns(), u64::MAX);
            let network = matches!(
                e,
                Event::LinkTxDone(_) | Event::LineArrive(_) | Event::QdiscTimer(_)
            );
            assert_eq!(entry.is_network(), network, "{e:?}");
        }
    }

    #[test]
    fn order_survives_sequence_number_wrap() {
        // Start just below the 32-bit wrap; same-time events must keep insertion order
        // across it, in both heaps and the front slot.
        let mut s = Scheduler {
            next_seq: u32::MAX as u64 - 3,
            ..Scheduler::default()
        };
        let mut expect = vec![];
        for i in 0..12u32 {
            let t = [50, 20, 50, 20][i as usize % 4];
            let e = if i % 3 == 0 {
                Event::LinkTxDone(i)
            } else {
                Event::UdpSend(i)
            };
            s.at(t, e);
            expect.push((t, i, e));
        }
        expect.sort_by_key(|&(t, i, _)| (t, i));
        let mut got = vec![];
        while let Some(e) = s.pop_until(u64::MAX) {
            got.push(e);
        }
        assert_eq!(got, expect.iter().map(|x| x.2).collect::<Vec<_>>());
        assert!(s.next_seq < 100, "renumbered from zero");
    }

    #[test]
    fn pop_until_stops_at_horizon() {
        let mut s = Scheduler::new();
        s.at(100, Event::StatsTick);
        assert!(s.pop_until(99).is_none());
        assert_eq!(s.pop_until(100), Some(Event::StatsTick));
    }
}
