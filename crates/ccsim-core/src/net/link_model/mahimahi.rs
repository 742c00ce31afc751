//! A link driven by a Mahimahi trace (`mm-link`): its capacity is a list of delivery
//! opportunities, one per line of the trace file (milliseconds), each able to deliver
//! [`OPPORTUNITY_BYTES`]; the trace loops, shifted by its last timestamp.
//!
//! Reference: ravinet/mahimahi `src/frontend/link_queue.cc`:
//! - the constructor reads the file: no empty line, timestamps never decreasing, at least
//!   one, the last positive ("trace must last for a nonzero amount of time");
//! - `rationalize` burns each opportunity whose time has come: it takes the packet in
//!   transit, or dequeues the next one, and subtracts the opportunity's bytes from what
//!   the packet still has to send; a packet whose bytes are all sent leaves at that
//!   opportunity's time, and the surplus goes to the next queued packet (a packet spans
//!   several opportunities, several small ones share one); with nothing queued the rest
//!   of the opportunity is wasted;
//! - `use_a_delivery_opportunity` wraps around to the first line, adding the last
//!   timestamp to the base time.
//!
//! Departures from the reference, on purpose:
//! - ns time instead of ms: an opportunity at `t` ms happens at `t · 10^6` ns. mm-link runs
//!   `rationalize(now)` before it enqueues an arriving packet, so a packet arriving in the
//!   same millisecond as an opportunity misses it; here a packet that starts at or before
//!   the opportunity's nanosecond takes it (ms clocks make the tie common there, ns clocks
//!   rare here).
//! - [`OPPORTUNITY_BYTES`] is 1500 (an MTU of IP bytes, the convention of the trace
//!   format's users and of ccsim's packet sizes); mm-link's `PACKET_SIZE` is 1504, the TUN
//!   payload with its 4-byte packet-information header, which is one 1500-byte IP packet
//!   per opportunity there too.

use std::path::Path;

/// Bytes one delivery opportunity can carry.
pub const OPPORTUNITY_BYTES: u32 = 1500;

const NS_PER_MS: u64 = 1_000_000;

/// Why a trace file was refused (the message names the file and the line).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    #[error("{path}: cannot read: {reason}")]
    Unreadable { path: String, reason: String },
    #[error("{path}: line {line}: empty line (mm-link refuses it)")]
    EmptyLine { path: String, line: usize },
    #[error("{path}: line {line}: expected a whole number of milliseconds, got {text:?}")]
    NotANumber {
        path: String,
        line: usize,
        text: String,
    },
    #[error("{path}: line {line}: timestamps must never decrease ({ms} after {previous})")]
    Decreasing {
        path: String,
        line: usize,
        ms: u64,
        previous: u64,
    },
    #[error("{path}: no timestamps (expected one delivery-opportunity time in ms per line)")]
    Empty { path: String },
    #[error("{path}: the last timestamp must be positive (it is the period the trace loops at)")]
    ZeroPeriod { path: String },
}

/// The opportunities of one loop of a trace, in milliseconds, never decreasing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MahimahiTrace {
    pub opportunities_ms: Vec<u64>,
}

impl MahimahiTrace {
    /// Parse a trace's text; `path` names it in errors.
    pub fn parse(text: &str, path: &str) -> Result<Self, TraceError> {
        Self::parse_bytes(text.as_bytes(), path)
    }

