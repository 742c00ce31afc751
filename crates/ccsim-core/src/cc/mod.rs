//! Congestion-control algorithms behind the [`CongestionControl`] trait.
//!
//! The trait mirrors Linux's `struct tcp_congestion_ops` (`include/net/tcp.h`) hook for
//! hook — `ssthresh`, `cong_avoid`, `pkts_acked`, `cwnd_event`, `set_state`,
//! `in_ack_event`, `undo_cwnd` — so a Linux module ports line by line. One addition,
//! after neqo's `CongestionEvent` and quinn's `is_ecn`: `ssthresh` is told whether the
//! reduction answers a loss or an ECN echo, which is where ABE's `beta_ecn` (RFC 8511)
//! plugs in. The TCP endpoint owns cwnd/ssthresh in [`CcState`] and hands it to the hooks,
//! like Linux's `tcp_sock`.
//!
//! Algorithms are selected through the [`Cc`] enum (static dispatch on the per-ACK path);
//! the TCP code never names one — [`build`] maps a scenario's `cc = ...` to an instance.
//!
//! Every parameter of every algorithm can also be changed while the flow runs
//! ([`CongestionControl::set_param`]); the new value is used from the next ACK on. Whether a
//! value is accepted never depends on the controller's state, so a change validated once
//! (on a copy, when the scenario is built) cannot fail later.

pub mod abe;
pub mod bbr;
pub mod bbr3;
pub mod bbr_common;
pub mod cdg;
pub mod cubic;
pub mod dctcp;
pub mod knob;
pub mod ledbat;
pub mod newreno;
pub mod policy;
pub mod prague;
pub mod reno;
pub mod vegas;

use crate::engine::rng::SimRng;
use crate::net::packet::Ecn;
pub use crate::params::shown;
use crate::scenario::{AlgoSpec, ParamValue, ScenarioError};
pub use knob::{Knob, KnobUnit};

/// Linux's `TCP_INFINITE_SSTHRESH`.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// Linux `enum tcp_ca_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open = 0,
    Disorder = 1,
    Cwr = 2,
    Recovery = 3,
    Loss = 4,
}

/// Linux `enum tcp_ca_event` (the subset the TCP model raises).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when no packet is in flight (after idle).
    TxStart,
    /// Congestion window restart after idle.
    CwndRestart,
    /// End of a CWR or Recovery reduction.
    CompleteCwr,
    /// Retransmission timeout: entering Loss.
    Loss,
    /// A CE-marked data packet arrived (receiver side, DCTCP).
    EcnIsCe,
    /// A non-CE data packet arrived (receiver side, DCTCP).
    EcnNoCe,
}

/// Why the window is being reduced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReductionCause {
    /// Fast-retransmit loss recovery or retransmission timeout.
    Loss,
    /// An ACK carried ECN-Echo (RFC 3168 §6.1.2).
    Ecn,
    /// The controller itself asked for a reduction (`CcState::request_cwr`), e.g. CDG's
    /// delay-gradient backoff.
    Delay,
}

