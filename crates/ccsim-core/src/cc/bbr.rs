//! BBR v1 (Bottleneck Bandwidth and Round-trip propagation time).
//!
//! Reference: Linux `net/ipv4/tcp_bbr.c` (the v1 module, with its ACK-aggregation
//! extension), ported hook by hook and in Linux's fixed point: bandwidth in packets per µs
//! `<< 24` (`BW_SCALE`), gains in 1/256 (`BBR_UNIT`), times in µs and, where Linux uses
//! jiffies, in ms (`HZ = 1000`). Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, "BBR:
//! Congestion-Based Congestion Control", ACM Queue 14(5), 2016, describes the design. The
//! windowed max filter is Linux `lib/win_minmax.c` (Nichols' three-sample tracker).
//!
//! What it does, per ACK (`bbr_main` through the sender's `cong_control` hook, with a
//! delivery-rate sample from `crate::tcp::rate`, Linux `tcp_rate.c`):
//! - model: the bottleneck bandwidth is the max of the rate samples over the last 10
//!   packet-timed rounds (app-limited samples only when they raise it); min RTT is the
//!   minimum over 10 s; the ACK aggregation estimate (`extra_acked`) adds to cwnd;
//! - states: STARTUP (pacing and cwnd gain 2/ln 2 = 2.885) until 3 rounds without 25 %
//!   bandwidth growth, DRAIN (pacing gain 1/2.885) until in flight is at most one BDP,
//!   PROBE_BW cycling the pacing gain over 5/4, 3/4, 1 x 6 (one phase per min RTT, the
//!   start phase drawn from the flow's seeded stream, never the 3/4 one) with cwnd gain 2,
//!   and PROBE_RTT (cwnd 4 for max(200 ms, one round)) when min RTT is 10 s old;
//! - pacing rate = pacing gain x bandwidth x 99 % (it only grows before the pipe is full);
//!   cwnd = cwnd gain x BDP + ACK aggregation + 3 TSO bursts, rounded to even (+2 in the
//!   5/4 phase), approached by `+acked` per ACK, at least 4;
//! - loss: packet conservation in the first round of Recovery, cwnd restored on leaving
//!   it; a token-bucket policer is detected from two 4-16-round intervals with 20 % loss
//!   and consistent throughput, and then its long-term rate (`lt_bw`) is used for 48 rounds.
//!
//! Departures from Linux, each small:
//! - Packets are paced one by one; Linux paces TSO/GSO bursts of `bbr_tso_segs_goal`. The
//!   goal itself is still computed (it enters cwnd as Linux's quantization budget, 3 bursts)
//!   with `MAX_TCP_HEADER` = 320 bytes.
//! - Jiffies are milliseconds (`CONFIG_HZ=1000`); µs timestamps are ccsim's ns truncated.
//! - The start phase of the gain cycle is drawn from the flow's stream of the scenario seed
//!   (Linux: `prandom_u32_max(7)`).
//! - `is_ack_delayed` is always false (ccsim's receiver never ACKs a lone runt late
//!   except at the very end of a transfer), so an expired min RTT takes any sample.
//! - `bbr_undo_cwnd` is implemented but ccsim's sender never undoes a reduction (no
//!   D-SACK/timestamp undo), so it is not called in a run.
//! - `sk_max_pacing_rate` is unlimited; `bbr_sndbuf_expand`, `min_tso_segs` and
//!   `get_info` have no counterpart (the last is `diagnostics`, which adds the mode, round
//!   count, min-RTT stamp, full-pipe round and PROBE_RTT count for tests and plots).
//! - The sender applies the pacing rate as `tcp_update_skb_after_send` does, from the
//!   tenth data segment, but without its credit of up to half a packet's time after idle.
//! - Arithmetic that could overflow Linux's u32/u64 at extreme rates or RTTs is done in
//!   128 bits or saturates (Linux would wrap).
//! - The tunables Linux fixes at compile time (`bbr_high_gain`, `bbr_drain_gain`,
//!   `bbr_cwnd_gain`, `bbr_min_rtt_win_sec`, `bbr_probe_rtt_mode_ms`, `bbr_full_bw_thresh`,
//!   `bbr_full_bw_cnt`, `bbr_extra_acked_gain`) are parameters with Linux's defaults.

pub use super::bbr_common::Mode;
use super::bbr_common::{
    delivered_mstamp_us, jiffies, now_us, ACK_EPOCH_ACKED_RESET_THRESH, BBR_SCALE, BBR_UNIT,
    BW_SCALE, BW_UNIT, GSO_MAX_SIZE, MAX_TCP_HEADER, PACING_SHIFT,
};
use super::{
    CaEvent, CaState, CcState, CongestionControl, RateSample, ReductionCause, INFINITE_SSTHRESH,
};
use crate::engine::rng::{stream, SimRng, StreamKind};
use crate::params::{self, Algorithm, Family, Kind, Param, Settable};
use crate::scenario::{ParamValue, ScenarioError};