    /// Parse a trace file's bytes (the one parser of the format: the `ccsim trace` tools
    /// call it too, through the Python binding). Lines end with `\n`, the last one's
    /// optional; each line is ASCII digits only, as the format's files are written: no
    /// sign, blank, comment or `\r` (mm-link's `myatoi` refuses a trailing `\r` and
    /// anything after the number, `link_queue.cc` an empty line).
    pub fn parse_bytes(data: &[u8], path: &str) -> Result<Self, TraceError> {
        if data.is_empty() {
            return Err(TraceError::Empty { path: path.into() });
        }
        let body = data.strip_suffix(b"\n").unwrap_or(data);
        let mut opportunities_ms: Vec<u64> = Vec::new();
        for (i, line) in body.split(|&b| b == b'\n').enumerate() {
            let line_no = i + 1;
            if line.is_empty() {
                return Err(TraceError::EmptyLine {
                    path: path.into(),
                    line: line_no,
                });
            }
            let not_a_number = || TraceError::NotANumber {
                path: path.into(),
                line: line_no,
                text: String::from_utf8_lossy(line).chars().take(40).collect(),
            };
            if !line.iter().all(u8::is_ascii_digit) {
                return Err(not_a_number());
            }
            let ms: u64 = std::str::from_utf8(line)
                .ok()
                .and_then(|t| t.parse().ok())
                .ok_or_else(not_a_number)?;
            if let Some(&previous) = opportunities_ms.last() {
                if ms < previous {
                    return Err(TraceError::Decreasing {
                        path: path.into(),
                        line: line_no,
                        ms,
                        previous,
                    });
                }
            }
            opportunities_ms.push(ms);
        }
        match opportunities_ms.last() {
            None => Err(TraceError::Empty { path: path.into() }),
            Some(0) => Err(TraceError::ZeroPeriod { path: path.into() }),
            Some(_) => Ok(MahimahiTrace { opportunities_ms }),
        }
    }

    /// Read and parse a trace file.
    pub fn from_file(path: &Path) -> Result<Self, TraceError> {
        let name = path.display().to_string();
        let data = std::fs::read(path).map_err(|e| TraceError::Unreadable {
            path: name.clone(),
            reason: e.to_string(),
        })?;
        Self::parse_bytes(&data, &name)
    }

    /// The loop's length: the last timestamp, in ns.
    pub fn period_ns(&self) -> u64 {
        self.opportunities_ms.last().copied().unwrap_or(1) * NS_PER_MS
    }

    /// The mean rate over a loop, in bit/s.
    pub fn mean_rate_bps(&self) -> f64 {
        self.opportunities_ms.len() as f64 * OPPORTUNITY_BYTES as f64 * 8.0 * 1e9
            / self.period_ns() as f64
    }
}

/// A link's transmitter following a trace: which opportunity comes next, and what is
/// left of the last one used.
///
/// It also keeps what utilisation needs to be exact at any moment whatever the order of
/// events at one instant: the bytes carried before `now` are the bytes consumed at
/// opportunities strictly before `now`, and the capacity offered is the opportunities
/// strictly before `now` ([`TraceService::pending_bytes`], [`TraceService::offered_bits_e9`]),
/// so over any interval the carried bytes never exceed the opportunities' (a tick at an
/// opportunity's instant sees neither that opportunity nor what it carries).
#[derive(Debug, Clone)]
pub struct TraceService {
    trace: std::sync::Arc<MahimahiTrace>,
    /// The next unused opportunity: index into the loop, and the loop it is in.
    next: usize,
    cycle: u64,
    /// Bytes left of the last opportunity used, and its time (for the next packet only
    /// if that packet starts no later: mm-link gives the surplus to a packet already
    /// queued, and wastes it otherwise).
    leftover_bytes: u32,
    leftover_at_ns: u64,
    /// Bytes consumed at the last opportunity used (at `leftover_at_ns`) by packets
    /// before the one in service, and the in-service packet's consumption: at that
    /// opportunity (`shared_bytes`), then at `fresh_count` opportunities from number
    /// `first_fresh` (counted from time 0), the last of which carries `last_fresh_bytes`.
    frontier_at_ns: u64,
    frontier_bytes: u32,
    shared_bytes: u32,
    first_fresh: u64,
    fresh_count: u64,
    last_fresh_bytes: u32,
    /// An opportunity has been used (the frontier is one).
    any_used: bool,
    /// Take a packet from the queue only when an opportunity can start it (mm-link's
    /// `rationalize`); false: as soon as the transmitter is free, the packet then waiting
    /// on the transmitter (`trace_dequeue = "link_free"`).
    pub dequeue_at_opportunity: bool,
}

