//! The TCP sender: Linux's loss recovery state machine around a pluggable congestion
//! controller.
//!
//! References (Linux `net/ipv4/tcp_input.c` unless noted):
//! - ACK processing order of `tcp_ack()`: SACK tagging (`tcp_sacktag_write_queue`), then
//!   the cumulative ACK (`tcp_clean_rtx_queue`, which calls the CC's `pkts_acked`), then
//!   `in_ack_event`, then the state machine (`tcp_fastretrans_alert`), then
//!   `tcp_cong_control` (PRR during CWR/Recovery, `cong_avoid` otherwise), then
//!   transmission (`tcp_xmit_recovery`).
//! - Scoreboard: SACKED/LOST/RETRANS tags per segment and `in_flight = packets_out -
//!   (sacked_out + lost_out) + retrans_out` (`tcp_packets_in_flight`), i.e. RFC 6675's pipe.
//! - Loss marking with SACK per `tcp_update_scoreboard()`/`tcp_mark_head_lost()`: a hole
//!   is lost once `reordering` (3) SACKed segments lie above it — RFC 6675 §4 `IsLost`
//!   with DupThresh 3. Recovery starts when `sacked_out + 1 > reordering` or a segment is
//!   marked lost (`tcp_time_to_recover`), i.e. on the third duplicate ACK.
//! - Without SACK: Linux's Reno emulation (`tcp_add_reno_sack`, `tcp_newreno_mark_lost`):
//!   duplicate ACKs count as SACKed packets, the head is marked lost on the third and on
//!   every partial ACK (RFC 6582 NewReno), and Recovery is held until an ACK beyond the
//!   recovery point.
//! - Window reduction through PRR (RFC 6937, `tcp_cwnd_reduction()`), for both loss
//!   Recovery and ECN CWR; `cwnd = ssthresh` when the reduction ends
//!   (`tcp_end_cwnd_reduction`).
//! - ECN sender per RFC 3168 §6.1.2 as Linux: an ECE ACK enters CWR from Open/Disorder
//!   only (`tcp_enter_cwr`), so at most one reduction per window; CWR is set on the next
//!   new data segment; new data carries the CC's `ecn_codepoint()` (ECT(0); ECT(1) for
//!   TCP Prague, RFC 9331), retransmissions and ACKs Not-ECT.
//! - RTO per `tcp_retransmit_timer()`/`tcp_enter_loss()`: ssthresh from the CC (once per
//!   loss episode), cwnd = 1, every un-SACKed segment marked lost, RTO doubled up to
//!   120 s; retransmitting the head re-arms the timer.
//! - RTT samples (`tcp_clean_rtx_queue`, `tcp_ack_update_rtt`): from the oldest segment
//!   this ACK newly covers that was neither retransmitted (Karn) nor SACKed before, else
//!   from the oldest segment it newly SACKs, else the timestamp echo; the CC gets the
//!   newest such segment's RTT.
//! - `tcp_is_cwnd_limited()` and `tcp_cwnd_validate()` gate window growth.
//! - Pacing (optional, off by default) at `cwnd x mss / srtt` times 200% in slow start
//!   (cwnd < ssthresh/2) and 120% otherwise (`tcp_update_pacing_rate`).
//! - A controller with `cong_control` (Linux `.cong_control`, BBR) replaces the PRR
//!   reduction and `cong_avoid` on every ACK (`tcp_cong_control`), gets a delivery-rate
//!   sample (`tcp_rate.c`, [`super::rate`]), sets the pacing rate itself
//!   (`sk_pacing_rate`: each packet then departs `payload / rate` after the previous one,
//!   from the tenth data segment on, as `tcp_update_skb_after_send`), and the end of a
//!   reduction leaves its cwnd alone (`tcp_end_cwnd_reduction`). A controller turns pacing
//!   on by setting `tp.paced` in `init` (Linux `SK_PACING_NEEDED`). Packets are paced one
//!   by one (Linux paces TSO bursts of `tcp_tso_segs`).
//! - For BBRv3 (google/bbr `v3` branch, `tcp_input.c`/`tcp_rate.c`; only for controllers
//!   whose `needs_extended_rate_sample` is true): each packet's rate snapshot also records `tp.lost`, `tp.delivered_ce` and the packets in flight once it
//!   was sent; the rate sample carries `lost`, `delivered_ce`, `tx_in_flight` and `is_ece`;
//!   every packet marked lost (`tcp_mark_skb_lost`, also at an RTO) is reported to the
//!   controller after `tp.lost` counts it (`tcp_notify_skb_loss_event` ->
//!   `skb_marked_lost`). `tp.delivered_ce` counts packets delivered by ECE ACKs
//!   (`tcp_count_delivered`).
//!
//! - RACK-TLP (RFC 8985, Linux 4.18+ defaults; [`super::rack`], [`super::tlp`]) for SACK
//!   flows, options `rack`/`tlp`: RACK marks losses by time on ACKs and by its reordering
//!   timer and replaces `tcp_update_scoreboard()`'s count (`tcp_identify_packet_loss`,
//!   `tcp_time_to_recover` then only asks `lost_out`); a lost retransmission ends Loss for
//!   Recovery (`FLAG_LOST_RETRANS`); an RTO leaves segments sent within `RACK.rtt` unmarked
//!   (`tcp_timeout_mark_lost`). The RTO, the probe and the reordering timer share one
//!   timer (`icsk_pending`). With both off the sender is the pre-RACK kernel's, unchanged.
//!
//! Departures from Linux (defaults of a current kernel), each a candidate option: no
//! F-RTO, no D-SACK/timestamp undo of spurious reductions; no slow-start restart after
//! idle; the minimum RTT is the all-time minimum rather than a 5-minute windowed one.

use std::collections::VecDeque;

use super::rack::{self, Rack};
use super::rate::RateSampler;
use super::rtt::{RttEstimator, RTO_MAX_NS};
use super::tlp::{Tlp, TlpAck};
use super::{TcpConfig, TcpIo, Timer};
use crate::cc::{
    AckFlags, AckSample, CaEvent, CaState, Cc, CcState, CongestionControl, LostSkb, ReductionCause,
    INFINITE_SSTHRESH,
};
use crate::net::packet::{tcp_flags, Packet, PacketKind, TCP_IP_HEADER_BYTES};
use crate::scenario::RecoveryExit;
use crate::trace::RowBudget;

const SACKED: u8 = 1;
const LOST: u8 = 2;
const RETRANS: u8 = 4;
const EVER_RETRANS: u8 = 8;

/// Linux default `tcp_reordering`.
const REORDERING: u32 = 3;

/// Per-segment scoreboard entry.
#[derive(Debug, Clone, Copy)]
struct SegMeta {
    flags: u8,
    sent_ns: u64,
}

/// One window reduction, recorded for traced flows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reduction {
    pub time_ns: u64,
    pub cause: ReductionCause,
    pub cwnd_before: u32,
    pub ssthresh_after: u32,
}

/// What the one retransmission timer is armed for (Linux `icsk_pending`: the RTO, the
/// tail loss probe and RACK's reordering timer share `icsk_retransmit_timer`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum XmitTimer {
    #[default]
    Rto,
    LossProbe,
    ReoTimeout,
}

/// Sender-side counters.
#[derive(Debug, Clone, Default)]
pub struct SenderStats {
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    pub ecn_reductions: u64,
    /// Reductions a delay-based controller asked for (CDG's backoff).
    pub delay_reductions: u64,
    /// Tail loss probes sent (Linux `TCPLossProbes`).
    pub tlp_probes: u64,
    /// Losses a probe repaired, each with one cwnd reduction (`TCPLossProbeRecovery`).
    pub tlp_recoveries: u64,
    /// Segments RACK marked lost (retransmissions lost again included).
    pub rack_lost: u64,
}

/// The sending end of one TCP flow.
#[derive(Debug, Clone)]
pub struct TcpSender {
    pub cfg: TcpConfig,
    pub cc: Cc,
    pub tp: CcState,
    flow: u32,
    route: u32,
    started: bool,
    app_stopped: bool,
    total_segs: Option<u64>,
    high_seq: u64,
    sb: VecDeque<SegMeta>,
    sacked_out: u32,
    lost_out: u32,
    retrans_out: u32,
    lost_hint_seg: u64,
    lost_hint_cnt: u32,
    retrans_hint: u64,
    prr_delivered: u32,
    prr_out: u32,
    rtt: RttEstimator,
    pub rto_timer: Timer,
    pub pacing_timer: Timer,
    rto_ns: u64,
    rto_retransmits: u32,
    ecn_queue_cwr: bool,
    max_packets_out: u32,
    cwnd_usage_seq: u64,
    sack_cache: [(u64, u64); 3],
    next_send_ns: u64,
    newly_lost: u32,
    /// The peer's latest TSval, echoed in every data segment (RFC 7323 §4.3 TS.Recent,
    /// Linux `tp->rx_opt.ts_recent`); 0 until the first ACK (no handshake is simulated).
    ts_recent_ns: u64,
    /// RACK and TLP state, used when `cfg.rack` / `cfg.tlp` (SACK flows only).
    rack: Rack,
    tlp: Tlp,
    xmit_timer: XmitTimer,
    /// RACK armed its reordering timer while processing this ACK.
    reo_armed: bool,
    pub stats: SenderStats,
    /// Record every reduction in `reductions` (flows with `trace = true`).
    pub trace_reductions: bool,
    pub reductions: Vec<Reduction>,
    /// The rows `reductions` may take (issue 33: a reduction per RTT, for every traced
    /// flow, grows with the run's length).
    pub reductions_budget: RowBudget,
    /// `(time, rtt)` of every RTT sample, ns, when recorded (`trace.rtt_samples`).
    pub rtt_log: Option<Vec<(u64, u64)>>,
    /// The rows `rtt_log` may take (one sample per ACK: a long run of many traced flows
    /// died of memory before it had a budget, issue 33).
    pub rtt_log_budget: RowBudget,
    /// Delivery-rate sampling, only for controllers that want it.
    rate: Option<RateSampler>,
    /// The controller has `cong_control` (cached: tested on every ACK).
    cong_control: bool,
}

