//! BBRv3, the BBR Google deploys, ported function by function beside BBR v1 ([`super::bbr`]).
//!
//! Reference: `net/ipv4/tcp_bbr.c` with `BBR_VERSION 3`, branch `v3` of
//! github.com/google/bbr (stored copy at commit 001a430b3ddbbc6d9173061a74d8b580c757b91b),
//! with the sender support of the same branch (`tcp_rate.c`: `tx.lost`, `tx.delivered_ce`,
//! `tx.in_flight`; `tcp_input.c`: `rs.is_ece`, `tcp_notify_skb_loss_event` ->
//! `skb_marked_lost`), implemented in `crate::tcp::{rate, sender}`. Design:
//! draft-cardwell-ccwg-bbr (the CCWG's BBR draft) and Cardwell et al., "BBRv3: Algorithm
//! Bug Fixes and Public Internet Deployment", IETF 117 CCWG (2023). Every function below is
//! named after the C function it ports (without the `bbr_` prefix); the fixed point is
//! Linux's (bandwidth in packets/µs `<< 24`, gains in 1/256), times in µs, jiffies in ms.
//!
//! What v3 adds to v1 (see the source's header): a loss response beyond `loss_thresh`
//! (2 % of the packets in flight) and an ECN response (a DCTCP-like `ecn_alpha`, used only
//! when the path's min RTT is below `ecn_max_rtt_us` and the route is a shallow-threshold
//! ECN one), short-term lower bounds (`bw_lo`, `inflight_lo`, cut by `beta` = 30 % per
//! round with loss or by `ecn_factor x alpha` with CE) and long-term upper bounds
//! (`bw_hi[2]`, `inflight_hi`, found by probing), and a PROBE_BW cycle of four phases
//! DOWN -> CRUISE -> REFILL -> UP whose next probe comes after 2-3 s (randomised) or
//! `min(63, BDP)` packet-timed rounds (Reno coexistence), whichever is first.
//!
//! Departures, each deliberate:
//! - No TSO/GSO autosizing: packets are paced one by one. `bbr_tso_segs_goal()` is still
//!   computed (v3's min-RTT-dependent allowance included) because it enters cwnd through
//!   `bbr_quantization_budget()` (3 bursts), with `MAX_TCP_HEADER` = 320 B and
//!   `sk_pacing_shift` = 10, as in [`super::bbr`].
//! - No fast path (`bbr_fast_path`, `bbr_run_fast_path()`): the model is updated on every
//!   ACK. The fast path only saves CPU for app-limited flows; skipping it can change the
//!   moment a phase changes by an ACK.
//! - No PLB (`bbr_plb()`, protective load balancing): ccsim has one path per flow, so
//!   `ecn_alpha` is updated only when the flow is ECN-eligible.
//! - No TLP: `bbr_run_loss_probe_recovery()` (for `CA_EVENT_TLP_RECOVERY`) is ported but
//!   never called, since ccsim's sender has no tail loss probes (RACK-TLP is not modelled);
//!   `rs.is_acking_tlp_retrans_seq` is always false.
//! - `bbr_undo_cwnd()` is ported but ccsim's sender never undoes a reduction.
//! - ECN: Linux uses the ECN logic only when the route carries `RTAX_FEATURE_ECN_LOW`
//!   (`bbr_can_use_ecn()`: `TCP_ECN_OK && TCP_ECN_LOW`). Here that per-route feature is the
//!   parameter `ecn_low`, on by default, so a bbr3 flow with `ecn = true` is in the
//!   shallow-threshold ECN environment v3 is built for; it then sets ECT on every packet,
//!   retransmissions included (`TCP_ECN_ECT_PERMANENT`), and its receiver echoes CE
//!   precisely, DCTCP's way (`bbr_precise_ece_ack`, `dctcp_ece_ack_update()`, done by
//!   ccsim's receiver for flows that need an accurate echo). The source sends ECT(0);
//!   `ect1 = true` (a ccsim addition) sends ECT(1), for DualPI2's L queue.
//! - `fast_ack_mode` (a receiver-side change to when ACKs are sent) is not modelled: ccsim's
//!   receiver ACKs every second segment without a receive-window test anyway.
//! - `sk_max_pacing_rate` is unlimited; `bbr_sndbuf_expand` and `get_info` have no
//!   counterpart (the state is in [`CongestionControl::diagnostics`], the `cc_vars` trace).
//! - `get_random_u32_below(n)` draws from the flow's stream of the scenario seed.
//! - Bit-field widths are kept where they bound a counter (`full_bw_cnt` 2 bits,
//!   `startup_ecn_rounds` 2, `loss_events_in_round` 4, `rounds_since_probe` 8,
//!   `bw_probe_up_rounds` 5); arithmetic that could overflow Linux's u32/u64 at extreme
//!   rates is done in 128 bits or saturates.
//!
//! Parameters: every tunable of the source, with its default, is listed once in
//! [`TABLE`] (name, default, range, help), read through [`params::set`] into [`Bbr3Config`].

pub use super::bbr_common::Mode;
use super::bbr_common::{
    delivered_mstamp_us, jiffies, now_us, ACK_EPOCH_ACKED_RESET_THRESH, BBR_SCALE, BBR_UNIT,
    BW_SCALE, BW_UNIT, GSO_MAX_SIZE, MAX_TCP_HEADER, PACING_SHIFT,
};
use super::{
    CaEvent, CaState, CcState, CongestionControl, LostSkb, RateSample, ReductionCause,
    INFINITE_SSTHRESH,
};
use crate::engine::rng::{stream, SimRng, StreamKind};
use crate::net::packet::Ecn;
use crate::params::{self, Algorithm, Family, Kind, Param, Settable};
use crate::scenario::{ParamValue, ScenarioError};

/// "No bound yet" (Linux `~0U`).
const UNSET: u32 = u32::MAX;
/// Linux `sysctl_tcp_min_tso_segs`.
const MIN_TSO_SEGS: u32 = 2;

/// The PROBE_BW phases (Linux `enum bbr_pacing_gain_phase`, the `cycle_idx` values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Up = 0,
    Down = 1,
    Cruise = 2,
    Refill = 3,
}

/// How the incoming ACKs relate to bandwidth probing (Linux `enum bbr_ack_phase`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckPhase {
    Init = 0,
    Refilling = 1,
    ProbeStarting = 2,
    ProbeFeedback = 3,
    ProbeStopping = 4,
}

// ----- parameters ---------------------------------------------------------------------

/// BBRv3's configuration: the values of its [`TABLE`] in Linux's units (gains in 1/256,
/// times in µs or ms as the source), kept apart from the per-flow state (as quinn's
/// `congestion/cubic.rs` does).
#[derive(Debug, Clone, PartialEq)]
pub struct Bbr3Config {
    pub min_rtt_win_ms: u64,
    pub probe_rtt_mode_ms: u64,
    pub probe_rtt_win_ms: u64,
    pub probe_rtt_cwnd_gain: u32,
    pub tso_rtt_shift: u32,
    pub pacing_margin_percent: u32,
    pub startup_pacing_gain: u32,
    pub startup_cwnd_gain: u32,
    pub drain_gain: u32,
    pub cwnd_gain: u32,
    /// Linux `bbr_pacing_gain[]`, indexed by [`Phase`].
    pub pacing_gain: [u32; 4],
    pub cwnd_min_target: u32,
    pub full_bw_thresh: u32,
    pub full_bw_cnt: u32,
    pub extra_acked_gain: u32,
    pub extra_acked_win_rtts: u32,
    pub extra_acked_max_us: u64,
    pub precise_ece_ack: bool,
    pub ecn_max_rtt_us: u64,
    pub beta: u32,
    pub ecn_alpha_gain: u32,
    pub ecn_alpha_init: u32,
    pub ecn_factor: u32,
    pub ecn_thresh: u32,
    pub ecn_reprobe_gain: u32,
    pub loss_thresh: u32,
    pub loss_probe_recovery: bool,
    pub full_loss_cnt: u32,
    pub full_ecn_cnt: u32,
    pub inflight_headroom: u32,
    pub bw_probe_cwnd_gain: u32,
    pub bw_probe_max_rounds: u32,
    pub bw_probe_rand_rounds: u32,
    pub bw_probe_base_us: u64,
    pub bw_probe_rand_us: u64,
    pub ecn_low: bool,
    pub ect1: bool,
}

impl Default for Bbr3Config {
    /// The source's constants, written as it writes them.
    fn default() -> Self {
        Bbr3Config {
            min_rtt_win_ms: 10 * 1000,
            probe_rtt_mode_ms: 200,
            probe_rtt_win_ms: 5000,
            probe_rtt_cwnd_gain: BBR_UNIT / 2,
            tso_rtt_shift: 9,
            pacing_margin_percent: 1,
            startup_pacing_gain: BBR_UNIT * 277 / 100 + 1,
            startup_cwnd_gain: BBR_UNIT * 2,
            drain_gain: BBR_UNIT * 1000 / 2885,
            cwnd_gain: BBR_UNIT * 2,
            pacing_gain: [BBR_UNIT * 5 / 4, BBR_UNIT * 91 / 100, BBR_UNIT, BBR_UNIT],
            cwnd_min_target: 4,
            full_bw_thresh: BBR_UNIT * 5 / 4,
            full_bw_cnt: 3,
            extra_acked_gain: BBR_UNIT,
            extra_acked_win_rtts: 5,
            extra_acked_max_us: 100 * 1000,
            precise_ece_ack: true,
            ecn_max_rtt_us: 5000,
            beta: BBR_UNIT * 30 / 100,
            ecn_alpha_gain: BBR_UNIT / 16,
            ecn_alpha_init: BBR_UNIT,
            ecn_factor: BBR_UNIT / 3,
            ecn_thresh: BBR_UNIT / 2,
            ecn_reprobe_gain: BBR_UNIT / 2,
            loss_thresh: BBR_UNIT * 2 / 100,
            loss_probe_recovery: true,
            full_loss_cnt: 6,
            full_ecn_cnt: 2,
            inflight_headroom: BBR_UNIT * 15 / 100,
            bw_probe_cwnd_gain: 1,
            bw_probe_max_rounds: 63,
            bw_probe_rand_rounds: 2,
            bw_probe_base_us: 2_000_000,
            bw_probe_rand_us: 1_000_000,
            ecn_low: true,
            ect1: false,
        }
    }
}