impl TraceService {
    pub fn new(trace: std::sync::Arc<MahimahiTrace>) -> Self {
        TraceService {
            trace,
            next: 0,
            cycle: 0,
            leftover_bytes: 0,
            leftover_at_ns: 0,
            frontier_at_ns: 0,
            frontier_bytes: 0,
            shared_bytes: 0,
            first_fresh: 0,
            fresh_count: 0,
            last_fresh_bytes: 0,
            any_used: false,
            dequeue_at_opportunity: true,
        }
    }

    fn time_ns(&self, cycle: u64, index: usize) -> u64 {
        cycle * self.trace.period_ns() + self.trace.opportunities_ms[index] * NS_PER_MS
    }

    fn position(&self) -> u64 {
        self.cycle * self.trace.opportunities_ms.len() as u64 + self.next as u64
    }

    fn advance(&mut self) {
        self.next += 1;
        if self.next == self.trace.opportunities_ms.len() {
            self.next = 0;
            self.cycle += 1;
        }
    }

    /// Skip the opportunities before `now_ns` (they pass with nothing to carry): O(log n)
    /// with the loop's period, however long the gap.
    fn skip_to(&mut self, now_ns: u64) {
        if self.time_ns(self.cycle, self.next) >= now_ns {
            return;
        }
        let period = self.trace.period_ns();
        let ms = &self.trace.opportunities_ms;
        let cycle = now_ns / period;
        let offset = now_ns - cycle * period;
        // The first opportunity at or after `now_ns`: the previous loop's last one(s) when
        // `now_ns` is exactly a loop boundary (they happen at that boundary), else the
        // first of this loop not before the offset, else the next loop's first.
        let first = if offset == 0 && cycle > 0 {
            (cycle - 1, ms.partition_point(|&t| t * NS_PER_MS < period))
        } else {
            match ms.partition_point(|&t| t * NS_PER_MS < offset) {
                i if i < ms.len() => (cycle, i),
                _ => (cycle + 1, 0),
            }
        };
        if first > (self.cycle, self.next) {
            (self.cycle, self.next) = first;
        }
    }

    /// When the link can next carry a byte at or after `now_ns`: the last opportunity
    /// used, while it has bytes left and is not past, else the next opportunity.
    pub fn next_capacity_ns(&mut self, now_ns: u64) -> u64 {
        if self.leftover_bytes > 0 && self.leftover_at_ns >= now_ns {
            return self.leftover_at_ns;
        }
        self.skip_to(now_ns);
        self.time_ns(self.cycle, self.next)
    }

    /// A packet of `bytes` that starts at `start_ns` (taken from the queue then; starts
    /// never go back in time): the time its last byte is delivered.
    pub fn departure_ns(&mut self, start_ns: u64, bytes: u32) -> u64 {
        // What earlier packets consumed at the last opportunity used stays on record
        // (nothing before the first packet: `leftover_at_ns` is then no opportunity).
        self.frontier_bytes = if self.any_used {
            OPPORTUNITY_BYTES - self.leftover_bytes
        } else {
            0
        };
        self.any_used = true;
        self.frontier_at_ns = self.leftover_at_ns;
        self.shared_bytes = 0;
        self.fresh_count = 0;
        let mut need = bytes;
        if self.leftover_bytes > 0 && self.leftover_at_ns >= start_ns {
            let used = need.min(self.leftover_bytes);
            self.shared_bytes = used;
            self.leftover_bytes -= used;
            need -= used;
            if need == 0 {
                return self.leftover_at_ns;
            }
        }
        self.leftover_bytes = 0;
        self.skip_to(start_ns);
        self.first_fresh = self.position();
        loop {
            let at = self.time_ns(self.cycle, self.next);
            self.advance();
            self.fresh_count += 1;
            if need <= OPPORTUNITY_BYTES {
                self.last_fresh_bytes = need;
                self.leftover_bytes = OPPORTUNITY_BYTES - need;
                self.leftover_at_ns = at;
                return at;
            }
            need -= OPPORTUNITY_BYTES;
        }
    }