/// Phases of the PROBE_BW gain cycle.
const CYCLE_LEN: u32 = 8;
/// Window of the max-bandwidth filter, in rounds.
const BW_RTTS: u32 = CYCLE_LEN + 2;
/// Pace 1 % below the estimated bandwidth.
const PACING_MARGIN_PERCENT: u64 = 1;
/// 2/ln(2), the smallest gain that doubles the sending rate every round.
pub const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// 1/high_gain: drains STARTUP's queue in about one round.
pub const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
pub const CWND_GAIN: u32 = BBR_UNIT * 2;
/// The PROBE_BW pacing gain cycle.
pub const PACING_GAIN: [u32; CYCLE_LEN as usize] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
/// The start phase is drawn from this many phases.
const CYCLE_RAND: u32 = 7;
/// The least cwnd BBR keeps (and PROBE_RTT's cwnd).
pub const CWND_MIN_TARGET: u32 = 4;
/// Growth (1.25x) that means the pipe may not be full yet.
const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// Rounds without that growth after which it is.
const FULL_BW_CNT: u32 = 3;
/// Long-term (policer) sampling: least rounds per interval.
const LT_INTVL_MIN_RTTS: u32 = 4;
/// Loss ratio (in 1/256) above which an interval is lossy: 50/256 ~ 20 %.
const LT_LOSS_THRESH: u64 = 50;
/// Two intervals' rates within 1/8 ...
const LT_BW_RATIO: u64 = (BBR_UNIT / 8) as u64;
/// ... or 4 kbit/s (in bytes/s) of each other are consistent.
const LT_BW_DIFF: u64 = 4000 / 8;
/// Rounds to use the long-term rate once a policer is detected.
const LT_BW_MAX_RTTS: u32 = 48;
const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const EXTRA_ACKED_MAX_US: u64 = 100 * 1000;
/// Below this pacing rate (bit/s) a TSO burst is one packet.
const MIN_TSO_RATE: u64 = 1_200_000;
const TCP_INIT_CWND: u32 = 10;

#[derive(Debug, Clone, Copy, Default)]
struct MinMaxSample {
    t: u32,
    v: u64,
}

/// Linux `struct minmax` with `minmax_running_max` (`lib/win_minmax.c`): the best, second
/// and third best values over a window, in constant space.
#[derive(Debug, Clone, Copy, Default)]
pub struct MinMax {
    s: [MinMaxSample; 3],
}

impl MinMax {
    pub fn get(&self) -> u64 {
        self.s[0].v
    }

    pub fn reset(&mut self, t: u32, meas: u64) -> u64 {
        let val = MinMaxSample { t, v: meas };
        self.s = [val; 3];
        meas
    }

    fn subwin_update(&mut self, win: u32, val: MinMaxSample) -> u64 {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            // The whole window passed without a new best: promote the 2nd and 3rd.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.wrapping_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window without a new best: a 2nd choice from the 2nd quarter.
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half the window: a 3rd choice from the last half.
            self.s[2] = val;
        }
        self.s[0].v
    }

    /// Linux `minmax_running_max()`.
    pub fn running_max(&mut self, win: u32, t: u32, meas: u64) -> u64 {
        let val = MinMaxSample { t, v: meas };
        if val.v >= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, meas);
        }
        if val.v >= self.s[1].v {
            self.s[2] = val;
            self.s[1] = val;
        } else if val.v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }
}

/// Linux `tcp_stamp_us_delta()`: `t1 - t0` in µs, at least 0.
#[inline]
fn us_delta(t1_us: u64, t0_us: u64) -> u64 {
    t1_us.saturating_sub(t0_us)
}

/// BBR's configuration: the values of its [`TABLE`], kept apart from the per-flow state
/// (as quinn's `congestion/cubic.rs` does).
#[derive(Debug, Clone)]
pub struct BbrConfig {
    // Linux's compile-time constants; gains in 1/256 (`BBR_UNIT`).
    high_gain: u32,
    drain_gain: u32,
    cwnd_gain_probe_bw: u32,
    min_rtt_win_ms: u64,
    probe_rtt_mode_ms: u64,
    full_bw_thresh: u32,
    full_bw_cnt_max: u32,
    extra_acked_gain: u32,
}