/// The longest duration a parameter takes, in µs.
const HOUR_US: u64 = 3_600_000_000;

/// bbr3's parameters: every tunable of `tcp_bbr.c` (v3) with the source's default, plus
/// ccsim's two ECN switches (`ecn_low`, `ect1`). Gains are truncated to 1/256 as Linux's
/// `BBR_UNIT * a / b` constants are (so `beta = 0.3` is 76/256, Linux's value); durations
/// are kept in the source's units (ms or µs) and must be whole ones.
pub const TABLE: Algorithm<Settable<Bbr3>> = Algorithm {
    name: "bbr3",
    aliases: &[],
    family: Family::CongestionControl,
    summary: "BBRv3: BBR with loss and ECN bounds (inflight_hi/lo, bw_lo) and the DOWN/CRUISE/REFILL/UP probing cycle",
    reference: "Linux net/ipv4/tcp_bbr.c (v3, google/bbr v3 branch); IETF draft-ietf-ccwg-bbr",
    params: &[
        Settable {
            param: Param {
                name: "min_rtt_win",
                kind: Kind::Duration { what: Some("a duration like \"10s\" (whole ms)"), ok: |ns| ns.is_multiple_of(1000) && (1_000..=HOUR_US).contains(&(ns / 1000)) && (ns / 1000).is_multiple_of(1_000) },
                default: "\"10s\"",
                help: "window of the min_rtt filter (bbr_min_rtt_win_sec)",
            },
            set: |c, v| c.cfg.min_rtt_win_ms = v.ns() / 1_000_000,
        },
        Settable {
            param: Param {
                name: "probe_rtt_mode",
                kind: Kind::Duration { what: Some("a duration like \"200ms\" (whole ms)"), ok: |ns| ns.is_multiple_of(1000) && (0..=HOUR_US).contains(&(ns / 1000)) && (ns / 1000).is_multiple_of(1_000) },
                default: "\"200ms\"",
                help: "least time at the PROBE_RTT cwnd; 0 turns PROBE_RTT off (bbr_probe_rtt_mode_ms)",
            },
            set: |c, v| c.cfg.probe_rtt_mode_ms = v.ns() / 1_000_000,
        },
        Settable {
            param: Param {
                name: "probe_rtt_win",
                kind: Kind::Duration { what: Some("a duration like \"5s\" (whole ms)"), ok: |ns| ns.is_multiple_of(1000) && (1_000..=HOUR_US).contains(&(ns / 1000)) && (ns / 1000).is_multiple_of(1_000) },
                default: "\"5s\"",
                help: "window of the probe_rtt_min_us filter, the usual interval between PROBE_RTTs (bbr_probe_rtt_win_ms)",
            },
            set: |c, v| c.cfg.probe_rtt_win_ms = v.ns() / 1_000_000,
        },
        Settable {
            param: Param {
                name: "probe_rtt_cwnd_gain",
                kind: Kind::Number { what: "a number in [0, 4]", ok: |x| (0.0..=4.0).contains(&x) },
                default: "0.5 (128/256)",
                help: "cwnd in PROBE_RTT as a fraction of the BDP (bbr_probe_rtt_cwnd_gain)",
            },
            set: |c, v| c.cfg.probe_rtt_cwnd_gain = scaled_units(v.number()),
        },
        Settable {
            param: Param {
                name: "tso_rtt_shift",
                kind: Kind::Integer { lo: 0, hi: 31 },
                default: "9",
                help: "halve the min-RTT-based TSO allowance per 2^shift µs of min RTT; 0 = no allowance (bbr_tso_rtt_shift)",
            },
            set: |c, v| c.cfg.tso_rtt_shift = v.int() as u32,
        },
        Settable {
            param: Param {
                name: "pacing_margin_percent",
                kind: Kind::Integer { lo: 0, hi: 99 },
                default: "1",
                help: "pace this far below the estimated bandwidth (bbr_pacing_margin_percent)",
            },
            set: |c, v| c.cfg.pacing_margin_percent = v.int() as u32,
        },
        Settable {
            param: Param {
                name: "startup_pacing_gain",
                kind: Kind::Number { what: "a number in [1, 16]", ok: |x| (1.0..=16.0).contains(&x) },
                default: "2.77 (710/256)",
                help: "pacing gain in STARTUP, 4 ln 2 (bbr_startup_pacing_gain)",
            },
            set: |c, v| c.cfg.startup_pacing_gain = scaled_units(v.number()),
        },
        Settable {
            param: Param {
                name: "startup_cwnd_gain",
                kind: Kind::Number { what: "a number in [1, 16]", ok: |x| (1.0..=16.0).contains(&x) },
                default: "2 (512/256)",
                help: "cwnd gain in STARTUP and DRAIN (bbr_startup_cwnd_gain)",
            },
            set: |c, v| c.cfg.startup_cwnd_gain = scaled_units(v.number()),
        },
        Settable {
            param: Param {
                name: "drain_gain",
                kind: Kind::Number { what: "a number in [0.01, 1]", ok: |x| (0.01..=1.0).contains(&x) },
                default: "0.347 (88/256)",
                help: "pacing gain in DRAIN (bbr_drain_gain)",
            },
            set: |c, v| c.cfg.drain_gain = scaled_units(v.number()).max(1),
        },
        Settable {
            param: Param {
                name: "cwnd_gain",
                kind: Kind::Number { what: "a number in [1, 16]", ok: |x| (1.0..=16.0).contains(&x) },
                default: "2 (512/256)",
                help: "cwnd gain in PROBE_BW (bbr_cwnd_gain)",
            },
            set: |c, v| c.cfg.cwnd_gain = scaled_units(v.number()),
        },
        Settable {
            param: Param {
                name: "probe_up_pacing_gain",
                kind: Kind::Number { what: "a number in [1, 16]", ok: |x| (1.0..=16.0).contains(&x) },
                default: "1.25 (320/256)",
                help: "pacing gain of PROBE_BW's UP phase (bbr_pacing_gain[BBR_BW_PROBE_UP])",
            },
            set: |c, v| c.cfg.pacing_gain[Phase::Up as usize] = scaled_units(v.number()),
        },
        Settable {
            param: Param {
                name: "probe_down_pacing_gain",
                kind: Kind::Number { what: "a number in [0.01, 1]", ok: |x| (0.01..=1.0).contains(&x) },
                default: "0.91 (232/256)",
                help: "pacing gain of PROBE_BW's DOWN phase (bbr_pacing_gain[BBR_BW_PROBE_DOWN])",
            },
            set: |c, v| c.cfg.pacing_gain[Phase::Down as usize] = scaled_units(v.number()).max(1),
        },
        Settable {
            param: Param {
                name: "cwnd_min_target",
                kind: Kind::Integer { lo: 1, hi: 1000 },
                default: "4",
                help: "least cwnd (bbr_cwnd_min_target)",
            },
            set: |c, v| c.cfg.cwnd_min_target = v.int() as u32,
        },
        Settable {
            param: Param {
                name: "full_bw_thresh",
                kind: Kind::Number { what: "a number in [1, 16]", ok: |x| (1.0..=16.0).contains(&x) },
                default: "1.25 (320/256)",
                help: "bandwidth growth that means the pipe may not be full (bbr_full_bw_thresh)",
            },
            set: |c, v| c.cfg.full_bw_thresh = scaled_units(v.number()),
        },
        Settable {
            param: Param {
                name: "full_bw_cnt",
                kind: Kind::Integer { lo: 1, hi: 3 },
                default: "3",
                help: "rounds without that growth that mean it is (bbr_full_bw_cnt; a 2-bit field)",
            },
            set: |c, v| c.cfg.full_bw_cnt = v.int() as u32,
        },
        Settable {
            param: Param {
                name: "extra_acked_gain",
                kind: Kind::Number { what: "a number in [0, 16]", ok: |x| (0.0..=16.0).contains(&x) },
                default: "1 (256/256)",
                help: "gain on the ACK-aggregation estimate added to cwnd (bbr_extra_acked_gain)",
            },
            set: |c, v| c.cfg.extra_acked_gain = scaled_units(v.number()),
        },
        Settable {
            param: Param {
                name: "extra_acked_win_rtts",
                kind: Kind::Integer { lo: 1, hi: 31 },
                default: "5",
                help: "window of the extra_acked filter (bbr_extra_acked_win_rtts)",
            },
            set: |c, v| c.cfg.extra_acked_win_rtts = v.int() as u32,
        },
        Settable {
            param: Param {
                name: "extra_acked_max",
                kind: Kind::Duration { what: Some("a duration like \"100ms\" (whole µs)"), ok: |ns| ns.is_multiple_of(1000) && (0..=HOUR_US).contains(&(ns / 1000)) },
                default: "\"100ms\"",
                help: "cap of the aggregation cwnd, as time at the estimated bandwidth (bbr_extra_acked_max_us)",
            },
            set: |c, v| c.cfg.extra_acked_max_us = v.ns() / 1000,
        },
        Settable {
            param: Param {
                name: "precise_ece_ack",
                kind: Kind::Bool,
                default: "true",
                help: "receiver echoes CE precisely, DCTCP's way (bbr_precise_ece_ack)",
            },
            set: |c, v| c.cfg.precise_ece_ack = v.boolean(),
        },
        Settable {
            param: Param {
                name: "ecn_max_rtt",
                kind: Kind::Duration { what: Some("a duration like \"5ms\" (whole µs)"), ok: |ns| ns.is_multiple_of(1000) && (0..=HOUR_US).contains(&(ns / 1000)) },
                default: "\"5ms\"",
                help: "use the ECN logic only when min RTT is at most this; 0 = at any RTT (bbr_ecn_max_rtt_us)",
            },
            set: |c, v| c.cfg.ecn_max_rtt_us = v.ns() / 1000,
        },
        Settable {
            param: Param {
                name: "beta",
                kind: Kind::Number { what: "a number in [0, 1]", ok: |x| (0.0..=1.0).contains(&x) },
                default: "0.3 (76/256)",
                help: "multiplicative cut of bw_lo and inflight_lo per round with loss; 0 = no loss response (bbr_beta)",
            },
            set: |c, v| c.cfg.beta = scaled_units(v.number()),
        },
        Settable {
            param: Param {
                name: "ecn_alpha_gain",
                kind: Kind::Number { what: "a number in [0, 1]", ok: |x| (0.0..=1.0).contains(&x) },
                default: "1/16 (16/256)",
                help: "EWMA gain of ecn_alpha (bbr_ecn_alpha_gain)",
            },
            set: |c, v| c.cfg.ecn_alpha_gain = scaled_units(v.number()),
        },
        Settable {
            param: Param {
                name: "ecn_alpha_init",
                kind: Kind::Number { what: "a number in [0, 1]", ok: |x| (0.0..=1.0).contains(&x) },
                default: "1 (256/256)",
                help: "initial ecn_alpha (bbr_ecn_alpha_init)",
            },
            set: |c, v| c.cfg.ecn_alpha_init = scaled_units(v.number()),
        },
        Settable {
            param: Param {
                name: "ecn_factor",
                kind: Kind::Number { what: "a number in [0, 1]", ok: |x| (0.0..=1.0).contains(&x) },
                default: "1/3 (85/256)",
                help: "on CE, inflight_lo *= 1 - ecn_factor x ecn_alpha; 0 = no ECN response (bbr_ecn_factor)",
            },
            set: |c, v| c.cfg.ecn_factor = scaled_units(v.number()),
        },
        Settable {
            param: Param {
                name: "ecn_thresh",
                kind: Kind::Number { what: "a number in [0, 1]", ok: |x| (0.0..=1.0).contains(&x) },
                default: "0.5 (128/256)",
                help: "CE fraction that means probing went too far; 0 = off (bbr_ecn_thresh)",
            },
            set: |c, v| c.cfg.ecn_thresh = scaled_units(v.number()),
        },
        Settable {
            param: Param {
                name: "ecn_reprobe_gain",
                kind: Kind::Number { what: "a number in [0, 4]", ok: |x| (0.0..=4.0).contains(&x) },
                default: "0.5 (128/256)",
                help: "after a cycle with CE but no loss, probe again at once with this first increment; 0 = off (bbr_ecn_reprobe_gain)",
            },
            set: |c, v| c.cfg.ecn_reprobe_gain = scaled_units(v.number()),
        },
        Settable {
            param: Param {
                name: "loss_thresh",
                kind: Kind::Number { what: "a number in [0, 0.99]", ok: |x| (0.0..=0.99).contains(&x) },
                default: "0.02 (5/256)",
                help: "loss rate that means probing went too far (bbr_loss_thresh)",
            },
            set: |c, v| c.cfg.loss_thresh = scaled_units(v.number()),
        },
        Settable {
            param: Param {
                name: "loss_probe_recovery",
                kind: Kind::Bool,
                default: "true",
                help: "slow down for a loss repaired by a TLP (bbr_loss_probe_recovery; no TLP in ccsim)",
            },
            set: |c, v| c.cfg.loss_probe_recovery = v.boolean(),
        },
        Settable {
            param: Param {
                name: "full_loss_cnt",
                kind: Kind::Integer { lo: 0, hi: 15 },
                default: "6",
                help: "leave STARTUP after this many losses in a Recovery round above loss_thresh; 0 = off (bbr_full_loss_cnt)",
            },
            set: |c, v| c.cfg.full_loss_cnt = v.int() as u32,
        },
        Settable {
            param: Param {
                name: "full_ecn_cnt",
                kind: Kind::Integer { lo: 0, hi: 3 },
                default: "2",
                help: "leave STARTUP after this many rounds with CE above ecn_thresh; 0 = off (bbr_full_ecn_cnt)",
            },
            set: |c, v| c.cfg.full_ecn_cnt = v.int() as u32,
        },
        Settable {
            param: Param {
                name: "inflight_headroom",
                kind: Kind::Number { what: "a number in [0, 1]", ok: |x| (0.0..=1.0).contains(&x) },
                default: "0.15 (38/256)",
                help: "headroom left below inflight_hi after high loss/CE (bbr_inflight_headroom)",
            },
            set: |c, v| c.cfg.inflight_headroom = scaled_units(v.number()),
        },
        Settable {
            param: Param {
                name: "bw_probe_cwnd_gain",
                kind: Kind::Integer { lo: 0, hi: 3 },
                default: "1",
                help: "cwnd gain added in PROBE_UP, in quarters (bbr_bw_probe_cwnd_gain)",
            },
            set: |c, v| c.cfg.bw_probe_cwnd_gain = v.int() as u32,
        },
        Settable {
            param: Param {
                name: "bw_probe_max_rounds",
                kind: Kind::Integer { lo: 0, hi: 255 },
                default: "63",
                help: "most packet-timed rounds between bandwidth probes (Reno coexistence) (bbr_bw_probe_max_rounds)",
            },
            set: |c, v| c.cfg.bw_probe_max_rounds = v.int() as u32,
        },
        Settable {
            param: Param {
                name: "bw_probe_rand_rounds",
                kind: Kind::Integer { lo: 1, hi: 255 },
                default: "2",
                help: "rounds_since_probe starts at a random 0..n-1 (bbr_bw_probe_rand_rounds)",
            },
            set: |c, v| c.cfg.bw_probe_rand_rounds = v.int() as u32,
        },
        Settable {
            param: Param {
                name: "bw_probe_base",
                kind: Kind::Duration { what: Some("a duration like \"2s\" (whole µs)"), ok: |ns| ns.is_multiple_of(1000) && (0..=HOUR_US).contains(&(ns / 1000)) },
                default: "\"2s\"",
                help: "least wall-clock time between bandwidth probes (bbr_bw_probe_base_us)",
            },
            set: |c, v| c.cfg.bw_probe_base_us = v.ns() / 1000,
        },
        Settable {
            param: Param {
                name: "bw_probe_rand",
                kind: Kind::Duration { what: Some("a duration like \"1s\" (whole µs)"), ok: |ns| ns.is_multiple_of(1000) && (1..=HOUR_US).contains(&(ns / 1000)) },
                default: "\"1s\"",
                help: "plus a random 0..this (bbr_bw_probe_rand_us)",
            },
            set: |c, v| c.cfg.bw_probe_rand_us = v.ns() / 1000,
        },
        Settable {
            param: Param {
                name: "ecn_low",
                kind: Kind::Bool,
                default: "true",
                help: "ccsim: the route is a shallow-threshold ECN one (Linux RTAX_FEATURE_ECN_LOW, TCP_ECN_LOW); with ecn = true the ECN logic is used",
            },
            set: |c, v| c.cfg.ecn_low = v.boolean(),
        },
        Settable {
            param: Param {
                name: "ect1",
                kind: Kind::Bool,
                default: "false",
                help: "ccsim: send ECT(1) instead of the source's ECT(0) (for an L4S queue)",
            },
            set: |c, v| c.cfg.ect1 = v.boolean(),
        },
    ],
};

