//! TLP, the tail loss probe (RFC 8985 §7; Linux `net/ipv4/tcp_output.c`
//! `tcp_schedule_loss_probe()`, `tcp_send_loss_probe()`, `tcp_input.c`
//! `tcp_process_tlp_ack()`).
//!
//! A SACK flow in Open or CWR with data outstanding arms the probe timeout (PTO) instead
//! of the RTO: `2·srtt + 2 ms` (`TCP_TIMEOUT_MIN_US`), or `2·srtt + rto_min` with one
//! packet out (the peer may be delaying its ACK), never later than the RTO would fire.
//! On expiry one segment goes out regardless of cwnd: new data if there is any, else a
//! retransmission of the last segment; at most one probe is outstanding
//! (`tlp_high_seq`). An ACK beyond `tlp_high_seq` after a retransmitted probe means the
//! probe repaired a loss: cwnd is reduced once (CWR then back to Open), as RFC 8985
//! §7.4.2.
//!
//! Departure: without D-SACK, a probe whose original also arrived is recognised only by
//! a pure duplicate ACK at `tlp_high_seq` (Linux also uses `FLAG_DSACK_TLP`).

/// Linux `TCP_TIMEOUT_MIN_US`: the PTO's slack with more than one packet out.
pub const TIMEOUT_MIN_NS: u64 = 2_000_000;
/// Linux `TCP_TIMEOUT_INIT`: the PTO before any RTT sample.
pub const TIMEOUT_INIT_NS: u64 = 1_000_000_000;

/// The probe state (`tp->tlp_high_seq`, `tp->tlp_retrans`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Tlp {
    /// `snd_nxt` when the outstanding probe was sent; `None` = no probe outstanding.
    pub high_seq: Option<u64>,
    /// The outstanding probe retransmitted the last segment (not new data).
    pub retrans: bool,
}

/// What an ACK means for the outstanding probe (`tcp_process_tlp_ack`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlpAck {
    /// Nothing decided yet.
    Pending,
    /// The episode ended without a loss.
    Done,
    /// The probe repaired a loss: reduce cwnd once.
    Recovered,
}

impl Tlp {
    /// Linux `tcp_schedule_loss_probe()`'s timeout. `srtt_x8_ns`: the smoothed RTT
    /// scaled by 8 as Linux keeps it (0 = no sample); `rto_delta_ns`: how far in the
    /// future the RTO would fire.
    pub fn probe_timeout_ns(
        srtt_x8_ns: u64,
        packets_out: u32,
        min_rto_ns: u64,
        rto_delta_ns: i64,
    ) -> u64 {
        let mut timeout = if srtt_x8_ns > 0 {
            (srtt_x8_ns >> 2)
                + if packets_out == 1 {
                    min_rto_ns
                } else {
                    TIMEOUT_MIN_NS
                }
        } else {
            TIMEOUT_INIT_NS
        };
        if rto_delta_ns > 0 {
            timeout = timeout.min(rto_delta_ns as u64);
        }
        timeout
    }

    /// Linux `tcp_process_tlp_ack()` for an ACK of `ack` that advanced `snd_una`
    /// (`advanced`) or SACKed new data (`sacked`).
    pub fn on_ack(&mut self, ack: u64, advanced: bool, sacked: bool) -> TlpAck {
        let Some(high) = self.high_seq else {
            return TlpAck::Pending;
        };
        if ack < high {
            return TlpAck::Pending;
        }
        if !self.retrans {
            // A probe of new data was acknowledged.
            self.high_seq = None;
            TlpAck::Done
        } else if ack > high {
            // The caller's cwnd reduction clears high_seq (tcp_init_cwnd_reduction).
            TlpAck::Recovered
        } else if !(advanced || sacked) {
            // A pure duplicate ACK: original and probe both arrived, no loss.
            self.high_seq = None;
            TlpAck::Done
        } else {
            TlpAck::Pending
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn pto_is_two_srtt_plus_slack_and_never_after_the_rto() {
        // srtt 100 ms (x8 = 800 ms): 2 x 100 + 2 ms, or + rto_min with one packet out.
        assert_eq!(
            Tlp::probe_timeout_ns(800 * MS, 5, 200 * MS, 300 * MS as i64),
            202 * MS
        );
        assert_eq!(
            Tlp::probe_timeout_ns(800 * MS, 1, 200 * MS, 300 * MS as i64),
            300 * MS
        );
        assert_eq!(
            Tlp::probe_timeout_ns(800 * MS, 1, 200 * MS, 500 * MS as i64),
            400 * MS
        );
        assert_eq!(Tlp::probe_timeout_ns(0, 5, 200 * MS, 0), 1_000 * MS);
    }

    #[test]
    fn an_ack_beyond_a_retransmitted_probe_is_a_repaired_loss() {
        let mut t = Tlp {
            high_seq: Some(10),
            retrans: true,
        };
        assert_eq!(t.on_ack(9, true, false), TlpAck::Pending);
        assert_eq!(t.on_ack(11, true, false), TlpAck::Recovered);
        let mut t = Tlp {
            high_seq: Some(10),
            retrans: true,
        };
        assert_eq!(
            t.on_ack(10, false, false),
            TlpAck::Done,
            "pure dupack: no loss"
        );
        let mut t = Tlp {
            high_seq: Some(10),
            retrans: false,
        };
        assert_eq!(t.on_ack(10, true, false), TlpAck::Done);
    }
}
