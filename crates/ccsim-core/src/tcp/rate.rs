//! Delivery-rate sampling for controllers that ask for it (BBR).
//!
//! Reference: Linux `net/ipv4/tcp_rate.c` (Cheng, Cardwell, Hassas Yeganeh, Jacobson,
//! draft-cheng-iccrg-delivery-rate-estimation). At each transmission the sender snapshots
//! the connection's delivery state into the packet (`tcp_rate_skb_sent`: `delivered`,
//! `delivered_mstamp`, `first_tx_mstamp`, `is_app_limited`); when the packet is SACKed or
//! cumulatively ACKed the snapshot of the most recently sent such packet starts the sample
//! (`tcp_rate_skb_delivered`), and after the ACK is processed `tcp_rate_gen` turns it into a
//! [`RateSample`]: packets delivered over `max(send phase, ACK phase)`, invalid when that
//! interval is shorter than the minimum RTT. `tcp_rate_check_app_limited` marks the flow
//! application-limited when it runs out of data with room in cwnd.
//!
//! BBRv3 additions (google/bbr `v3` branch, `tcp_rate.c` and `include/net/tcp.h`): the
//! snapshot also holds `tx.delivered_ce`, `tx.lost` and `tx.in_flight` (packets in flight
//! once the packet was sent, `tcp_set_tx_in_flight`), and the sample carries
//! `delivered_ce`, `lost` (packets marked lost over the interval) and `tx_in_flight` of the
//! sampled packet, and `is_ece`. They are recorded only for a sampler made `extended`
//! (the controller's [`crate::cc::CongestionControl::needs_extended_rate_sample`]); for
//! the others they stay 0, as no other controller reads them.
//!
//! Cost: the sender keeps a [`RateSampler`] only for controllers whose
//! [`crate::cc::CongestionControl::wants_rate_sample`] is true; other flows pay one
//! `Option` test per packet and per ACK. The snapshots live in their own deque beside the
//! scoreboard so the scoreboard entry of every flow stays 16 bytes.
//!
//! Departures from Linux: times are nanoseconds (Linux: microseconds); a "no timestamp"
//! snapshot is an explicit `None` rather than Linux's zero timestamp (a simulation starts
//! at time 0); `tcp_rate_check_app_limited` is called when the sender's send loop finds no
//! new data to send with room in cwnd (Linux calls it when the application writes: the same
//! moment for a simulated application that has written everything it will write); the
//! checks for data held in the host's qdisc and NIC (`sk_wmem_alloc_get`) are always true
//! here (ccsim has no host queue); SACK reneging does not happen (`is_sack_reneg` false).

use std::collections::VecDeque;

use crate::cc::{CcState, RateSample};

/// The delivery state snapshotted into one transmitted packet (Linux `tcp_skb_cb.tx`).
#[derive(Debug, Clone, Copy)]
pub struct TxSnapshot {
    /// Linux `tx.first_tx_mstamp`: start of the send phase this packet belongs to.
    pub first_tx_ns: u64,
    /// Linux `tx.delivered_mstamp`; `None` once the packet was SACKed (or when it was
    /// sent before sampling began), so its delivery is not counted twice.
    pub delivered_mstamp_ns: Option<u64>,
    /// Linux `tx.delivered`: `tp->delivered` when the packet was sent.
    pub delivered: u64,
    /// Linux `tx.is_app_limited`.
    pub is_app_limited: bool,
    /// Linux `tx.delivered_ce`, `tx.lost` (BBRv3): `tp->delivered_ce`, `tp->lost` when sent.
    pub delivered_ce: u64,
    pub lost: u64,
    /// Linux `tx.in_flight` (BBRv3 `tcp_set_tx_in_flight`): packets in flight once this
    /// one was sent.
    pub in_flight: u32,
}

const NO_SNAPSHOT: TxSnapshot = TxSnapshot {
    first_tx_ns: 0,
    delivered_mstamp_ns: None,
    delivered: 0,
    is_app_limited: false,
    delivered_ce: 0,
    lost: 0,
    in_flight: 0,
};

/// The per-flow rate-sampling state (Linux `tcp_sock` fields `first_tx_mstamp`,
/// `rate_delivered`, `rate_interval_us`, `rate_app_limited`, plus the per-packet snapshots
/// Linux keeps in each skb). `tp->delivered_mstamp` and `tp->app_limited` live in
/// [`CcState`], where the controller reads and writes them.
#[derive(Debug, Clone)]
pub struct RateSampler {
    first_tx_ns: u64,
    /// One snapshot per outstanding segment, `snd_una..snd_nxt`, parallel to the
    /// sender's scoreboard.
    tx: VecDeque<TxSnapshot>,
    /// The sample being built for the ACK in hand, complete after [`RateSampler::gen`].
    pub rs: RateSample,
    /// Linux `rate_delivered` / `rate_interval_us` / `rate_app_limited`: the last
    /// non-app-limited sample, or the highest app-limited one.
    pub rate_delivered: u64,
    pub rate_interval_ns: u64,
    pub rate_app_limited: bool,
    /// Record BBRv3's `tx.delivered_ce`, `tx.lost`, `tx.in_flight` and the sample's
    /// `delivered_ce`, `lost`, `tx_in_flight`.
    pub extended: bool,
}