    /// Bytes given to [`TraceService::departure_ns`] so far that are consumed at
    /// opportunities at or after `now_ns` (none of them before the in-service packet's
    /// first opportunity): the link has not carried them before `now_ns`.
    pub fn pending_bytes(&self, now_ns: u64) -> u64 {
        let mut pending = 0u64;
        if self.frontier_at_ns >= now_ns {
            pending += (self.frontier_bytes + self.shared_bytes) as u64;
        }
        if self.fresh_count > 0 {
            let end = self.first_fresh + self.fresh_count;
            let from = self.first_fresh.max(self.opportunities_before(now_ns));
            if from < end {
                pending +=
                    (end - from - 1) * OPPORTUNITY_BYTES as u64 + self.last_fresh_bytes as u64;
            }
        }
        pending
    }

    /// Opportunities strictly before `now_ns` since time 0, over all loops.
    pub fn opportunities_before(&self, now_ns: u64) -> u64 {
        let period = self.trace.period_ns();
        let ms = &self.trace.opportunities_ms;
        let cycle = now_ns / period;
        let within = now_ns - cycle * period;
        let before = |bound_ns: u64| ms.partition_point(|&t| t * NS_PER_MS < bound_ns) as u64;
        // Loop `c` puts its opportunities at `c·period + t`, its last at `(c+1)·period`:
        // every loop before the previous one lies wholly before `now_ns`; the previous
        // one up to `period + within` (its last timestamp(s) fall at this loop's start,
        // not before `now_ns` when `within` is 0); this one up to `within`.
        match cycle {
            0 => before(within),
            c => (c - 1) * ms.len() as u64 + before(period + within) + before(within),
        }
    }

    /// Opportunities at or before `now_ns` since time 0, over all loops.
    pub fn opportunities_by(&self, now_ns: u64) -> u64 {
        self.opportunities_before(now_ns + 1)
    }

    /// Bits the trace offered before `now_ns`, times 10^9 (the link's
    /// [`crate::net::link::CapacityMeter`] unit).
    pub fn offered_bits_e9(&self, now_ns: u64) -> u128 {
        self.opportunities_before(now_ns) as u128 * OPPORTUNITY_BYTES as u128 * 8 * 1_000_000_000
    }
}

#[cfg(test)]
mod tests {
    //! Hand-worked from `link_queue.cc`'s `rationalize` (numbers in the comments).
    use super::*;
    use std::sync::Arc;

    const MS: u64 = NS_PER_MS;

    fn service(text: &str) -> TraceService {
        TraceService::new(Arc::new(MahimahiTrace::parse(text, "t").unwrap()))
    }

    #[test]
    fn back_to_back_mtu_packets_leave_one_per_opportunity() {
        // "1": one opportunity per ms, looping every 1 ms (12 Mbit/s). Packets queued at
        // 0.5 ms leave at 1, 2, 3 ms: each takes a whole opportunity.
        let mut s = service("1\n");
        let mut start = MS / 2;
        for k in 1..=3 {
            let end = s.departure_ns(start, 1500);
            assert_eq!(end, k * MS);
            start = end; // the next starts when the transmitter frees
        }
        assert!((s.trace.mean_rate_bps() - 12e6).abs() < 1e-6);
    }