/// Flags of one ACK (subset of Linux `FLAG_*`).
#[derive(Debug, Clone, Copy, Default)]
struct AckInfo {
    snd_una_advanced: bool,
    data_sacked: bool,
    ece: bool,
    num_dupack: u32,
}

impl TcpSender {
    pub fn new(flow: u32, route: u32, cfg: TcpConfig, cc: Cc, base_rtt_ns: u64) -> Self {
        let mut rtt = RttEstimator::new(cfg.min_rto_ns);
        // The SYN/SYN-ACK exchange seeds the estimator (Linux tcp_synack_rtt_meas()).
        rtt.sample(base_rtt_ns, 0, 0);
        let tp = CcState {
            cwnd: cfg.initial_window,
            ssthresh: INFINITE_SSTHRESH,
            cwnd_cnt: 0,
            cwnd_clamp: u32::MAX / 2,
            prior_cwnd: cfg.initial_window,
            mss: cfg.mss,
            ca_state: CaState::Open,
            is_cwnd_limited: false,
            now_ns: 0,
            srtt_ns: rtt.srtt_ns(),
            min_rtt_ns: rtt.min_rtt_ns(),
            snd_nxt: 0,
            snd_una: 0,
            packets_out: 0,
            in_flight: 0,
            delivered: 0,
            delivered_ce: 0,
            ecn_ok: cfg.ecn,
            lsndtime_ns: 0,
            sacked_out: 0,
            paced: cfg.pacing,
            request_cwr: false,
            pacing_rate: 0,
            wstamp_ns: 0,
            lost: 0,
            app_limited: 0,
            delivered_mstamp_ns: 0,
        };
        let rto_ns = rtt.rto_ns();
        let cong_control = cc.has_cong_control();
        let rate = (cong_control || cc.wants_rate_sample())
            .then(|| RateSampler::new(0, cc.needs_extended_rate_sample()));
        TcpSender {
            total_segs: cfg.total_segments(),
            cfg,
            cc,
            tp,
            flow,
            route,
            started: false,
            app_stopped: false,
            high_seq: 0,
            sb: VecDeque::new(),
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            lost_hint_seg: 0,
            lost_hint_cnt: 0,
            retrans_hint: 0,
            prr_delivered: 0,
            prr_out: 0,
            rtt,
            rto_timer: Timer::default(),
            pacing_timer: Timer::default(),
            rto_ns,
            rto_retransmits: 0,
            ecn_queue_cwr: false,
            max_packets_out: 0,
            cwnd_usage_seq: 0,
            sack_cache: [(0, 0); 3],
            next_send_ns: 0,
            newly_lost: 0,
            ts_recent_ns: 0,
            rack: Rack::new(),
            tlp: Tlp::default(),
            xmit_timer: XmitTimer::Rto,
            reo_armed: false,
            stats: SenderStats::default(),
            trace_reductions: false,
            reductions: Vec::new(),
            reductions_budget: RowBudget::default(),
            rtt_log: None,
            rtt_log_budget: RowBudget::default(),
            rate,
            cong_control,
        }
    }

    // ----- accessors -------------------------------------------------------------

    #[inline]
    fn packets_out(&self) -> u32 {
        (self.tp.snd_nxt - self.tp.snd_una) as u32
    }

    /// The packets in flight for a rate snapshot (BBRv3's `tx.in_flight`): counted only when
    /// the sampler records it.
    #[inline]
    fn rate_in_flight(&self) -> u32 {
        if self.rate.as_ref().is_some_and(|r| r.extended) {
            self.in_flight()
        } else {
            0
        }
    }

    /// Linux `tcp_packets_in_flight()` (RFC 6675 pipe).
    #[inline]
    pub fn in_flight(&self) -> u32 {
        self.packets_out() + self.retrans_out - (self.sacked_out + self.lost_out)
    }

    pub fn ca_state(&self) -> CaState {
        self.tp.ca_state
    }

    pub fn srtt_ns(&self) -> u64 {
        self.rtt.srtt_ns()
    }

    /// Current RTO including backoff.
    pub fn rto_ns(&self) -> u64 {
        self.rto_ns
    }

    /// A finite transfer whose every byte is acknowledged.
    pub fn is_complete(&self) -> bool {
        matches!(self.total_segs, Some(t) if self.tp.snd_una >= t)
    }

    /// RACK loss detection is on (it needs SACK: Linux's Reno path keeps NewReno's
    /// duplicate-ACK rule, `tcp_identify_packet_loss`).
    #[inline]
    fn rack_on(&self) -> bool {
        self.cfg.rack && self.cfg.sack
    }

    /// The timer is managed as Linux 6.x does with RACK or TLP (one timer, three uses);
    /// off, exactly as before they were modelled.
    #[inline]
    fn xmit_timer_linux(&self) -> bool {
        self.cfg.sack && (self.cfg.rack || self.cfg.tlp)
    }

    /// Arm the retransmission timer as the RTO.
    #[inline]
    fn arm_rto(&mut self, at_ns: u64) {
        self.xmit_timer = XmitTimer::Rto;
        self.rto_timer.arm(at_ns);
    }

    /// Linux `tcp_rearm_rto()`: the RTO from now, or, replacing a probe or reordering
    /// timer, from the head's transmission (`tcp_rto_delta_us`).
    fn rearm_rto(&mut self, now_ns: u64) {
        if self.packets_out() == 0 {
            self.rto_timer.cancel();
            self.xmit_timer = XmitTimer::Rto;
            return;
        }
        let at = if self.xmit_timer != XmitTimer::Rto {
            (self.sb[0].sent_ns + self.rto_ns).max(now_ns + 1)
        } else {
            now_ns + self.rto_ns
        };
        self.arm_rto(at);
    }

    /// Linux `tcp_schedule_loss_probe()`: arm the probe timeout in place of the RTO if a
    /// probe may go out. `advancing_rto`: the RTO would be re-armed from now.
    fn schedule_loss_probe(&mut self, now_ns: u64, advancing_rto: bool) -> bool {
        if !self.cfg.tlp
            || !self.cfg.sack
            || self.packets_out() == 0
            || !matches!(self.tp.ca_state, CaState::Open | CaState::Cwr)
        {
            return false;
        }
        let rto_delta = if advancing_rto {
            self.rto_ns as i64
        } else {
            (self.sb[0].sent_ns + self.rto_ns) as i64 - now_ns as i64
        };
        let timeout = Tlp::probe_timeout_ns(
            self.rtt.srtt_x8_ns(),
            self.packets_out(),
            self.cfg.min_rto_ns,
            rto_delta,
        );
        self.xmit_timer = XmitTimer::LossProbe;
        self.rto_timer.arm(now_ns + timeout);
        true
    }

    fn has_new_data(&self) -> bool {
        self.started && !self.app_stopped && self.total_segs.is_none_or(|t| self.tp.snd_nxt < t)
    }

    #[inline]
    fn meta(&mut self, seg: u64) -> &mut SegMeta {
        let i = (seg - self.tp.snd_una) as usize;
        &mut self.sb[i]
    }

    fn refresh_tp(&mut self, now_ns: u64) {
        self.tp.now_ns = now_ns;
        self.tp.packets_out = self.packets_out();
        self.tp.in_flight = self.in_flight();
        self.tp.sacked_out = self.sacked_out;
        self.tp.srtt_ns = self.rtt.srtt_ns();
        self.tp.min_rtt_ns = self.rtt.min_rtt_ns();
    }

    /// Linux `tcp_set_ca_state()`: the controller hears every call, even one that keeps
    /// the state (CUBIC resets on each repeated RTO in Loss).
    fn set_state(&mut self, s: CaState) {
        self.cc.set_state(&mut self.tp, s);
        self.tp.ca_state = s;
    }

    // ----- application -----------------------------------------------------------

    /// The application starts: send the initial window.
    pub fn start(&mut self, io: &mut TcpIo<'_>) {
        self.started = true;
        self.refresh_tp(io.now_ns);
        self.cc.init(&mut self.tp);
        self.try_send(io);
    }

    /// Replace the congestion control mid-connection, as Linux
    /// `tcp_reinit_congestion_control()` does for `setsockopt(TCP_CONGESTION)`: cwnd,
    /// ssthresh and the connection state stay, the new algorithm's `init` runs (Linux
    /// `tcp_init_congestion_control`). The caller keeps `needs_accurate_ecn` unchanged.
    pub fn switch_cc(&mut self, cc: Cc, now_ns: u64) {
        self.cc = cc;
        self.cong_control = self.cc.has_cong_control();
        self.tp.pacing_rate = 0;
        if !(self.cong_control || self.cc.wants_rate_sample()) {
            self.rate = None;
        } else if self.rate.is_none() {
            self.rate = Some(RateSampler::new(self.sb.len(), false));
        }
        let (extended, in_flight) = (self.cc.needs_extended_rate_sample(), self.in_flight());
        if let Some(r) = self.rate.as_mut() {
            r.set_extended(extended, &self.tp, in_flight);
        }
        self.refresh_tp(now_ns);
        self.cc.init(&mut self.tp);
    }

    /// The application stops writing: no new data after this (outstanding data completes).
    pub fn stop(&mut self) {
        self.app_stopped = true;
    }

    // ----- transmission ----------------------------------------------------------