/// The sender state a congestion controller reads and writes (Linux `tcp_sock` fields).
/// Windows are in packets (segments), times in nanoseconds.
#[derive(Debug, Clone)]
pub struct CcState {
    pub cwnd: u32,
    pub ssthresh: u32,
    /// Linux `snd_cwnd_cnt`: ACKed packets counted towards the next additive increase.
    pub cwnd_cnt: u32,
    pub cwnd_clamp: u32,
    /// cwnd before the current reduction (Linux `prior_cwnd`).
    pub prior_cwnd: u32,
    pub mss: u32,
    pub ca_state: CaState,
    /// Linux `tcp_is_cwnd_limited()`: growth is only allowed when true.
    pub is_cwnd_limited: bool,
    pub now_ns: u64,
    /// Smoothed RTT (0 before the first sample) and the minimum RTT seen.
    pub srtt_ns: u64,
    pub min_rtt_ns: u64,
    /// Segment numbers: next to send, oldest unacknowledged.
    pub snd_nxt: u64,
    pub snd_una: u64,
    pub packets_out: u32,
    /// Linux `tcp_packets_in_flight()`.
    pub in_flight: u32,
    /// Packets delivered (cumulatively or selectively acknowledged) so far, and those
    /// delivered with ECE set.
    pub delivered: u64,
    pub delivered_ce: u64,
    /// Whether ECN was negotiated on this flow.
    pub ecn_ok: bool,
    /// When data was last transmitted (Linux `tp->lsndtime`); at a `TxStart` event it
    /// still holds the previous transmission's time.
    pub lsndtime_ns: u64,
    /// Packets SACKed (or, without SACK, counted from duplicate ACKs): Linux `sacked_out`.
    pub sacked_out: u32,
    /// The flow is paced (Linux `sk_pacing_status != SK_PACING_NONE`).
    pub paced: bool,
    /// Set by a controller (in `cong_avoid`) to make the sender enter CWR and reduce
    /// through `ssthresh` with [`ReductionCause::Delay`], as Linux CDG calls
    /// `tcp_enter_cwr()`. The sender clears it.
    pub request_cwr: bool,
    /// Pacing rate in payload bytes per second set by a controller with `cong_control`
    /// (Linux `sk_pacing_rate`); 0 leaves the sender's `tcp_update_pacing_rate` default.
    pub pacing_rate: u64,
    /// Earliest departure time of the next packet (Linux `tcp_wstamp_ns`); set before
    /// `cong_control` is called.
    pub wstamp_ns: u64,
    /// Packets marked lost so far (Linux `tp->lost`).
    pub lost: u64,
    /// Linux `tp->app_limited`: 0, or the `delivered` count past which the current
    /// application-limited stretch ends. Kept only for flows that sample delivery rates.
    pub app_limited: u64,
    /// Linux `tp->delivered_mstamp`: when `delivered` last grew (rate-sampled flows only).
    pub delivered_mstamp_ns: u64,
}

impl CcState {
    /// Linux `tcp_in_slow_start()`: `cwnd < ssthresh`.
    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
}

/// Per-ACK sample given to `pkts_acked` (Linux `struct ack_sample`).
#[derive(Debug, Clone, Copy)]
pub struct AckSample {
    /// Packets newly cumulatively acknowledged.
    pub pkts_acked: u32,
    /// RTT of the most recently sent newly acknowledged packet (Linux `ca_rtt_us`), if any.
    pub rtt_ns: Option<u64>,
    /// Packets in flight before this ACK.
    pub in_flight: u32,
}

/// A delivery-rate sample (Linux `struct rate_sample`), built per ACK by
/// `crate::tcp::rate` for controllers that ask for it and handed to
/// [`CongestionControl::cong_control`]. Times in nanoseconds; -1 marks an invalid count,
/// interval or RTT as in Linux.
#[derive(Debug, Clone, Copy)]
pub struct RateSample {
    /// Start of the sampled interval (`None`: no timing information).
    pub prior_mstamp_ns: Option<u64>,
    /// `delivered` when the sampled packet was sent.
    pub prior_delivered: u64,
    /// Packets delivered over the interval.
    pub delivered: i64,
    /// The interval: the longer of the send and ACK phases.
    pub interval_ns: i64,
    pub snd_interval_ns: i64,
    pub rcv_interval_ns: i64,
    /// RTT of the most recently sent packet this ACK (S)ACKed.
    pub rtt_ns: i64,
    /// Packets newly marked lost on this ACK.
    pub losses: u32,
    /// Packets newly (S)ACKed on this ACK.
    pub acked_sacked: u32,
    /// Packets in flight before this ACK.
    pub prior_in_flight: u32,
    /// The sample covers a stretch in which the application had nothing to send.
    pub is_app_limited: bool,
    /// The sampled packet was retransmitted.
    pub is_retrans: bool,
    /// The ACK was probably delayed (Linux `FLAG_ACK_MAYBE_DELAYED`).
    pub is_ack_delayed: bool,
    /// Packets in flight when the sampled packet was sent, itself included (Linux
    /// `rs->tx_in_flight`, BBRv3's `tcp_set_tx_in_flight`).
    pub tx_in_flight: u32,
    /// Packets marked lost over the sample's interval: `tp->lost` now minus its value when
    /// the sampled packet was sent (BBRv3's `rs->lost`; -1 with no timing information).
    pub lost: i64,
    /// Packets delivered with ECE over the interval (Linux `rs->delivered_ce`).
    pub delivered_ce: i64,
    /// `tp->delivered_ce` and `tp->lost` when the sampled packet was sent.
    pub prior_delivered_ce: u64,
    pub prior_lost: u64,
    /// The ACK carried ECN-Echo (Linux `rs->is_ece`, `FLAG_ECE`).
    pub is_ece: bool,
}