/// A gain written as a plain number, in 1/256 (Linux `BBR_UNIT`), truncated as Linux's
/// integer `BBR_UNIT * a / b` constants are.
fn scaled_units(x: f64) -> u32 {
    ((x * f64::from(BBR_UNIT) + 1e-9).floor() as u64).min(u64::from(u32::MAX)) as u32
}

// ----- state --------------------------------------------------------------------------

/// BBRv3 state (Linux `struct bbr`, v3) and its tunables.
#[derive(Debug, Clone)]
pub struct Bbr3 {
    /// The parameters ([`TABLE`]).
    pub cfg: Bbr3Config,
    min_rtt_us: u32,
    min_rtt_stamp: u64,
    probe_rtt_done_stamp: u64,
    probe_rtt_min_us: u32,
    probe_rtt_min_stamp: u64,
    next_rtt_delivered: u64,
    cycle_mstamp: u64,
    mode: Mode,
    prev_ca_state: CaState,
    round_start: bool,
    bw_probe_up_rounds: u32,
    idle_restart: bool,
    probe_rtt_round_done: bool,
    init_cwnd: u32,
    pacing_gain: u32,
    cwnd_gain: u32,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    cycle_idx: Phase,
    has_seen_rtt: bool,
    prior_cwnd: u32,
    full_bw: u32,
    ack_epoch_mstamp: u64,
    extra_acked: [u32; 2],
    ack_epoch_acked: u32,
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    full_bw_now: bool,
    startup_ecn_rounds: u32,
    loss_in_cycle: bool,
    ecn_in_cycle: bool,
    loss_round_delivered: u64,
    undo_bw_lo: u32,
    undo_inflight_lo: u32,
    undo_inflight_hi: u32,
    bw_latest: u32,
    bw_lo: u32,
    bw_hi: [u32; 2],
    inflight_latest: u32,
    inflight_lo: u32,
    inflight_hi: u32,
    bw_probe_up_cnt: u32,
    bw_probe_up_acks: u32,
    probe_wait_us: u64,
    ecn_eligible: bool,
    ecn_alpha: u32,
    bw_probe_samples: bool,
    prev_probe_too_high: bool,
    stopped_risky_probe: bool,
    rounds_since_probe: u32,
    loss_round_start: bool,
    loss_in_round: bool,
    ecn_in_round: bool,
    ack_phase: AckPhase,
    loss_events_in_round: u32,
    initialized: bool,
    alpha_last_delivered: u64,
    alpha_last_delivered_ce: u64,
    /// Linux `struct bbr_context`: this ACK's bandwidth sample.
    ctx_sample_bw: u32,
    rng: SimRng,
}