/// BBR v1 state (Linux `struct bbr`) and its tunables.
#[derive(Debug, Clone)]
pub struct Bbr {
    /// The parameters ([`TABLE`]).
    cfg: BbrConfig,
    min_rtt_us: u32,
    min_rtt_stamp: u64,
    probe_rtt_done_stamp: u64,
    bw: MinMax,
    rtt_cnt: u32,
    next_rtt_delivered: u64,
    cycle_mstamp: u64,
    mode: Mode,
    prev_ca_state: CaState,
    packet_conservation: bool,
    round_start: bool,
    idle_restart: bool,
    probe_rtt_round_done: bool,
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    lt_bw: u64,
    lt_last_delivered: u64,
    lt_last_stamp: u64,
    lt_last_lost: u64,
    pacing_gain: u32,
    cwnd_gain: u32,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    cycle_idx: u32,
    has_seen_rtt: bool,
    prior_cwnd: u32,
    full_bw: u64,
    ack_epoch_mstamp: u64,
    extra_acked: [u32; 2],
    ack_epoch_acked: u32,
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,

    rng: SimRng,
    /// Round at which STARTUP's full-pipe test fired (diagnostic).
    full_bw_round: Option<u32>,
    /// PROBE_RTT entries so far (diagnostic).
    probe_rtt_count: u32,
}

/// bbr's parameters.
pub const TABLE: Algorithm<Settable<Bbr>> = Algorithm {
    name: "bbr",
    aliases: &[],
    family: Family::CongestionControl,
    summary: "BBR v1: paces at the estimated bottleneck bandwidth, cwnd from the BDP",
    reference: "Linux net/ipv4/tcp_bbr.c (v1, with ACK aggregation); Cardwell et al., ACM Queue 14(5), 2016",
    params: &[
        Settable {
            param: Param {
                name: "high_gain",
                kind: Kind::Number { what: "a number in [1, 16]", ok: |x| (1.0..=16.0).contains(&x) },
                default: "2.885 (739/256)",
                help: "STARTUP pacing and cwnd gain (DRAIN keeps it for cwnd)",
            },
            set: |c, v| c.cfg.high_gain = gain_units(v.number()),
        },
        Settable {
            param: Param {
                name: "drain_gain",
                kind: Kind::Number { what: "a number in (0, 1]", ok: |x| x > 0.0 && x <= 1.0 },
                default: "1/2.885 (88/256)",
                help: "DRAIN pacing gain",
            },
            set: |c, v| c.cfg.drain_gain = gain_units(v.number()),
        },
        Settable {
            param: Param {
                name: "cwnd_gain",
                kind: Kind::Number { what: "a number in [1, 16]", ok: |x| (1.0..=16.0).contains(&x) },
                default: "2",
                help: "PROBE_BW cwnd gain",
            },
            set: |c, v| c.cfg.cwnd_gain_probe_bw = gain_units(v.number()),
        },
        Settable {
            param: Param {
                name: "probe_rtt_interval",
                kind: Kind::Duration { what: Some("a duration of at least 1ms, like \"10s\""), ok: |ns| ns >= 1_000_000 },
                default: "\"10s\"",
                help: "min-RTT filter window: PROBE_RTT when the min RTT is this old (Linux `bbr_min_rtt_win_sec`)",
            },
            set: |c, v| c.cfg.min_rtt_win_ms = v.ns() / 1_000_000,
        },
        Settable {
            param: Param {
                name: "probe_rtt_time",
                kind: Kind::Duration { what: Some("a duration like \"200ms\" (whole ms; \"0ms\" turns PROBE_RTT off)"), ok: |ns| ns % 1_000_000 == 0 && ns <= 3_600_000_000_000 },
                default: "\"200ms\"",
                help: "least time at 4 packets in PROBE_RTT; `\"0ms\"` turns PROBE_RTT off (Linux `bbr_probe_rtt_mode_ms`)",
            },
            set: |c, v| c.cfg.probe_rtt_mode_ms = v.ns() / 1_000_000,
        },
        Settable {
            param: Param {
                name: "full_bw_thresh",
                kind: Kind::Number { what: "a number in [1, 16]", ok: |x| (1.0..=16.0).contains(&x) },
                default: "1.25",
                help: "bandwidth growth per round that means the pipe is not full yet",
            },
            set: |c, v| c.cfg.full_bw_thresh = gain_units(v.number()),
        },
        Settable {
            param: Param {
                name: "full_bw_count",
                kind: Kind::Integer { lo: 1, hi: 3 },
                default: "3",
                help: "rounds without that growth that end STARTUP",
            },
            set: |c, v| c.cfg.full_bw_cnt_max = v.int() as u32,
        },
        Settable {
            param: Param {
                name: "extra_acked_gain",
                kind: Kind::Number { what: "a number in [0, 16]", ok: |x| (0.0..=16.0).contains(&x) },
                default: "1",
                help: "gain of the ACK-aggregation cwnd allowance; 0 turns it off",
            },
            set: |c, v| c.cfg.extra_acked_gain = (v.number() * f64::from(BBR_UNIT)).round() as u32,
        },
    ],
};