/// What a controller learns about a packet the sender has just marked lost (BBRv3's
/// `skb_marked_lost(sk, skb)` hook reads these fields of the skb's `tx` snapshot).
#[derive(Debug, Clone, Copy)]
pub struct LostSkb {
    /// Packets in flight when it was (last) sent, itself included (`tx.in_flight`).
    pub tx_in_flight: u32,
    /// `tp->lost` when it was sent (`tx.lost`).
    pub tx_lost: u64,
    /// It was sent while the flow was application-limited (`tx.is_app_limited`).
    pub is_app_limited: bool,
    /// Its snapshot still holds a `delivered_mstamp` (Linux: not zeroed by a SACK).
    pub has_delivered_mstamp: bool,
}

impl Default for RateSample {
    fn default() -> Self {
        RateSample {
            prior_mstamp_ns: None,
            prior_delivered: 0,
            delivered: 0,
            interval_ns: 0,
            snd_interval_ns: 0,
            rcv_interval_ns: 0,
            rtt_ns: -1,
            losses: 0,
            acked_sacked: 0,
            prior_in_flight: 0,
            is_app_limited: false,
            is_retrans: false,
            is_ack_delayed: false,
            tx_in_flight: 0,
            lost: 0,
            delivered_ce: 0,
            prior_delivered_ce: 0,
            prior_lost: 0,
            is_ece: false,
        }
    }
}

/// Flags describing an incoming ACK (Linux `CA_ACK_*`).
#[derive(Debug, Clone, Copy, Default)]
pub struct AckFlags {
    /// The ACK advanced `snd_una` ("slow path" update in Linux terms).
    pub window_update: bool,
    /// The ACK carried ECN-Echo.
    pub ece: bool,
}

/// The hooks a congestion controller implements (Linux `tcp_congestion_ops`).
pub trait CongestionControl {
    /// Called when the flow starts.
    fn init(&mut self, _tp: &mut CcState) {}
    /// The new slow-start threshold on entering a reduction (Linux `.ssthresh`).
    fn ssthresh(&mut self, tp: &CcState, cause: ReductionCause) -> u32;
    /// Grow the window on an ACK outside reductions (Linux `.cong_avoid`).
    fn cong_avoid(&mut self, tp: &mut CcState, acked: u32);
    /// Per-ACK sample (Linux `.pkts_acked`).
    fn pkts_acked(&mut self, _tp: &mut CcState, _sample: &AckSample) {}
    /// Congestion-state change (Linux `.set_state`).
    fn set_state(&mut self, _tp: &mut CcState, _new_state: CaState) {}
    /// Events (Linux `.cwnd_event`).
    fn cwnd_event(&mut self, _tp: &mut CcState, _event: CaEvent) {}
    /// Every ACK (Linux `.in_ack_event`).
    fn in_ack_event(&mut self, _tp: &mut CcState, _flags: AckFlags) {}
    /// cwnd to restore when a reduction is undone (Linux `.undo_cwnd`).
    fn undo_cwnd(&mut self, tp: &CcState) -> u32 {
        reno::undo_cwnd(tp)
    }
    /// Change a parameter while the flow runs. `path` prefixes error messages.
    fn set_param(
        &mut self,
        path: &str,
        name: &str,
        value: &ParamValue,
    ) -> Result<(), ScenarioError>;
    /// Whether the controller wants ECT on every packet and a per-packet CE echo
    /// (Linux `TCP_CONG_NEEDS_ECN`, DCTCP).
    fn needs_accurate_ecn(&self) -> bool {
        false
    }
    /// The ECN codepoint of the data packets of an ECN flow: ECT(0) (RFC 3168), or
    /// ECT(1) for an L4S controller (RFC 9331, TCP Prague).
    fn ecn_codepoint(&self) -> Ecn {
        Ecn::Ect0
    }
    /// Internal variables worth tracing (DCTCP's α, ...), as (name, value); sampled for
    /// flows with `trace = true` into the `cc_vars` table (Linux's `get_info` idea).
    fn diagnostics(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
    /// The parameter that makes this algorithm more or less deferential to other traffic,
    /// with its range from most deferential to most aggressive, if it has one: what the
    /// deadline-aware LBE controller ([`crate::control::deadline`]) turns unless the
    /// scenario names another.
    fn lbe_knob(&self) -> Option<Knob> {
        None
    }
    /// Whether the controller replaces the sender's window logic (`cong_avoid` and the PRR
    /// reduction) with [`CongestionControl::cong_control`] (Linux `.cong_control` set).
    fn has_cong_control(&self) -> bool {
        false
    }
    /// Whether the sender should build a [`RateSample`] per ACK (`tcp_rate.c`); flows whose
    /// controller says no pay nothing for it.
    fn wants_rate_sample(&self) -> bool {
        self.has_cong_control()
    }
    /// Whether the controller reads BBRv3's additions to the rate sample (`tx.lost`,
    /// `tx.delivered_ce`, `tx.in_flight` in each packet's snapshot, `rs.lost`,
    /// `rs.delivered_ce`, `rs.tx_in_flight`) and wants `skb_marked_lost` calls. Linux
    /// records them for every flow; here only flows whose controller says yes pay for them
    /// (for the others those fields stay 0), which keeps the per-packet path of the other
    /// rate-sampling controllers as it was before BBRv3.
    fn needs_extended_rate_sample(&self) -> bool {
        false
    }
    /// Linux `.cong_control`: on every ACK, set cwnd (and `tp.pacing_rate`) from the rate
    /// sample, in place of `cong_avoid`/PRR (`tcp_cong_control`).
    fn cong_control(&mut self, _tp: &mut CcState, _rs: &RateSample) {}
    /// BBRv3's `.skb_marked_lost`: the sender has just marked a packet lost (`tp.lost`
    /// already counts it; `tcp_notify_skb_loss_event`). Called only for flows whose
    /// controller's [`CongestionControl::needs_extended_rate_sample`] is true (the snapshot
    /// it reads lives there).
    fn skb_marked_lost(&mut self, _tp: &mut CcState, _skb: &LostSkb) {}
}

/// The congestion controllers ccsim knows, dispatched statically.
// The variants stay inline (no Box): the per-ACK path should not chase a pointer.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Cc {
    NewReno(newreno::NewReno),
    Cubic(cubic::Cubic),
    Dctcp(dctcp::Dctcp),
    Cdg(cdg::Cdg),
    Ledbat(ledbat::Ledbat),
    Vegas(vegas::Vegas),
    Prague(prague::Prague),
    Bbr(bbr::Bbr),
    Bbr3(bbr3::Bbr3),
    Policy(policy::Policy),
}