    fn transmit(&mut self, seg: u64, is_retrans: bool, io: &mut TcpIo<'_>) {
        let now = io.now_ns;
        let payload = self.cfg.payload_of(seg);
        let mut p = Packet {
            kind: PacketKind::TcpData,
            flow: self.flow,
            route: self.route,
            seq: seg,
            payload_bytes: payload,
            size_bytes: payload + TCP_IP_HEADER_BYTES,
            ts_val: now,
            // Linux tcp_options_write(): every segment echoes ts_recent.
            ts_ecr: self.ts_recent_ns,
            ..Packet::default()
        };
        if self.tp.ecn_ok && (!is_retrans || self.cc.needs_accurate_ecn()) {
            p.ecn = self.cc.ecn_codepoint();
            if self.ecn_queue_cwr && !is_retrans {
                self.ecn_queue_cwr = false;
                p.tcp_flags |= tcp_flags::CWR;
            }
        }
        let size = p.size_bytes as u64;
        io.out.push(io.pool.alloc(p));
        // Linux tcp_event_data_sent(): after any TX_START event, for every data segment.
        self.tp.lsndtime_ns = now;
        if matches!(self.tp.ca_state, CaState::Cwr | CaState::Recovery) {
            self.prr_out += 1;
        }
        self.stats.packets_sent += 1;
        self.stats.bytes_sent += size;
        if self.tp.paced {
            // A controller's rate (tcp_update_skb_after_send), once 10 data segments have
            // gone out; without one (rate 0) the sender's own.
            let gap = match (u64::from(payload) * 1_000_000_000).checked_div(self.tp.pacing_rate) {
                Some(gap) if self.stats.packets_sent >= 10 => gap,
                Some(_) => 0,
                None => self.pacing_gap_ns(size),
            };
            self.next_send_ns = now.max(self.next_send_ns) + gap;
        }
    }

    /// Inter-packet gap at Linux's pacing rate.
    fn pacing_gap_ns(&self, bytes: u64) -> u64 {
        let srtt = self.rtt.srtt_ns().max(1);
        let ratio_pct: u64 = if self.tp.cwnd < self.tp.ssthresh / 2 {
            200
        } else {
            120
        };
        let window = self.tp.cwnd.max(self.packets_out()) as u64
            * (self.cfg.mss + TCP_IP_HEADER_BYTES) as u64;
        // gap = bytes / rate, rate = ratio * window / srtt.
        (bytes as u128 * srtt as u128 * 100 / (ratio_pct as u128 * window.max(1) as u128)) as u64
    }

    /// Next segment to retransmit: the lowest LOST, not yet retransmitted segment.
    fn next_retransmit(&mut self) -> Option<u64> {
        if self.lost_out <= self.retrans_out {
            return None;
        }
        let mut seg = self.retrans_hint.max(self.tp.snd_una);
        while seg < self.tp.snd_nxt {
            let f = self.meta(seg).flags;
            if f & LOST != 0 && f & RETRANS == 0 && f & SACKED == 0 {
                self.retrans_hint = seg;
                return Some(seg);
            }
            seg += 1;
        }
        self.retrans_hint = seg;
        None
    }

    /// Send what cwnd (and pacing) allow: lost segments first, then new data
    /// (`tcp_xmit_retransmit_queue` then `tcp_write_xmit`).
    fn try_send(&mut self, io: &mut TcpIo<'_>) {
        if !self.started {
            return;
        }
        let now = io.now_ns;
        let mut sent_any = false;
        let mut sent_new = false;
        loop {
            if self.in_flight() >= self.tp.cwnd {
                break;
            }
            if self.tp.paced && self.next_send_ns > now {
                self.pacing_timer.arm(self.next_send_ns);
                break;
            }
            if let Some(seg) = self.next_retransmit() {
                let head = seg == self.tp.snd_una;
                {
                    let m = self.meta(seg);
                    m.flags |= RETRANS | EVER_RETRANS;
                    m.sent_ns = now;
                }
                let (idx, packets_out, in_flight) = (
                    seg - self.tp.snd_una,
                    self.packets_out(),
                    self.rate_in_flight(),
                );
                if let Some(r) = self.rate.as_mut() {
                    r.on_retransmit(&mut self.tp, idx as usize, now, packets_out, in_flight);
                }
                self.retrans_out += 1;
                self.stats.retransmits += 1;
                self.transmit(seg, true, io);
                // tcp_xmit_retransmit_queue(): retransmitting the head re-arms the RTO,
                // unless RACK's reordering timer is pending.
                if head && self.xmit_timer != XmitTimer::ReoTimeout {
                    self.arm_rto(now + self.rto_ns);
                }
            } else if self.has_new_data() {
                self.send_new_segment(io);
                sent_new = true;
            } else {
                if self.rate.is_some() {
                    // Out of data with room in cwnd (tcp_rate_check_app_limited).
                    let in_flight = self.in_flight();
                    RateSampler::check_app_limited(
                        &mut self.tp,
                        in_flight,
                        self.lost_out,
                        self.retrans_out,
                    );
                }
                break;
            }
            sent_any = true;
        }
        if sent_new && self.cfg.tlp && self.cfg.sack {
            // tcp_event_new_data_sent() re-arms the RTO over a pending probe, then
            // tcp_write_xmit() schedules the probe (not later than that RTO).
            if self.xmit_timer == XmitTimer::LossProbe {
                self.rearm_rto(now);
            }
            self.schedule_loss_probe(now, false);
        }
        let cwnd_limited = self.in_flight() >= self.tp.cwnd;
        if sent_any || cwnd_limited {
            // tcp_cwnd_validate()
            let packets_out = self.packets_out();
            if self.tp.snd_una >= self.cwnd_usage_seq
                || cwnd_limited
                || (!self.tp.is_cwnd_limited && packets_out > self.max_packets_out)
            {
                self.tp.is_cwnd_limited = cwnd_limited;
                self.max_packets_out = packets_out;
                self.cwnd_usage_seq = self.tp.snd_nxt;
            }
        }
    }

    /// Send the next new segment (`tcp_write_xmit` -> `tcp_transmit_skb`).
    fn send_new_segment(&mut self, io: &mut TcpIo<'_>) {
        let now = io.now_ns;
        let seg = self.tp.snd_nxt;
        if self.packets_out() == 0 {
            self.cc.cwnd_event(&mut self.tp, CaEvent::TxStart);
            self.arm_rto(now + self.rto_ns);
        }
        let (packets_out, in_flight) = (self.packets_out(), self.rate_in_flight());
        if let Some(r) = self.rate.as_mut() {
            r.on_new_sent(&mut self.tp, now, packets_out, in_flight);
        }
        self.sb.push_back(SegMeta {
            flags: 0,
            sent_ns: now,
        });
        self.tp.snd_nxt += 1;
        self.transmit(seg, false, io);
    }

    /// Linux `tcp_is_cwnd_limited()`.
    fn is_cwnd_limited(&self) -> bool {
        if self.tp.is_cwnd_limited {
            return true;
        }
        self.tp.in_slow_start() && self.tp.cwnd < 2 * self.max_packets_out
    }

    /// The pacing timer fired.
    pub fn on_pacing_timer(&mut self, io: &mut TcpIo<'_>) {
        self.try_send(io);
    }

    // ----- ACK processing ----------------------------------------------------------

    /// Tag SACKed segments (`tcp_sacktag_write_queue`), skipping ranges already processed
    /// for an earlier ACK (Linux's `recv_sack_cache`). Returns newly SACKed segments and
    /// the send times of the oldest and newest never-retransmitted ones.
    fn sacktag(&mut self, blocks: &[(u64, u64)], now: u64) -> (u32, Option<u64>, Option<u64>) {
        let (rack_on, min_rtt) = (self.rack_on(), self.rtt.min_rtt_ns());
        let mut newly = 0u32;
        let mut first_sackt: Option<u64> = None;
        let mut last_sackt: Option<u64> = None;
        let cache = self.sack_cache;
        let mut new_cache = [(0u64, 0u64); 3];
        for (k, &(s, e)) in blocks.iter().enumerate() {
            new_cache[k] = (s, e);
            let s = s.max(self.tp.snd_una);
            let e = e.min(self.tp.snd_nxt);
            let mut seg = s;
            while seg < e {
                // Skip a stretch covered by a cached block.
                if let Some(&(_, ce)) = cache.iter().find(|&&(cs, ce)| cs <= seg && seg < ce) {
                    seg = ce;
                    continue;
                }
                let una = self.tp.snd_una;
                let m = &mut self.sb[(seg - una) as usize];
                if m.flags & SACKED == 0 {
                    if m.flags & RETRANS != 0 {
                        self.retrans_out -= 1;
                    }
                    if m.flags & LOST != 0 {
                        self.lost_out -= 1;
                    }
                    if let Some(r) = self.rate.as_mut() {
                        r.on_sacked((seg - una) as usize, m.sent_ns, m.flags & EVER_RETRANS != 0);
                    }
                    if rack_on {
                        let ever = m.flags & EVER_RETRANS != 0;
                        self.rack.advance(seg, m.sent_ns, ever, now, min_rtt);
                    }
                    if m.flags & EVER_RETRANS == 0 {
                        first_sackt =
                            Some(first_sackt.map_or(m.sent_ns, |t: u64| t.min(m.sent_ns)));
                        last_sackt = Some(last_sackt.map_or(m.sent_ns, |t: u64| t.max(m.sent_ns)));
                    }
                    m.flags = (m.flags & EVER_RETRANS) | SACKED;
                    self.sacked_out += 1;
                    newly += 1;
                    if seg < self.lost_hint_seg {
                        self.lost_hint_cnt += 1;
                    }
                }
                seg += 1;
            }
        }
        self.sack_cache = new_cache;
        (newly, first_sackt, last_sackt)
    }

