//! The TCP receiver: cumulative ACKs, SACK blocks, delayed ACKs, the ECN echo.
//!
//! References:
//! - Delayed ACKs as Linux `__tcp_ack_snd_check()` (`net/ipv4/tcp_input.c`): ACK at once
//!   when more than one full segment is unacknowledged (every second segment), in
//!   quick-ACK mode (the first 16 segments of a connection, `TCP_MAX_QUICKACKS`), while
//!   the out-of-order queue is non-empty, or for a duplicate segment (which also re-enters
//!   quick-ACK mode); otherwise arm the delayed-ACK timer (40 ms, `TCP_DELACK_MIN`).
//! - SACK blocks per RFC 2018 §4: the first block holds the most recently received
//!   segment, the others repeat the most recently reported blocks; at most 3 blocks with
//!   the timestamp option.
//! - Timestamps per RFC 7323 §4.3: `TS.Recent` is updated only by a segment that starts at
//!   or before the last ACK sent, so a delayed ACK echoes the earlier segment.
//! - ECN per RFC 3168 §6.1.3: after a CE segment every ACK carries ECE until a segment
//!   with CWR arrives; the first CE forces quick ACKs for two segments (Linux
//!   `__tcp_ecn_check_ce`: "Better not delay acks, sender can have a very low cwnd"),
//!   and a data segment with CWR is ACKed at once (Linux `tcp_ecn_accept_cwr`: "If the
//!   sender is telling us it has entered CWR, then its cwnd may be very low (even just 1
//!   packet), so we should ACK immediately", `ICSK_ACK_NOW`; include/net/tcp_ecn.h, in
//!   net/ipv4/tcp_input.c before 6.x). `ce_quickack = false` leaves both delayed, as
//!   ns-3's `TcpSocketBase::ReceivedData` does (for comparisons with ns-3).
//! - With `accurate_ecn` (DCTCP, Linux `TCP_CONG_NEEDS_ECN`) the latch is replaced by
//!   Linux's DCTCP state machine (`dctcp_ece_ack_update`/`dctcp_ece_ack_cwr`,
//!   `net/ipv4/tcp_dctcp.h`, driven by `CA_EVENT_ECN_IS_CE`/`_NO_CE` from
//!   `__tcp_ecn_check_ce` for every new in-order or out-of-order data segment): ECE on an
//!   ACK is the CE state of the last such segment; when that state changes and an ACK is
//!   being delayed, an ACK for the data up to the previous segment is sent first with the
//!   previous state, then an immediate ACK with the new state. These ACKs are ECT(0), as
//!   Linux keeps ECT on pure ACKs of such sockets. Old duplicates (below rcv_nxt) do not
//!   change the state, as in Linux where they never reach the ECN check.
//!
//! Departures: Linux adapts the delayed-ACK timeout (`ato`) between 40 ms and 200 ms from
//! inter-arrival times; ccsim uses a fixed timeout (40 ms by default). No D-SACK.

use super::{TcpIo, Timer};
use crate::net::packet::{
    tcp_flags, Ecn, Packet, PacketKind, SackBlocks, MAX_SACK_BLOCKS, TCP_IP_HEADER_BYTES,
};

/// Linux `TCP_MAX_QUICKACKS`.
pub const MAX_QUICKACKS: u32 = 16;
/// Linux `TCP_DELACK_MIN` (HZ/25).
pub const DELACK_NS: u64 = 40_000_000;

/// Receiver-side counters.
#[derive(Debug, Clone, Default)]
pub struct ReceiverStats {
    /// Payload bytes that arrived, duplicates included.
    pub bytes_received: u64,
    /// Payload bytes handed to the application in order (each byte once).
    pub bytes_delivered: u64,
    pub segments_received: u64,
    pub duplicate_segments: u64,
    pub acks_sent: u64,
    /// When the last byte of a finite transfer was delivered.
    pub completed_ns: Option<u64>,
}

/// An out-of-order range of segments `[start, end)` and when it last grew.
#[derive(Debug, Clone, Copy)]
struct OooRange {
    start: u64,
    end: u64,
    touched: u64,
}