macro_rules! each_cc {
    ($self:expr, $c:ident => $body:expr) => {
        match $self {
            Cc::NewReno($c) => $body,
            Cc::Cubic($c) => $body,
            Cc::Dctcp($c) => $body,
            Cc::Cdg($c) => $body,
            Cc::Ledbat($c) => $body,
            Cc::Vegas($c) => $body,
            Cc::Prague($c) => $body,
            Cc::Bbr($c) => $body,
            Cc::Bbr3($c) => $body,
            Cc::Policy($c) => $body,
        }
    };
}

impl Cc {
    /// The algorithm's name as written in scenario files.
    pub fn name(&self) -> &'static str {
        match self {
            Cc::NewReno(_) => "newreno",
            Cc::Cubic(_) => "cubic",
            Cc::Dctcp(_) => "dctcp",
            Cc::Cdg(_) => "cdg",
            Cc::Ledbat(_) => "ledbat",
            Cc::Vegas(_) => "vegas",
            Cc::Prague(_) => "prague",
            Cc::Bbr(_) => "bbr",
            Cc::Bbr3(_) => "bbr3",
            Cc::Policy(_) => "policy",
        }
    }

    /// Give a randomised controller (CDG's probabilistic backoff) its own random stream.
    /// The simulator should pass a per-flow stream derived from the scenario seed
    /// (`engine::rng::stream(seed, kind, flow)`); controllers without randomness ignore it.
    pub fn seed_rng(&mut self, rng: SimRng) {
        match self {
            Cc::Cdg(c) => c.seed_rng(rng),
            Cc::Bbr(c) => c.seed_rng(rng),
            Cc::Bbr3(c) => c.seed_rng(rng),
            _ => {}
        }
    }
}