impl Bbr {
    /// BBR with Linux's constants and a random stream seeded with `seed` (the simulator
    /// replaces it with the flow's own through [`Bbr::seed_rng`]).
    pub fn new(seed: u64) -> Self {
        Bbr {
            cfg: BbrConfig {
                high_gain: HIGH_GAIN,
                drain_gain: DRAIN_GAIN,
                cwnd_gain_probe_bw: CWND_GAIN,
                min_rtt_win_ms: 10_000,
                probe_rtt_mode_ms: 200,
                full_bw_thresh: FULL_BW_THRESH,
                full_bw_cnt_max: FULL_BW_CNT,
                extra_acked_gain: EXTRA_ACKED_GAIN,
            },
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: 0,
            bw: MinMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            mode: Mode::Startup,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp: 0,
            lt_last_lost: 0,
            pacing_gain: 0,
            cwnd_gain: 0,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_epoch_mstamp: 0,
            extra_acked: [0; 2],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            rng: stream(seed, StreamKind::Cc, 0),
            full_bw_round: None,
            probe_rtt_count: 0,
        }
    }

    /// Replace the random stream (one per flow, from the scenario seed).
    pub fn seed_rng(&mut self, rng: SimRng) {
        self.rng = rng;
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }
    /// The bandwidth estimate in use, packets per µs `<< 24`.
    pub fn bw(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.bw.get()
        }
    }
    pub fn max_bw(&self) -> u64 {
        self.bw.get()
    }
    pub fn min_rtt_us(&self) -> u32 {
        self.min_rtt_us
    }
    pub fn round_count(&self) -> u32 {
        self.rtt_cnt
    }
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    pub fn full_bw_round(&self) -> Option<u32> {
        self.full_bw_round
    }
    pub fn pacing_gain(&self) -> u32 {
        self.pacing_gain
    }
    pub fn cwnd_gain(&self) -> u32 {
        self.cwnd_gain
    }
    pub fn cycle_idx(&self) -> u32 {
        self.cycle_idx
    }
    pub fn lt_use_bw(&self) -> bool {
        self.lt_use_bw
    }
    pub fn probe_rtt_count(&self) -> u32 {
        self.probe_rtt_count
    }

    // ----- conversions --------------------------------------------------------------

    /// Linux `bbr_rate_bytes_per_sec()`: a rate in packets/µs `<< 24` with a gain, in
    /// bytes per second, 1 % under.
    fn rate_bytes_per_sec(tp: &CcState, rate: u64, gain: u32) -> u64 {
        // Linux's order of operations, in 128 bits so no rate or gain can overflow.
        let mut rate = u128::from(rate) * u128::from(tp.mss);
        rate *= u128::from(gain);
        rate >>= BBR_SCALE;
        rate *= u128::from(1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT));
        (rate >> BW_SCALE).min(u128::from(u64::MAX)) as u64
    }

    /// Linux `bbr_bw_to_pacing_rate()` (no `sk_max_pacing_rate` cap).
    fn bw_to_pacing_rate(tp: &CcState, bw: u64, gain: u32) -> u64 {
        Self::rate_bytes_per_sec(tp, bw, gain)
    }

    /// Linux `bbr_init_pacing_rate_from_rtt()`: high_gain x cwnd / srtt.
    fn init_pacing_rate_from_rtt(&mut self, tp: &mut CcState) {
        let rtt_us = if tp.srtt_ns > 0 {
            self.has_seen_rtt = true;
            (tp.srtt_ns / 1000).max(1)
        } else {
            1000
        };
        let bw = u64::from(tp.cwnd) * BW_UNIT / rtt_us;
        tp.pacing_rate = Self::bw_to_pacing_rate(tp, bw, self.cfg.high_gain);
    }

    /// Linux `bbr_set_pacing_rate()`: before the pipe is full the rate only grows.
    fn set_pacing_rate(&mut self, tp: &mut CcState, bw: u64, gain: u32) {
        let rate = Self::bw_to_pacing_rate(tp, bw, gain);
        if !self.has_seen_rtt && tp.srtt_ns > 0 {
            self.init_pacing_rate_from_rtt(tp);
        }
        if self.full_bw_reached || rate > tp.pacing_rate {
            tp.pacing_rate = rate;
        }
    }

    /// Linux `bbr_min_tso_segs()`.
    fn min_tso_segs(tp: &CcState) -> u32 {
        if tp.pacing_rate < (MIN_TSO_RATE >> 3) {
            1
        } else {
            2
        }
    }

    /// Linux `bbr_tso_segs_goal()`: about 1 ms of data at the pacing rate, 2 to 127.
    fn tso_segs_goal(tp: &CcState) -> u32 {
        let bytes = (tp.pacing_rate >> PACING_SHIFT).min(GSO_MAX_SIZE - 1 - MAX_TCP_HEADER);
        let segs = ((bytes / u64::from(tp.mss.max(1))) as u32).max(Self::min_tso_segs(tp));
        segs.min(0x7f)
    }

    /// Linux `bbr_save_cwnd()`: remember the last good cwnd.
    fn save_cwnd(&mut self, tp: &CcState) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = tp.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(tp.cwnd);
        }
    }

    /// Linux `bbr_bdp()`: ceil(bw x min_rtt x gain), or the initial window before any RTT.
    fn bdp(&self, bw: u64, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return TCP_INIT_CWND;
        }
        let w = u128::from(bw) * u128::from(self.min_rtt_us);
        let bdp = ((w * u128::from(gain)) >> BBR_SCALE).div_ceil(u128::from(BW_UNIT));
        // Saturated well below u32::MAX so the budget added to it cannot wrap.
        bdp.min(u128::from(u32::MAX >> 2)) as u32
    }

    /// Linux `bbr_quantization_budget()`.
    fn quantization_budget(&self, tp: &CcState, cwnd: u32) -> u32 {
        let mut cwnd = cwnd + 3 * Self::tso_segs_goal(tp);
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// Linux `bbr_inflight()`.
    fn inflight(&self, tp: &CcState, bw: u64, gain: u32) -> u32 {
        let bdp = self.bdp(bw, gain);
        self.quantization_budget(tp, bdp)
    }

    /// Linux `bbr_packets_in_net_at_edt()`: in flight at the next departure time.
    fn packets_in_net_at_edt(&self, tp: &CcState, inflight_now: u32) -> u32 {
        let now_ns = tp.now_ns;
        let edt_ns = tp.wstamp_ns.max(now_ns);
        let interval_us = (edt_ns - now_ns) / 1000;
        let interval_delivered = self.bw().saturating_mul(interval_us) >> BW_SCALE;
        let mut inflight_at_edt = u64::from(inflight_now);
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt += u64::from(Self::tso_segs_goal(tp));
        }
        if interval_delivered >= inflight_at_edt {
            return 0;
        }
        (inflight_at_edt - interval_delivered) as u32
    }

    /// Linux `bbr_extra_acked()`.
    fn extra_acked(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// Linux `bbr_ack_aggregation_cwnd()`.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if self.cfg.extra_acked_gain > 0 && self.full_bw_reached {
            let max_aggr_cwnd = self.bw() * EXTRA_ACKED_MAX_US / BW_UNIT;
            let aggr_cwnd =
                (u64::from(self.cfg.extra_acked_gain) * u64::from(self.extra_acked())) >> BBR_SCALE;
            aggr_cwnd.min(max_aggr_cwnd) as u32
        } else {
            0
        }
    }

    /// Linux `bbr_set_cwnd_to_recover_or_restore()`: returns (packet conservation, cwnd).
    fn set_cwnd_to_recover_or_restore(
        &mut self,
        tp: &CcState,
        rs: &RateSample,
        acked: u32,
    ) -> (bool, u32) {
        let prev_state = self.prev_ca_state;
        let state = tp.ca_state;
        let mut cwnd = tp.cwnd;
        // An ACK for P packets releases at most 2P: first take the lost packets off.
        if rs.losses > 0 {
            cwnd = (i64::from(cwnd) - i64::from(rs.losses)).max(1) as u32;
        }
        if state == CaState::Recovery && prev_state != CaState::Recovery {
            // First round of Recovery: packet conservation.
            self.packet_conservation = true;
            self.next_rtt_delivered = tp.delivered; // start the round now
            cwnd = tp.in_flight + acked;
        } else if prev_state >= CaState::Recovery && state < CaState::Recovery {
            // Leaving loss recovery: restore the cwnd saved before it.
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (true, cwnd.max(tp.in_flight + acked));
        }
        (false, cwnd)
    }

    /// Linux `bbr_set_cwnd()`: slow-start towards the target, or snap down to it.
    fn set_cwnd(&mut self, tp: &mut CcState, rs: &RateSample, acked: u32, bw: u64, gain: u32) {
        let mut cwnd = tp.cwnd;
        if acked > 0 {
            let (conserving, c) = self.set_cwnd_to_recover_or_restore(tp, rs, acked);
            cwnd = c;
            if !conserving {
                let mut target = self.bdp(bw, gain);
                target += self.ack_aggregation_cwnd();
                target = self.quantization_budget(tp, target);
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || tp.delivered < u64::from(TCP_INIT_CWND) {
                    cwnd += acked;
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        tp.cwnd = cwnd.min(tp.cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            tp.cwnd = tp.cwnd.min(CWND_MIN_TARGET);
        }
    }

    /// Linux `bbr_is_next_cycle_phase()`.
    fn is_next_cycle_phase(&self, tp: &CcState, rs: &RateSample) -> bool {
        let is_full_length =
            us_delta(delivered_mstamp_us(tp), self.cycle_mstamp) > u64::from(self.min_rtt_us);
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return is_full_length
                && (rs.losses > 0 || inflight >= self.inflight(tp, bw, self.pacing_gain));
        }
        is_full_length || inflight <= self.inflight(tp, bw, BBR_UNIT)
    }

    fn advance_cycle_phase(&mut self, tp: &CcState) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp = delivered_mstamp_us(tp);
    }

    fn update_cycle_phase(&mut self, tp: &CcState, rs: &RateSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(tp, rs) {
            self.advance_cycle_phase(tp);
        }
    }

    fn reset_startup_mode(&mut self) {
        self.mode = Mode::Startup;
    }

    /// Linux `bbr_reset_probe_bw_mode()`: a random phase other than 3/4 comes next.
    fn reset_probe_bw_mode(&mut self, tp: &CcState) {
        self.mode = Mode::ProbeBw;
        let r = (self.rng.uniform() * f64::from(CYCLE_RAND)) as u32;
        self.cycle_idx = CYCLE_LEN - 1 - r.min(CYCLE_RAND - 1);
        self.advance_cycle_phase(tp);
    }

    fn reset_mode(&mut self, tp: &CcState) {
        if !self.full_bw_reached {
            self.reset_startup_mode();
        } else {
            self.reset_probe_bw_mode(tp);
        }
    }

    /// Linux `bbr_reset_lt_bw_sampling_interval()`.
    fn reset_lt_bw_sampling_interval(&mut self, tp: &CcState) {
        self.lt_last_stamp = delivered_mstamp_us(tp) / 1000;
        self.lt_last_delivered = tp.delivered;
        self.lt_last_lost = tp.lost;
        self.lt_rtt_cnt = 0;
    }

    /// Linux `bbr_reset_lt_bw_sampling()`.
    fn reset_lt_bw_sampling(&mut self, tp: &CcState) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// Linux `bbr_lt_bw_interval_done()`: two consistent lossy intervals mean a policer.
    fn lt_bw_interval_done(&mut self, tp: &CcState, bw: u64) {
        if self.lt_bw > 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff * u64::from(BBR_UNIT) <= LT_BW_RATIO * self.lt_bw
                || Self::rate_bytes_per_sec(tp, diff, BBR_UNIT) <= LT_BW_DIFF
            {
                self.lt_bw = (bw + self.lt_bw) >> 1;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// Linux `bbr_lt_bw_sampling()`: token-bucket policer detection.
    fn lt_bw_sampling(&mut self, tp: &CcState, rs: &RateSample) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(tp);
                    self.reset_probe_bw_mode(tp);
                }
            }
            return;
        }
        // Sample from the first loss on, once the policer's tokens are used up.
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(tp);
            self.lt_is_sampling = true;
        }
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        // End the interval at a loss.
        if rs.losses == 0 {
            return;
        }
        let lost = tp.lost - self.lt_last_lost;
        let delivered = tp.delivered - self.lt_last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let t_ms = (delivered_mstamp_us(tp) / 1000) as i64 - self.lt_last_stamp as i64;
        if t_ms < 1 {
            return;
        }
        if t_ms as u64 >= u64::from(u32::MAX) / 1000 {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        let t_us = t_ms as u64 * 1000;
        let bw = delivered * BW_UNIT / t_us;
        self.lt_bw_interval_done(tp, bw);
    }

    /// Linux `bbr_update_bw()`: rounds and the max-bandwidth filter.
    fn update_bw(&mut self, tp: &CcState, rs: &RateSample) {
        self.round_start = false;
        // Linux's interval is in µs: a sub-µs interval is no sample either.
        let interval_us = rs.interval_ns / 1000;
        if rs.delivered < 0 || interval_us <= 0 {
            return;
        }
        let interval_us = interval_us as u64;
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = tp.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(tp, rs);
        let bw = rs.delivered as u64 * BW_UNIT / interval_us;
        // App-limited samples only when they do not drag the estimate down.
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.running_max(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// Linux `bbr_update_ack_aggregation()`.
    fn update_ack_aggregation(&mut self, tp: &CcState, rs: &RateSample) {
        if self.cfg.extra_acked_gain == 0
            || rs.acked_sacked == 0
            || rs.delivered < 0
            || rs.interval_ns / 1000 <= 0
        {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = us_delta(delivered_mstamp_us(tp), self.ack_epoch_mstamp);
        let mut expected_acked =
            (self.bw().saturating_mul(epoch_us) / BW_UNIT).min(u64::from(u32::MAX)) as u32;
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

    /// Linux `bbr_check_full_bw_reached()`: 3 rounds without 25 % growth fill the pipe.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let bw_thresh = (self.full_bw * u64::from(self.cfg.full_bw_thresh)) >> BBR_SCALE;
        if self.max_bw() >= bw_thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= self.cfg.full_bw_cnt_max;
        if self.full_bw_reached {
            self.full_bw_round = Some(self.rtt_cnt);
        }
    }

    /// Linux `bbr_check_drain()`.
    fn check_drain(&mut self, tp: &mut CcState) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            tp.ssthresh = self.inflight(tp, self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(tp, tp.in_flight)
                <= self.inflight(tp, self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(tp);
        }
    }

    /// Linux `bbr_check_probe_rtt_done()`.
    fn check_probe_rtt_done(&mut self, tp: &mut CcState) {
        if !(self.probe_rtt_done_stamp != 0 && jiffies(tp) > self.probe_rtt_done_stamp) {
            return;
        }
        self.min_rtt_stamp = jiffies(tp); // wait a while until PROBE_RTT
        tp.cwnd = tp.cwnd.max(self.prior_cwnd);
        self.reset_mode(tp);
    }

    /// Linux `bbr_update_min_rtt()`: the 10 s min-RTT filter and PROBE_RTT.
    fn update_min_rtt(&mut self, tp: &mut CcState, rs: &RateSample) {
        let now_j = jiffies(tp);
        let filter_expired = now_j > self.min_rtt_stamp + self.cfg.min_rtt_win_ms;
        if rs.rtt_ns >= 0 {
            let rtt_us = (rs.rtt_ns / 1000) as u64;
            if rtt_us <= u64::from(self.min_rtt_us) || (filter_expired && !rs.is_ack_delayed) {
                self.min_rtt_us = rtt_us.min(u64::from(u32::MAX)) as u32;
                self.min_rtt_stamp = now_j;
            }
        }
        if self.cfg.probe_rtt_mode_ms > 0
            && filter_expired
            && !self.idle_restart
            && self.mode != Mode::ProbeRtt
        {
            self.mode = Mode::ProbeRtt; // dip, drain the queue
            self.probe_rtt_count += 1;
            self.save_cwnd(tp);
            self.probe_rtt_done_stamp = 0;
        }
        if self.mode == Mode::ProbeRtt {
            // Ignore low-rate samples during this mode.
            tp.app_limited = (tp.delivered + u64::from(tp.in_flight)).max(1);
            // Hold the minimum in flight for max(200 ms, one round).
            if self.probe_rtt_done_stamp == 0 && tp.in_flight <= CWND_MIN_TARGET {
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

    /// Linux `bbr_update_gains()`.
    fn update_gains(&mut self) {
        match self.mode {
            Mode::Startup => {
                self.pacing_gain = self.cfg.high_gain;
                self.cwnd_gain = self.cfg.high_gain;
            }
            Mode::Drain => {
                self.pacing_gain = self.cfg.drain_gain;
                self.cwnd_gain = self.cfg.high_gain;
            }
            Mode::ProbeBw => {
                self.pacing_gain = if self.lt_use_bw {
                    BBR_UNIT
                } else {
                    PACING_GAIN[self.cycle_idx as usize]
                };
                self.cwnd_gain = self.cfg.cwnd_gain_probe_bw;
            }
            Mode::ProbeRtt => {
                self.pacing_gain = BBR_UNIT;
                self.cwnd_gain = BBR_UNIT;
            }
        }
    }

    /// Linux `bbr_update_model()`.
    fn update_model(&mut self, tp: &mut CcState, rs: &RateSample) {
        self.update_bw(tp, rs);
        self.update_ack_aggregation(tp, rs);
        self.update_cycle_phase(tp, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(tp);
        self.update_min_rtt(tp, rs);
        self.update_gains();
    }
}

/// A gain given as a plain number, stored in 1/256 like Linux's.
/// A gain in Linux's 1/256 units (`BBR_UNIT`), rounded, at least 1.
fn gain_units(g: f64) -> u32 {
    ((g * f64::from(BBR_UNIT)).round() as u32).max(1)
}

impl CongestionControl for Bbr {
    /// Linux `bbr_init()`.
    fn init(&mut self, tp: &mut CcState) {
        self.prior_cwnd = 0;
        tp.ssthresh = INFINITE_SSTHRESH;
        self.rtt_cnt = 0;
        self.next_rtt_delivered = 0;
        self.prev_ca_state = CaState::Open;
        self.packet_conservation = false;
        self.probe_rtt_done_stamp = 0;
        self.probe_rtt_round_done = false;
        self.min_rtt_us = tp.min_rtt_ns.saturating_div(1000).min(u64::from(u32::MAX)) as u32;
        if tp.min_rtt_ns == u64::MAX {
            self.min_rtt_us = u32::MAX;
        }
        self.min_rtt_stamp = jiffies(tp);
        self.bw.reset(self.rtt_cnt, 0);
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(tp);
        self.round_start = false;
        self.idle_restart = false;
        self.full_bw_reached = false;
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.cycle_mstamp = 0;
        self.cycle_idx = 0;
        self.reset_lt_bw_sampling(tp);
        self.reset_startup_mode();
        self.ack_epoch_mstamp = now_us(tp);
        self.ack_epoch_acked = 0;
        self.extra_acked_win_rtts = 0;
        self.extra_acked_win_idx = 0;
        self.extra_acked = [0; 2];
        self.full_bw_round = None;
        // Linux: sk_pacing_status from NONE to NEEDED.
        tp.paced = true;
    }

    /// Linux `bbr_ssthresh()`: entering loss recovery, save cwnd; ssthresh unchanged.
    fn ssthresh(&mut self, tp: &CcState, _cause: ReductionCause) -> u32 {
        self.save_cwnd(tp);
        tp.ssthresh
    }

    /// BBR has no `cong_avoid`: `cong_control` replaces it, so the sender never calls this.
    fn cong_avoid(&mut self, _tp: &mut CcState, _acked: u32) {}

    /// Linux `bbr_set_state()`: an RTO ends a round and restarts full-pipe detection.
    fn set_state(&mut self, tp: &mut CcState, new_state: CaState) {
        if new_state == CaState::Loss {
            let rs = RateSample {
                losses: 1,
                ..RateSample::default()
            };
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0;
            self.round_start = true;
            self.lt_bw_sampling(tp, &rs);
        }
    }

    /// Linux `bbr_cwnd_event()`: restarting from idle while app-limited.
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

    /// Linux `bbr_undo_cwnd()`: a spurious slow-down resets full-pipe detection.
    fn undo_cwnd(&mut self, tp: &CcState) -> u32 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(tp);
        tp.cwnd
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    /// Linux `bbr_main()`.
    fn cong_control(&mut self, tp: &mut CcState, rs: &RateSample) {
        self.update_model(tp, rs);
        let bw = self.bw();
        self.set_pacing_rate(tp, bw, self.pacing_gain);
        self.set_cwnd(tp, rs, rs.acked_sacked, bw, self.cwnd_gain);
    }

    fn set_param(
        &mut self,
        path: &str,
        name: &str,
        value: &ParamValue,
    ) -> Result<(), ScenarioError> {
        params::set(&TABLE, self, path, name, value)
    }

    /// Linux `bbr_get_info()` (bandwidth, min RTT, gains) plus the mode and round count.
    fn diagnostics(&self) -> Vec<(&'static str, f64)> {
        let unit = f64::from(BBR_UNIT);
        vec![
            ("mode", self.mode as u32 as f64),
            ("bw_pkts_per_ms", self.bw() as f64 * 1000.0 / BW_UNIT as f64),
            (
                "min_rtt_ms",
                if self.min_rtt_us == u32::MAX {
                    f64::NAN
                } else {
                    f64::from(self.min_rtt_us) / 1000.0
                },
            ),
            ("pacing_gain", f64::from(self.pacing_gain) / unit),
            ("cwnd_gain", f64::from(self.cwnd_gain) / unit),
            ("min_rtt_stamp_s", self.min_rtt_stamp as f64 / 1000.0),
            ("round", f64::from(self.rtt_cnt)),
            ("full_bw_reached", f64::from(u8::from(self.full_bw_reached))),
            (
                "full_bw_round",
                self.full_bw_round.map_or(f64::NAN, f64::from),
            ),
            ("lt_use_bw", f64::from(u8::from(self.lt_use_bw))),
            ("probe_rtt_count", f64::from(self.probe_rtt_count)),
        ]
    }
}

#[cfg(test)]
mod tests;