impl RateSampler {
    /// A sampler for a flow with `outstanding` segments already in flight (a controller
    /// switched in mid-connection): those carry no snapshot and give no sample. `extended`:
    /// also record BBRv3's fields.
    pub fn new(outstanding: usize, extended: bool) -> Self {
        RateSampler {
            first_tx_ns: 0,
            tx: std::iter::repeat_n(NO_SNAPSHOT, outstanding).collect(),
            rs: RateSample::default(),
            rate_delivered: 0,
            rate_interval_ns: 0,
            rate_app_limited: false,
            extended,
        }
    }

    /// A controller switched in mid-connection may read the BBRv3 fields where the old one
    /// did not: the outstanding snapshots then get the current `tp.lost`,
    /// `tp.delivered_ce` and `in_flight`, so that losses and CE marks count from the switch.
    pub fn set_extended(&mut self, extended: bool, tp: &CcState, in_flight: u32) {
        if extended && !self.extended {
            for tx in &mut self.tx {
                tx.delivered_ce = tp.delivered_ce;
                tx.lost = tp.lost;
                tx.in_flight = in_flight;
            }
        }
        self.extended = extended;
    }

    /// Linux `tcp_rate_skb_sent()`: the snapshot for a packet sent now, with
    /// `packets_out` and `in_flight` counted before this packet (`in_flight` is read only
    /// when `extended`).
    fn snapshot(
        &mut self,
        tp: &mut CcState,
        now_ns: u64,
        packets_out: u32,
        in_flight: u32,
    ) -> TxSnapshot {
        if packets_out == 0 {
            // Nothing in flight: the sample interval starts now.
            self.first_tx_ns = now_ns;
            tp.delivered_mstamp_ns = now_ns;
        }
        let mut tx = TxSnapshot {
            first_tx_ns: self.first_tx_ns,
            delivered_mstamp_ns: Some(tp.delivered_mstamp_ns),
            delivered: tp.delivered,
            is_app_limited: tp.app_limited != 0,
            ..NO_SNAPSHOT
        };
        if self.extended {
            tx.delivered_ce = tp.delivered_ce;
            tx.lost = tp.lost;
            tx.in_flight = in_flight + 1;
        }
        tx
    }

    /// The snapshot of the segment at scoreboard index `idx`.
    #[inline]
    pub fn tx(&self, idx: usize) -> TxSnapshot {
        self.tx[idx]
    }

    /// A new segment (the next `snd_nxt`) is sent.
    #[inline]
    pub fn on_new_sent(&mut self, tp: &mut CcState, now_ns: u64, packets_out: u32, in_flight: u32) {
        let s = self.snapshot(tp, now_ns, packets_out, in_flight);
        self.tx.push_back(s);
    }

    /// The segment at scoreboard index `idx` (`seg - snd_una`) is retransmitted: Linux
    /// snapshots again on every transmission.
    #[inline]
    pub fn on_retransmit(
        &mut self,
        tp: &mut CcState,
        idx: usize,
        now_ns: u64,
        packets_out: u32,
        in_flight: u32,
    ) {
        let s = self.snapshot(tp, now_ns, packets_out, in_flight);
        self.tx[idx] = s;
    }

    /// Start the sample of a new ACK (Linux: `struct rate_sample rs = {}` and
    /// `rs.prior_in_flight` in `tcp_ack()`).
    #[inline]
    pub fn begin_ack(&mut self, prior_in_flight: u32) {
        self.rs = RateSample {
            prior_in_flight,
            ..RateSample::default()
        };
    }

    /// Linux `tcp_rate_skb_delivered()`: favour the most recently sent packet (highest
    /// `tx.delivered`). `sent_ns` is the packet's last transmission time.
    fn delivered(&mut self, tx: TxSnapshot, sent_ns: u64, is_retrans: bool) {
        let Some(mstamp) = tx.delivered_mstamp_ns else {
            return;
        };
        let rs = &mut self.rs;
        if rs.prior_delivered == 0 || tx.delivered > rs.prior_delivered {
            rs.prior_delivered = tx.delivered;
            rs.prior_delivered_ce = tx.delivered_ce;
            rs.prior_lost = tx.lost;
            rs.tx_in_flight = tx.in_flight;
            rs.prior_mstamp_ns = Some(mstamp);
            rs.is_app_limited = tx.is_app_limited;
            rs.is_retrans = is_retrans;
            // Send time of the most recently (S)ACKed packet starts the next send phase.
            self.first_tx_ns = sent_ns;
            rs.interval_ns = sent_ns.saturating_sub(tx.first_tx_ns) as i64;
        }
    }