    /// Remove cumulatively ACKed segments (`tcp_clean_rtx_queue`). Returns (packets
    /// acked, of which newly delivered (not SACKed before), oldest and newest send time of
    /// the ones neither retransmitted nor SACKed before).
    fn clean_rtx_queue(
        &mut self,
        ack: u64,
        now: u64,
        ts_ecr: u64,
    ) -> (u32, u32, Option<u64>, Option<u64>) {
        let (rack_on, min_rtt) = (self.rack_on(), self.rtt.min_rtt_ns());
        let mut acked = 0u32;
        let mut newly_delivered = 0u32;
        let mut first_ackt = None;
        let mut last_ackt = None;
        while self.tp.snd_una < ack {
            let m = self
                .sb
                .pop_front()
                .expect("scoreboard covers snd_una..snd_nxt");
            if let Some(r) = self.rate.as_mut() {
                // A segment SACKed before was counted then (tcp_rate_skb_delivered).
                r.on_cum_acked(m.sent_ns, m.flags & EVER_RETRANS != 0);
            }
            if m.flags & SACKED != 0 {
                self.sacked_out -= 1;
                if self.tp.snd_una < self.lost_hint_seg {
                    self.lost_hint_cnt -= 1;
                }
            } else {
                newly_delivered += 1;
                if m.flags & LOST != 0 {
                    self.lost_out -= 1;
                }
                if m.flags & RETRANS != 0 {
                    self.retrans_out -= 1;
                }
                // tcp_rack_advance() unless the ACK echoes a timestamp older than the
                // retransmission (tcp_skb_spurious_retrans: the original was ACKed).
                let ever = m.flags & EVER_RETRANS != 0;
                if rack_on && !(ever && ts_ecr > 0 && ts_ecr < m.sent_ns) {
                    self.rack
                        .advance(self.tp.snd_una, m.sent_ns, ever, now, min_rtt);
                }
            }
            // RTT samples only from segments neither retransmitted (Karn) nor SACKed
            // before: a SACKed segment waited at the receiver for the hole to fill, so
            // its cumulative ACK time says nothing about the path (Linux
            // `tcp_clean_rtx_queue`: `else if (!(sacked & TCPCB_SACKED_ACKED))`).
            if m.flags & (EVER_RETRANS | SACKED) == 0 {
                first_ackt.get_or_insert(m.sent_ns);
                last_ackt = Some(m.sent_ns);
            }
            self.tp.snd_una += 1;
            acked += 1;
        }
        if self.lost_hint_seg < self.tp.snd_una {
            self.lost_hint_seg = self.tp.snd_una;
            self.lost_hint_cnt = 0;
        }
        (acked, newly_delivered, first_ackt, last_ackt)
    }

    /// Handle an arriving ACK carrying `sack` blocks.
    pub fn on_ack(&mut self, pkt: &Packet, sack: &[(u64, u64)], io: &mut TcpIo<'_>) {
        let now = io.now_ns;
        let ack = pkt.seq;
        if ack > self.tp.snd_nxt || ack < self.tp.snd_una {
            return; // acknowledges unsent data, or an old ACK
        }
        // TS.Recent (RFC 7323 §4.3; Linux tcp_ack() -> tcp_replace_ts_recent() for an ACK
        // neither old nor beyond snd_nxt): a pure ACK carries no data, so its sequence
        // number is always at the window's left edge and only the PAWS order decides.
        if pkt.ts_val >= self.ts_recent_ns {
            self.ts_recent_ns = pkt.ts_val;
        }
        let prior_snd_una = self.tp.snd_una;
        let prior_in_flight = self.in_flight();
        let prior_lost = self.tp.lost;
        if let Some(r) = self.rate.as_mut() {
            r.begin_ack(prior_in_flight);
        }
        self.newly_lost = 0;
        let mut info = AckInfo {
            ece: self.tp.ecn_ok && pkt.tcp_flags & tcp_flags::ECE != 0,
            ..AckInfo::default()
        };

        let (newly_sacked, first_sackt, last_sackt) = if self.cfg.sack && !sack.is_empty() {
            self.sacktag(sack, now)
        } else {
            (0, None, None)
        };
        info.data_sacked = newly_sacked > 0;

        let (pkts_acked, newly_cum, first_ackt, last_ackt) =
            self.clean_rtx_queue(ack, now, pkt.ts_ecr);
        info.snd_una_advanced = ack > prior_snd_una;
        if !info.snd_una_advanced && self.packets_out() > 0 {
            info.num_dupack = 1;
        }
        let mut delivered = newly_sacked + newly_cum;
        if !self.cfg.sack && info.snd_una_advanced {
            // tcp_remove_reno_sacks(): one ACK filled a hole, the rest ate duplicate ACKs.
            delivered = pkts_acked.saturating_sub(self.sacked_out).max(1);
            self.sacked_out = self.sacked_out.saturating_sub(pkts_acked - 1);
            // ... then tcp_check_reno_reordering() -> tcp_limit_reno_sacked(): the
            // duplicate ACKs counted can no longer exceed what is outstanding beside the
            // holes. Without it `sacked_out + lost_out` could pass `packets_out` after a
            // partial ACK and the pipe estimate wrap (a run with a shaper, PIE and no SACK
            // sent without bound).
            self.limit_reno_sacked();
        }

        // RTT sample (tcp_ack_update_rtt).
        let mut seq_rtt = first_ackt.map(|t| now - t);
        let mut ca_rtt = last_ackt.map(|t| now - t);
        if let Some(t) = last_sackt {
            ca_rtt = Some(now - t);
        }
        if seq_rtt.is_none() {
            seq_rtt = first_sackt.map(|t| now - t);
        }
        if seq_rtt.is_none() && pkt.ts_ecr > 0 && info.snd_una_advanced {
            seq_rtt = Some(now - pkt.ts_ecr);
            ca_rtt = seq_rtt;
        }
        if let Some(r) = seq_rtt {
            if let Some(log) = self.rtt_log.as_mut() {
                if self.rtt_log_budget.admit(1, now) {
                    log.push((now, r));
                }
            }
            self.rtt.sample(r, self.tp.snd_una, self.tp.snd_nxt);
            self.rto_ns = self.rtt.rto_ns();
        }
        if info.snd_una_advanced {
            self.rto_retransmits = 0;
        }
        self.refresh_tp(now);
        let sample = AckSample {
            pkts_acked,
            rtt_ns: ca_rtt,
            in_flight: prior_in_flight,
        };
        self.cc.pkts_acked(&mut self.tp, &sample);

        // Re-arm or stop the RTO (tcp_set_xmit_timer / tcp_rearm_rto); with RACK or TLP
        // after the state machine, as Linux, since either may claim the timer.
        let xmit_timer_linux = self.xmit_timer_linux();
        if !xmit_timer_linux {
            if self.packets_out() == 0 {
                self.rto_timer.cancel();
            } else if info.snd_una_advanced {
                self.rto_timer.arm(now + self.rto_ns);
            }
        }

        // Delivered counts are updated before `in_ack_event`, as Linux counts them in
        // tcp_sacktag_write_queue()/tcp_clean_rtx_queue() (DCTCP reads them there).
        self.count_delivered(delivered, info.ece);
        self.cc.in_ack_event(
            &mut self.tp,
            AckFlags {
                window_update: info.snd_una_advanced,
                ece: info.ece,
            },
        );

        // tcp_process_tlp_ack()
        if self.tlp.high_seq.is_some()
            && self
                .tlp
                .on_ack(ack, info.snd_una_advanced, info.data_sacked)
                == TlpAck::Recovered
        {
            self.tlp_recovered();
        }

        self.reo_armed = false;
        let dubious = !info.snd_una_advanced
            || info.data_sacked
            || info.ece
            || self.tp.ca_state != CaState::Open;
        let was_in_recovery = self.tp.ca_state == CaState::Recovery;
        if dubious {
            let delivered_reno = self.fastretrans_alert(info, prior_snd_una);
            self.count_delivered(delivered_reno, info.ece);
            delivered += delivered_reno;
        }
        if xmit_timer_linux {
            // tcp_set_xmit_timer() on FLAG_SET_XMIT_TIMER (data ACKed) unless RACK armed
            // its reordering timer; with nothing outstanding, tcp_rearm_rto() stops it.
            if self.packets_out() == 0
                || (info.snd_una_advanced
                    && !self.reo_armed
                    && !self.schedule_loss_probe(now, true))
            {
                self.rearm_rto(now);
            }
        }

        // tcp_rate_gen(), then tcp_cong_control()
        self.refresh_tp(now);
        if let Some(r) = self.rate.as_mut() {
            let lost = (self.tp.lost - prior_lost) as u32;
            r.gen(&mut self.tp, delivered, lost, now, ca_rtt, info.ece);
        }
        if self.cong_control {
            self.tp.wstamp_ns = self.next_send_ns;
            let rs = self.rate.as_ref().map(|r| r.rs).unwrap_or_default();
            self.cc.cong_control(&mut self.tp, &rs);
        } else if matches!(self.tp.ca_state, CaState::Cwr | CaState::Recovery) {
            self.cwnd_reduction(delivered, info);
        } else if info.snd_una_advanced {
            self.tp.is_cwnd_limited = self.is_cwnd_limited();
            // ns-3 grows cwnd on the ACK that ends recovery by every segment it covers,
            // those SACKed earlier included (`recovery_exit = "ns3"`, for comparisons);
            // Linux by the newly delivered ones.
            let grow_by = if was_in_recovery
                && self.tp.ca_state == CaState::Open
                && self.cfg.recovery_exit == RecoveryExit::Ns3
            {
                pkts_acked
            } else {
                delivered
            };
            self.cc.cong_avoid(&mut self.tp, grow_by);
            // A delay-based controller may ask for a reduction from cong_avoid, as Linux
            // CDG calls tcp_enter_cwr() there.
            if std::mem::take(&mut self.tp.request_cwr) {
                self.enter_cwr_cause(ReductionCause::Delay);
            }
        }
        self.try_send(io);
    }