    #[test]
    fn small_packets_share_an_opportunity_and_big_ones_span_several() {
        // Three 500-byte packets queued at 0: all leave at the 2 ms opportunity
        // (500 + 500 + 500 = 1500 bytes).
        let mut s = service("2\n4\n6\n8\n");
        assert_eq!(s.departure_ns(0, 500), 2 * MS);
        assert_eq!(s.departure_ns(2 * MS, 500), 2 * MS);
        assert_eq!(s.departure_ns(2 * MS, 500), 2 * MS);
        // A 3000-byte packet needs the 4 and 6 ms opportunities.
        assert_eq!(s.departure_ns(2 * MS, 3000), 6 * MS);
        // A 1000-byte packet leaves at 8 ms with 500 bytes to spare, which a packet
        // arriving after 8 ms cannot use (mm-link wastes it: nothing was queued): it
        // waits for the next loop's 2 ms opportunity, at 8 + 2 = 10 ms.
        assert_eq!(s.departure_ns(6 * MS, 1000), 8 * MS);
        assert_eq!(s.departure_ns(8 * MS + 1, 1500), 10 * MS);
    }

    #[test]
    fn a_partly_used_opportunity_leaves_a_full_packet_for_the_next() {
        // 1000 bytes at 1 ms leave 500; a 1500-byte packet queued behind takes those 500
        // and 1000 of the 2 ms opportunity, leaving at 2 ms.
        let mut s = service("1\n2\n");
        assert_eq!(s.departure_ns(0, 1000), MS);
        assert_eq!(s.departure_ns(MS, 1500), 2 * MS);
        // 500 bytes of the 2 ms opportunity remain for a packet queued at 2 ms.
        assert_eq!(s.departure_ns(2 * MS, 500), 2 * MS);
    }

    #[test]
    fn a_spanning_packet_is_carried_opportunity_by_opportunity() {
        // 1000 bytes at 1 ms leave 500; a 3500-byte packet queued there takes the 500 at
        // 1 ms, 1500 at 2 ms, 1500 at 3 ms and leaves at 3 ms. Pending (not carried
        // before the moment): at 1 ms all 1000 + 3500 (the 1 ms opportunity is not before
        // 1 ms); at 1.5 ms 3000; at 2.5 ms 1500; at 3 ms + 1 ns nothing.
        let mut s = service("1\n2\n3\n4\n");
        assert_eq!(s.departure_ns(0, 1000), MS);
        assert_eq!(s.departure_ns(MS, 3500), 3 * MS);
        assert_eq!(s.pending_bytes(MS), 4500);
        assert_eq!(s.pending_bytes(MS + MS / 2), 3000);
        assert_eq!(s.pending_bytes(2 * MS + MS / 2), 1500);
        assert_eq!(s.pending_bytes(3 * MS + 1), 0);
        assert_eq!(s.opportunities_before(MS), 0);
        assert_eq!(s.opportunities_by(MS), 1);
        // Before the first packet nothing is pending, at time 0 included.
        let mut fresh = service("1\n");
        assert_eq!(fresh.pending_bytes(0), 0);
        assert_eq!(fresh.departure_ns(0, 100), MS);
        assert_eq!(fresh.pending_bytes(0), 100);
    }

    #[test]
    fn the_trace_loops_at_its_last_timestamp() {
        // "1 2 3 4": period 4 ms; opportunities at 1..4, 5..8, ...
        let mut s = service("1\n2\n3\n4\n");
        let ends: Vec<u64> = (0..8)
            .scan(0, |t, _| {
                *t = s.departure_ns(*t, 1500);
                Some(*t / MS)
            })
            .collect();
        assert_eq!(ends, vec![1, 2, 3, 4, 5, 6, 7, 8]);
        // An idle gap of 1 s: the next opportunity after 1000.5 ms is at 1001 ms.
        assert_eq!(s.departure_ns(1000 * MS + MS / 2, 1500), 1001 * MS);
        assert_eq!(s.opportunities_by(8 * MS), 8);
        assert_eq!(s.opportunities_by(1000 * MS), 1000);
        assert_eq!(s.opportunities_before(8 * MS), 7);
        // A one-line trace: one opportunity per loop, at its end.
        let one = service("1\n");
        assert_eq!(one.opportunities_before(2 * MS), 1);
        assert_eq!(one.opportunities_by(2 * MS), 2);
        assert_eq!(one.opportunities_before(2 * MS + 1), 2);
    }

