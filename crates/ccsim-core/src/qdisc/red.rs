//! RED (Random Early Detection), Linux-like by default, with ns-2/Floyd options, and the
//! DCTCP-style step marker.
//!
//! References: S. Floyd, V. Jacobson, "Random Early Detection Gateways for Congestion
//! Avoidance", IEEE/ACM ToN 1993 (average, linear marking, count-based uniformisation);
//! Linux `include/net/red.h` and `net/sched/sch_red.c` (the default behaviour here);
//! ns-2 `queue/red.cc` (gentle mode, averaging in packets); S. Floyd, R. Gummadi,
//! S. Shenker, "Adaptive RED", 2001, as Linux `red_adaptative_algo` implements it;
//! M. Alizadeh et al., "Data Center TCP", SIGCOMM 2010 §3.1 and RFC 8257 §3 for the
//! step marker (RED with `min_th = max_th = K` and weight 1, marking on the
//! instantaneous queue).
//!
//! **`mode = "red"` (default)**, per arrival (Linux `red_enqueue`, `red_action`):
//! 1. `avg ← avg + w_q·(q − avg)`, `q` the backlog before the arrival, in `unit`
//!    (`"bytes"`, Linux; or `"packets"`, ns-2's default). After an idle period (the
//!    queue empty and the link done sending) the average instead decays to
//!    `avg·(1 − w_q)^m`, `m = idle_time / (avpkt·8/rate)`, the Floyd–Jacobson rule
//!    that Linux approximates with its `Stab` table (`red_calc_qavg_from_idle_time`).
//! 2. Below `min_th`: enqueue (`qcount = −1`). From `max_th` (non-gentle) or `2·max_th`
//!    (gentle): "hard mark". In between: `p_b = max_p·(avg − min_th)/(max_th − min_th)`,
//!    or in the gentle region `[max_th, 2·max_th)`
//!    `p_b = max_p + (1 − max_p)·(avg − max_th)/max_th` (ns-2).
//! 3. Uniformisation as Linux does it: on the first arrival above `min_th` draw
//!    `R ~ U(0,1)` (`qcount = 0`); at each later arrival `qcount += 1` and mark when
//!    `p_b·qcount ≥ R`, then `qcount = 0` and a new `R`. At constant `p_b` the number of
//!    arrivals between marks is uniform on `1..⌈1/p_b⌉`, as with Floyd's
//!    `p_a = p_b/(1 − count·p_b)` (Floyd–Jacobson §7).
//! 4. A probabilistic mark drops the packet unless `ecn` is on and the packet is ECT
//!    (then CE-marked); a Not-ECT packet is dropped unless `nodrop`. A hard mark drops
//!    unless `ecn` is on and `harddrop` off (then CE-marks ECT packets). Finally the
//!    tail limit `limit` (bfifo `backlog + len ≤ limit`, or pfifo `qlen < limit`).
//!
//! **`adaptive = true`** (Linux `TC_RED_ADAPTATIVE`): every 500 ms (first at 500 ms),
//! with `Δ = max_th − min_th`: if `avg > min_th + 0.6Δ` and `max_p ≤ 0.5`,
//! `max_p += min(0.01, max_p/4)`; else if `avg < min_th + 0.4Δ` and `max_p ≥ 0.01`,
//! `max_p ×= 0.9`.
//!
//! **`mode = "step"`**: every arrival that finds the instantaneous queue (before it) at
//! or above `threshold` (K, e.g. `"65p"` or `"100KB"`) is CE-marked if ECT and dropped
//! otherwise (`ecn`, default true in this mode; with `ecn = false` all such arrivals are
//! dropped). This is Linux RED configured as DCTCP deployments do (`min = max = K`,
//! `Wlog = 0`), whose hard mark drops Not-ECT packets.
//!
//! Defaults (iproute2 `tc/q_red.c`, which follows Floyd's REDparameters note, unless
//! noted): `unit = "bytes"`, `limit` = 1 BDP (ccsim's usual default; `tc` requires
//! one), `max_th = limit/4`, `min_th = max_th/3`, `max_p = 0.02`, `w_q = 0.002`
//! (Floyd–Jacobson's value; `tc` derives Wlog from `burst`), `avpkt = 1000B`,
//! `gentle = false`, `ecn = false`, `harddrop = false`, `nodrop = false`,
//! `adaptive = false`. `min_th = max_th` is accepted (then there is no linear region).
//!
//! Linux vs ns-2 RED (select with the knobs): Linux averages bytes, has no gentle
//! region, marks CE above `max_th` when ECN is on, decays the idle average with a
//! table, and never drops based on `qlen ≤ 1`. ns-2 averages packets by default, is
//! gentle by default (in later versions), drops (or marks) "forced" above the
//! (2·)max_th, applies the decay `m+1` times with `m` from the mean packet size, skips
//! drops when `qlen ≤ 1`, and may use the `wait` uniformisation.
//!
//! Departures: floating-point `avg` and `p_b` instead of Linux's Wlog/Plog fixed point
//! (Linux rounds `max_p/Δ` to a reciprocal and `w_q` to a power of two); the exact
//! `(1 − w_q)^m` idle decay instead of the `Stab` table; the idle period starts when the
//! link finishes sending the last queued packet (Linux: at the next empty dequeue); ns-2's
//! `qlen > 1` guard and `wait` option are not implemented.