/// The receiving end of one TCP flow.
#[derive(Debug, Clone)]
pub struct TcpReceiver {
    flow: u32,
    route: u32,
    sack: bool,
    delayed_ack: bool,
    delack_ns: u64,
    mss: u32,
    total_bytes: Option<u64>,
    rcv_nxt: u64,
    /// Linux `rcv_wup`: `rcv_nxt` when the last ACK was sent.
    last_ack_sent: u64,
    ooo: Vec<OooRange>,
    touch_counter: u64,
    ts_recent: u64,
    quick_acks: u32,
    got_first_segment: bool,
    /// RFC 3168 ECE latch (Linux `TCP_ECN_DEMAND_CWR`).
    ece_latch: bool,
    /// DCTCP's per-packet CE echo instead of the latch.
    accurate_ecn: bool,
    ce_quickack: bool,
    /// DCTCP `ce_state`: the last new data segment was CE-marked.
    ce_state: bool,
    /// DCTCP `prior_rcv_nxt`: rcv_nxt after the last new data segment.
    prior_rcv_nxt: u64,
    pub delack_timer: Timer,
    pub stats: ReceiverStats,
}

impl TcpReceiver {
    pub fn new(flow: u32, route: u32, cfg: &super::TcpConfig, delack_ns: u64) -> Self {
        TcpReceiver {
            flow,
            route,
            sack: cfg.sack,
            delayed_ack: cfg.delayed_ack,
            delack_ns,
            mss: cfg.mss,
            total_bytes: cfg.total_bytes,
            rcv_nxt: 0,
            last_ack_sent: 0,
            ooo: Vec::new(),
            touch_counter: 0,
            ts_recent: 0,
            quick_acks: 0,
            got_first_segment: false,
            ece_latch: false,
            accurate_ecn: cfg.accurate_ecn,
            ce_quickack: cfg.ce_quickack,
            ce_state: false,
            prior_rcv_nxt: 0,
            delack_timer: Timer::default(),
            stats: ReceiverStats::default(),
        }
    }