    /// Linux `tcp_count_delivered()`.
    fn count_delivered(&mut self, delivered: u32, ece: bool) {
        self.tp.delivered += delivered as u64;
        if ece {
            self.tp.delivered_ce += delivered as u64;
        }
    }

    /// Linux `tcp_fastretrans_alert()`. Returns packets "delivered" by Reno duplicate-ACK
    /// emulation.
    fn fastretrans_alert(&mut self, info: AckInfo, prior_snd_una: u64) -> u32 {
        let mut delivered = 0;
        let reno = !self.cfg.sack;
        // D. Exit conditions: the recovery point is acknowledged.
        if self.tp.ca_state != CaState::Open && self.tp.snd_una >= self.high_seq {
            match self.tp.ca_state {
                // Held until something above high_seq is ACKed, so CWR reached the peer.
                CaState::Cwr if self.tp.snd_una != self.high_seq => {
                    self.end_cwnd_reduction();
                    self.set_state(CaState::Open);
                }
                CaState::Recovery => {
                    if reno {
                        self.sacked_out = 0;
                    }
                    // RFC 6582: NewReno holds Recovery until an ACK beyond the recovery point.
                    if reno && self.tp.snd_una == self.high_seq {
                        return delivered;
                    }
                    self.set_state(CaState::Open);
                    self.end_cwnd_reduction();
                }
                _ => {}
            }
        }
        let mut fast_rexmit = false;
        // E. Process state.
        match self.tp.ca_state {
            CaState::Recovery => {
                if !info.snd_una_advanced {
                    if reno {
                        delivered += self.add_reno_sack(info.num_dupack);
                    }
                } else if reno {
                    self.newreno_mark_head_lost(true);
                }
                if self.rack_on() {
                    self.identify_packet_loss();
                }
            }
            CaState::Loss => {
                if self.tp.snd_una >= self.high_seq {
                    self.set_state(CaState::Open);
                } else if !self.rack_on() {
                    if reno && info.snd_una_advanced {
                        self.sacked_out = 0;
                    }
                    return delivered;
                }
                // With RACK a lost retransmission ends Loss for Recovery (Linux
                // FLAG_LOST_RETRANS falls through to the default branch).
                if self.rack_on()
                    && !self.identify_packet_loss()
                    && self.tp.ca_state != CaState::Open
                {
                    return delivered;
                }
                delivered += self.open_state_alert(info, prior_snd_una, &mut fast_rexmit);
                if self.tp.ca_state != CaState::Recovery {
                    return delivered;
                }
            }
            _ => {
                delivered += self.open_state_alert(info, prior_snd_una, &mut fast_rexmit);
                if self.tp.ca_state != CaState::Recovery {
                    return delivered;
                }
            }
        }
        // RFC 6675's count-based marking only without RACK (Linux 4.18+:
        // `if (!tcp_is_rack(sk) && do_lost) tcp_update_scoreboard()`).
        if !reno && !self.rack_on() {
            self.update_scoreboard(fast_rexmit);
        }
        delivered
    }

    /// Linux `tcp_identify_packet_loss()` for a SACK flow with RACK: returns whether a
    /// retransmission was marked lost again (`FLAG_LOST_RETRANS`).
    fn identify_packet_loss(&mut self) -> bool {
        if self.sb.is_empty() {
            return false;
        }
        let prior_retrans = self.retrans_out;
        // tcp_rack_mark_lost()
        if self.rack.take_advanced() {
            let now = self.tp.now_ns;
            let timeout = self.rack_detect_loss(now);
            if timeout > 0 {
                // inet_csk_reset_xmit_timer(ICSK_TIME_REO_TIMEOUT, ..., icsk_rto).
                let after = (timeout + rack::TIMEOUT_MIN_NS).min(self.rto_ns);
                self.xmit_timer = XmitTimer::ReoTimeout;
                self.rto_timer.arm(now + after);
                self.reo_armed = true;
            }
        }
        prior_retrans > self.retrans_out
    }

    /// Linux `tcp_rack_detect_loss()`: mark lost every segment sent before the most
    /// recently sent delivered one and not delivered within `RACK.rtt + reo_wnd`;
    /// returns the time until the next one is due, 0 if none.
    fn rack_detect_loss(&mut self, now: u64) -> u64 {
        let reo_wnd = self.rack.reo_wnd_ns(
            self.tp.ca_state >= CaState::Recovery,
            self.sacked_out,
            REORDERING,
            self.rtt.min_rtt_ns(),
            self.rtt.srtt_ns(),
        );
        let una = self.tp.snd_una;
        let mut timeout = 0i64;
        for i in 0..self.sb.len() {
            let m = self.sb[i];
            // Delivered, or lost and not yet retransmitted: not on Linux's tsorted list.
            if m.flags & SACKED != 0 || m.flags & (LOST | RETRANS) == LOST {
                continue;
            }
            let seg = una + i as u64;
            if !self.rack.judges(seg, m.sent_ns) {
                // Never-retransmitted segments go out in sequence order, and any later
                // retransmission went out later still: nothing beyond is judged.
                if m.flags & EVER_RETRANS == 0 {
                    break;
                }
                continue;
            }
            let remaining = self.rack.remaining_ns(m.sent_ns, reo_wnd, now);
            if remaining <= 0 {
                self.rack_mark_skb_lost(seg);
            } else {
                timeout = timeout.max(remaining);
            }
        }
        timeout as u64
    }

    /// Linux `tcp_mark_skb_lost()`, which also counts a retransmission lost again.
    fn rack_mark_skb_lost(&mut self, seg: u64) {
        let i = (seg - self.tp.snd_una) as usize;
        let f = self.sb[i].flags;
        if f & SACKED != 0 || f & (LOST | RETRANS) == LOST {
            return;
        }
        if f & LOST != 0 {
            self.sb[i].flags &= !RETRANS;
            self.retrans_out -= 1;
        } else {
            self.sb[i].flags |= LOST;
            self.lost_out += 1;
        }
        self.tp.lost += 1;
        self.newly_lost += 1;
        self.stats.rack_lost += 1;
        if seg < self.retrans_hint {
            self.retrans_hint = seg;
        }
        self.notify_skb_loss_event(i);
    }

    /// Linux `tcp_rack_reo_timeout()`: the reordering window passed.
    fn rack_reo_timeout(&mut self, io: &mut TcpIo<'_>) {
        let now = io.now_ns;
        self.refresh_tp(now);
        self.newly_lost = 0;
        let prior_in_flight = self.in_flight();
        self.rack_detect_loss(now);
        if prior_in_flight != self.in_flight() {
            if self.tp.ca_state != CaState::Recovery {
                self.enter_recovery();
                if !self.cong_control {
                    self.cwnd_reduction(1, AckInfo::default());
                }
            }
            self.try_send(io);
        }
        if self.xmit_timer != XmitTimer::Rto {
            self.rearm_rto(now);
        }
    }

    /// Linux `tcp_send_loss_probe()`: one segment regardless of cwnd, new data if any,
    /// else the last segment again.
    fn send_loss_probe(&mut self, io: &mut TcpIo<'_>) {
        let now = io.now_ns;
        self.refresh_tp(now);
        if self.tlp.high_seq.is_none() {
            self.tlp.retrans = false;
            let sent = if self.has_new_data() {
                let paced_out = self.tp.paced && self.next_send_ns > now;
                if !paced_out {
                    self.send_new_segment(io);
                }
                !paced_out
            } else {
                // __tcp_retransmit_skb() alone: EVER_RETRANS, not counted in retrans_out.
                let idx = self.sb.len() - 1;
                let seg = self.tp.snd_nxt - 1;
                self.sb[idx].flags |= EVER_RETRANS;
                self.sb[idx].sent_ns = now;
                let (packets_out, in_flight) = (self.packets_out(), self.rate_in_flight());
                if let Some(r) = self.rate.as_mut() {
                    r.on_retransmit(&mut self.tp, idx, now, packets_out, in_flight);
                }
                self.stats.retransmits += 1;
                self.transmit(seg, true, io);
                self.tlp.retrans = true;
                true
            };
            if sent {
                self.tlp.high_seq = Some(self.tp.snd_nxt);
                self.stats.tlp_probes += 1;
                // icsk_pending = 0: the RTO restarts from now.
                self.xmit_timer = XmitTimer::Rto;
            }
        }
        self.rearm_rto(now);
    }

    /// `tcp_process_tlp_ack()`: the probe repaired a loss; reduce cwnd once, as a CWR
    /// episode that ends at once.
    fn tlp_recovered(&mut self) {
        self.init_cwnd_reduction(ReductionCause::Loss);
        self.set_state(CaState::Cwr);
        self.record_reduction(ReductionCause::Loss);
        self.end_cwnd_reduction();
        // tcp_try_keep_open()
        let any_retrans =
            self.retrans_out > 0 || self.sb.front().is_some_and(|m| m.flags & EVER_RETRANS != 0);
        let state = if self.sacked_out + self.lost_out > 0 || any_retrans {
            CaState::Disorder
        } else {
            CaState::Open
        };
        if self.tp.ca_state != state {
            self.set_state(state);
            self.high_seq = self.tp.snd_nxt;
        }
        self.stats.tlp_recoveries += 1;
    }

    /// The `default:` branch of `tcp_fastretrans_alert()` (Open, Disorder, CWR).
    fn open_state_alert(
        &mut self,
        info: AckInfo,
        _prior_snd_una: u64,
        fast_rexmit: &mut bool,
    ) -> u32 {
        let mut delivered = 0;
        if !self.cfg.sack {
            if info.snd_una_advanced {
                self.sacked_out = 0;
            }
            delivered += self.add_reno_sack(info.num_dupack);
            self.newreno_mark_head_lost(false);
        }
        // tcp_time_to_recover(): with RACK only a proven loss (RACK marked it).
        let time_to_recover = if self.rack_on() {
            self.identify_packet_loss();
            self.lost_out > 0
        } else {
            self.lost_out > 0 || self.sacked_out + 1 > REORDERING
        };
        if !time_to_recover {
            self.try_to_open(info.ece);
            return delivered;
        }
        self.enter_recovery();
        *fast_rexmit = true;
        delivered
    }