use super::fifo::{fifo_occupancy, PacketFifo};
use super::{LinkInfo, QdiscCtx, QueueDisc};
use crate::engine::serialisation_ns;
use crate::net::packet::PacketId;
use crate::params::{Algorithm, Family, Kind, Param, Reader, PROBABILITY};
use crate::scenario::{AlgoSpec, QueueLimit, ScenarioError};

/// Averaging and threshold unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Bytes,
    Packets,
}

/// RED or step marking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Red,
    Step,
}

/// RED's configuration. Thresholds and limit are in `unit`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RedConfig {
    pub mode: Mode,
    pub unit: Unit,
    pub limit: f64,
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub w_q: f64,
    pub gentle: bool,
    pub ecn: bool,
    pub harddrop: bool,
    pub nodrop: bool,
    pub adaptive: bool,
    pub avpkt_bytes: u64,
    /// Step threshold K.
    pub threshold: f64,
    /// Link rate (idle decay, idle start).
    pub rate_bps: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    None,
    Prob,
    Hard,
}

/// RED.
#[derive(Debug)]
pub struct Red {
    cfg: RedConfig,
    max_p: f64,
    avg: f64,
    qcount: i64,
    q_r: f64,
    idle_since: Option<u64>,
    next_adapt_ns: u64,
    fifo: PacketFifo,
}