impl CongestionControl for Cc {
    fn init(&mut self, tp: &mut CcState) {
        each_cc!(self, c => c.init(tp))
    }
    #[inline]
    fn ssthresh(&mut self, tp: &CcState, cause: ReductionCause) -> u32 {
        each_cc!(self, c => c.ssthresh(tp, cause))
    }
    #[inline]
    fn cong_avoid(&mut self, tp: &mut CcState, acked: u32) {
        each_cc!(self, c => c.cong_avoid(tp, acked))
    }
    #[inline]
    fn pkts_acked(&mut self, tp: &mut CcState, sample: &AckSample) {
        each_cc!(self, c => c.pkts_acked(tp, sample))
    }
    #[inline]
    fn set_state(&mut self, tp: &mut CcState, new_state: CaState) {
        each_cc!(self, c => c.set_state(tp, new_state))
    }
    #[inline]
    fn cwnd_event(&mut self, tp: &mut CcState, event: CaEvent) {
        each_cc!(self, c => c.cwnd_event(tp, event))
    }
    #[inline]
    fn in_ack_event(&mut self, tp: &mut CcState, flags: AckFlags) {
        each_cc!(self, c => c.in_ack_event(tp, flags))
    }
    fn undo_cwnd(&mut self, tp: &CcState) -> u32 {
        each_cc!(self, c => c.undo_cwnd(tp))
    }
    fn set_param(
        &mut self,
        path: &str,
        name: &str,
        value: &ParamValue,
    ) -> Result<(), ScenarioError> {
        each_cc!(self, c => c.set_param(path, name, value))
    }
    fn needs_accurate_ecn(&self) -> bool {
        each_cc!(self, c => c.needs_accurate_ecn())
    }
    #[inline]
    fn ecn_codepoint(&self) -> Ecn {
        each_cc!(self, c => c.ecn_codepoint())
    }
    fn diagnostics(&self) -> Vec<(&'static str, f64)> {
        each_cc!(self, c => c.diagnostics())
    }
    fn lbe_knob(&self) -> Option<Knob> {
        each_cc!(self, c => c.lbe_knob())
    }
    #[inline]
    fn has_cong_control(&self) -> bool {
        each_cc!(self, c => c.has_cong_control())
    }
    #[inline]
    fn wants_rate_sample(&self) -> bool {
        each_cc!(self, c => c.wants_rate_sample())
    }
    #[inline]
    fn needs_extended_rate_sample(&self) -> bool {
        each_cc!(self, c => c.needs_extended_rate_sample())
    }
    #[inline]
    fn cong_control(&mut self, tp: &mut CcState, rs: &RateSample) {
        each_cc!(self, c => c.cong_control(tp, rs))
    }
    fn skb_marked_lost(&mut self, tp: &mut CcState, skb: &LostSkb) {
        each_cc!(self, c => c.skb_marked_lost(tp, skb))
    }
}

/// Names accepted in `cc = ...` (`reno` is an alias of `newreno`).
pub const KNOWN_KINDS: &[&str] = &[
    "newreno", "cubic", "dctcp", "cdg", "ledbat", "vegas", "bbr", "bbr3", "prague", "policy",
];

/// The most [`CongestionControl::diagnostics`] any algorithm reports (BBRv3's 16): a
/// traced flow adds this many `cc_vars` rows and one `cc_trace` row per stats interval,
/// which the series bound and the cost estimate count before the run (they counted 8,
/// half of BBRv3's rows).
pub const MAX_DIAGNOSTICS: u64 = 16;

/// Seed of CDG's random stream until the simulator passes a per-flow one
/// ([`Cc::seed_rng`]).
pub const DEFAULT_CC_SEED: u64 = 0xCD6;

/// Parameter pairs that must not be given together in one scenario table: the second
/// would silently override the first.
const CONFLICTS: &[(&str, &str, &str)] = &[
    ("cdg", "g", "backoff_factor"),
    ("cdg", "coexistence", "use_shadow"),
    ("cdg", "coexistence", "use_ineff"),
];