    /// Linux `tcp_add_reno_sack()` with `tcp_limit_reno_sacked()`.
    fn add_reno_sack(&mut self, num_dupack: u32) -> u32 {
        if num_dupack == 0 {
            return 0;
        }
        let prior = self.sacked_out;
        self.sacked_out += num_dupack;
        self.limit_reno_sacked();
        self.sacked_out.saturating_sub(prior)
    }

    /// Linux `tcp_limit_reno_sacked()`: at most `packets_out - max(lost_out, 1)`
    /// duplicate ACKs count as SACKed.
    fn limit_reno_sacked(&mut self) {
        let holes = self.lost_out.max(1).min(self.packets_out());
        if self.sacked_out + holes > self.packets_out() {
            self.sacked_out = self.packets_out().saturating_sub(holes);
        }
    }

    /// Linux `tcp_newreno_mark_lost()`: mark the head lost on the third duplicate ACK and
    /// on every partial ACK during Recovery.
    fn newreno_mark_head_lost(&mut self, snd_una_advanced: bool) {
        let state = self.tp.ca_state;
        let trigger = (state < CaState::Recovery && self.sacked_out >= REORDERING)
            || (state == CaState::Recovery && snd_una_advanced);
        if !trigger || self.sb.is_empty() {
            return;
        }
        let una = self.tp.snd_una;
        self.mark_lost(una);
    }

    /// Tag one segment lost (`tcp_mark_skb_lost`).
    fn mark_lost(&mut self, seg: u64) {
        let m = self.meta(seg);
        if m.flags & (SACKED | LOST) != 0 {
            return;
        }
        m.flags |= LOST;
        self.lost_out += 1;
        self.newly_lost += 1;
        self.tp.lost += 1;
        if seg < self.retrans_hint {
            self.retrans_hint = seg;
        }
        self.notify_skb_loss_event((seg - self.tp.snd_una) as usize);
    }

    /// BBRv3's `tcp_notify_skb_loss_event()`: after `tp.lost` counts the packet at
    /// scoreboard index `idx`, tell the controller (`ca_ops->skb_marked_lost`), for flows
    /// that keep the per-packet snapshot it reads.
    fn notify_skb_loss_event(&mut self, idx: usize) {
        if let Some(r) = self.rate.as_ref().filter(|r| r.extended) {
            let tx = r.tx(idx);
            let skb = LostSkb {
                tx_in_flight: tx.in_flight,
                tx_lost: tx.lost,
                is_app_limited: tx.is_app_limited,
                has_delivered_mstamp: tx.delivered_mstamp_ns.is_some(),
            };
            self.cc.skb_marked_lost(&mut self.tp, &skb);
        }
    }

    /// Linux `tcp_update_scoreboard()` / `tcp_mark_head_lost()` (RFC 6675 `IsLost`).
    fn update_scoreboard(&mut self, fast_rexmit: bool) {
        let sacked_upto = self.sacked_out as i64 - REORDERING as i64;
        if sacked_upto < 0 {
            if fast_rexmit {
                let una = self.tp.snd_una;
                self.mark_lost(una);
            }
            return;
        }
        let packets = sacked_upto as u32;
        let mut seg = self.lost_hint_seg.max(self.tp.snd_una);
        let mut cnt = self.lost_hint_cnt;
        while seg < self.tp.snd_nxt && seg < self.high_seq {
            let f = self.meta(seg).flags;
            let c = cnt + (f & SACKED != 0) as u32;
            if c > packets {
                break;
            }
            if f & SACKED == 0 {
                self.mark_lost(seg);
            }
            cnt = c;
            seg += 1;
        }
        self.lost_hint_seg = seg;
        self.lost_hint_cnt = cnt;
    }

    /// Linux `tcp_try_to_open()`.
    fn try_to_open(&mut self, ece: bool) {
        if ece {
            self.enter_cwr();
        }
        if self.tp.ca_state != CaState::Cwr {
            let state = if self.sacked_out + self.lost_out > 0 || self.retrans_out > 0 {
                CaState::Disorder
            } else {
                CaState::Open
            };
            if self.tp.ca_state != state {
                self.set_state(state);
                self.high_seq = self.tp.snd_nxt;
            }
        }
    }

    /// Linux `tcp_init_cwnd_reduction()`.
    fn init_cwnd_reduction(&mut self, cause: ReductionCause) {
        self.high_seq = self.tp.snd_nxt;
        self.tlp.high_seq = None;
        self.tp.cwnd_cnt = 0;
        self.tp.prior_cwnd = self.tp.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.tp.ssthresh = self.cc.ssthresh(&self.tp, cause);
        if self.tp.ecn_ok {
            self.ecn_queue_cwr = true;
        }
    }

    fn record_reduction(&mut self, cause: ReductionCause) {
        if self.trace_reductions && self.reductions_budget.admit(1, self.tp.now_ns) {
            self.reductions.push(Reduction {
                time_ns: self.tp.now_ns,
                cause,
                cwnd_before: self.tp.prior_cwnd,
                ssthresh_after: self.tp.ssthresh,
            });
        }
    }

    /// Linux `tcp_enter_cwr()`: react to ECE at most once per window.
    fn enter_cwr(&mut self) {
        self.enter_cwr_cause(ReductionCause::Ecn);
    }

    /// Linux `tcp_enter_cwr()` for an ECN echo or a delay-based backoff.
    fn enter_cwr_cause(&mut self, cause: ReductionCause) {
        if self.tp.ca_state < CaState::Cwr {
            self.init_cwnd_reduction(cause);
            self.set_state(CaState::Cwr);
            self.record_reduction(cause);
            match cause {
                ReductionCause::Ecn => self.stats.ecn_reductions += 1,
                _ => self.stats.delay_reductions += 1,
            }
        }
    }

    /// Linux `tcp_enter_recovery()`: a reduction already under way (CWR) is not repeated.
    fn enter_recovery(&mut self) {
        let reduces = !matches!(self.tp.ca_state, CaState::Cwr | CaState::Recovery);
        if reduces {
            self.init_cwnd_reduction(ReductionCause::Loss);
        }
        self.set_state(CaState::Recovery);
        // Recorded after the state change: a controller may set ssthresh there (Linux
        // dctcp_state() -> dctcp_react_to_loss()).
        if reduces {
            self.record_reduction(ReductionCause::Loss);
        }
        self.stats.fast_recoveries += 1;
    }

    /// Linux `tcp_end_cwnd_reduction()`.
    fn end_cwnd_reduction(&mut self) {
        if self.cong_control {
            return; // the controller sets cwnd itself
        }
        if self.tp.ssthresh < INFINITE_SSTHRESH {
            self.tp.cwnd = self.tp.ssthresh;
        }
        self.cc.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
    }

    /// Linux `tcp_cwnd_reduction()`: Proportional Rate Reduction (RFC 6937).
    fn cwnd_reduction(&mut self, newly_acked_sacked: u32, info: AckInfo) {
        if newly_acked_sacked == 0 || self.tp.prior_cwnd == 0 {
            return;
        }
        let in_flight = self.in_flight() as i64;
        let ssthresh = self.tp.ssthresh as i64;
        let delta = ssthresh - in_flight;
        self.prr_delivered += newly_acked_sacked;
        let mut sndcnt: i64;
        if delta < 0 {
            let dividend =
                ssthresh as u64 * self.prr_delivered as u64 + self.tp.prior_cwnd as u64 - 1;
            sndcnt = (dividend / self.tp.prior_cwnd as u64) as i64 - self.prr_out as i64;
        } else {
            sndcnt =
                (self.prr_delivered as i64 - self.prr_out as i64).max(newly_acked_sacked as i64);
            if info.snd_una_advanced && self.newly_lost == 0 {
                sndcnt += 1;
            }
            sndcnt = sndcnt.min(delta);
        }
        // Force a fast retransmit upon entering fast recovery.
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.tp.cwnd = (in_flight + sndcnt).max(1) as u32;
    }

    // ----- retransmission timeout -------------------------------------------------

    /// The retransmission timer fired (Linux `tcp_write_timer_handler`): the RTO, a tail
    /// loss probe or RACK's reordering timer.
    pub fn on_rto(&mut self, io: &mut TcpIo<'_>) {
        if self.packets_out() == 0 {
            return;
        }
        match self.xmit_timer {
            XmitTimer::Rto => {}
            XmitTimer::LossProbe => return self.send_loss_probe(io),
            XmitTimer::ReoTimeout => return self.rack_reo_timeout(io),
        }
        self.stats.timeouts += 1;
        self.refresh_tp(io.now_ns);
        self.enter_loss();
        // Retransmit the head now; the send loop sends any further lost segments.
        self.try_send(io);
        self.rto_retransmits += 1;
        self.rto_ns = (self.rto_ns * 2).min(RTO_MAX_NS);
        self.arm_rto(io.now_ns + self.rto_ns);
    }

