//! CSAQM, the core-stateless AQM of ccsim paper 001 (Nádas, Gombos, Hudoba, Laki,
//! "Towards a Congestion Control-Independent Core-Stateless AQM", ANRW 2018), §3.
//!
//! State: histograms over the 65536 coded packet values ([`crate::ppv::coding`]) of the
//! bits in the queue, `H_IN`, and of the bits marked for dropping, `H_DROP`;
//! `q = Σ H_IN`. The bottleneck capacity is `C`, the queueing delay threshold `D`, the
//! maximum allowed queueing delay `D_max`.
//!
//! - **Arrival** of a packet with coded value `v` and `ps` bits: free space
//!   `s = C·D_max − q`. If `s ≥ ps` the packet is enqueued and `H_IN(v) += ps`. Else
//!   `ps − s` bits with the smallest coded values `w < v` are *marked for dropping*
//!   (`d = min(H_IN(w), b)` moves from `H_IN(w)` to `H_DROP(w)`), smallest first, until
//!   enough space is freed or no such bits remain; on success the packet is enqueued,
//!   else it is dropped.
//! - **Dequeue**: the head packet is dropped while `H_DROP(v) > 0` for its value:
//!   `H_DROP(v) −= ps`, and a negative remainder is taken from `H_IN(v)`. A surviving
//!   head is removed (`H_IN(v) −= ps`); if `v < CTV` it is CE-marked when ECT, else
//!   dropped and the dequeue runs again.
//! - **CTV**: at a dequeue, if the CTV was not computed in the last `T_update`, it is
//!   recomputed: with `l = C·D`, `CTV = 0` when `q ≤ l`, else
//!   `CTV = argmin_v Σ_{i=v}^{65535} H_IN(i) ≤ l` (the top `l` bits of value pass).
//!
//! Defaults (paper 001 §4): `d` = 20 ms, `d_max` = infinite, `t_update` = 1 ms,
//! `capacity` = the link's rate.
//!
//! Choices where §3 is silent:
//! - Bits marked for dropping stay marked when the arriving packet still does not fit
//!   and is dropped (the text marks "until ... we cannot drop more" and then drops the
//!   packet; it does not undo the marking). The space they free counts for later
//!   arrivals.
//! - The CTV check runs at the start of every dequeue attempt (including the re-runs
//!   after an AQM drop), before the head packet is examined.
//! - With `d_max` infinite there is no buffer limit at all, as in the paper's default.
//!
//! Departures: none known. A `capacity` left to default follows the link's rate changes
//! ([`super::Qdisc::link_rate_changed`]); an explicit one stays fixed.

use std::collections::VecDeque;

use super::common::ValueHist;
use super::{LinkInfo, QdiscCtx, QueueDisc};
use crate::net::packet::PacketId;
use crate::params::{
    self, Algorithm, Family, Kind, Param, Reader, Value, ANY_DURATION, POSITIVE_DURATION,
};
use crate::scenario::units::fmt_duration;
use crate::scenario::{AlgoSpec, ParamValue, ScenarioError, SimDuration};

/// CSAQM.
#[derive(Debug)]
pub struct Csaqm {
    capacity_bps: u64,
    /// `capacity` defaulted to the link rate (and follows its changes).
    capacity_from_link: bool,
    d_ns: u64,
    d_max_ns: Option<u64>,
    t_update_ns: u64,
    h_in: ValueHist,
    h_drop: Vec<u64>,
    ctv: u32,
    last_ctv_ns: Option<u64>,
    queue: VecDeque<PacketId>,
    bytes: u64,
}

/// CSAQM's parameters.
pub const TABLE: Algorithm = Algorithm {
    name: "csaqm",
    aliases: &[],
    family: Family::QueueDiscipline,
    summary: "core-stateless AQM: drops the lowest packet values to keep the delay near D",
    reference: "paper 001 (Nádas et al., ANRW 2018) §3",
    params: &[
        Param {
            name: "d",
            kind: POSITIVE_DURATION,
            default: "\"20ms\"",
            help: "queueing delay threshold D",
        },
        Param {
            name: "d_max",
            kind: Kind::Custom {
                unit: "duration",
                accepts: "a positive duration like \"40ms\" (at least d), or \"inf\"",
                read: d_max,
            },
            default: "\"inf\"",
            help: "maximum queueing delay D_max (≥ `d`); `\"inf\"`/`\"infinite\"`/`\"infinity\"`: no buffer limit at all",
        },
        Param {
            name: "t_update",
            kind: ANY_DURATION,
            default: "\"1ms\"",
            help: "CTV recomputation period",
        },
        Param {
            name: "capacity",
            kind: Kind::Rate,
            default: "the link's rate (and follows its changes)",
            help: "bottleneck capacity C",
        },
    ],
};

/// `d_max`: a positive duration, or `"inf"` (no bound).
fn d_max(value: &ParamValue) -> Result<Value, String> {
    let s = params::text(value)?;
    if matches!(s.trim(), "inf" | "infinite" | "infinity") {
        return Ok(Value::Infinite);
    }
    match SimDuration::parse(s) {
        Ok(d) if d.ns > 0 => Ok(Value::Ns(d.ns)),
        _ => Err(format!(
            "expected a positive duration like \"40ms\" or \"inf\", got {s:?}"
        )),
    }
}

/// `rate × duration` in bits.
fn bits(rate_bps: u64, ns: u64) -> u64 {
    (rate_bps as u128 * ns as u128 / 1_000_000_000) as u64
}