    /// The segment at scoreboard index `idx` is newly SACKed.
    #[inline]
    pub fn on_sacked(&mut self, idx: usize, sent_ns: u64, is_retrans: bool) {
        let tx = self.tx[idx];
        self.delivered(tx, sent_ns, is_retrans);
        // Marked off so the later cumulative ACK does not count it again.
        self.tx[idx].delivered_mstamp_ns = None;
    }

    /// The head segment is cumulatively acknowledged and leaves the scoreboard.
    #[inline]
    pub fn on_cum_acked(&mut self, sent_ns: u64, is_retrans: bool) {
        let tx = self
            .tx
            .pop_front()
            .expect("rate snapshots cover snd_una..snd_nxt");
        self.delivered(tx, sent_ns, is_retrans);
    }

    /// Linux `tcp_rate_gen()`: finish the sample once `tp.delivered` includes this ACK's
    /// `delivered` packets and `lost` packets were newly marked lost. `rtt_ns` is the RTT
    /// of the most recently sent packet this ACK (S)ACKed (Linux `ca_rtt_us`); `is_ece`
    /// whether the ACK carried ECE (`tcp_ack()`: `rs.is_ece`).
    pub fn gen(
        &mut self,
        tp: &mut CcState,
        delivered: u32,
        lost: u32,
        now_ns: u64,
        rtt_ns: Option<u64>,
        is_ece: bool,
    ) {
        let rs = &mut self.rs;
        rs.rtt_ns = rtt_ns.map_or(-1, |r| r as i64);
        rs.is_ece = is_ece;
        // Clear app-limited once the bubble is ACKed and gone.
        if tp.app_limited != 0 && tp.delivered > tp.app_limited {
            tp.app_limited = 0;
        }
        if delivered > 0 {
            tp.delivered_mstamp_ns = now_ns;
        }
        rs.acked_sacked = delivered;
        rs.losses = lost;
        let Some(prior_mstamp) = rs.prior_mstamp_ns else {
            rs.delivered = -1;
            rs.interval_ns = -1;
            return;
        };
        rs.delivered = (tp.delivered - rs.prior_delivered) as i64;
        if self.extended {
            // BBRv3: CE-echoed deliveries and losses over the same interval.
            rs.delivered_ce = (tp.delivered_ce - rs.prior_delivered_ce) as i64;
            rs.lost = (tp.lost - rs.prior_lost) as i64;
        }
        // Send and ACK phases of the window; the longer one bounds the rate.
        let snd = rs.interval_ns;
        let ack = now_ns.saturating_sub(prior_mstamp) as i64;
        rs.interval_ns = snd.max(ack);
        rs.snd_interval_ns = snd;
        rs.rcv_interval_ns = ack;
        if rs.interval_ns < tp.min_rtt_ns.min(i64::MAX as u64) as i64 {
            rs.interval_ns = -1;
            return;
        }
        if !rs.is_app_limited
            || rs.delivered as u128 * self.rate_interval_ns as u128
                >= self.rate_delivered as u128 * rs.interval_ns as u128
        {
            self.rate_delivered = rs.delivered as u64;
            self.rate_interval_ns = rs.interval_ns as u64;
            self.rate_app_limited = rs.is_app_limited;
        }
    }

    /// Linux `tcp_rate_check_app_limited()`, called when the sender has no new data to
    /// send: mark the flow app-limited if cwnd is not the limit and every lost packet has
    /// been retransmitted.
    pub fn check_app_limited(tp: &mut CcState, in_flight: u32, lost_out: u32, retrans_out: u32) {
        if in_flight < tp.cwnd && lost_out <= retrans_out {
            tp.app_limited = (tp.delivered + in_flight as u64).max(1);
        }
    }

    /// Number of snapshots held (equals packets outstanding; for invariant checks).
    pub fn len(&self) -> usize {
        self.tx.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tx.is_empty()
    }
}

#[cfg(test)]
mod tests {
    //! The sampler against hand-worked cases from `tcp_rate.c`'s rules.
    use super::*;
    use crate::cc::tests::state;

    const MS: u64 = 1_000_000;