    /// Linux `tcp_enter_loss()` with `tcp_timeout_mark_lost()`.
    fn enter_loss(&mut self) {
        if !self.cfg.sack {
            self.sacked_out = 0;
        }
        // With RACK, tcp_timeout_mark_lost() leaves segments sent within RACK.rtt (the
        // head excepted) unmarked: they may still be delivered.
        let (rack_on, now) = (self.rack_on(), self.tp.now_ns);
        for i in 0..self.sb.len() {
            if rack_on && i > 0 && self.rack.remaining_ns(self.sb[i].sent_ns, 0, now) > 0 {
                continue;
            }
            let m = &mut self.sb[i];
            if m.flags & SACKED != 0 {
                continue;
            }
            if m.flags & LOST != 0 {
                if m.flags & RETRANS != 0 {
                    // A retransmission lost again counts as a loss (tcp_mark_skb_lost).
                    m.flags &= !RETRANS;
                    self.retrans_out -= 1;
                    self.tp.lost += 1;
                    self.notify_skb_loss_event(i);
                }
            } else {
                m.flags |= LOST;
                self.lost_out += 1;
                self.tp.lost += 1;
                self.notify_skb_loss_event(i);
            }
        }
        let state = self.tp.ca_state;
        if state <= CaState::Disorder
            || self.high_seq <= self.tp.snd_una
            || (state == CaState::Loss && self.rto_retransmits == 0)
        {
            self.tp.prior_cwnd = self.tp.cwnd;
            self.tp.ssthresh = self.cc.ssthresh(&self.tp, ReductionCause::Loss);
            self.cc.cwnd_event(&mut self.tp, CaEvent::Loss);
            self.record_reduction(ReductionCause::Loss);
        }
        self.tp.cwnd = self.in_flight() + 1;
        self.tp.cwnd_cnt = 0;
        self.set_state(CaState::Loss);
        self.high_seq = self.tp.snd_nxt;
        if self.tp.ecn_ok {
            self.ecn_queue_cwr = true;
        }
        self.retrans_hint = self.tp.snd_una;
        self.lost_hint_seg = self.tp.snd_una;
        self.lost_hint_cnt = 0;
    }