impl Csaqm {
    /// `d_max_ns = None` means no limit.
    pub fn new(capacity_bps: u64, d_ns: u64, d_max_ns: Option<u64>, t_update_ns: u64) -> Self {
        Csaqm {
            capacity_bps,
            capacity_from_link: false,
            d_ns,
            d_max_ns,
            t_update_ns,
            h_in: ValueHist::new(),
            h_drop: vec![0; 65536],
            ctv: 0,
            last_ctv_ns: None,
            queue: VecDeque::new(),
            bytes: 0,
        }
    }

    pub fn from_spec(spec: &AlgoSpec, path: &str, link: LinkInfo) -> Result<Self, ScenarioError> {
        let r = Reader::new(&TABLE, spec, path);
        let d = SimDuration {
            ns: r.ns("d", 20_000_000)?,
        };
        let d_max = match r.get("d_max")? {
            Some(Value::Ns(ns)) => Some(SimDuration { ns }),
            _ => None,
        };
        let t_update = SimDuration {
            ns: r.ns("t_update", 1_000_000)?,
        };
        let from_link = !r.given("capacity");
        let capacity_bps = r.get("capacity")?.map_or(link.rate_bps, Value::bps);
        r.finish()?;
        if let Some(m) = d_max {
            if m.ns < d.ns {
                return Err(ScenarioError::new(
                    format!("{path}.d_max"),
                    format!(
                        "must be at least d ({}), got {}",
                        fmt_duration(d),
                        fmt_duration(m)
                    ),
                ));
            }
        }
        let mut q = Csaqm::new(capacity_bps, d.ns, d_max.map(|m| m.ns), t_update.ns);
        q.capacity_from_link = from_link;
        Ok(q)
    }

    /// The current congestion threshold value (coded; 65536 means every packet).
    pub fn ctv(&self) -> u32 {
        self.ctv
    }

    /// Bits of coded value `v` in the queue and not marked for dropping (`H_IN(v)`).
    pub fn h_in(&self, v: u16) -> u64 {
        self.h_in.get(v)
    }

    /// Bits of coded value `v` marked for dropping (`H_DROP(v)`).
    pub fn h_drop(&self, v: u16) -> u64 {
        self.h_drop[v as usize]
    }

    /// Change `C`.
    pub fn set_capacity(&mut self, bps: u64) {
        self.capacity_bps = bps;
        self.capacity_from_link = false;
    }

    /// The link rate changed: follow it unless `capacity` was given explicitly.
    pub fn link_rate_changed(&mut self, bps: u64) {
        if self.capacity_from_link {
            self.capacity_bps = bps;
        }
    }

    /// "Maintain CTV for AQM action".
    fn maybe_update_ctv(&mut self, now: u64) {
        if let Some(t) = self.last_ctv_ns {
            if now < t + self.t_update_ns {
                return;
            }
        }
        self.last_ctv_ns = Some(now);
        let l = bits(self.capacity_bps, self.d_ns);
        self.ctv = if self.h_in.total() <= l {
            0
        } else {
            self.h_in.suffix_threshold(l)
        };
    }
}

impl QueueDisc for Csaqm {
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx<'_>) {
        let p = ctx.pool.get(id);
        let (size, v) = (p.size_bytes as u64, p.value);
        let ps = size * 8;
        if let Some(d_max) = self.d_max_ns {
            let room = bits(self.capacity_bps, d_max) as i128 - self.h_in.total() as i128;
            if room < ps as i128 {
                let mut need = (ps as i128 - room) as u64;
                while need > 0 {
                    let Some(w) = self.h_in.smallest_nonzero_below(v as u32) else {
                        break;
                    };
                    let d = self.h_in.get(w).min(need);
                    self.h_in.sub(w, d);
                    self.h_drop[w as usize] += d;
                    need -= d;
                }
                if need > 0 {
                    ctx.drop_packet(id);
                    return;
                }
            }
        }
        self.h_in.add(v, ps);
        self.queue.push_back(id);
        self.bytes += size;
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx<'_>) -> Option<PacketId> {
        loop {
            self.maybe_update_ctv(ctx.now_ns);
            let id = self.queue.pop_front()?;
            let p = ctx.pool.get(id);
            let (size, v) = (p.size_bytes as u64, p.value);
            let ps = size * 8;
            self.bytes -= size;
            let marked = &mut self.h_drop[v as usize];
            if *marked > 0 {
                if *marked >= ps {
                    *marked -= ps;
                } else {
                    let rest = ps - *marked;
                    *marked = 0;
                    self.h_in.sub(v, rest);
                }
                ctx.drop_packet(id);
                continue;
            }
            self.h_in.sub(v, ps);
            if (v as u32) < self.ctv && !ctx.mark_ce(id) {
                ctx.drop_packet(id);
                continue;
            }
            return Some(id);
        }
    }

    fn peek(&self) -> Option<PacketId> {
        self.queue.front().copied()
    }

    fn len_packets(&self) -> usize {
        self.queue.len()
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }

    fn held(&self) -> Vec<PacketId> {
        self.queue.iter().copied().collect()
    }
    fn state(&self, _now_ns: u64, out: &mut Vec<(&'static str, f64)>) {
        // The congestion threshold value, coded (16-bit logarithmic) and as a packet value.
        out.push(("ctv", f64::from(self.ctv)));
        out.push((
            "ctv_value",
            crate::ppv::coding::decode(self.ctv.min(u32::from(u16::MAX)) as u16),
        ));
    }
}