impl Bbr3 {
    /// BBRv3 with the source's constants and a random stream seeded with `seed` (the
    /// simulator replaces it with the flow's own through [`Bbr3::seed_rng`]).
    pub fn new(seed: u64) -> Self {
        Bbr3 {
            cfg: Bbr3Config::default(),
            min_rtt_us: UNSET,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: 0,
            probe_rtt_min_us: UNSET,
            probe_rtt_min_stamp: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            mode: Mode::Startup,
            prev_ca_state: CaState::Open,
            round_start: false,
            bw_probe_up_rounds: 0,
            idle_restart: false,
            probe_rtt_round_done: false,
            init_cwnd: 10,
            pacing_gain: BBR_UNIT,
            cwnd_gain: BBR_UNIT,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: Phase::Up,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_epoch_mstamp: 0,
            extra_acked: [0; 2],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            full_bw_now: false,
            startup_ecn_rounds: 0,
            loss_in_cycle: false,
            ecn_in_cycle: false,
            loss_round_delivered: 0,
            undo_bw_lo: 0,
            undo_inflight_lo: 0,
            undo_inflight_hi: 0,
            bw_latest: 0,
            bw_lo: UNSET,
            bw_hi: [0; 2],
            inflight_latest: 0,
            inflight_lo: UNSET,
            inflight_hi: UNSET,
            bw_probe_up_cnt: UNSET,
            bw_probe_up_acks: 0,
            probe_wait_us: 0,
            ecn_eligible: false,
            ecn_alpha: BBR_UNIT,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            rounds_since_probe: 0,
            loss_round_start: false,
            loss_in_round: false,
            ecn_in_round: false,
            ack_phase: AckPhase::Init,
            loss_events_in_round: 0,
            initialized: false,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
            ctx_sample_bw: 0,
            rng: stream(seed, StreamKind::Cc, 0),
        }
    }

    /// Replace the random stream (one per flow, from the scenario seed).
    pub fn seed_rng(&mut self, rng: SimRng) {
        self.rng = rng;
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }
    pub fn cycle_idx(&self) -> Phase {
        self.cycle_idx
    }
    pub fn ack_phase(&self) -> AckPhase {
        self.ack_phase
    }
    pub fn inflight_hi(&self) -> u32 {
        self.inflight_hi
    }
    pub fn inflight_lo(&self) -> u32 {
        self.inflight_lo
    }
    pub fn bw_lo(&self) -> u32 {
        self.bw_lo
    }
    pub fn ecn_alpha(&self) -> u32 {
        self.ecn_alpha
    }
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    pub fn pacing_gain(&self) -> u32 {
        self.pacing_gain
    }
    pub fn probe_wait_us(&self) -> u64 {
        self.probe_wait_us
    }
    pub fn rounds_since_probe(&self) -> u32 {
        self.rounds_since_probe
    }

    // ----- conversions --------------------------------------------------------------

    // (`now_us`, `jiffies`, `delivered_mstamp_us`: [`super::bbr_common`].)
    /// `get_random_u32_below(n)`.
    fn random_below(&mut self, n: u64) -> u64 {
        ((self.rng.uniform() * n as f64) as u64).min(n.saturating_sub(1))
    }

    // ----- the port, in the source's order ------------------------------------------

    /// `bbr_can_use_ecn()`: ECN negotiated on a shallow-threshold ECN route.
    fn can_use_ecn(&self, tp: &CcState) -> bool {
        tp.ecn_ok && self.cfg.ecn_low
    }

    /// `bbr_max_bw()`.
    pub fn max_bw(&self) -> u32 {
        self.bw_hi[0].max(self.bw_hi[1])
    }

    /// `bbr_bw()`: the estimate in use, `min(max_bw, bw_lo)`.
    pub fn bw(&self) -> u32 {
        self.max_bw().min(self.bw_lo)
    }