    /// Sanity of the scoreboard counters (used by tests).
    pub fn check_invariants(&self) -> Result<(), String> {
        let (mut s, mut l, mut r) = (0u32, 0u32, 0u32);
        for m in &self.sb {
            s += (m.flags & SACKED != 0) as u32;
            l += (m.flags & LOST != 0) as u32;
            r += (m.flags & RETRANS != 0) as u32;
        }
        if self.sb.len() as u64 != self.tp.snd_nxt - self.tp.snd_una {
            return Err("scoreboard length".into());
        }
        if self.rate.as_ref().is_some_and(|r| r.len() != self.sb.len()) {
            return Err("rate snapshots do not match the scoreboard".into());
        }
        // Linux tcp_verify_left_out(): the pipe estimate must not wrap.
        if self.sacked_out + self.lost_out > self.packets_out() {
            return Err(format!(
                "sacked_out {} + lost_out {} > packets_out {}",
                self.sacked_out,
                self.lost_out,
                self.packets_out()
            ));
        }
        if self.cfg.sack && (s, l, r) != (self.sacked_out, self.lost_out, self.retrans_out) {
            return Err(format!(
                "counters sacked/lost/retrans {:?} != tags {:?}",
                (self.sacked_out, self.lost_out, self.retrans_out),
                (s, l, r)
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! Sender behaviour against hand-worked expectations from RFC 3168, RFC 6675,
    //! RFC 6937 and Linux, driving the sender with crafted ACKs.
    use super::*;
    use crate::cc::newreno::NewReno;
    use crate::net::packet::{Ecn, PacketPool};

    const MS: u64 = 1_000_000;

    struct Harness {
        s: TcpSender,
        pool: PacketPool,
        now: u64,
        sent: Vec<Packet>,
    }

    impl Harness {
        fn new(sack: bool, ecn: bool, iw: u32) -> Self {
            Self::with(sack, ecn, iw, |_| {})
        }
        /// RACK and TLP on (Linux's defaults), `total_bytes` to send.
        fn linux(total_bytes: Option<u64>) -> Self {
            Self::with(true, false, 10, |c| {
                c.rack = true;
                c.tlp = true;
                c.total_bytes = total_bytes;
            })
        }
        fn with(sack: bool, ecn: bool, iw: u32, tweak: impl FnOnce(&mut TcpConfig)) -> Self {
            let mut cfg = TcpConfig {
                mss: 1000,
                initial_window: iw,
                sack,
                ecn,
                pacing: false,
                recovery_exit: Default::default(),
                rack: false,
                tlp: false,
                ce_quickack: true,
                min_rto_ns: 200 * MS,
                delayed_ack: false,
                total_bytes: None,
                accurate_ecn: false,
            };
            tweak(&mut cfg);
            let mut h = Harness {
                s: TcpSender::new(0, 0, cfg, Cc::NewReno(NewReno::default()), 100 * MS),
                pool: PacketPool::new(),
                now: 0,
                sent: vec![],
            };
            h.io(|s, io| s.start(io));
            h
        }
        fn io(&mut self, f: impl FnOnce(&mut TcpSender, &mut TcpIo<'_>)) -> Vec<Packet> {
            let mut out = vec![];
            let mut io = TcpIo {
                now_ns: self.now,
                pool: &mut self.pool,
                out: &mut out,
            };
            f(&mut self.s, &mut io);
            let pkts: Vec<Packet> = out.iter().map(|&id| *self.pool.get(id)).collect();
            for id in out {
                self.pool.free(id);
            }
            self.sent.extend(pkts.iter().copied());
            pkts
        }
        fn ack(&mut self, cum: u64, sack: &[(u64, u64)], ece: bool) -> Vec<Packet> {
            self.now += MS;
            let p = Packet {
                kind: PacketKind::TcpAck,
                seq: cum,
                tcp_flags: if ece { tcp_flags::ECE } else { 0 },
                n_sack: sack.len() as u8,
                ..Packet::default()
            };
            let blocks: Vec<(u64, u64)> = sack.to_vec();
            let pkts = self.io(|s, io| s.on_ack(&p, &blocks, io));
            self.s.check_invariants().unwrap();
            pkts
        }
    }

    #[test]
    fn initial_window_is_sent_at_start() {
        let h = Harness::new(true, false, 10);
        assert_eq!(h.sent.len(), 10);
        assert_eq!(
            h.sent.iter().map(|p| p.seq).collect::<Vec<_>>(),
            (0..10).collect::<Vec<_>>()
        );
        assert!(h
            .sent
            .iter()
            .all(|p| p.size_bytes == 1052 && p.payload_bytes == 1000));
    }

    #[test]
    fn slow_start_adds_one_packet_per_packet_acked() {
        let mut h = Harness::new(true, false, 10);
        let out = h.ack(2, &[], false);
        // cwnd 10 -> 12 (exact counting), in flight 8: four new segments.
        assert_eq!(h.s.tp.cwnd, 12);
        assert_eq!(
            out.iter().map(|p| p.seq).collect::<Vec<_>>(),
            vec![10, 11, 12, 13]
        );
    }

    #[test]
    fn third_sack_triggers_fast_retransmit_of_the_hole_and_prr_halves() {
        let mut h = Harness::new(true, false, 10);
        // Segment 0 lost; 1, 2 SACKed: two duplicate ACKs, no retransmission yet.
        assert!(h.ack(0, &[(1, 2)], false).iter().all(|p| p.seq >= 10));
        h.ack(0, &[(1, 3)], false);
        assert_eq!(h.s.ca_state(), CaState::Disorder);
        // Third: RFC 6675 / Linux enter recovery and retransmit segment 0 first.
        let out = h.ack(0, &[(1, 4)], false);
        assert_eq!(h.s.ca_state(), CaState::Recovery);
        assert_eq!(out[0].seq, 0, "fast retransmit of the hole");
        assert_eq!(h.s.tp.ssthresh, 5, "NewReno halves cwnd 10");
        assert_eq!(h.s.stats.retransmits, 1);
        // The retransmission is not ECN-capable and the recovery ends when 0..high_seq is ACKed.
        let high = h.s.tp.snd_nxt;
        h.ack(high, &[], false);
        assert_eq!(h.s.ca_state(), CaState::Open);
        // Linux sets cwnd = ssthresh when recovery ends, then (same ACK, now Open) runs
        // congestion avoidance on the packets it delivered: segment 0 and 4..high.
        let delivered = 1 + (high - 4) as u32;
        assert_eq!(h.s.tp.cwnd, 5 + delivered / 5);
    }

    /// `recovery_exit = "ns3"`: the same trace, but the ACK that ends recovery grows cwnd
    /// by every segment it covers, 0..high, the three SACKed earlier (1, 2, 3) included,
    /// as ns-3's `ProcessAck` passes `(ackNumber - oldHeadSequence) / segmentSize` to
    /// `IncreaseWindow`: cwnd = 5 + high / 5 where Linux gives 5 + (high - 3) / 5.
    #[test]
    fn ns3_recovery_exit_grows_by_the_sacked_segments_too() {
        let mut h = Harness::new(true, false, 10);
        h.s.cfg.recovery_exit = RecoveryExit::Ns3;
        h.ack(0, &[(1, 2)], false);
        h.ack(0, &[(1, 3)], false);
        h.ack(0, &[(1, 4)], false);
        assert_eq!(h.s.ca_state(), CaState::Recovery);
        let high = h.s.tp.snd_nxt;
        h.ack(high, &[], false);
        assert_eq!(h.s.ca_state(), CaState::Open);
        assert_eq!(h.s.tp.cwnd as u64, 5 + high / 5);
        assert_ne!(
            high / 5,
            (high - 3) / 5,
            "the trace must tell the two rules apart"
        );
    }

    #[test]
    fn reno_without_sack_uses_three_duplicate_acks_and_partial_acks() {
        let mut h = Harness::new(false, false, 10);
        // Segments 0 and 5 lost. Duplicate ACKs for 1..4.
        h.ack(0, &[], false);
        h.ack(0, &[], false);
        let out = h.ack(0, &[], false);
        assert_eq!(h.s.ca_state(), CaState::Recovery);
        assert_eq!(out[0].seq, 0);
        // Partial ACK up to 5 (segment 5 lost too): NewReno retransmits 5 at once.
        let out = h.ack(5, &[], false);
        assert_eq!(
            h.s.ca_state(),
            CaState::Recovery,
            "partial ACK keeps Recovery (RFC 6582)"
        );
        assert!(
            out.iter().any(|p| p.seq == 5),
            "partial ACK retransmits the next hole"
        );
    }

    #[test]
    fn ece_reduces_once_per_window_and_sets_cwr_on_next_new_segment() {
        let mut h = Harness::new(true, true, 10);
        assert!(h.sent.iter().all(|p| p.ecn == Ecn::Ect0));
        let out = h.ack(1, &[], true);
        assert_eq!(h.s.ca_state(), CaState::Cwr);
        assert_eq!(
            h.s.tp.ssthresh, 5,
            "ECE halves like a loss (RFC 3168 §6.1.2)"
        );
        assert_eq!(h.s.stats.ecn_reductions, 1);
        // More ECE ACKs within the same window do not reduce again.
        for k in 2..8 {
            h.ack(k, &[], true);
        }
        assert_eq!(h.s.stats.ecn_reductions, 1);
        assert_eq!(h.s.tp.ssthresh, 5);
        // CWR goes out on the first new data segment sent after the reduction.
        let first_new = out
            .iter()
            .chain(h.sent.iter())
            .find(|p| p.seq >= 10)
            .expect("new data");
        assert_ne!(first_new.tcp_flags & tcp_flags::CWR, 0);
        assert_eq!(
            h.sent
                .iter()
                .filter(|p| p.tcp_flags & tcp_flags::CWR != 0)
                .count(),
            1
        );
    }

    #[test]
    fn rto_collapses_cwnd_retransmits_head_and_backs_off() {
        let mut h = Harness::new(true, false, 10);
        let rto0 = h.s.rto_ns();
        assert_eq!(
            rto0,
            300 * MS,
            "srtt 100 ms + rttvar max(200 ms, 2 x 100 ms)"
        );
        h.now = rto0;
        let out = h.io(|s, io| s.on_rto(io));
        assert_eq!(h.s.ca_state(), CaState::Loss);
        assert_eq!(h.s.tp.cwnd, 1);
        assert_eq!(h.s.tp.ssthresh, 5);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].seq, 0);
        assert_eq!(h.s.rto_ns(), 2 * rto0, "exponential backoff");
        h.now += h.s.rto_ns();
        h.io(|s, io| s.on_rto(io));
        assert_eq!(h.s.rto_ns(), 4 * rto0);
        assert_eq!(
            h.s.tp.ssthresh, 5,
            "a repeated timeout does not reduce ssthresh again"
        );
        assert_eq!(h.s.stats.timeouts, 2);
    }

    // ----- RACK-TLP, hand-worked from Linux 6.x tcp_recovery.c / tcp_output.c ----------
    // The harness seeds srtt = min_rtt = 100 ms; rto_min 200 ms, so RTO = 300 ms.

    /// Segments 7-9 of a 10-segment transfer are lost. The ACK of 0-6 at 100 ms arms the
    /// probe (tcp_schedule_loss_probe, three packets out): 2·srtt + TCP_TIMEOUT_MIN_US =
    /// 202 ms, before the 300 ms RTO, so the probe (the last segment again, no new data)
    /// goes out at 302 ms. Its SACK at 402 ms advances RACK (xmit 302 ms, rtt 100 ms);
    /// 7 and 8, sent at 0, are overdue by far more than reo_wnd = min_rtt/4 = 25 ms, so
    /// RACK marks them lost and fast recovery repairs them: no RTO (at 400 ms otherwise).
    #[test]
    fn a_tail_loss_is_repaired_by_a_probe_at_two_srtt_not_by_the_rto() {
        let mut h = Harness::linux(Some(10_000));
        assert_eq!(h.sent.len(), 10);
        h.now = 99 * MS;
        h.ack(7, &[], false);
        assert_eq!(
            h.s.rto_timer.deadline(),
            Some(302 * MS),
            "PTO = 2 srtt + 2 ms"
        );
        h.now = 302 * MS;
        let probe = h.io(|s, io| s.on_rto(io));
        assert_eq!(probe.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![9]);
        assert_eq!((h.s.stats.tlp_probes, h.s.stats.timeouts), (1, 0));
        assert_eq!(h.s.ca_state(), CaState::Open, "a probe is no reduction");
        // The RTO restarts from the probe (icsk_pending = 0, tcp_rearm_rto).
        assert_eq!(h.s.rto_timer.deadline(), Some(602 * MS));
        h.now = 401 * MS;
        let out = h.ack(7, &[(9, 10)], false);
        assert_eq!(h.s.ca_state(), CaState::Recovery);
        // PRR with nothing in flight sends one segment per segment delivered (RFC 6937).
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![7]);
        assert_eq!(h.s.stats.rack_lost, 2);
        let out = h.ack(8, &[(9, 10)], false);
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![8]);
        h.ack(10, &[], false);
        assert_eq!(h.s.ca_state(), CaState::Open);
        assert!(h.s.is_complete());
        assert_eq!(h.s.stats.timeouts, 0);

        // The same losses without RACK-TLP wait for the RTO at 100 + 300 ms.
        let mut h = Harness::new(true, false, 10);
        h.s.cfg.total_bytes = Some(10_000);
        h.now = 99 * MS;
        h.ack(7, &[], false);
        assert_eq!(h.s.rto_timer.deadline(), Some(400 * MS));
    }

    /// One packet out: the PTO adds rto_min for a delayed ACK, 2·100 + 200 = 400 ms, and
    /// is then capped by the RTO (300 ms from the ACK at 100 ms).
    #[test]
    fn with_one_packet_out_the_probe_waits_for_a_delayed_ack_but_not_past_the_rto() {
        let mut h = Harness::linux(Some(10_000));
        h.now = 99 * MS;
        h.ack(9, &[], false);
        assert_eq!(h.s.rto_timer.deadline(), Some(400 * MS));
        h.now = 400 * MS;
        let probe = h.io(|s, io| s.on_rto(io));
        assert_eq!(probe[0].seq, 9);
        assert_eq!((h.s.stats.tlp_probes, h.s.stats.timeouts), (1, 0));
    }

    /// Segment 0 is overtaken by 1. At the SACK of 1 (100 ms), 0 (sent at the same time,
    /// earlier in sequence) has RACK.rtt + reo_wnd - elapsed = 100 + 25 - 100 = 25 ms
    /// left: not lost, the reordering timer is armed for 25 + 2 ms. When 0 arrives at
    /// 110 ms nothing was retransmitted.
    #[test]
    fn reordering_within_the_reordering_window_is_not_a_loss() {
        let mut h = Harness::linux(None);
        h.now = 99 * MS;
        h.ack(0, &[(1, 2)], false);
        assert_eq!(h.s.ca_state(), CaState::Disorder);
        assert_eq!(h.s.rto_timer.deadline(), Some(127 * MS));
        h.now = 109 * MS;
        h.ack(2, &[], false);
        assert_eq!(h.s.ca_state(), CaState::Open);
        assert_eq!((h.s.stats.retransmits, h.s.stats.rack_lost), (0, 0));
        assert_ne!(h.s.rto_timer.deadline(), Some(127 * MS), "timer re-armed");
    }

    /// The same SACK of 1 with segment 0 really lost: the reordering timer fires at
    /// 127 ms (tcp_rack_reo_timeout), RACK marks 0 lost after one duplicate ACK (the
    /// dupthresh rule needs three) and fast recovery retransmits it at once.
    #[test]
    fn rack_detects_a_loss_before_three_duplicate_acks() {
        let mut h = Harness::linux(None);
        h.now = 99 * MS;
        h.ack(0, &[(1, 2)], false);
        h.now = 127 * MS;
        let out = h.io(|s, io| s.on_rto(io));
        h.s.check_invariants().unwrap();
        assert_eq!(h.s.ca_state(), CaState::Recovery);
        assert_eq!(out[0].seq, 0);
        assert_eq!(h.s.stats.rack_lost, 1);
        assert_eq!(h.s.stats.timeouts, 0);
        assert_eq!(h.s.tp.ssthresh, 5);

        // Without RACK one SACK leaves the hole alone until the RTO (armed at 0).
        let mut h = Harness::new(true, false, 10);
        h.now = 99 * MS;
        h.ack(0, &[(1, 2)], false);
        assert_eq!(h.s.ca_state(), CaState::Disorder);
        assert_eq!(h.s.rto_timer.deadline(), Some(300 * MS));
    }

    /// A lost retransmission: RACK marks it lost again once a segment sent after it is
    /// SACKed and its RACK.rtt has passed (the RTO would be needed without RACK).
    #[test]
    fn rack_marks_a_lost_retransmission_lost_again() {
        let mut h = Harness::linux(None);
        h.now = 99 * MS;
        h.ack(0, &[(1, 4)], false);
        assert_eq!(h.s.ca_state(), CaState::Recovery);
        let rtx = h.sent.iter().filter(|p| p.seq == 0).count();
        assert_eq!(rtx, 2, "0 retransmitted at 100 ms");
        // Segments sent at 100 ms after the retransmission (10.. ) are SACKed at 201 ms:
        // RACK.xmit = 100 ms, the retransmission of 0 (also 100 ms, lower sequence) is
        // judged with reo_wnd 0 in Recovery: 101 + 0 - 101 = 0 -> lost again.
        let top = h.s.tp.snd_nxt;
        h.now = 200 * MS;
        let out = h.ack(0, &[(1, top)], false);
        assert!(h.s.stats.rack_lost >= 2, "{}", h.s.stats.rack_lost);
        assert_eq!(out[0].seq, 0, "retransmitted again");
        assert_eq!(h.s.stats.timeouts, 0);
    }
}