/// RED's parameters.
pub const TABLE: Algorithm = Algorithm {
    name: "red",
    aliases: &[],
    family: Family::QueueDiscipline,
    summary: "Random Early Detection (Linux-like, ns-2/Floyd options), and a DCTCP step marker",
    reference: "Linux include/net/red.h, net/sched/sch_red.c; Floyd & Jacobson, ToN 1993; ns-2 red.cc; step: RFC 8257 §3",
    params: &[
        Param {
            name: "mode",
            kind: Kind::Keyword {
                values: &["red", "step"],
                unknown: "unknown RED mode {got} (known: {known})",
                trim: false,
            },
            default: "\"red\"",
            help: "RED, or step marking at threshold K with instantaneous queue (DCTCP)",
        },
        Param {
            name: "unit",
            kind: Kind::Keyword {
                values: &["bytes", "packets"],
                unknown: "unknown unit {got} (known: {known})",
                trim: false,
            },
            default: "\"bytes\"",
            help: "average and thresholds in `\"bytes\"` (Linux) or `\"packets\"` (ns-2)",
        },
        Param {
            name: "limit",
            kind: Kind::Limit,
            default: "\"1bdp\"",
            help: "tail-drop limit (packets, bytes or BDPs, converted into `unit` with the link MTU)",
        },
        Param {
            name: "min_th",
            kind: Kind::Limit,
            default: "max_th / 3",
            help: "lower threshold, ≤ `max_th` (equal: no linear region)",
        },
        Param {
            name: "max_th",
            kind: Kind::Limit,
            default: "limit / 4",
            help: "upper threshold (a queue limit: `\"30p\"`, `\"45KB\"`, `\"0.25bdp\"`)",
        },
        Param {
            name: "max_p",
            kind: PROBABILITY,
            default: "0.02",
            help: "marking probability at `max_th`",
        },
        Param {
            name: "w_q",
            kind: Kind::Number {
                what: "a weight in (0, 1]",
                ok: |x| x > 0.0 && x <= 1.0,
            },
            default: "0.002",
            help: "averaging weight",
        },
        Param {
            name: "gentle",
            kind: Kind::Bool,
            default: "false",
            help: "ns-2's gentle region `[max_th, 2 max_th)`",
        },
        Param {
            name: "ecn",
            kind: Kind::Bool,
            default: "true in step mode, else false",
            help: "CE-mark ECT packets instead of dropping",
        },
        Param {
            name: "harddrop",
            kind: Kind::Bool,
            default: "false",
            help: "hard marks drop even with `ecn`",
        },
        Param {
            name: "nodrop",
            kind: Kind::Bool,
            default: "false",
            help: "a marked Not-ECT packet is enqueued instead of dropped (probabilistic marks, and hard marks without `harddrop`); needs `ecn = true`",
        },
        Param {
            name: "adaptive",
            kind: Kind::Bool,
            default: "false",
            help: "Adaptive RED (Linux `red_adaptative_algo`)",
        },
        Param {
            name: "avpkt",
            kind: Kind::Size {
                what: Some("a positive size like \"1000B\""),
                ok: |b| b > 0,
            },
            default: "\"1000B\"",
            help: "mean packet size for the idle decay",
        },
        Param {
            name: "threshold",
            kind: Kind::Limit,
            default: "none (required in step mode)",
            help: "K, a queue limit (`\"65p\"`, `\"100KB\"`)",
        },
    ],
};

/// Adaptive RED's period (Linux `HZ/2`).
const ADAPT_NS: u64 = 500_000_000;

fn in_unit(l: QueueLimit, unit: Unit, link: LinkInfo) -> f64 {
    let mtu = link.mtu_bytes as f64;
    match (l, unit) {
        (QueueLimit::Packets(n), Unit::Packets) => n as f64,
        (QueueLimit::Packets(n), Unit::Bytes) => n as f64 * mtu,
        (QueueLimit::Bytes(b), Unit::Bytes) => b as f64,
        (QueueLimit::Bytes(b), Unit::Packets) => b as f64 / mtu,
        (QueueLimit::Bdp(f), Unit::Bytes) => f * link.bdp_bytes,
        (QueueLimit::Bdp(f), Unit::Packets) => f * link.bdp_bytes / mtu,
    }
}

impl Red {
    pub fn new(cfg: RedConfig) -> Self {
        Red {
            max_p: cfg.max_p,
            cfg,
            avg: 0.0,
            qcount: -1,
            q_r: 0.0,
            // Linux starts an idle period when configured on an empty queue.
            idle_since: Some(0),
            next_adapt_ns: ADAPT_NS,
            fifo: PacketFifo::default(),
        }
    }

