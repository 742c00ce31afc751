//! RACK: time-based loss detection (RFC 8985 §6; Linux `net/ipv4/tcp_recovery.c`, 6.x).
//!
//! A segment is lost once a segment sent after it has been delivered (ACKed or SACKed)
//! and more than `RACK.rtt + reo_wnd` has passed since it was sent
//! (`tcp_rack_detect_loss`, `tcp_rack_skb_timeout`). `RACK.rtt` is the RTT of the most
//! recently delivered segment, `RACK.xmit_time`/`end_seq` the send time and end of the
//! most recently *sent* delivered one (`tcp_rack_advance`; a retransmitted segment
//! delivered sooner than `min_rtt` after its retransmission is ambiguous and ignored).
//!
//! The reordering window (`tcp_rack_reo_wnd`): 0 while no reordering has been seen and
//! the flow is in Recovery/Loss or has `reordering` (3) SACKed segments (the dupthresh
//! fallback, so RACK never waits longer than the classic rule); else
//! `min(min_rtt/4 * reo_wnd_steps, srtt)`. Segments not yet due arm the reordering
//! timer `remaining + TCP_TIMEOUT_MIN_US` (2 ms) from now (`tcp_rack_mark_lost`).
//!
//! Departures: ccsim's paths are FIFO and its receiver sends no D-SACK, so
//! `reord_seen` stays 0 and `reo_wnd_steps` 1 (`tcp_rack_update_reo_wnd` only moves on
//! D-SACKs; `tcp_check_sack_reordering` only on reordering); times are exact
//! nanoseconds, not jiffies.

/// Linux `TCP_TIMEOUT_MIN_US` (include/net/tcp.h): the reordering timer's slack.
pub const TIMEOUT_MIN_NS: u64 = 2_000_000;

/// Linux `tcp_sock.rack`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Rack {
    /// Send time of the most recently sent delivered segment (`rack.mstamp`), 0 = none.
    xmit_ns: u64,
    /// Its segment number (`rack.end_seq`, the tie-break of equal send times).
    end_seg: u64,
    /// RTT of the most recently delivered segment (`rack.rtt_us`).
    rtt_ns: u64,
    /// Something was delivered since the last detection (`rack.advanced`).
    advanced: bool,
    /// `rack.reo_wnd_steps` (1 until D-SACKs say otherwise).
    reo_wnd_steps: u64,
}

impl Rack {
    pub fn new() -> Self {
        Rack {
            reo_wnd_steps: 1,
            ..Rack::default()
        }
    }

    /// Linux `tcp_skb_sent_after(t1, t2, seq1, seq2)`: `t1`/`seq1` was sent after `t2`/`seq2`.
    #[inline]
    fn sent_after(t1: u64, t2: u64, seg1: u64, seg2: u64) -> bool {
        t1 > t2 || (t1 == t2 && seg1 > seg2)
    }

    /// Linux `tcp_rack_advance()`: segment `seg`, sent at `sent_ns` (retransmitted at
    /// least once if `ever_retrans`), was delivered at `now_ns`.
    #[inline]
    pub fn advance(
        &mut self,
        seg: u64,
        sent_ns: u64,
        ever_retrans: bool,
        now_ns: u64,
        min_rtt_ns: u64,
    ) {
        let rtt = now_ns.saturating_sub(sent_ns);
        if ever_retrans && rtt < min_rtt_ns {
            // Ambiguous: possibly the original was delivered, not this retransmission.
            return;
        }
        self.advanced = true;
        self.rtt_ns = rtt;
        if Self::sent_after(sent_ns, self.xmit_ns, seg, self.end_seg) {
            self.xmit_ns = sent_ns;
            self.end_seg = seg;
        }
    }

    /// Take the `advanced` flag (`tcp_rack_mark_lost` resets it before scanning).
    #[inline]
    pub fn take_advanced(&mut self) -> bool {
        std::mem::take(&mut self.advanced)
    }

    /// Linux `tcp_rack_reo_wnd()`. `in_recovery`: the state is Recovery or Loss.
    pub fn reo_wnd_ns(
        &self,
        in_recovery: bool,
        sacked_out: u32,
        reordering: u32,
        min_rtt_ns: u64,
        srtt_ns: u64,
    ) -> u64 {
        // reord_seen is always 0 here (no reordering on FIFO paths).
        if in_recovery || sacked_out >= reordering {
            return 0;
        }
        if min_rtt_ns == u64::MAX {
            return 0;
        }
        ((min_rtt_ns >> 2) * self.reo_wnd_steps).min(srtt_ns)
    }

    /// Segment `seg` sent at `sent_ns` was sent before the most recently sent delivered
    /// one, so RACK may judge it.
    #[inline]
    pub fn judges(&self, seg: u64, sent_ns: u64) -> bool {
        Self::sent_after(self.xmit_ns, sent_ns, self.end_seg, seg)
    }

    /// Linux `tcp_rack_skb_timeout()`: ns until segment sent at `sent_ns` is lost (≤ 0:
    /// lost now).
    #[inline]
    pub fn remaining_ns(&self, sent_ns: u64, reo_wnd_ns: u64, now_ns: u64) -> i64 {
        self.rtt_ns as i64 + reo_wnd_ns as i64 - (now_ns as i64 - sent_ns as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn advance_keeps_the_latest_sent_and_the_latest_rtt() {
        let mut r = Rack::new();
        r.advance(5, 10 * MS, false, 60 * MS, 40 * MS);
        r.advance(3, 8 * MS, false, 61 * MS, 40 * MS);
        // Linux 6.x: rtt_us follows every delivery, xmit time only the latest sent.
        assert_eq!((r.xmit_ns, r.end_seg, r.rtt_ns), (10 * MS, 5, 53 * MS));
        // A retransmission delivered within min_rtt is ambiguous: ignored.
        r.advance(1, 50 * MS, true, 62 * MS, 40 * MS);
        assert_eq!(r.xmit_ns, 10 * MS);
    }

    #[test]
    fn reo_wnd_is_a_quarter_min_rtt_bounded_by_srtt_and_zero_at_dupthresh() {
        let r = Rack::new();
        assert_eq!(r.reo_wnd_ns(false, 1, 3, 40 * MS, 50 * MS), 10 * MS);
        assert_eq!(r.reo_wnd_ns(false, 1, 3, 40 * MS, 8 * MS), 8 * MS);
        assert_eq!(r.reo_wnd_ns(false, 3, 3, 40 * MS, 50 * MS), 0);
        assert_eq!(r.reo_wnd_ns(true, 0, 3, 40 * MS, 50 * MS), 0);
    }
}