    /// `bbr_extra_acked()`.
    fn extra_acked(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// `bbr_rate_bytes_per_sec()`, in 128 bits.
    fn rate_bytes_per_sec(tp: &CcState, rate: u64, gain: u32, margin: u32) -> u64 {
        let mut rate = u128::from(rate) * u128::from(tp.mss);
        rate *= u128::from(gain);
        rate >>= BBR_SCALE;
        rate *= u128::from(1_000_000 / 100 * (100 - u64::from(margin)));
        rate >>= BW_SCALE;
        rate.clamp(1, u128::from(u64::MAX)) as u64
    }

    /// `bbr_bw_to_pacing_rate()` (no `sk_max_pacing_rate` cap).
    fn bw_to_pacing_rate(&self, tp: &CcState, bw: u32, gain: u32) -> u64 {
        Self::rate_bytes_per_sec(tp, u64::from(bw), gain, self.cfg.pacing_margin_percent)
    }

    /// `bbr_init_pacing_rate_from_rtt()`.
    fn init_pacing_rate_from_rtt(&mut self, tp: &mut CcState) {
        let rtt_us = if tp.srtt_ns > 0 {
            self.has_seen_rtt = true;
            (tp.srtt_ns / 1000).max(1)
        } else {
            1000
        };
        let bw = (u64::from(tp.cwnd) * BW_UNIT / rtt_us).min(u64::from(u32::MAX)) as u32;
        tp.pacing_rate = self.bw_to_pacing_rate(tp, bw, self.cfg.startup_pacing_gain);
    }

    /// `bbr_set_pacing_rate()`.
    fn set_pacing_rate(&mut self, tp: &mut CcState, bw: u32, gain: u32) {
        let rate = self.bw_to_pacing_rate(tp, bw, gain);
        if !self.has_seen_rtt && tp.srtt_ns > 0 {
            self.init_pacing_rate_from_rtt(tp);
        }
        if self.full_bw_reached || rate > tp.pacing_rate {
            tp.pacing_rate = rate;
        }
    }

    /// `bbr_tso_segs_generic()` with `GSO_LEGACY_MAX_SIZE` (= [`GSO_MAX_SIZE`]; `bbr_tso_segs_goal()`).
    fn tso_segs_goal(&self, tp: &CcState) -> u32 {
        let mut bytes = tp.pacing_rate >> PACING_SHIFT;
        if self.cfg.tso_rtt_shift > 0 {
            let r = self.min_rtt_us >> self.cfg.tso_rtt_shift;
            if r < 32 {
                bytes += GSO_MAX_SIZE >> r;
            }
        }
        let bytes = bytes.min(GSO_MAX_SIZE - 1 - MAX_TCP_HEADER);
        ((bytes / u64::from(tp.mss.max(1))) as u32).max(MIN_TSO_SEGS)
    }

    /// `bbr_save_cwnd()`.
    fn save_cwnd(&mut self, tp: &CcState) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = tp.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(tp.cwnd);
        }
    }

    /// `bbr_bdp()`: ceil(bw x min_rtt x gain), or the initial cwnd before any RTT.
    fn bdp(&self, bw: u32, gain: u32) -> u32 {
        if self.min_rtt_us == UNSET {
            return self.init_cwnd;
        }
        let w = u128::from(bw) * u128::from(self.min_rtt_us);
        let bdp = ((w * u128::from(gain)) >> BBR_SCALE).div_ceil(u128::from(BW_UNIT));
        bdp.min(u128::from(u32::MAX >> 2)) as u32
    }

    /// `bbr_quantization_budget()`.
    fn quantization_budget(&self, tp: &CcState, cwnd: u32) -> u32 {
        let tso_segs_goal = 3 * self.tso_segs_goal(tp);
        let mut cwnd = cwnd.max(tso_segs_goal).max(self.cfg.cwnd_min_target);
        if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight()`.
    fn inflight(&self, tp: &CcState, bw: u32, gain: u32) -> u32 {
        let inflight = self.bdp(bw, gain);
        self.quantization_budget(tp, inflight)
    }

    /// `bbr_packets_in_net_at_edt()`.
    fn packets_in_net_at_edt(&self, tp: &CcState, inflight_now: u32) -> u32 {
        let now_ns = tp.now_ns;
        let edt_ns = tp.wstamp_ns.max(now_ns);
        let interval_us = (edt_ns - now_ns) / 1000;
        let interval_delivered = (u64::from(self.bw()) * interval_us) >> BW_SCALE;
        let mut inflight_at_edt = u64::from(inflight_now);
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt += u64::from(self.tso_segs_goal(tp));
        }
        if interval_delivered >= inflight_at_edt {
            return 0;
        }
        (inflight_at_edt - interval_delivered) as u32
    }

    /// `bbr_ack_aggregation_cwnd()`.
    fn ack_aggregation_cwnd(&self) -> u32 {
        let gain = self.cfg.extra_acked_gain;
        if gain == 0 {
            return 0;
        }
        let max_aggr_cwnd = u64::from(self.bw()) * self.cfg.extra_acked_max_us / BW_UNIT;
        let aggr_cwnd = (u64::from(gain) * u64::from(self.extra_acked())) >> BBR_SCALE;
        aggr_cwnd.min(max_aggr_cwnd) as u32
    }

    /// `bbr_probe_rtt_cwnd()`.
    fn probe_rtt_cwnd(&self) -> u32 {
        self.cfg
            .cwnd_min_target
            .max(self.bdp(self.bw(), self.cfg.probe_rtt_cwnd_gain))
    }

    /// `bbr_set_cwnd()`: slow-start up toward the target, or snap down to it.
    fn set_cwnd(&mut self, tp: &mut CcState, acked: u32, bw: u32, gain: u32) {
        let mut cwnd = tp.cwnd;
        if acked > 0 {
            let mut target_cwnd = self.bdp(bw, gain);
            target_cwnd += self.ack_aggregation_cwnd();
            target_cwnd = self.quantization_budget(tp, target_cwnd);
            if self.full_bw_reached {
                cwnd += acked;
                if cwnd >= target_cwnd {
                    cwnd = target_cwnd;
                }
            } else if cwnd < target_cwnd || cwnd < 2 * self.init_cwnd {
                cwnd += acked;
            }
            cwnd = cwnd.max(self.cfg.cwnd_min_target);
        }
        tp.cwnd = cwnd.min(tp.cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            tp.cwnd = tp.cwnd.min(self.probe_rtt_cwnd());
        }
    }

    /// `bbr_update_round_start()`.
    fn update_round_start(&mut self, tp: &CcState, rs: &RateSample) {
        self.round_start = false;
        if rs.interval_ns / 1000 > 0 && rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = tp.delivered;
            self.round_start = true;
        }
    }

    /// `bbr_calculate_bw_sample()`: delivered / interval, rounded up.
    fn calculate_bw_sample(&mut self, rs: &RateSample) {
        let mut bw = 0u64;
        let interval_us = rs.interval_ns / 1000;
        if interval_us > 0 {
            if rs.delivered < 0 {
                return;
            }
            bw = (rs.delivered as u64 * BW_UNIT).div_ceil(interval_us as u64);
        }
        self.ctx_sample_bw = bw.min(u64::from(u32::MAX - 1)) as u32;
    }

    /// `bbr_update_ack_aggregation()`.
    fn update_ack_aggregation(&mut self, tp: &CcState, rs: &RateSample) {
        let mut win_rtts_thresh = self.cfg.extra_acked_win_rtts;
        if self.cfg.extra_acked_gain == 0
            || rs.acked_sacked == 0
            || rs.delivered < 0
            || rs.interval_ns / 1000 <= 0
        {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if !self.full_bw_reached {
                win_rtts_thresh = 1;
            }
            if self.extra_acked_win_rtts >= win_rtts_thresh {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = delivered_mstamp_us(tp).saturating_sub(self.ack_epoch_mstamp);
        let mut expected_acked =
            (u64::from(self.bw()) * epoch_us / BW_UNIT).min(u64::from(u32::MAX)) as u32;
        if self.ack_epoch_acked <= expected_acked
            || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = delivered_mstamp_us(tp);
            expected_acked = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xfffff);
        let extra = (self.ack_epoch_acked - expected_acked).min(tp.cwnd);
        if extra > self.extra_acked[self.extra_acked_win_idx] {
            self.extra_acked[self.extra_acked_win_idx] = extra;
        }
    }

    /// `bbr_check_probe_rtt_done()`.
    fn check_probe_rtt_done(&mut self, tp: &mut CcState) {
        if !(self.probe_rtt_done_stamp != 0 && jiffies(tp) > self.probe_rtt_done_stamp) {
            return;
        }
        self.probe_rtt_min_stamp = jiffies(tp); // schedule the next PROBE_RTT
        tp.cwnd = tp.cwnd.max(self.prior_cwnd);
        self.exit_probe_rtt(tp);
    }

    /// `bbr_update_min_rtt()`: the probe_rtt_min (5 s) and min_rtt (10 s) filters and
    /// PROBE_RTT.
    fn update_min_rtt(&mut self, tp: &mut CcState, rs: &RateSample) {
        let now_j = jiffies(tp);
        let probe_rtt_expired = now_j > self.probe_rtt_min_stamp + self.cfg.probe_rtt_win_ms;
        if rs.rtt_ns >= 0 {
            let rtt_us = (rs.rtt_ns / 1000) as u64;
            if rtt_us < u64::from(self.probe_rtt_min_us)
                || (probe_rtt_expired && !rs.is_ack_delayed)
            {
                self.probe_rtt_min_us = rtt_us.min(u64::from(u32::MAX)) as u32;
                self.probe_rtt_min_stamp = now_j;
            }
        }
        let min_rtt_expired = now_j > self.min_rtt_stamp + self.cfg.min_rtt_win_ms;
        if self.probe_rtt_min_us <= self.min_rtt_us || min_rtt_expired {
            self.min_rtt_us = self.probe_rtt_min_us;
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
        if self.cfg.probe_rtt_mode_ms > 0
            && probe_rtt_expired
            && !self.idle_restart
            && self.mode != Mode::ProbeRtt
        {
            self.mode = Mode::ProbeRtt; // dip, drain the queue
            self.save_cwnd(tp);
            self.probe_rtt_done_stamp = 0;
            self.ack_phase = AckPhase::ProbeStopping;
            self.next_rtt_delivered = tp.delivered;
        }
        if self.mode == Mode::ProbeRtt {
            // Ignore low-rate samples during this mode.
            tp.app_limited = (tp.delivered + u64::from(tp.in_flight)).max(1);
            // Hold the minimum in flight for max(200 ms, one round).
            if self.probe_rtt_done_stamp == 0 && tp.in_flight <= self.probe_rtt_cwnd() {
                self.probe_rtt_done_stamp = now_j + self.cfg.probe_rtt_mode_ms;
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = tp.delivered;
            } else if self.probe_rtt_done_stamp != 0 {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(tp);
                }
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// `bbr_update_gains()`.
    fn update_gains(&mut self) {
        let p = &self.cfg;
        match self.mode {
            Mode::Startup => {
                self.pacing_gain = p.startup_pacing_gain;
                self.cwnd_gain = p.startup_cwnd_gain;
            }
            Mode::Drain => {
                self.pacing_gain = p.drain_gain;
                self.cwnd_gain = p.startup_cwnd_gain;
            }
            Mode::ProbeBw => {
                self.pacing_gain = p.pacing_gain[self.cycle_idx as usize];
                self.cwnd_gain = p.cwnd_gain;
                if p.bw_probe_cwnd_gain > 0 && self.cycle_idx == Phase::Up {
                    self.cwnd_gain += BBR_UNIT * p.bw_probe_cwnd_gain / 4;
                }
            }
            Mode::ProbeRtt => {
                self.pacing_gain = BBR_UNIT;
                self.cwnd_gain = BBR_UNIT;
            }
        }
    }

    /// `bbr_take_max_bw_sample()`.
    fn take_max_bw_sample(&mut self, bw: u32) {
        self.bw_hi[1] = self.bw_hi[1].max(bw);
    }

    /// `bbr_advance_max_bw_filter()`: keep the max of the last 1-2 cycles.
    fn advance_max_bw_filter(&mut self) {
        if self.bw_hi[1] == 0 {
            return; // no samples in this window; remember the old one
        }
        self.bw_hi[0] = self.bw_hi[1];
        self.bw_hi[1] = 0;
    }

    /// `bbr_reset_full_bw()`.
    fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.full_bw_now = false;
    }

    /// `bbr_target_inflight()`: the BDP, unless congestion cut cwnd.
    fn target_inflight(&self, tp: &CcState) -> u32 {
        let bdp = self.inflight(tp, self.bw(), BBR_UNIT);
        bdp.min(tp.cwnd)
    }

    /// `bbr_is_probing_bandwidth()`.
    fn is_probing_bandwidth(&self) -> bool {
        self.mode == Mode::Startup
            || (self.mode == Mode::ProbeBw && matches!(self.cycle_idx, Phase::Refill | Phase::Up))
    }

    /// `bbr_has_elapsed_in_phase()`.
    fn has_elapsed_in_phase(&self, tp: &CcState, interval_us: u64) -> bool {
        now_us(tp) > self.cycle_mstamp + interval_us
    }

    /// `bbr_handle_queue_too_high_in_startup()`.
    fn handle_queue_too_high_in_startup(&mut self, tp: &CcState) {
        self.full_bw_reached = true;
        let bdp = self.inflight(tp, self.max_bw(), BBR_UNIT);
        self.inflight_hi = bdp.max(self.inflight_latest);
    }

    /// `bbr_check_ecn_too_high_in_startup()`.
    fn check_ecn_too_high_in_startup(&mut self, tp: &CcState, ce_ratio: u32) {
        let p = &self.cfg;
        if self.full_bw_reached || !self.ecn_eligible || p.full_ecn_cnt == 0 || p.ecn_thresh == 0 {
            return;
        }
        if ce_ratio >= p.ecn_thresh {
            self.startup_ecn_rounds = (self.startup_ecn_rounds + 1).min(3); // 2-bit field
        } else {
            self.startup_ecn_rounds = 0;
        }
        if self.startup_ecn_rounds >= p.full_ecn_cnt {
            self.handle_queue_too_high_in_startup(tp);
        }
    }

    /// `bbr_update_ecn_alpha()`: updates `ecn_alpha` and returns the round's CE ratio (in
    /// 1/256), or `None` when not available.
    fn update_ecn_alpha(&mut self, tp: &CcState) -> Option<u32> {
        let p = &self.cfg;
        if !self.ecn_eligible
            && self.can_use_ecn(tp)
            && p.ecn_factor > 0
            && (u64::from(self.min_rtt_us) <= p.ecn_max_rtt_us || p.ecn_max_rtt_us == 0)
        {
            self.ecn_eligible = true;
        }
        // PLB is not modelled: alpha only for ECN-eligible flows.
        if !self.ecn_eligible {
            return None;
        }
        let delivered = tp.delivered - self.alpha_last_delivered;
        let delivered_ce = tp.delivered_ce - self.alpha_last_delivered_ce;
        if delivered == 0 {
            return None;
        }
        let ce_ratio = ((delivered_ce << BBR_SCALE) / delivered) as u32;
        let gain = self.cfg.ecn_alpha_gain;
        let mut alpha = ((BBR_UNIT - gain) * self.ecn_alpha) >> BBR_SCALE;
        alpha += (gain * ce_ratio) >> BBR_SCALE;
        self.ecn_alpha = alpha.min(BBR_UNIT);
        self.alpha_last_delivered = tp.delivered;
        self.alpha_last_delivered_ce = tp.delivered_ce;
        self.check_ecn_too_high_in_startup(tp, ce_ratio);
        Some(ce_ratio)
    }

    /// `bbr_raise_inflight_hi_slope()`: each round of PROBE_UP doubles the growth.
    fn raise_inflight_hi_slope(&mut self, tp: &CcState) {
        let growth_this_round = 1u64 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        let cnt = (u64::from(tp.cwnd) / growth_this_round).max(1);
        self.bw_probe_up_cnt = cnt as u32;
    }

    /// `bbr_probe_inflight_hi_upward()`.
    fn probe_inflight_hi_upward(&mut self, tp: &CcState, rs: &RateSample) {
        if !tp.is_cwnd_limited || tp.cwnd < self.inflight_hi {
            return; // not fully using inflight_hi, so don't grow it
        }
        self.bw_probe_up_acks += rs.acked_sacked;
        if self.bw_probe_up_acks >= self.bw_probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.bw_probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.bw_probe_up_cnt;
            self.inflight_hi = self.inflight_hi.saturating_add(delta);
        }
        if self.round_start {
            self.raise_inflight_hi_slope(tp);
        }
    }

    /// `bbr_is_inflight_too_high()`: loss above `loss_thresh` of the packets in flight, or
    /// CE above `ecn_thresh` of those delivered.
    pub fn is_inflight_too_high(&self, rs: &RateSample) -> bool {
        if rs.lost > 0 && rs.tx_in_flight > 0 {
            let loss_thresh =
                (u64::from(rs.tx_in_flight) * u64::from(self.cfg.loss_thresh)) >> BBR_SCALE;
            if rs.lost as u64 > loss_thresh {
                return true;
            }
        }
        if rs.delivered_ce > 0 && rs.delivered > 0 && self.ecn_eligible && self.cfg.ecn_thresh > 0 {
            let ecn_thresh = (rs.delivered as u64 * u64::from(self.cfg.ecn_thresh)) >> BBR_SCALE;
            if rs.delivered_ce as u64 > ecn_thresh {
                return true;
            }
        }
        false
    }

    /// `bbr_inflight_hi_from_lost_skb()` for a one-packet skb: the in-flight level at
    /// which the loss rate crossed `loss_thresh`.
    fn inflight_hi_from_lost_skb(&self, rs: &RateSample) -> u32 {
        let pcount = 1i64;
        let loss_thresh = u64::from(self.cfg.loss_thresh);
        let inflight_prev = i64::from(rs.tx_in_flight) - pcount;
        if inflight_prev < 0 {
            return UNSET;
        }
        let lost_prev = rs.lost - pcount;
        if lost_prev < 0 {
            return UNSET;
        }
        let loss_budget =
            (inflight_prev as u64 * loss_thresh + u64::from(BBR_UNIT) - 1) >> BBR_SCALE;
        let lost_prefix = if lost_prev as u64 >= loss_budget {
            0 // previous losses crossed loss_thresh
        } else {
            let divisor = u64::from(BBR_UNIT) - loss_thresh;
            if divisor == 0 {
                return UNSET;
            }
            ((loss_budget - lost_prev as u64) << BBR_SCALE) / divisor
        };
        (inflight_prev as u64 + lost_prefix).min(u64::from(UNSET)) as u32
    }

    /// `bbr_inflight_with_headroom()`.
    fn inflight_with_headroom(&self) -> u32 {
        if self.inflight_hi == UNSET {
            return UNSET;
        }
        let headroom = ((u64::from(self.inflight_hi) * u64::from(self.cfg.inflight_headroom))
            >> BBR_SCALE)
            .max(1) as i64;
        (i64::from(self.inflight_hi) - headroom).max(i64::from(self.cfg.cwnd_min_target)) as u32
    }

    /// `bbr_bound_cwnd_for_inflight_model()`.
    fn bound_cwnd_for_inflight_model(&self, tp: &mut CcState) {
        if !self.initialized {
            return;
        }
        let mut cap = UNSET;
        if self.mode == Mode::ProbeBw && self.cycle_idx != Phase::Cruise {
            cap = self.inflight_hi; // probe to see if more packets fit
        } else if self.mode == Mode::ProbeRtt
            || (self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Cruise)
        {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_lo); // adapt to loss/ECN since the last probe
        cap = cap.max(self.cfg.cwnd_min_target);
        tp.cwnd = cap.min(tp.cwnd);
    }

    /// `bbr_ecn_cut()`: `1 - ecn_alpha x ecn_factor`, in 1/256.
    fn ecn_cut(&self) -> u32 {
        BBR_UNIT - ((self.ecn_alpha * self.cfg.ecn_factor) >> BBR_SCALE)
    }

    /// `bbr_init_lower_bounds()`.
    fn init_lower_bounds(&mut self, tp: &CcState, init_bw: bool) {
        if init_bw && self.bw_lo == UNSET {
            self.bw_lo = self.max_bw();
        }
        if self.inflight_lo == UNSET {
            self.inflight_lo = tp.cwnd;
        }
    }

    /// `bbr_loss_lower_bounds()`: `(1 - beta)`, but not below the latest round's delivery.
    fn loss_lower_bounds(&self) -> (u32, u32) {
        let loss_cut = u64::from(BBR_UNIT - self.cfg.beta);
        let bw = self
            .bw_latest
            .max(((u64::from(self.bw_lo) * loss_cut) >> BBR_SCALE) as u32);
        let inflight = self
            .inflight_latest
            .max(((u64::from(self.inflight_lo) * loss_cut) >> BBR_SCALE) as u32);
        (bw, inflight)
    }

    /// `bbr_ecn_lower_bounds()`.
    fn ecn_lower_bounds(&self) -> u32 {
        ((u64::from(self.inflight_lo) * u64::from(self.ecn_cut())) >> BBR_SCALE) as u32
    }

    /// `bbr_adapt_lower_bounds()`: once per round with loss or CE while not probing, cut
    /// `bw_lo`/`inflight_lo` multiplicatively.
    fn adapt_lower_bounds(&mut self, tp: &CcState) {
        if self.is_probing_bandwidth() {
            return;
        }
        let mut ecn_inflight_lo = UNSET;
        if self.ecn_in_round && self.cfg.ecn_factor > 0 {
            self.init_lower_bounds(tp, false);
            ecn_inflight_lo = self.ecn_lower_bounds();
        }
        if self.loss_in_round {
            self.init_lower_bounds(tp, true);
            (self.bw_lo, self.inflight_lo) = self.loss_lower_bounds();
        }
        self.inflight_lo = self.inflight_lo.min(ecn_inflight_lo);
        self.bw_lo = self.bw_lo.max(1);
    }

    /// `bbr_reset_lower_bounds()`.
    fn reset_lower_bounds(&mut self) {
        self.bw_lo = UNSET;
        self.inflight_lo = UNSET;
    }

    /// `bbr_reset_congestion_signals()`.
    fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    /// `bbr_exit_loss_recovery()`.
    fn exit_loss_recovery(&mut self, tp: &mut CcState) {
        tp.cwnd = tp.cwnd.max(self.prior_cwnd);
    }

    /// `bbr_update_latest_delivery_signals()`.
    fn update_latest_delivery_signals(&mut self, tp: &CcState, rs: &RateSample) {
        self.loss_round_start = false;
        if rs.interval_ns / 1000 <= 0 || rs.acked_sacked == 0 {
            return; // not a valid observation
        }
        self.bw_latest = self.bw_latest.max(self.ctx_sample_bw);
        self.inflight_latest = self.inflight_latest.max(rs.delivered.max(0) as u32);
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = tp.delivered;
            self.loss_round_start = true; // a new round trip
        }
    }

    /// `bbr_advance_latest_delivery_signals()` (no TLP: never "acking a TLP
    /// retransmission").
    fn advance_latest_delivery_signals(&mut self, rs: &RateSample) {
        if self.loss_round_start {
            self.bw_latest = self.ctx_sample_bw;
            self.inflight_latest = rs.delivered.max(0) as u32;
        }
    }

    /// `bbr_update_congestion_signals()`.
    fn update_congestion_signals(&mut self, tp: &CcState, rs: &RateSample) {
        if rs.interval_ns / 1000 <= 0 || rs.acked_sacked == 0 {
            return; // not a valid observation
        }
        let bw = self.ctx_sample_bw;
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.take_max_bw_sample(bw);
        }
        self.loss_in_round |= rs.losses > 0;
        if !self.loss_round_start {
            return; // skip the per-round-trip updates
        }
        self.adapt_lower_bounds(tp);
        self.loss_in_round = false;
        self.ecn_in_round = false;
    }

    /// `bbr_is_reno_coexistence_probe_time()`.
    fn is_reno_coexistence_probe_time(&self, tp: &CcState) -> bool {
        let rounds = self.cfg.bw_probe_max_rounds.min(self.target_inflight(tp));
        self.rounds_since_probe >= rounds
    }

    /// `bbr_pick_probe_wait()`: a random round count 0..rand_rounds-1 and a wall-clock wait
    /// of base + 0..rand_us-1 µs.
    fn pick_probe_wait(&mut self) {
        let rand_rounds = u64::from(self.cfg.bw_probe_rand_rounds);
        self.rounds_since_probe = self.random_below(rand_rounds) as u32;
        let rand_us = self.cfg.bw_probe_rand_us;
        self.probe_wait_us = self.cfg.bw_probe_base_us + self.random_below(rand_us);
    }

    /// `bbr_set_cycle_idx()`.
    fn set_cycle_idx(&mut self, cycle_idx: Phase) {
        self.cycle_idx = cycle_idx;
    }

    /// `bbr_start_bw_probe_refill()`.
    fn start_bw_probe_refill(&mut self, tp: &CcState, bw_probe_up_rounds: u32) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = bw_probe_up_rounds;
        self.bw_probe_up_acks = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Refilling;
        self.next_rtt_delivered = tp.delivered;
        self.set_cycle_idx(Phase::Refill);
    }

    /// `bbr_start_bw_probe_up()`.
    fn start_bw_probe_up(&mut self, tp: &CcState) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.next_rtt_delivered = tp.delivered;
        self.cycle_mstamp = now_us(tp);
        self.reset_full_bw();
        self.full_bw = self.ctx_sample_bw;
        self.set_cycle_idx(Phase::Up);
        self.raise_inflight_hi_slope(tp);
    }

    /// `bbr_start_bw_probe_down()`: a new cycle; pick when to probe next.
    fn start_bw_probe_down(&mut self, tp: &CcState) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt = UNSET; // not growing inflight_hi any more
        self.pick_probe_wait();
        self.cycle_mstamp = now_us(tp); // start the wall clock
        self.ack_phase = AckPhase::ProbeStopping;
        self.next_rtt_delivered = tp.delivered;
        self.set_cycle_idx(Phase::Down);
    }

    /// `bbr_start_bw_probe_cruise()`.
    fn start_bw_probe_cruise(&mut self) {
        if self.inflight_lo != UNSET {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.set_cycle_idx(Phase::Cruise);
    }

    /// `bbr_handle_inflight_too_high()`: cut `inflight_hi` once per probe and go DOWN.
    fn handle_inflight_too_high(&mut self, tp: &CcState, rs: &RateSample) {
        let beta = self.cfg.beta;
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false; // only react once per probe
        if !rs.is_app_limited {
            let cut =
                (u64::from(self.target_inflight(tp)) * u64::from(BBR_UNIT - beta)) >> BBR_SCALE;
            self.inflight_hi = rs.tx_in_flight.max(cut as u32);
        }
        if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
            self.start_bw_probe_down(tp);
        }
    }

    /// `bbr_adapt_upper_bounds()`: returns whether it decided a state transition.
    fn adapt_upper_bounds(&mut self, tp: &CcState, rs: &RateSample) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            // End of samples from the bw probing phase.
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if self.mode == Mode::ProbeBw && !rs.is_app_limited {
                self.advance_max_bw_filter();
            }
            if self.mode == Mode::ProbeBw && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_bw_probe_refill(tp, 0);
                return true;
            }
        }
        if self.is_inflight_too_high(rs) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(tp, rs);
            }
        } else {
            if self.inflight_hi == UNSET {
                return false; // no excess queue signals yet
            }
            // Resilience to random loss: raise inflight_hi when a higher level proved safe.
            if rs.tx_in_flight > self.inflight_hi {
                self.inflight_hi = rs.tx_in_flight;
            }
            if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
                self.probe_inflight_hi_upward(tp, rs);
            }
        }
        false
    }

    /// `bbr_check_time_to_probe_bw()`.
    fn check_time_to_probe_bw(&mut self, tp: &CcState) -> bool {
        let p = &self.cfg;
        if p.ecn_reprobe_gain > 0
            && self.ecn_eligible
            && self.ecn_in_cycle
            && !self.loss_in_cycle
            && tp.ca_state == CaState::Open
        {
            // n such that 2^n is about inflight_hi x ecn_reprobe_gain.
            let x = (u64::from(self.inflight_hi) * u64::from(p.ecn_reprobe_gain)) >> BBR_SCALE;
            let n = x.checked_ilog2().unwrap_or(0).min(31);
            self.start_bw_probe_refill(tp, n);
            return true;
        }
        let wait = self.probe_wait_us;
        if self.has_elapsed_in_phase(tp, wait) || self.is_reno_coexistence_probe_time(tp) {
            self.start_bw_probe_refill(tp, 0);
            return true;
        }
        false
    }

    /// `bbr_check_time_to_cruise()`.
    fn check_time_to_cruise(&self, tp: &CcState, inflight: u32, bw: u32) -> bool {
        if inflight > self.inflight_with_headroom() {
            return false; // always leave headroom in the queue
        }
        inflight <= self.inflight(tp, bw, BBR_UNIT)
    }

    /// `bbr_update_cycle_phase()`: the PROBE_BW state machine.
    fn update_cycle_phase(&mut self, tp: &CcState, rs: &RateSample) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_upper_bounds(tp, rs) {
            return;
        }
        if self.mode != Mode::ProbeBw {
            return;
        }
        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();
        match self.cycle_idx {
            Phase::Cruise => {
                self.check_time_to_probe_bw(tp);
            }
            Phase::Refill => {
                if self.round_start {
                    // A round of REFILL: samples now reflect it.
                    self.bw_probe_samples = true;
                    self.start_bw_probe_up(tp);
                }
            }
            Phase::Up => {
                let mut is_bw_probe_done = false;
                if self.prev_probe_too_high && inflight >= self.inflight_hi {
                    self.stopped_risky_probe = true;
                    is_bw_probe_done = true;
                } else if tp.is_cwnd_limited && tp.cwnd >= self.inflight_hi {
                    // inflight_hi is limiting bw growth
                    self.reset_full_bw();
                    self.full_bw = self.ctx_sample_bw;
                } else if self.full_bw_now {
                    is_bw_probe_done = true; // plateau: the pipe looks full
                }
                if is_bw_probe_done {
                    self.prev_probe_too_high = false; // no loss/ECN (yet)
                    self.start_bw_probe_down(tp);
                }
            }
            Phase::Down => {
                if self.check_time_to_probe_bw(tp) {
                    return;
                }
                if self.check_time_to_cruise(tp, inflight, bw) {
                    self.start_bw_probe_cruise();
                }
            }
        }
    }

    /// `bbr_exit_probe_rtt()`.
    fn exit_probe_rtt(&mut self, tp: &CcState) {
        self.reset_lower_bounds();
        if self.full_bw_reached {
            self.mode = Mode::ProbeBw;
            // Schedule the next probe for a friendly, randomised time; we are below the
            // BDP now, so cruise.
            self.start_bw_probe_down(tp);
            self.start_bw_probe_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// `bbr_check_loss_too_high_in_startup()`.
    fn check_loss_too_high_in_startup(&mut self, tp: &CcState, rs: &RateSample) {
        if self.full_bw_reached {
            return;
        }
        if rs.losses > 0 && self.loss_events_in_round < 0xf {
            self.loss_events_in_round += 1; // saturating 4-bit counter
        }
        let full_loss_cnt = self.cfg.full_loss_cnt;
        if full_loss_cnt > 0
            && self.loss_round_start
            && tp.ca_state == CaState::Recovery
            && self.loss_events_in_round >= full_loss_cnt
            && self.is_inflight_too_high(rs)
        {
            self.handle_queue_too_high_in_startup(tp);
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    /// `bbr_check_full_bw_reached()`: a plateau of three rounds below 1.25x.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_now || rs.is_app_limited {
            return;
        }
        let bw_thresh = (u64::from(self.full_bw) * u64::from(self.cfg.full_bw_thresh)) >> BBR_SCALE;
        if u64::from(self.ctx_sample_bw) >= bw_thresh {
            self.reset_full_bw();
            self.full_bw = self.ctx_sample_bw;
            return;
        }
        if !self.round_start {
            return;
        }
        self.full_bw_cnt = (self.full_bw_cnt + 1).min(3); // 2-bit field
        self.full_bw_now = self.full_bw_cnt >= self.cfg.full_bw_cnt;
        self.full_bw_reached |= self.full_bw_now;
    }

    /// `bbr_check_drain()`.
    fn check_drain(&mut self, tp: &mut CcState) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            // ssthresh only reports that STARTUP ended.
            tp.ssthresh = self.inflight(tp, self.max_bw(), BBR_UNIT);
            self.reset_congestion_signals();
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(tp, tp.in_flight)
                <= self.inflight(tp, self.max_bw(), BBR_UNIT)
        {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(tp);
        }
    }

    /// `bbr_update_model()`.
    fn update_model(&mut self, tp: &mut CcState, rs: &RateSample) {
        self.update_congestion_signals(tp, rs);
        self.update_ack_aggregation(tp, rs);
        self.check_loss_too_high_in_startup(tp, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(tp);
        self.update_cycle_phase(tp, rs);
        self.update_min_rtt(tp, rs);
    }

    /// `bbr_note_loss()`: this round is a loss round.
    fn note_loss(&mut self, tp: &CcState) {
        if !self.loss_in_round {
            self.loss_round_delivered = tp.delivered; // first loss in this round
        }
        self.loss_in_round = true;
        self.loss_in_cycle = true;
    }

    /// `bbr_run_loss_probe_recovery()` (`CA_EVENT_TLP_RECOVERY`; ccsim has no TLP, so it
    /// is not called in a run).
    pub fn run_loss_probe_recovery(&mut self, tp: &CcState, tlp_orig_data_app_limited: bool) {
        self.note_loss(tp);
        if !self.bw_probe_samples {
            return;
        }
        let rs = RateSample {
            lost: 1,
            tx_in_flight: self.inflight_latest + 1,
            is_app_limited: tlp_orig_data_app_limited,
            ..RateSample::default()
        };
        if self.is_inflight_too_high(&rs) {
            self.handle_inflight_too_high(tp, &rs);
        }
    }

    /// `bbr_get_phase()` (uapi `enum tcp_bbr_phase`: 1 STARTUP, 2 DRAIN, 3-6 PROBE_BW UP,
    /// DOWN, CRUISE, REFILL, 7 PROBE_RTT).
    pub fn phase(&self) -> u32 {
        match self.mode {
            Mode::Startup => 1,
            Mode::Drain => 2,
            Mode::ProbeRtt => 7,
            Mode::ProbeBw => match self.cycle_idx {
                Phase::Up => 3,
                Phase::Down => 4,
                Phase::Cruise => 5,
                Phase::Refill => 6,
            },
        }
    }
}

impl CongestionControl for Bbr3 {
    /// `bbr_init()`.
    fn init(&mut self, tp: &mut CcState) {
        self.initialized = true;
        self.init_cwnd = tp.cwnd.min(0x7f);
        self.prior_cwnd = tp.prior_cwnd;
        tp.ssthresh = INFINITE_SSTHRESH;
        self.next_rtt_delivered = tp.delivered;
        self.prev_ca_state = CaState::Open;
        self.probe_rtt_done_stamp = 0;
        self.probe_rtt_round_done = false;
        let min_rtt_us = if tp.min_rtt_ns == u64::MAX {
            UNSET
        } else {
            (tp.min_rtt_ns / 1000).min(u64::from(UNSET)) as u32
        };
        self.probe_rtt_min_us = min_rtt_us;
        self.probe_rtt_min_stamp = jiffies(tp);
        self.min_rtt_us = min_rtt_us;
        self.min_rtt_stamp = jiffies(tp);
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(tp);
        self.round_start = false;
        self.idle_restart = false;
        self.full_bw_reached = false;
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.cycle_mstamp = 0;
        self.cycle_idx = Phase::Up;
        self.mode = Mode::Startup; // bbr_reset_startup_mode()
        self.ack_epoch_mstamp = now_us(tp);
        self.ack_epoch_acked = 0;
        self.extra_acked_win_rtts = 0;
        self.extra_acked_win_idx = 0;
        self.extra_acked = [0; 2];
        // Linux: sk_pacing_status from NONE to NEEDED.
        tp.paced = true;
        // Start sampling ECN mark rate after the first full flight is ACKed.
        self.loss_round_delivered = tp.delivered + 1;
        self.loss_round_start = false;
        self.undo_bw_lo = 0;
        self.undo_inflight_lo = 0;
        self.undo_inflight_hi = 0;
        self.loss_events_in_round = 0;
        self.startup_ecn_rounds = 0;
        self.reset_congestion_signals();
        self.bw_lo = UNSET;
        self.bw_hi = [0; 2];
        self.inflight_lo = UNSET;
        self.inflight_hi = UNSET;
        self.reset_full_bw();
        self.bw_probe_up_cnt = UNSET;
        self.bw_probe_up_acks = 0;
        self.bw_probe_up_rounds = 0;
        self.probe_wait_us = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Init;
        self.rounds_since_probe = 0;
        self.bw_probe_samples = false;
        self.prev_probe_too_high = false;
        self.ecn_eligible = false;
        self.ecn_alpha = self.cfg.ecn_alpha_init;
        self.alpha_last_delivered = 0;
        self.alpha_last_delivered_ce = 0;
    }

    /// `bbr_ssthresh()`: entering recovery, save cwnd and the loss-adapted bounds (for
    /// undo); ssthresh unchanged.
    fn ssthresh(&mut self, tp: &CcState, _cause: ReductionCause) -> u32 {
        self.save_cwnd(tp);
        self.undo_bw_lo = self.bw_lo;
        self.undo_inflight_lo = self.inflight_lo;
        self.undo_inflight_hi = self.inflight_hi;
        tp.ssthresh
    }

    /// No `cong_avoid`: `cong_control` replaces it.
    fn cong_avoid(&mut self, _tp: &mut CcState, _acked: u32) {}

    /// `bbr_set_state()`.
    fn set_state(&mut self, tp: &mut CcState, new_state: CaState) {
        if new_state == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.reset_full_bw();
            if !self.is_probing_bandwidth() && self.inflight_lo == UNSET {
                // adapt_lower_bounds() needs the cwnd from before the RTO.
                self.inflight_lo = tp.cwnd.max(self.prior_cwnd);
            }
        } else if self.prev_ca_state == CaState::Loss {
            self.exit_loss_recovery(tp);
        }
    }

    /// `bbr_cwnd_event()` (the CE events are the receiver's: ccsim's receiver echoes CE
    /// precisely for flows with `needs_accurate_ecn`; no TLP events).
    fn cwnd_event(&mut self, tp: &mut CcState, event: CaEvent) {
        if event == CaEvent::TxStart && tp.app_limited != 0 {
            self.idle_restart = true;
            self.ack_epoch_mstamp = now_us(tp);
            self.ack_epoch_acked = 0;
            // Pace at the estimated bandwidth: no need for more speed after idle.
            if self.mode == Mode::ProbeBw {
                let bw = self.bw();
                self.set_pacing_rate(tp, bw, BBR_UNIT);
            } else if self.mode == Mode::ProbeRtt {
                self.check_probe_rtt_done(tp);
            }
        }
    }

    /// `bbr_undo_cwnd()`: revert the short-term model (not called by ccsim's sender).
    fn undo_cwnd(&mut self, _tp: &CcState) -> u32 {
        self.reset_full_bw();
        self.loss_in_round = false;
        self.bw_lo = self.bw_lo.max(self.undo_bw_lo);
        self.inflight_lo = self.inflight_lo.max(self.undo_inflight_lo);
        self.inflight_hi = self.inflight_hi.max(self.undo_inflight_hi);
        self.prior_cwnd
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    /// v3 reads `rs.lost`, `rs.delivered_ce`, `rs.tx_in_flight` and `skb_marked_lost`.
    fn needs_extended_rate_sample(&self) -> bool {
        true
    }

    /// `bbr_main()` (without the fast path and PLB).
    fn cong_control(&mut self, tp: &mut CcState, rs: &RateSample) {
        self.ctx_sample_bw = 0;
        self.update_round_start(tp, rs);
        if self.round_start {
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(0xff);
            self.update_ecn_alpha(tp);
        }
        self.ecn_in_round |= self.ecn_eligible && rs.is_ece;
        self.calculate_bw_sample(rs);
        self.update_latest_delivery_signals(tp, rs);
        self.update_model(tp, rs);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(tp, bw, self.pacing_gain);
        self.set_cwnd(tp, rs.acked_sacked, bw, self.cwnd_gain);
        self.bound_cwnd_for_inflight_model(tp);
        self.advance_latest_delivery_signals(rs);
        self.prev_ca_state = tp.ca_state;
        self.loss_in_cycle |= rs.lost > 0;
        self.ecn_in_cycle |= rs.delivered_ce > 0;
    }

    /// `bbr_skb_marked_lost()`: while probing, find where the loss rate crossed
    /// `loss_thresh` and cut `inflight_hi` there.
    fn skb_marked_lost(&mut self, tp: &mut CcState, skb: &LostSkb) {
        self.note_loss(tp);
        if !self.bw_probe_samples {
            return; // not sent while probing for bandwidth
        }
        if !skb.has_delivered_mstamp {
            return; // SACKed, reneged, marked lost: ignore
        }
        let mut rs = RateSample {
            tx_in_flight: skb.tx_in_flight,
            lost: (tp.lost - skb.tx_lost) as i64,
            is_app_limited: skb.is_app_limited,
            ..RateSample::default()
        };
        if self.is_inflight_too_high(&rs) {
            rs.tx_in_flight = self.inflight_hi_from_lost_skb(&rs);
            self.handle_inflight_too_high(tp, &rs);
        }
    }

    fn set_param(
        &mut self,
        path: &str,
        name: &str,
        value: &ParamValue,
    ) -> Result<(), ScenarioError> {
        params::set(&TABLE, self, path, name, value)
    }

    /// ECT on every packet and a precise CE echo (`TCP_ECN_ECT_PERMANENT`,
    /// `bbr_precise_ece_ack`) on a shallow-threshold ECN route.
    fn needs_accurate_ecn(&self) -> bool {
        self.cfg.ecn_low && self.cfg.precise_ece_ack
    }

    fn ecn_codepoint(&self) -> Ecn {
        if self.cfg.ect1 {
            Ecn::Ect1
        } else {
            Ecn::Ect0
        }
    }

    /// `bbr_get_info()`'s fields (v3: mode, phase, bw_hi, bw_lo, inflight_hi/lo) and
    /// `ecn_alpha`, the ACK phase and the gains. Bounds not set yet are NaN.
    fn diagnostics(&self) -> Vec<(&'static str, f64)> {
        let unit = f64::from(BBR_UNIT);
        let per_ms = |bw: u32| f64::from(bw) * 1000.0 / BW_UNIT as f64;
        let or_nan = |v: u32, f: &dyn Fn(u32) -> f64| if v == UNSET { f64::NAN } else { f(v) };
        vec![
            ("mode", self.mode as u32 as f64),
            ("phase", f64::from(self.phase())),
            ("cycle_idx", self.cycle_idx as u32 as f64),
            ("ack_phase", self.ack_phase as u32 as f64),
            ("bw_pkts_per_ms", per_ms(self.bw())),
            ("bw_hi_pkts_per_ms", per_ms(self.max_bw())),
            ("bw_lo_pkts_per_ms", or_nan(self.bw_lo, &per_ms)),
            ("inflight_hi", or_nan(self.inflight_hi, &f64::from)),
            ("inflight_lo", or_nan(self.inflight_lo, &f64::from)),
            ("ecn_alpha", f64::from(self.ecn_alpha) / unit),
            ("ecn_eligible", f64::from(u8::from(self.ecn_eligible))),
            (
                "min_rtt_ms",
                or_nan(self.min_rtt_us, &|v| f64::from(v) / 1000.0),
            ),
            ("pacing_gain", f64::from(self.pacing_gain) / unit),
            ("cwnd_gain", f64::from(self.cwnd_gain) / unit),
            ("full_bw_reached", f64::from(u8::from(self.full_bw_reached))),
            ("rounds_since_probe", f64::from(self.rounds_since_probe)),
        ]
    }
}

#[cfg(test)]
#[path = "bbr3_tests.rs"]
mod tests;
