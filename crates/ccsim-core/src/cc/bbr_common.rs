//! What BBR v1 ([`super::bbr`], Linux mainline `net/ipv4/tcp_bbr.c`) and BBRv3
//! ([`super::bbr3`], google/bbr `v3` branch, same file with `BBR_VERSION 3`) share word
//! for word in their sources: the fixed-point units, `enum bbr_mode`, the host constants
//! that size TSO bursts and bound the ACK-epoch counter, and the clock conversions.
//!
//! The functions both files have under the same name stay in each file even where their
//! bodies look alike (`bbr_cwnd_event`, `bbr_update_ack_aggregation`,
//! `bbr_check_probe_rtt_done`, ...): v3 changed most of them in small ways (`bw` a u32,
//! the pacing margin and `extra_acked_max_us` tunables, a one-round ACK-aggregation window
//! in STARTUP, PROBE_RTT's own min-RTT stamp), and each port reads as its source only if
//! every function is there, beside the state it touches.

use super::CcState;

/// Rate unit: packets per µs `<< BW_SCALE` (Linux `BW_SCALE`, `BW_UNIT`).
pub(crate) const BW_SCALE: u32 = 24;
pub(crate) const BW_UNIT: u64 = 1 << BW_SCALE;
/// Gain unit (Linux `BBR_SCALE`, `BBR_UNIT`).
pub(crate) const BBR_SCALE: u32 = 8;
pub(crate) const BBR_UNIT: u32 = 1 << BBR_SCALE;

/// Linux `bbr_ack_epoch_acked_reset_thresh`: the 20-bit `ack_epoch_acked` counter restarts
/// its epoch before it could wrap.
pub(crate) const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
/// Linux `sk_pacing_shift` (default 10): TSO bursts of about 1 ms of data.
pub(crate) const PACING_SHIFT: u32 = 10;
/// Linux `GSO_MAX_SIZE` (v1's kernel) = `GSO_LEGACY_MAX_SIZE` (v3's): 64 KiB.
pub(crate) const GSO_MAX_SIZE: u64 = 65536;
/// Linux `MAX_TCP_HEADER` on x86-64 (`128 + MAX_HEADER`), 320 bytes.
pub(crate) const MAX_TCP_HEADER: u64 = 320;

/// BBR's modes (Linux `enum bbr_mode`, the same in v1 and v3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Startup = 0,
    Drain = 1,
    ProbeBw = 2,
    ProbeRtt = 3,
}

/// `tp->tcp_mstamp` in µs (ccsim's ns truncated).
#[inline]
pub(crate) fn now_us(tp: &CcState) -> u64 {
    tp.now_ns / 1000
}

/// `tcp_jiffies32` at HZ = 1000.
#[inline]
pub(crate) fn jiffies(tp: &CcState) -> u64 {
    tp.now_ns / 1_000_000
}

/// `tp->delivered_mstamp` in µs.
#[inline]
pub(crate) fn delivered_mstamp_us(tp: &CcState) -> u64 {
    tp.delivered_mstamp_ns / 1000
}