/// Build the controller a scenario asks for. `path` is the spec's key path (`flows[0].cc`).
pub fn build(spec: &AlgoSpec, path: &str) -> Result<Cc, ScenarioError> {
    let mut cc = match spec.kind.as_str() {
        "newreno" | "reno" => Cc::NewReno(newreno::NewReno::default()),
        "cubic" => Cc::Cubic(cubic::Cubic::default()),
        "dctcp" => Cc::Dctcp(dctcp::Dctcp::default()),
        "cdg" => Cc::Cdg(cdg::Cdg::new(DEFAULT_CC_SEED)),
        "ledbat" => Cc::Ledbat(ledbat::Ledbat::default()),
        "vegas" => Cc::Vegas(vegas::Vegas::default()),
        "prague" => Cc::Prague(prague::Prague::default()),
        "bbr" => Cc::Bbr(bbr::Bbr::new(DEFAULT_CC_SEED)),
        "bbr3" => Cc::Bbr3(bbr3::Bbr3::new(DEFAULT_CC_SEED)),
        "policy" => Cc::Policy(policy::Policy::default()),
        other => {
            return Err(ScenarioError::new(
                format!("{path}.kind"),
                format!(
                    "unknown congestion control {other:?} (known: {})",
                    KNOWN_KINDS.join(", ")
                ),
            ))
        }
    };
    for &(kind, a, b) in CONFLICTS {
        if cc.name() == kind && spec.params.contains_key(a) && spec.params.contains_key(b) {
            return Err(ScenarioError::new(
                format!("{path}.{b}"),
                format!("cannot be given together with {a} (both set the same thing)"),
            ));
        }
    }
    for (name, value) in &spec.params {
        cc.set_param(path, name, value)?;
    }
    Ok(cc)
}

/// Every congestion control's parameter table, in [`KNOWN_KINDS`] order.
pub fn tables() -> Vec<crate::params::AlgorithmDoc> {
    vec![
        newreno::TABLE.describe(),
        cubic::TABLE.describe(),
        dctcp::TABLE.describe(),
        cdg::TABLE.describe(),
        ledbat::TABLE.describe(),
        vegas::TABLE.describe(),
        bbr::TABLE.describe(),
        bbr3::TABLE.describe(),
        prague::TABLE.describe(),
        policy::TABLE.describe(),
    ]
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn no_algorithm_reports_more_than_max_diagnostics() {
        let mut most = 0;
        for kind in KNOWN_KINDS {
            let spec = AlgoSpec {
                kind: (*kind).to_owned(),
                params: Default::default(),
            };
            let n = build(&spec, "cc").unwrap().diagnostics().len() as u64;
            assert!(n <= MAX_DIAGNOSTICS, "{kind}: {n}");
            most = most.max(n);
        }
        // tight: the bound is some algorithm's count, not a guess above all of them
        assert_eq!(most, MAX_DIAGNOSTICS);
    }

    /// A sender state in congestion avoidance with `cwnd` packets, ECN on, 100 ms RTT.
    pub fn state(cwnd: u32) -> CcState {
        CcState {
            cwnd,
            ssthresh: cwnd,
            cwnd_cnt: 0,
            cwnd_clamp: u32::MAX / 2,
            prior_cwnd: cwnd,
            mss: 1448,
            ca_state: CaState::Open,
            is_cwnd_limited: true,
            now_ns: 0,
            srtt_ns: 100_000_000,
            min_rtt_ns: 100_000_000,
            snd_nxt: cwnd as u64,
            snd_una: 0,
            packets_out: cwnd,
            in_flight: cwnd,
            delivered: 0,
            delivered_ce: 0,
            ecn_ok: true,
            lsndtime_ns: 0,
            sacked_out: 0,
            paced: false,
            request_cwr: false,
            pacing_rate: 0,
            wstamp_ns: 0,
            lost: 0,
            app_limited: 0,
            delivered_mstamp_ns: 0,
        }
    }

    #[test]
    fn build_knows_every_kind_and_rejects_unknown_ones() {
        for &kind in KNOWN_KINDS {
            let spec = AlgoSpec {
                kind: kind.to_owned(),
                params: Default::default(),
            };
            assert_eq!(build(&spec, "flows[0].cc").unwrap().name(), kind);
        }
        let spec = AlgoSpec {
            kind: "bbr9".to_owned(),
            params: Default::default(),
        };
        let err = build(&spec, "flows[0].cc").unwrap_err();
        assert_eq!(err.path, "flows[0].cc.kind");
    }

    #[test]
    fn conflicting_parameters_are_rejected() {
        let mut params = std::collections::BTreeMap::new();
        params.insert("g".to_owned(), ParamValue::Number(3.0));
        params.insert("backoff_factor".to_owned(), ParamValue::Number(42.0));
        let spec = AlgoSpec {
            kind: "cdg".to_owned(),
            params,
        };
        let err = build(&spec, "flows[0].cc").unwrap_err();
        assert_eq!(err.path, "flows[0].cc.backoff_factor");
    }
}