    pub fn from_spec(spec: &AlgoSpec, path: &str, link: LinkInfo) -> Result<Self, ScenarioError> {
        let r = Reader::new(&TABLE, spec, path);
        r.require_strings(&["mode", "unit"])?;
        let mode = match r.word("mode", "red")? {
            "step" => Mode::Step,
            _ => Mode::Red,
        };
        let unit = match r.word("unit", "bytes")? {
            "packets" => Unit::Packets,
            _ => Unit::Bytes,
        };
        let limit = r.limit("limit")?.unwrap_or(QueueLimit::Bdp(1.0));
        let limit = in_unit(limit, unit, link);
        let max_th = r.limit("max_th")?;
        let max_th = max_th.map_or(limit / 4.0, |l| in_unit(l, unit, link));
        let min_th = r.limit("min_th")?;
        let min_th = min_th.map_or(max_th / 3.0, |l| in_unit(l, unit, link));
        let max_p = r.number("max_p", 0.02)?;
        let w_q = r.number("w_q", 0.002)?;
        let gentle = r.boolean("gentle", false)?;
        let ecn = r.boolean("ecn", mode == Mode::Step)?;
        let harddrop = r.boolean("harddrop", false)?;
        let nodrop = r.boolean("nodrop", false)?;
        let adaptive = r.boolean("adaptive", false)?;
        let avpkt = r.bytes("avpkt", 1000)?;
        let threshold = r.limit("threshold")?;
        r.finish()?;
        let threshold = match (mode, threshold) {
            (Mode::Step, None) => {
                return Err(ScenarioError::new(
                    format!("{path}.threshold"),
                    "step marking needs a threshold K like \"65p\" or \"100KB\"",
                ))
            }
            (Mode::Step, Some(k)) => in_unit(k, unit, link),
            (Mode::Red, Some(_)) => {
                return Err(ScenarioError::new(
                    format!("{path}.threshold"),
                    "only mode = \"step\" has a threshold (RED uses min_th and max_th)",
                ))
            }
            (Mode::Red, None) => 0.0,
        };
        if mode == Mode::Red && min_th > max_th {
            return Err(ScenarioError::new(
                format!("{path}.min_th"),
                format!(
                    "must not exceed max_th ({max_th} {}), got {min_th}",
                    match unit {
                        Unit::Bytes => "bytes",
                        Unit::Packets => "packets",
                    }
                ),
            ));
        }
        if nodrop && !ecn {
            return Err(ScenarioError::new(
                format!("{path}.nodrop"),
                "nodrop is only meaningful with ecn = true (Linux red_validate_flags)",
            ));
        }
        Ok(Red::new(RedConfig {
            mode,
            unit,
            limit,
            min_th,
            max_th,
            max_p,
            w_q,
            gentle,
            ecn,
            harddrop,
            nodrop,
            adaptive,
            avpkt_bytes: avpkt,
            threshold,
            rate_bps: link.rate_bps,
        }))
    }

    /// The link rate changed (idle-decay clock and idle start).
    pub fn link_rate_changed(&mut self, rate_bps: u64) {
        self.cfg.rate_bps = rate_bps;
    }

    pub fn config(&self) -> &RedConfig {
        &self.cfg
    }

    /// The average queue (in `unit`) as of the last arrival.
    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// The current `max_p` (changes with `adaptive`).
    pub fn max_p(&self) -> f64 {
        self.max_p
    }

    /// `p_b` at average queue `avg` (0 below `min_th`, 1 in the hard-mark region).
    pub fn prob_b(&self, avg: f64) -> f64 {
        let c = &self.cfg;
        if avg < c.min_th {
            0.0
        } else if avg < c.max_th {
            self.max_p * (avg - c.min_th) / (c.max_th - c.min_th)
        } else if c.gentle && avg < 2.0 * c.max_th {
            self.max_p + (1.0 - self.max_p) * (avg - c.max_th) / c.max_th
        } else {
            1.0
        }
    }

    fn backlog(&self) -> f64 {
        match self.cfg.unit {
            Unit::Bytes => self.fifo.bytes() as f64,
            Unit::Packets => self.fifo.len() as f64,
        }
    }