    #[test]
    fn a_window_sent_at_once_and_acked_over_time_gives_the_ack_rate() {
        // 10 packets sent at t = 0 (nothing in flight before), min RTT 100 ms.
        let mut tp = state(10);
        tp.delivered = 0;
        tp.min_rtt_ns = 100 * MS;
        let mut r = RateSampler::new(0, false);
        for k in 0..10 {
            r.on_new_sent(&mut tp, 0, k, k);
        }
        // Packet 0 ACKed at 100 ms: send phase 0, ACK phase 100 ms, 1 delivered.
        r.begin_ack(10);
        r.on_cum_acked(0, false);
        tp.delivered += 1;
        r.gen(&mut tp, 1, 0, 100 * MS, Some(100 * MS), false);
        assert_eq!(r.rs.delivered, 1);
        assert_eq!(r.rs.interval_ns, 100 * MS as i64);
        assert_eq!(r.rs.prior_delivered, 0);
        assert_eq!(tp.delivered_mstamp_ns, 100 * MS);
        // Packets 1..9 ACKed together at 110 ms: still measured from the start of the
        // window (their snapshots hold delivered = 0, delivered_mstamp = 0): 10 in 110 ms.
        r.begin_ack(9);
        for _ in 1..10 {
            r.on_cum_acked(0, false);
        }
        tp.delivered += 9;
        r.gen(&mut tp, 9, 0, 110 * MS, Some(110 * MS), false);
        assert_eq!(r.rs.delivered, 10);
        assert_eq!(r.rs.interval_ns, 110 * MS as i64);
        assert!(r.is_empty());
    }

    #[test]
    fn an_interval_shorter_than_min_rtt_is_invalid_and_sacked_packets_count_once() {
        let mut tp = state(4);
        tp.delivered = 0;
        tp.min_rtt_ns = 100 * MS;
        let mut r = RateSampler::new(0, false);
        for k in 0..4 {
            r.on_new_sent(&mut tp, k as u64 * MS, k, k);
        }
        // Packet 2 SACKed at 50 ms: the ACK phase (50 ms) is below min RTT: invalid.
        r.begin_ack(4);
        r.on_sacked(2, 2 * MS, false);
        tp.delivered += 1;
        r.gen(&mut tp, 1, 0, 50 * MS, Some(48 * MS), false);
        assert_eq!(r.rs.interval_ns, -1);
        assert_eq!(r.rs.delivered, 1);
        // Cumulative ACK of 0..4 at 120 ms: packet 2 is not counted again (snapshot off);
        // the newest counted packet is 3 (sent at 3 ms, snapshot delivered 0, stamp 0).
        r.begin_ack(3);
        for k in 0..4 {
            r.on_cum_acked(k * MS, false);
        }
        tp.delivered += 3;
        r.gen(&mut tp, 3, 0, 120 * MS, None, false);
        assert_eq!(r.rs.delivered, 4);
        // Send phase 3 ms (packet 3's send time minus the window's first send, 0), ACK
        // phase 120 ms since the snapshot's delivered_mstamp (0): the longer one.
        assert_eq!(r.rs.snd_interval_ns, 3 * MS as i64);
        assert_eq!(r.rs.interval_ns, 120 * MS as i64);
        assert_eq!(r.rs.rtt_ns, -1);
    }

    #[test]
    fn bbr3_fields_are_recorded_only_when_extended() {
        // tcp_rate.c v3: the sample's lost/delivered_ce are tp's counts now minus those in
        // the sampled packet's snapshot; tx_in_flight the packets in flight once it left.
        for extended in [false, true] {
            let mut tp = state(10);
            tp.min_rtt_ns = 0;
            tp.lost = 7;
            tp.delivered_ce = 3;
            let mut r = RateSampler::new(0, extended);
            r.on_new_sent(&mut tp, 0, 0, 4);
            r.begin_ack(5);
            r.on_cum_acked(0, false);
            tp.delivered += 1;
            tp.lost += 2;
            tp.delivered_ce += 1;
            r.gen(&mut tp, 1, 2, 10 * MS, None, true);
            let want = if extended { (2, 1, 5) } else { (0, 0, 0) };
            assert_eq!((r.rs.lost, r.rs.delivered_ce, r.rs.tx_in_flight), want);
            assert!(r.rs.is_ece);
        }
    }

    #[test]
    fn app_limited_marks_samples_until_the_bubble_is_acked() {
        let mut tp = state(10);
        tp.delivered = 100;
        tp.cwnd = 10;
        RateSampler::check_app_limited(&mut tp, 3, 0, 0);
        assert_eq!(tp.app_limited, 103);
        let mut r = RateSampler::new(0, false);
        r.on_new_sent(&mut tp, 0, 3, 3);
        r.begin_ack(4);
        r.on_cum_acked(0, false);
        tp.delivered = 104;
        tp.min_rtt_ns = 0;
        r.gen(&mut tp, 1, 0, 10 * MS, None, false);
        assert!(r.rs.is_app_limited);
        assert_eq!(tp.app_limited, 0, "delivered passed the bubble");
        // cwnd-limited: not app-limited.
        RateSampler::check_app_limited(&mut tp, 10, 0, 0);
        assert_eq!(tp.app_limited, 0);
    }
}