    #[test]
    fn nothing_departs_in_an_outage() {
        // Opportunities at 1, 2 ms, then none until 2002 ms (a 2 s outage), period 2002.
        let mut s = service("1\n2\n2002\n");
        assert_eq!(s.departure_ns(0, 1500), MS);
        assert_eq!(s.departure_ns(MS, 1500), 2 * MS);
        assert_eq!(s.departure_ns(2 * MS, 1500), 2002 * MS);
        assert_eq!(s.next_capacity_ns(3 * MS), 2003 * MS);
        assert_eq!(s.opportunities_by(2001 * MS), 2);
    }

    #[test]
    fn bytes_delivered_never_exceed_the_opportunities_in_any_interval() {
        use crate::engine::rng::{stream, StreamKind};
        let text = "1\n1\n3\n7\n7\n7\n8\n20\n21\n";
        let trace = Arc::new(MahimahiTrace::parse(text, "t").unwrap());
        let mut s = TraceService::new(trace.clone());
        let mut rng = stream(7, StreamKind::Qdisc, 0);
        let mut departures: Vec<(u64, u32)> = Vec::new();
        let mut t = 0u64;
        for _ in 0..2000 {
            let bytes = 40 + (rng.next_u64() % 1461) as u32;
            t += rng.next_u64() % (3 * MS);
            let end = s.departure_ns(t, bytes);
            assert!(end >= t);
            departures.push((end, bytes));
            t = end;
        }
        // Any window (a, b]: bytes leaving in it <= 1500 x opportunities in it, plus at
        // most one opportunity's carry-over of a packet begun before a.
        for &(a, _) in departures.iter().step_by(37) {
            for &(b, _) in departures.iter().step_by(53) {
                if b <= a {
                    continue;
                }
                let carried: u64 = departures
                    .iter()
                    .filter(|&&(e, _)| e > a && e <= b)
                    .map(|&(_, n)| n as u64)
                    .sum();
                let offered = (s.opportunities_by(b) - s.opportunities_by(a)) * 1500;
                assert!(
                    carried <= offered + 1500,
                    "({a}, {b}]: {carried} > {offered} + 1500"
                );
            }
        }
        // From time 0 it is exact: no carry-over before the first opportunity.
        let last = departures.last().unwrap().0;
        let total: u64 = departures.iter().map(|&(_, n)| n as u64).sum();
        assert!(total <= s.opportunities_by(last) * 1500);
    }

    #[test]
    fn bad_traces_are_refused_with_their_line() {
        let err = |t: &str| MahimahiTrace::parse(t, "f.trace").unwrap_err().to_string();
        assert!(err("").starts_with("f.trace: no timestamps"));
        assert!(err("1\n2\r\n").contains("line 2: expected a whole number"));
        assert!(err("+5\n").contains("line 1: expected a whole number"));
        assert!(err("\n").contains("line 1: empty line"));
        assert!(err("1\n2\n\n").contains("line 3: empty line"));
        assert!(err("99999999999999999999999\n").contains("line 1: expected a whole number"));
        let bad = MahimahiTrace::parse_bytes(b"1\n\xff\n", "b")
            .unwrap_err()
            .to_string();
        assert!(
            bad.starts_with("b: line 2: expected a whole number"),
            "{bad}"
        );
        assert!(err("1\n\n2\n").contains("line 2: empty line"));
        assert!(err("1\nx\n").contains("line 2: expected a whole number"));
        assert!(err("1\n-3\n").contains("line 2: expected a whole number"));
        assert!(err("5\n3\n").contains("line 2: timestamps must never decrease"));
        assert!(err("0\n0\n").contains("last timestamp must be positive"));
        let missing = MahimahiTrace::from_file(Path::new("/nonexistent/x.trace"));
        assert!(missing
            .unwrap_err()
            .to_string()
            .starts_with("/nonexistent/x.trace: cannot read"));
    }
}