    /// Next segment expected.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    fn deliver(&mut self, from_seg: u64, to_seg: u64, now_ns: u64) {
        let mss = self.mss as u64;
        let mut bytes = (to_seg - from_seg) * mss;
        if let Some(total) = self.total_bytes {
            let end = (to_seg * mss).min(total);
            bytes = end.saturating_sub(from_seg * mss);
            if end >= total && self.stats.completed_ns.is_none() {
                self.stats.completed_ns = Some(now_ns);
            }
        }
        self.stats.bytes_delivered += bytes;
    }

    /// Insert segment `seg` (> rcv_nxt) into the out-of-order ranges. Returns false for a
    /// duplicate.
    fn insert_ooo(&mut self, seg: u64) -> bool {
        self.touch_counter += 1;
        let touched = self.touch_counter;
        let pos = self.ooo.partition_point(|r| r.end < seg);
        if pos < self.ooo.len() {
            let r = &mut self.ooo[pos];
            if r.start <= seg && seg < r.end {
                return false;
            }
            if r.end == seg {
                r.end += 1;
                r.touched = touched;
                // Merge with the next range if now adjacent.
                if pos + 1 < self.ooo.len() && self.ooo[pos + 1].start == self.ooo[pos].end {
                    self.ooo[pos].end = self.ooo[pos + 1].end;
                    self.ooo.remove(pos + 1);
                }
                return true;
            }
            if seg + 1 == r.start {
                r.start = seg;
                r.touched = touched;
                return true;
            }
        }
        self.ooo.insert(
            pos,
            OooRange {
                start: seg,
                end: seg + 1,
                touched,
            },
        );
        true
    }

    /// Handle an arriving data segment; may emit an ACK into `io.out`.
    pub fn on_data(&mut self, pkt: &Packet, io: &mut TcpIo<'_>) {
        let now = io.now_ns;
        let seg = pkt.seq;
        self.stats.segments_received += 1;
        self.stats.bytes_received += pkt.payload_bytes as u64;
        // Linux tcp_ecn_accept_cwr(): CWR ends the echo (the CE check below may start it
        // again) and a CWR segment with data is ACKed at once (ICSK_ACK_NOW), for any
        // congestion control.
        let cwr = pkt.tcp_flags & tcp_flags::CWR != 0;
        if cwr {
            self.ece_latch = false;
        }
        if !self.got_first_segment {
            // Linux tcp_event_data_recv(): the first data segment starts quick-ACK mode.
            self.got_first_segment = true;
            self.quick_acks = MAX_QUICKACKS;
        }
        let mut ack_now = cwr && self.ce_quickack && pkt.payload_bytes > 0;
        if self.accurate_ecn && seg >= self.rcv_nxt {
            ack_now |= self.dctcp_ce_update(pkt.ecn == Ecn::Ce, seg, io);
        }
        let had_ooo = !self.ooo.is_empty();
        if seg == self.rcv_nxt {
            if seg <= self.last_ack_sent && pkt.ts_val >= self.ts_recent {
                self.ts_recent = pkt.ts_val;
            }
            let mut next = seg + 1;
            if let Some(first) = self.ooo.first() {
                if first.start == next {
                    next = first.end;
                    self.ooo.remove(0);
                }
            }
            self.deliver(seg, next, now);
            self.rcv_nxt = next;
            // RFC 5681 §4.2: ACK at once when a segment fills (part of) a gap.
            ack_now |= had_ooo;
        } else if seg < self.rcv_nxt {
            // A retransmission of delivered data: ACK at once, and Linux re-enters
            // quick-ACK mode (tcp_data_queue(), out_of_window).
            self.stats.duplicate_segments += 1;
            self.quick_acks = MAX_QUICKACKS;
            ack_now = true;
        } else {
            if !self.insert_ooo(seg) {
                self.stats.duplicate_segments += 1;
            }
            ack_now = true;
        }
        if !self.accurate_ecn && pkt.ecn == Ecn::Ce && !self.ece_latch {
            self.ece_latch = true;
            if self.ce_quickack {
                self.quick_acks = self.quick_acks.max(2);
            }
        }
        let unacked_segments = self.rcv_nxt - self.last_ack_sent;
        if ack_now
            || !self.delayed_ack
            || self.quick_acks > 0
            || unacked_segments >= 2
            || !self.ooo.is_empty()
        {
            self.send_ack(io);
        } else if !self.delack_timer.is_armed() {
            self.delack_timer.arm(now + self.delack_ns);
        }
    }

    /// Linux `dctcp_ece_ack_update()` for a new data segment `seg` (CE-marked or not).
    /// Returns whether an immediate ACK is due (the CE state changed).
    fn dctcp_ce_update(&mut self, ce: bool, seg: u64, io: &mut TcpIo<'_>) -> bool {
        let changed = ce != self.ce_state;
        if changed && self.delack_timer.is_armed() {
            // Reflect the prior CE state for the data ACKed so far, without touching the
            // delayed-ACK state (Linux tcp_event_ack_sent() ignores this special ACK).
            let ack = self.prior_rcv_nxt;
            let ece = self.ce_state;
            self.emit_ack(io, ack, ece);
        }
        // Linux runs this after an in-order segment has advanced rcv_nxt (before the
        // out-of-order queue is merged) and before an out-of-order one is queued.
        self.prior_rcv_nxt = if seg == self.rcv_nxt {
            seg + 1
        } else {
            self.rcv_nxt
        };
        self.ce_state = ce;
        changed
    }

    /// The delayed-ACK timer fired.
    pub fn on_delack_timer(&mut self, io: &mut TcpIo<'_>) {
        if self.rcv_nxt > self.last_ack_sent {
            self.send_ack(io);
        }
    }

    fn send_ack(&mut self, io: &mut TcpIo<'_>) {
        let ece = if self.accurate_ecn {
            self.ce_state
        } else {
            self.ece_latch
        };
        self.emit_ack(io, self.rcv_nxt, ece);
        self.last_ack_sent = self.rcv_nxt;
        self.quick_acks = self.quick_acks.saturating_sub(1);
        self.delack_timer.cancel();
    }

    /// Put an ACK for `ack` (with the current SACK blocks) on the route.
    fn emit_ack(&mut self, io: &mut TcpIo<'_>, ack: u64, ece: bool) {
        let mut p = Packet {
            kind: PacketKind::TcpAck,
            flow: self.flow,
            route: self.route,
            seq: ack,
            ts_val: io.now_ns,
            ts_ecr: self.ts_recent,
            ..Packet::default()
        };
        if ece {
            p.tcp_flags |= tcp_flags::ECE;
        }
        if self.accurate_ecn {
            p.ecn = Ecn::Ect0;
        }
        let mut blocks = SackBlocks::default();
        if self.sack && !self.ooo.is_empty() {
            // Most recently changed ranges first (RFC 2018 §4).
            let mut order: [usize; MAX_SACK_BLOCKS] = [usize::MAX; MAX_SACK_BLOCKS];
            let mut n = 0usize;
            for (i, r) in self.ooo.iter().enumerate() {
                // Insertion into a small top-k list by `touched`, descending.
                let mut j = n.min(MAX_SACK_BLOCKS);
                if j == MAX_SACK_BLOCKS && self.ooo[order[j - 1]].touched >= r.touched {
                    continue;
                }
                if j == MAX_SACK_BLOCKS {
                    j -= 1;
                }
                while j > 0 && self.ooo[order[j - 1]].touched < r.touched {
                    if j < MAX_SACK_BLOCKS {
                        order[j] = order[j - 1];
                    }
                    j -= 1;
                }
                order[j] = i;
                n = (n + 1).min(MAX_SACK_BLOCKS);
            }
            for (k, &idx) in order.iter().take(n).enumerate() {
                let r = self.ooo[idx];
                blocks[k] = (r.start, r.end);
            }
            p.n_sack = n as u8;
        }
        p.size_bytes = TCP_IP_HEADER_BYTES
            + if p.n_sack > 0 {
                4 + 8 * p.n_sack as u32
            } else {
                0
            };
        let id = io.pool.alloc(p);
        if p.n_sack > 0 {
            *io.pool.sack_mut(id) = blocks;
        }
        io.out.push(id);
        self.stats.acks_sent += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::PacketPool;
    use crate::tcp::TcpConfig;

    fn cfg(sack: bool, delayed_ack: bool) -> TcpConfig {
        TcpConfig {
            mss: 1000,
            initial_window: 10,
            sack,
            ecn: true,
            pacing: false,
            recovery_exit: Default::default(),
            rack: true,
            tlp: true,
            ce_quickack: true,
            min_rto_ns: 200_000_000,
            delayed_ack,
            total_bytes: None,
            accurate_ecn: false,
        }
    }

    fn data(seq: u64) -> Packet {
        Packet {
            kind: PacketKind::TcpData,
            seq,
            payload_bytes: 1000,
            size_bytes: 1052,
            ..Packet::default()
        }
    }

    /// An emitted ACK: (cumulative ACK, SACK blocks, ECE).
    type Ack = (u64, Vec<(u64, u64)>, bool);

    /// Feed segments, return the ACKs emitted after each.
    fn feed(rx: &mut TcpReceiver, segs: &[Packet]) -> Vec<Vec<Ack>> {
        let mut pool = PacketPool::new();
        let mut res = vec![];
        for (i, s) in segs.iter().enumerate() {
            let mut out = vec![];
            let mut io = TcpIo {
                now_ns: i as u64 * 1000,
                pool: &mut pool,
                out: &mut out,
            };
            rx.on_data(s, &mut io);
            res.push(
                out.iter()
                    .map(|&id| {
                        let p = pool.get(id);
                        (
                            p.seq,
                            pool.sack(id)[..p.n_sack as usize].to_vec(),
                            p.tcp_flags & tcp_flags::ECE != 0,
                        )
                    })
                    .collect(),
            );
        }
        res
    }

    #[test]
    fn delayed_acks_ack_every_second_segment_after_quickack_phase() {
        let mut rx = TcpReceiver::new(0, 1, &cfg(true, true), DELACK_NS);
        let segs: Vec<Packet> = (0..24).map(data).collect();
        let acks = feed(&mut rx, &segs);
        // The first 16 segments are each ACKed (quick-ACK mode) ...
        for a in &acks[..16] {
            assert_eq!(a.len(), 1);
        }
        // ... then every second one.
        let later: Vec<usize> = acks[16..].iter().map(|a| a.len()).collect();
        assert_eq!(later, vec![0, 1, 0, 1, 0, 1, 0, 1]);
        assert!(rx.delack_timer.is_armed() || rx.rcv_nxt() == rx.last_ack_sent);
    }

    /// After the quick-ACK phase (segments 0..16, then every second one ACKed: 17, 19),
    /// a CE mark on segment 20 makes Linux ACK 20 and 21 at once (`tcp_enter_quickack_mode
    /// (sk, 2)`); with `ce_quickack = false` (ns-3) 20 waits for 21 as any segment would.
    #[test]
    fn first_ce_mark_forces_two_quick_acks_unless_disabled() {
        let mut segs: Vec<Packet> = (0..20).map(data).collect();
        segs.push(ce(20));
        segs.extend((21..24).map(data));
        for (quick, want) in [(true, vec![1, 1, 0, 1]), (false, vec![0, 1, 0, 1])] {
            let mut c = cfg(true, true);
            c.ce_quickack = quick;
            let mut rx = TcpReceiver::new(0, 1, &c, DELACK_NS);
            let acks = feed(&mut rx, &segs);
            let counts: Vec<usize> = acks[20..].iter().map(|a| a.len()).collect();
            assert_eq!(counts, want, "ce_quickack = {quick}");
            assert!(acks[21][0].2, "ECE echoed either way");
        }
    }

    #[test]
    fn sack_blocks_most_recent_first() {
        let mut rx = TcpReceiver::new(0, 1, &cfg(true, false), DELACK_NS);
        // 0 arrives, 1 lost, 2 and 3 arrive, 4 lost, 5 arrives, 6 lost, 7 arrives.
        let acks = feed(&mut rx, &[data(0), data(2), data(3), data(5), data(7)]);
        assert_eq!(acks[1][0].0, 1);
        assert_eq!(acks[1][0].1, vec![(2, 3)]);
        assert_eq!(acks[2][0].1, vec![(2, 4)]);
        assert_eq!(acks[3][0].1, vec![(5, 6), (2, 4)]);
        assert_eq!(acks[4][0].1, vec![(7, 8), (5, 6), (2, 4)]);
        // Filling hole 1 delivers 1..4 and leaves blocks 5 and 7.
        let acks = feed(&mut rx, &[data(1)]);
        assert_eq!(acks[0][0].0, 4);
        assert_eq!(acks[0][0].1, vec![(7, 8), (5, 6)]);
        assert_eq!(rx.stats.bytes_delivered, 4000);
    }

    /// Past the quick-ACK phase (segments 0..16, then 17, 19 ACKed), segment 20 would wait
    /// for 21; with CWR set Linux ACKs it at once (`tcp_ecn_accept_cwr`), ns-3 does not
    /// (`ce_quickack = false`). 21 is then ACKed by the delayed-ACK rule again.
    #[test]
    fn a_cwr_data_segment_is_acked_at_once_unless_disabled() {
        let mut segs: Vec<Packet> = (0..20).map(data).collect();
        let mut cwr = data(20);
        cwr.tcp_flags = tcp_flags::CWR;
        segs.push(cwr);
        segs.extend((21..24).map(data));
        for (quick, want) in [(true, vec![1, 0, 1, 0]), (false, vec![0, 1, 0, 1])] {
            let mut c = cfg(true, true);
            c.ce_quickack = quick;
            let mut rx = TcpReceiver::new(0, 1, &c, DELACK_NS);
            let acks = feed(&mut rx, &segs);
            let counts: Vec<usize> = acks[20..].iter().map(|a| a.len()).collect();
            assert_eq!(counts, want, "ce_quickack = {quick}");
        }
    }

    #[test]
    fn ece_latches_until_cwr() {
        let mut rx = TcpReceiver::new(0, 1, &cfg(true, false), DELACK_NS);
        let mut ce = data(1);
        ce.ecn = Ecn::Ce;
        let mut cwr = data(3);
        cwr.tcp_flags = tcp_flags::CWR;
        let acks = feed(&mut rx, &[data(0), ce, data(2), cwr, data(4)]);
        let ece: Vec<bool> = acks.iter().map(|a| a[0].2).collect();
        assert_eq!(ece, vec![false, true, true, false, false]);
    }

    fn ce(seq: u64) -> Packet {
        let mut p = data(seq);
        p.ecn = Ecn::Ce;
        p
    }

    #[test]
    fn dctcp_echo_follows_the_ce_state_with_an_ack_for_the_prior_state_first() {
        // Linux tcp_dctcp.h, delayed ACKs on, past the 16-segment quick-ACK phase.
        let mut c = cfg(true, true);
        c.accurate_ecn = true;
        let mut rx = TcpReceiver::new(0, 1, &c, DELACK_NS);
        let warmup: Vec<Packet> = (0..16).map(data).collect();
        feed(&mut rx, &warmup);
        let acks = feed(
            &mut rx,
            &[data(16), ce(17), ce(18), data(19), data(20), data(21)],
        );
        let acks: Vec<Vec<(u64, bool)>> = acks
            .iter()
            .map(|a| a.iter().map(|(seq, _, ece)| (*seq, *ece)).collect())
            .collect();
        assert_eq!(
            acks,
            vec![
                vec![],                        // 16: delayed
                vec![(17, false), (18, true)], // 17 CE: delayed ACK for 16 unmarked, then now
                vec![],                        // 18 CE: same state, delayed
                vec![(19, true), (20, false)], // 19: ACK for 18 marked, then now unmarked
                vec![],                        // 20: delayed
                vec![(22, false)],             // 21: every second segment
            ]
        );
        // No latch: the echo stopped at 19 without a CWR. ACKs are ECT(0). 22 (CE, state
        // change) is ACKed at once; 23 (CE) is delayed.
        let mut pool = PacketPool::new();
        let mut out = vec![];
        let mut io = TcpIo {
            now_ns: 0,
            pool: &mut pool,
            out: &mut out,
        };
        rx.on_data(&ce(22), &mut io);
        rx.on_data(&ce(23), &mut io);
        assert_eq!(out.len(), 1);
        let ack = *pool.get(out[0]);
        assert_eq!(ack.seq, 23);
        assert_ne!(ack.tcp_flags & tcp_flags::ECE, 0);
        assert_eq!(ack.ecn, Ecn::Ect0);
    }

    #[test]
    fn dctcp_echo_without_a_delayed_ack_sends_one_ack() {
        // CE state change with nothing delayed: just the immediate ACK with the new state.
        let mut c = cfg(true, false);
        c.accurate_ecn = true;
        let mut rx = TcpReceiver::new(0, 1, &c, DELACK_NS);
        let acks = feed(&mut rx, &[data(0), ce(1), ce(2), data(3)]);
        let ece: Vec<Vec<bool>> = acks
            .iter()
            .map(|a| a.iter().map(|x| x.2).collect())
            .collect();
        assert_eq!(ece, vec![vec![false], vec![true], vec![true], vec![false]]);
    }

    #[test]
    fn classic_acks_are_not_ect() {
        let mut rx = TcpReceiver::new(0, 1, &cfg(true, false), DELACK_NS);
        let mut pool = PacketPool::new();
        let mut out = vec![];
        let mut io = TcpIo {
            now_ns: 0,
            pool: &mut pool,
            out: &mut out,
        };
        rx.on_data(&ce(0), &mut io);
        assert_eq!(pool.get(out[0]).ecn, Ecn::NotEct);
    }

    #[test]
    fn finite_transfer_counts_short_last_segment_once() {
        let mut c = cfg(true, false);
        c.total_bytes = Some(2500);
        let mut rx = TcpReceiver::new(0, 1, &c, DELACK_NS);
        let mut last = data(2);
        last.payload_bytes = 500;
        feed(&mut rx, &[data(0), last, data(1), data(1)]);
        assert_eq!(rx.stats.bytes_delivered, 2500);
        assert_eq!(rx.stats.duplicate_segments, 1);
        assert!(rx.stats.completed_ns.is_some());
    }
}