    /// The average decayed over an idle period up to `now`, if idle.
    fn idle_avg(&self, now: u64) -> Option<f64> {
        let since = self.idle_since?;
        if now <= since {
            return None;
        }
        let xmit_ns = self.cfg.avpkt_bytes as f64 * 8e9 / self.cfg.rate_bps as f64;
        let m = (now - since) as f64 / xmit_ns;
        Some(self.avg * (1.0 - self.cfg.w_q).powf(m))
    }

    fn action(&mut self, rng: &mut crate::engine::rng::SimRng) -> Action {
        let c = self.cfg;
        let hard_from = if c.gentle { 2.0 * c.max_th } else { c.max_th };
        if self.avg < c.min_th {
            self.qcount = -1;
            Action::None
        } else if self.avg >= hard_from {
            self.qcount = -1;
            Action::Hard
        } else {
            self.qcount += 1;
            if self.qcount != 0 {
                if self.prob_b(self.avg) * self.qcount as f64 >= self.q_r {
                    self.qcount = 0;
                    self.q_r = rng.uniform();
                    return Action::Prob;
                }
            } else {
                self.q_r = rng.uniform();
            }
            Action::None
        }
    }
}

impl QueueDisc for Red {
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx<'_>) {
        let size = ctx.pool.get(id).size_bytes as u64;
        let c = self.cfg;
        let q = self.backlog();
        let action = match c.mode {
            Mode::Step => {
                if q >= c.threshold {
                    Action::Hard
                } else {
                    Action::None
                }
            }
            Mode::Red => {
                self.avg = match self.idle_avg(ctx.now_ns) {
                    Some(a) => a,
                    None => self.avg + c.w_q * (q - self.avg),
                };
                self.idle_since = None;
                self.action(ctx.rng)
            }
        };
        let fits = match c.unit {
            Unit::Bytes => (self.fifo.bytes() + size) as f64 <= c.limit,
            Unit::Packets => (self.fifo.len() as f64) < c.limit,
        };
        let admit = fits
            && match action {
                Action::None => true,
                Action::Prob => c.ecn && (ctx.mark_ce(id) || c.nodrop),
                Action::Hard => c.ecn && !c.harddrop && (ctx.mark_ce(id) || c.nodrop),
            };
        if admit {
            self.fifo.push(id, size);
        } else {
            ctx.drop_packet(id);
        }
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx<'_>) -> Option<PacketId> {
        let id = self.fifo.pop(ctx.pool)?;
        let size = ctx.pool.get(id).size_bytes;
        if self.fifo.is_empty() && self.cfg.mode == Mode::Red {
            self.idle_since = Some(ctx.now_ns + serialisation_ns(size, self.cfg.rate_bps));
        }
        Some(id)
    }

    fifo_occupancy!(fifo);

    fn uses_timer(&self) -> bool {
        self.cfg.adaptive && self.cfg.mode == Mode::Red
    }

    fn timer_deadline(&self) -> Option<u64> {
        self.uses_timer().then_some(self.next_adapt_ns)
    }

    fn on_timer(&mut self, ctx: &mut QdiscCtx<'_>) {
        self.next_adapt_ns += ADAPT_NS;
        let c = self.cfg;
        let avg = self.idle_avg(ctx.now_ns).unwrap_or(self.avg);
        let delta = c.max_th - c.min_th;
        let (target_min, target_max) = (c.min_th + 0.4 * delta, c.min_th + 0.6 * delta);
        if avg > target_max && self.max_p <= 0.5 {
            self.max_p += (self.max_p / 4.0).min(0.01);
        } else if avg < target_min && self.max_p >= 0.01 {
            self.max_p *= 0.9;
        }
    }
    fn state(&self, _now_ns: u64, out: &mut Vec<(&'static str, f64)>) {
        // In the configured unit (bytes or packets), like `min_th`/`max_th`.
        out.push(("avg_queue", self.avg));
        out.push(("max_p", self.max_p));
    }
}
