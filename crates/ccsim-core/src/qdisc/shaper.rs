//! A token-bucket shaper in front of any discipline (DOCSIS 3.0 service-flow QoS
//! parameters "Maximum Sustained Traffic Rate", "Peak Traffic Rate", "Maximum Traffic
//! Burst"; ccsim paper 002 §IV: upstream 5 Mbps sustained, 20 Mbps peak, 10 MB burst;
//! downstream 20 Mbps / 50 Mbps / 20 MB).
//!
//! Model: two token buckets on departures, as Linux `net/sched/sch_tbf.c` with
//! `peakrate` (and the dual bucket of DOCSIS):
//! - the sustained bucket fills at `sustained_bps` up to `burst_bytes`;
//! - the peak bucket fills at `peak_bps` up to `peak_burst_bytes` (default 1522 B, the
//!   DOCSIS peak-rate bucket of one maximum Ethernet frame — second-hand, fact sheet
//!   §10.1; Linux tbf calls it `mtu`/minburst);
//! - the head packet (of `size` bytes) may leave when each bucket holds at least
//!   `min(size, depth)` bytes; leaving takes `size` bytes from both (a bucket may go
//!   negative when a packet is larger than its depth or when the inner discipline
//!   returns a larger packet than the one it showed with `peek`).
//!
//! Both buckets **start full** (fact sheet §10.2/§11 trap 20: the CableLabs model's MTB
//! bucket starts full, "which creates a large initial burst" — paper 002 Fig. 3's peak-rate
//! phase). While tokens are short, `dequeue` returns `None` and `next_ready_ns` gives
//! the time the head packet will conform; the link then retries. `peek`, `len_*`,
//! `held` and the timer hooks delegate to the inner discipline. Token arithmetic is
//! exact (integers in 1/(8·10⁹) byte units).
//!
//! Departures of this default mode from DOCSIS: the shaper limits departures, not
//! bandwidth *requests*, and there is no request–grant MAC (no MAP intervals, grant
//! jitter or fragmentation; fact sheet §10.2).
//!
//! **The held packet** (as Linux tbf and ns-3's `TbfQueueDisc`): `tbf_dequeue` looks at
//! the head through the child's `peek`, which for PIE, CoDel and FQ-CoDel is
//! `qdisc_peek_dequeued` (include/net/sch_generic.h): the child's dequeue runs at that
//! moment (CoDel's drop decision, PIE's delay sample and departure-rate count) and the
//! packet waits in the child's `gso_skb` slot until the tokens let it go (ns-3's
//! `QueueDisc::DoPeek` does the same). So when the head does not conform yet and the
//! inner discipline [peeks by dequeuing](QueueDisc::peek_dequeues), `dequeue` takes the
//! packet out of it once and holds it here; `peek`, `len_*` and `held` count it. A FIFO
//! child (Linux `qdisc_peek_head`) is only peeked, as before. Departure from Linux: the
//! held packet counts in this shaper's length, not in the child's own limit (Linux
//! counts it in the child's `qlen`/backlog, a one-packet difference in the child's
//! tail-drop limit and PIE's backlog-based estimate).
//!
//! **DOCSIS mode** ([`Shaped::docsis`], [`build_docsis`]): paper 002 §IV models the
//! cable-modem upstream as "a single queue that implements both rate shaping using a
//! token bucket algorithm ... and the Request-Grant DOCSIS MAC", with the ns-2 model
//! CableLabs provided (§VI). This mode is that model, CableLabs' ns-2 `DocsisLink`
//! (`docsislink.cc`, © 2012-2013 CableLabs, G. White, J. Padden, T. Hayakawa; fact
//! sheet §10.2 [N2-DOCSIS]), event for event:
//! - MAP intervals of `mapint`, the first one `mapint` after time 0 (when the model
//!   initialises: the sustained bucket `msrtokens` starts full at `bucket`); each MAP's
//!   grant message arrives 650 µs (`MAP_PROCESSING_TIME`) before the MAP starts.
//! - `makeRequest`: at the start of a MAP without a grant (contention) and at the start
//!   of every grant (piggy-back): `msrtokens += elapsed · rate / 8` (capped at `bucket`),
//!   `peaktokens = elapsed · peakrate / 8` (**not** accumulated), with `elapsed` the
//!   time since the previous request; the request is the queued bytes (plus a packet
//!   being fragmented) not yet requested or granted, capped by both, and debits
//!   `msrtokens`. So the token bucket limits requests, and `msrtokens` refills while
//!   the modem is idle or sends below the sustained rate.
//! - Requests wait in a pipeline of `floor(mapadv/mapint) + 1` entries; each MAP message
//!   grants the oldest `min(req, maxgrant ± U[−mgvar, mgvar) %)` bytes, the rest rolling
//!   forward.
//! - A MAP with granted bytes starts its grant at `U[0, mapint − tx(granted))` into the
//!   interval (`tx` at the PHY rate); the grant serves whole packets from the
//!   discipline while its bytes last; a packet larger than what is left is taken from
//!   the discipline and fragmented over later grants (it leaves when the grants add up
//!   to its size; a MAP while fragmenting schedules a grant even without new bytes, as
//!   in `DocsisLink`); granted bytes left when the discipline is empty are dumped.
//! - So the discipline sees departures only inside grants, and every packet waits at
//!   least one request–grant cycle: the "MAC layer delay of 5ms-6ms" of paper 002 §IV
//!   (video test) with CableLabs' values.
//!
//! Parameters ([`DocsisParams::cablelabs`]): CableLabs' `simple-docsislink.tcl` sets
//! `mapint = 2 ms`, `maxgrant = peakrate · mapint / 8`, `mgvar = 1` (its uncongested
//! case) and leaves `mapadv` at `mapint`; paper 002 gives none of them. The PHY rate is
//! the link's rate. Departures from `DocsisLink`: `msrtokens`/`peaktokens` are exact
//! (ns-2 truncates them to whole bytes at every request); a fragmented packet is
//! handed to the link whole when its last fragment is granted and is then serialised
//! at the link rate (ns-2 sends only the last fragment's bytes then); whole packets are
//! serialised by the link one after another, as `askForNextPacket` spaces them; the
//! congestion model (grant starvation, `dynamic_bw`) is not modelled; with no peak
//! rate, requests are not peak-limited (ns-2 would request nothing).

use super::{Qdisc, QdiscCtx, QueueDisc};
use crate::engine::rng::SimRng;
use crate::net::packet::PacketId;

/// Token units per byte: tokens are counted in 1/(8·10⁹) byte, so a rate of `r` bps
/// adds exactly `r` units per nanosecond.
const UNITS_PER_BYTE: i128 = 8_000_000_000;

/// The DOCSIS peak-rate bucket depth (one maximum Ethernet frame with VLAN tag).
pub const DEFAULT_PEAK_BURST_BYTES: u64 = 1522;

#[derive(Debug, Clone, Copy)]
struct Bucket {
    rate_bps: u64,
    depth: i128,
    tokens: i128,
}

impl Bucket {
    fn new(rate_bps: u64, depth_bytes: u64) -> Self {
        let depth = depth_bytes as i128 * UNITS_PER_BYTE;
        Bucket {
            rate_bps,
            depth,
            tokens: depth,
        }
    }
    fn at(&self, elapsed_ns: u64) -> i128 {
        (self.tokens + elapsed_ns as i128 * self.rate_bps as i128).min(self.depth)
    }
    /// Nanoseconds from the last refill until `size` bytes conform.
    fn ready_after(&self, size: u64) -> u64 {
        let need = (size as i128 * UNITS_PER_BYTE).min(self.depth);
        if self.tokens >= need {
            0
        } else {
            let d = need - self.tokens;
            // A deficit of a few packets fits in 64 bits, whose division is several
            // times cheaper than the 128-bit one; the result is the same.
            match u64::try_from(d) {
                Ok(d) => d.div_ceil(self.rate_bps),
                Err(_) => {
                    let r = self.rate_bps as i128;
                    ((d + r - 1) / r) as u64
                }
            }
        }
    }
}

/// A shaper holding an inner discipline.
#[derive(Debug)]
pub struct Shaped {
    inner: Qdisc,
    sustained: Bucket,
    peak: Option<Bucket>,
    last_ns: u64,
    /// When the head packet the last `dequeue` held back will conform (for
    /// `next_ready_ns`, which has no access to the packet pool; only `dequeue` changes
    /// the buckets, so the time stays valid until the next one).
    blocked_until_ns: Option<u64>,
    /// The packet taken out of a peek-dequeuing inner discipline while it waits for
    /// tokens (Linux's child `gso_skb`), with its size in bytes.
    held_packet: Option<(PacketId, u64)>,
    /// The DOCSIS request–grant MAC ([`DocsisParams`]); `None` for the plain dual
    /// token bucket.
    mac: Option<Box<DocsisMac>>,
}

impl Shaped {
    /// `burst_bytes` and `peak_burst_bytes` are bucket depths; both buckets start full.
    pub fn new(
        inner: Qdisc,
        sustained_bps: u64,
        burst_bytes: u64,
        peak_bps: Option<u64>,
        peak_burst_bytes: u64,
    ) -> Result<Shaped, String> {
        if sustained_bps == 0 {
            return Err("sustained: expected a positive rate like \"5Mbps\", got 0".into());
        }
        if burst_bytes == 0 {
            return Err("burst: expected a positive size like \"10MB\", got 0".into());
        }
        if let Some(p) = peak_bps {
            if p < sustained_bps {
                return Err(format!(
                    "peak: must be at least the sustained rate ({sustained_bps} bps), got {p} bps"
                ));
            }
            if peak_burst_bytes == 0 {
                return Err("peak_burst: expected a positive size like \"1522B\", got 0".into());
            }
        }
        Ok(Shaped {
            inner,
            sustained: Bucket::new(sustained_bps, burst_bytes),
            peak: peak_bps.map(|p| Bucket::new(p, peak_burst_bytes)),
            last_ns: 0,
            blocked_until_ns: None,
            held_packet: None,
            mac: None,
        })
    }

    /// A shaper that models the DOCSIS 3.0 upstream request–grant MAC of the CableLabs
    /// ns-2 `DocsisLink` (see [`DocsisParams`]): the token bucket limits bandwidth
    /// *requests*, and the discipline is served only inside grants. `burst_bytes` is
    /// the Maximum Traffic Burst (starts full); `peak_bps` caps each request at
    /// `elapsed · peak / 8` (not accumulated; `None` = no peak limit).
    pub fn docsis(
        inner: Qdisc,
        sustained_bps: u64,
        burst_bytes: u64,
        peak_bps: Option<u64>,
        params: DocsisParams,
    ) -> Result<Shaped, String> {
        params.check()?;
        let mut s = Shaped::new(inner, sustained_bps, burst_bytes, peak_bps, 1)?;
        s.peak = None;
        s.mac = Some(Box::new(DocsisMac::new(
            params,
            sustained_bps,
            burst_bytes,
            peak_bps,
        )));
        Ok(s)
    }

    /// The DOCSIS MAC state, when this shaper models one.
    pub fn docsis_mac(&self) -> Option<&DocsisMac> {
        self.mac.as_deref()
    }

    /// The link's rate changed: in DOCSIS mode that is the PHY rate grants are placed
    /// with; the inner discipline hears it too.
    pub fn link_rate_changed(&mut self, rate_bps: u64) {
        if let Some(m) = self.mac.as_mut() {
            if rate_bps > 0 {
                m.p.phy_bps = rate_bps;
            }
        }
        self.inner.link_rate_changed(rate_bps);
    }

    /// The discipline behind the shaper.
    pub fn inner(&self) -> &Qdisc {
        &self.inner
    }

    pub fn inner_mut(&mut self) -> &mut Qdisc {
        &mut self.inner
    }

    /// Tokens (bytes) in the sustained bucket at `now_ns` (for traces and tests). In
    /// DOCSIS mode: the request tokens (`msrtokens`) as of the last request.
    pub fn sustained_tokens_bytes(&self, now_ns: u64) -> f64 {
        if let Some(m) = &self.mac {
            return m.msr_tokens as f64 / UNITS_PER_BYTE as f64;
        }
        self.sustained.at(now_ns.saturating_sub(self.last_ns)) as f64 / UNITS_PER_BYTE as f64
    }

    fn refill(&mut self, now: u64) {
        let dt = now.saturating_sub(self.last_ns);
        self.sustained.tokens = self.sustained.at(dt);
        if let Some(p) = self.peak.as_mut() {
            p.tokens = p.at(dt);
        }
        self.last_ns = self.last_ns.max(now);
    }

    /// Nanoseconds after `last_ns` until `size` bytes conform to both buckets.
    fn wait_ns(&self, size: u64) -> u64 {
        let s = self.sustained.ready_after(size);
        let p = self.peak.map_or(0, |b| b.ready_after(size));
        s.max(p)
    }
}

/// Wrap `inner` in a shaper (the scenario's `[bottleneck] shaper = { sustained, peak,
/// burst }`): sustained rate, optional peak rate (peak bucket depth
/// [`DEFAULT_PEAK_BURST_BYTES`]) and burst (sustained bucket depth), both buckets full
/// at start.
pub fn build_shaped(
    inner: Qdisc,
    sustained_bps: u64,
    peak_bps: Option<u64>,
    burst_bytes: u64,
) -> Result<Qdisc, String> {
    Shaped::new(
        inner,
        sustained_bps,
        burst_bytes,
        peak_bps,
        DEFAULT_PEAK_BURST_BYTES,
    )
    .map(|s| Qdisc::Shaped(Box::new(s)))
}

/// Wrap `inner` in the DOCSIS request–grant MAC ([`Shaped::docsis`]): sustained rate,
/// optional peak rate, Maximum Traffic Burst (starts full) and MAC parameters.
pub fn build_docsis(
    inner: Qdisc,
    sustained_bps: u64,
    peak_bps: Option<u64>,
    burst_bytes: u64,
    params: DocsisParams,
) -> Result<Qdisc, String> {
    Shaped::docsis(inner, sustained_bps, burst_bytes, peak_bps, params)
        .map(|s| Qdisc::Shaped(Box::new(s)))
}

impl QueueDisc for Shaped {
    #[inline]
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx<'_>) {
        if let Some(m) = self.mac.as_mut() {
            m.advance(ctx.now_ns, &self.inner, ctx.rng);
        }
        self.inner.enqueue(id, ctx);
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx<'_>) -> Option<PacketId> {
        if let Some(m) = self.mac.as_mut() {
            return m.dequeue(&mut self.inner, ctx);
        }
        let size = match self.held_packet {
            Some((_, size)) => size,
            None => ctx.pool.get(self.inner.peek()?).size_bytes as u64,
        };
        self.refill(ctx.now_ns);
        let mut wait_ns = self.wait_ns(size);
        if wait_ns > 0 && self.held_packet.is_none() && self.inner.peek_dequeues() {
            // Linux tbf_dequeue → qdisc_peek_dequeued: the child dequeues now (it may
            // drop the head and return another packet, or none) and the packet waits.
            let Some(id) = self.inner.dequeue(ctx) else {
                self.blocked_until_ns = None;
                return None;
            };
            let held_size = ctx.pool.get(id).size_bytes as u64;
            self.held_packet = Some((id, held_size));
            wait_ns = self.wait_ns(held_size);
        }
        if wait_ns > 0 {
            self.blocked_until_ns = Some(self.last_ns + wait_ns);
            return None;
        }
        self.blocked_until_ns = None;
        let id = match self.held_packet.take() {
            Some((id, _)) => id,
            None => self.inner.dequeue(ctx)?,
        };
        let sent = ctx.pool.get(id).size_bytes as i128 * UNITS_PER_BYTE;
        self.sustained.tokens -= sent;
        if let Some(p) = self.peak.as_mut() {
            p.tokens -= sent;
        }
        Some(id)
    }

    fn peek(&self) -> Option<PacketId> {
        if let Some(m) = &self.mac {
            if let Some((id, _)) = m.release.or(m.frag) {
                return Some(id);
            }
        }
        match self.held_packet {
            Some((id, _)) => Some(id),
            None => self.inner.peek(),
        }
    }

    fn len_packets(&self) -> usize {
        self.inner.len_packets()
            + self.mac.as_ref().map_or(0, |m| m.held_packets())
            + usize::from(self.held_packet.is_some())
    }

    fn len_bytes(&self) -> u64 {
        self.inner.len_bytes()
            + self.mac.as_ref().map_or(0, |m| m.held_bytes())
            + self.held_packet.map_or(0, |(_, size)| size)
    }

    fn next_ready_ns(&self, now_ns: u64) -> Option<u64> {
        if let Some(m) = &self.mac {
            return Some(m.next_ready_ns(now_ns, &self.inner));
        }
        match self.blocked_until_ns {
            Some(t) if self.held_packet.is_some() || self.inner.len_packets() > 0 => {
                Some(t.max(now_ns))
            }
            _ => self.inner.next_ready_ns(now_ns),
        }
    }

    fn held(&self) -> Vec<PacketId> {
        let mut v = self.inner.held();
        v.extend(self.held_packet.map(|(id, _)| id));
        if let Some(m) = &self.mac {
            v.extend(m.release.iter().chain(m.frag.iter()).map(|&(id, _)| id));
        }
        v
    }

    fn uses_timer(&self) -> bool {
        self.inner.uses_timer()
    }

    fn timer_deadline(&self) -> Option<u64> {
        self.inner.timer_deadline()
    }

    fn on_timer(&mut self, ctx: &mut QdiscCtx<'_>) {
        self.inner.on_timer(ctx);
    }
    fn state(&self, now_ns: u64, out: &mut Vec<(&'static str, f64)>) {
        let tokens = self.sustained_tokens_bytes(now_ns);
        out.push(("sustained_tokens_bytes", tokens));
        let peak_bps = match (&self.mac, &self.peak) {
            (Some(m), _) => m.peak_bps,
            (None, Some(p)) => {
                let dt = now_ns.saturating_sub(self.last_ns);
                out.push(("peak_tokens_bytes", p.at(dt) as f64 / UNITS_PER_BYTE as f64));
                Some(p.rate_bps)
            }
            (None, None) => None,
        };
        // The rate the shaper lets through now: the peak rate while the sustained bucket
        // holds a full-size packet's tokens, the sustained rate once it is spent.
        let sustained_bps = match &self.mac {
            Some(m) => m.rate_bps,
            None => self.sustained.rate_bps,
        };
        let rate = match peak_bps {
            Some(p) if tokens >= 1500.0 => p,
            _ => sustained_bps,
        };
        out.push(("rate_mbps", rate as f64 / 1e6));
        self.inner.state(now_ns, out);
    }
}

/// `DocsisLink`'s fixed MAP processing time (`MAP_PROCESSING_TIME`, 650 µs): the MAP
/// message carrying the next interval's grant arrives this long before it starts.
pub const MAP_PROCESSING_NS: u64 = 650_000;

/// Parameters of the DOCSIS request–grant MAC (CableLabs ns-2 `DocsisLink`, the model
/// paper 002 §IV and §VI credit to Greg White; its TCL names in brackets). Defaults
/// ([`DocsisParams::cablelabs`]) are those of CableLabs' `simple-docsislink.tcl`:
/// `mapint = 2 ms`, `maxgrant = peakrate · mapint / 8`, `mgvar = 1` (% grant variation,
/// the uncongested case), `mapadv` = `mapint`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DocsisParams {
    /// MAP interval (`mapint_`).
    pub map_interval_ns: u64,
    /// MAP advance (`mapadv_`, ≥ `mapint`): the request pipeline holds
    /// `floor(mapadv / mapint) + 1` entries.
    pub map_advance_ns: u64,
    /// Largest grant per MAP in bytes (`maxgrant_`).
    pub max_grant_bytes: u64,
    /// Grant variability in percent of `maxgrant` (`mgvar_`).
    pub grant_var_pct: u32,
    /// The upstream PHY rate (the link's `bandwidth_`), for placing a grant inside its
    /// MAP interval.
    pub phy_bps: u64,
}

impl DocsisParams {
    /// CableLabs' `simple-docsislink.tcl` values for a peak rate (or the sustained rate
    /// when there is none) and PHY rate.
    pub fn cablelabs(peak_or_sustained_bps: u64, phy_bps: u64) -> Self {
        let map = 2_000_000;
        DocsisParams {
            map_interval_ns: map,
            map_advance_ns: map,
            max_grant_bytes: (peak_or_sustained_bps as u128 * map as u128 / 8_000_000_000) as u64,
            grant_var_pct: 1,
            phy_bps,
        }
    }

    fn check(&self) -> Result<(), String> {
        if self.map_interval_ns <= MAP_PROCESSING_NS {
            return Err(format!(
                "map_interval: must exceed the 650 µs MAP processing time, got {} ns",
                self.map_interval_ns
            ));
        }
        if self.map_advance_ns < self.map_interval_ns {
            return Err("map_advance: must be at least the MAP interval".into());
        }
        if self.max_grant_bytes == 0 || self.phy_bps == 0 {
            return Err("max_grant and the PHY rate must be positive".into());
        }
        Ok(())
    }
}

/// The state of the request–grant MAC (`DocsisLink`'s members). Token counts are in
/// 1/(8·10⁹) byte (exact), requests and grants in bytes.
#[derive(Debug, Clone)]
pub struct DocsisMac {
    p: DocsisParams,
    rate_bps: u64,
    peak_bps: Option<u64>,
    bucket: i128,
    initialized: bool,
    /// `msrtokens_`: the sustained-rate bucket, debited by requests.
    msr_tokens: i128,
    /// `last_update_time_`: time of the last request.
    last_update_ns: u64,
    /// `req_[]`: the request pipeline, oldest first.
    req: Vec<i64>,
    /// `tokens_current_` / `tokens_next_`: granted bytes of this and the next MAP.
    tokens_current: i64,
    tokens_next: i64,
    /// `frag_pkt_` (with its size) and `frag_sent_bytes_`.
    frag: Option<(PacketId, i64)>,
    frag_sent: i64,
    /// A fragmented packet whose last fragment has been granted, for the link.
    release: Option<(PacketId, i64)>,
    /// A grant has started and its bytes may be spent on whole packets.
    pulling: bool,
    next_map_ns: u64,
    next_msg_ns: Option<u64>,
    grant_ns: Option<u64>,
    /// Granted bytes thrown away because the queue was empty (`DocsisLink: Dumping`).
    pub dumped_bytes: u64,
}

impl DocsisMac {
    fn new(p: DocsisParams, rate_bps: u64, bucket_bytes: u64, peak_bps: Option<u64>) -> Self {
        let n = (p.map_advance_ns / p.map_interval_ns) as usize + 1;
        DocsisMac {
            p,
            rate_bps,
            peak_bps,
            bucket: bucket_bytes as i128 * UNITS_PER_BYTE,
            initialized: false,
            msr_tokens: 0,
            last_update_ns: 0,
            req: vec![0; n],
            tokens_current: 0,
            tokens_next: 0,
            frag: None,
            frag_sent: 0,
            release: None,
            pulling: false,
            // The constructor schedules the first MAP one interval after time 0.
            next_map_ns: p.map_interval_ns,
            next_msg_ns: None,
            grant_ns: None,
            dumped_bytes: 0,
        }
    }

    fn held_packets(&self) -> usize {
        self.frag.is_some() as usize + self.release.is_some() as usize
    }

    fn held_bytes(&self) -> u64 {
        (self.frag.map_or(0, |f| f.1) + self.release.map_or(0, |f| f.1)) as u64
    }

    /// `transmissionTime(bytes)` at the PHY rate, ns.
    fn tx_ns(&self, bytes: i64) -> u64 {
        (bytes.max(0) as u128 * 8_000_000_000 / self.p.phy_bps as u128) as u64
    }

    /// The earliest pending MAC event.
    fn next_event(&self) -> u64 {
        let mut t = self.next_map_ns;
        if let Some(m) = self.next_msg_ns {
            t = t.min(m);
        }
        if let Some(g) = self.grant_ns {
            t = t.min(g);
        }
        t
    }

    /// Run every MAC event up to `now` in time order. The queue cannot have changed
    /// since the last call (every change goes through `enqueue`/`dequeue`, which call
    /// this first), so each event sees the backlog it would have seen.
    fn advance(&mut self, now: u64, inner: &Qdisc, rng: &mut SimRng) {
        loop {
            let t = self.next_event();
            if t > now {
                return;
            }
            if self.grant_ns == Some(t) {
                self.on_grant(t, inner);
            } else if self.next_msg_ns == Some(t) {
                self.on_map_msg(rng);
            } else {
                self.on_map_start(t, inner, rng);
            }
        }
    }

    /// `handleMapIntTimer`.
    fn on_map_start(&mut self, t: u64, inner: &Qdisc, rng: &mut SimRng) {
        if !self.initialized {
            // `initializeIfNecessary`: the bucket starts full.
            self.initialized = true;
            self.msr_tokens = self.bucket;
            self.last_update_ns = t;
        }
        self.next_map_ns = t + self.p.map_interval_ns;
        self.next_msg_ns = Some(t + self.p.map_interval_ns - MAP_PROCESSING_NS);
        self.tokens_current += self.tokens_next;
        self.tokens_next = 0;
        if self.tokens_current == 0 {
            // No grant in this MAP: contention request.
            self.make_request(t, inner);
        } else {
            let need = self.tx_ns(self.tokens_current - self.frag_sent);
            let max = self.p.map_interval_ns.saturating_sub(need);
            let offset = (rng.uniform() * max as f64) as u64;
            self.grant_ns = Some(t + offset.min(max));
        }
    }

    /// `handleMapMsgTimer`: serve the oldest request, up to `maxgrant ± mgvar %`.
    fn on_map_msg(&mut self, rng: &mut SimRng) {
        self.next_msg_ns = None;
        let maxgrant = self.p.max_grant_bytes as i64;
        let w = self.p.grant_var_pct as i64 * maxgrant / 100;
        let r = if w == 0 {
            0
        } else {
            ((rng.uniform() * (2 * w) as f64) as i64).min(2 * w - 1) - w
        };
        let grant = self.req[0].min(maxgrant + r);
        let n = self.req.len();
        let carry = (self.req[0] - grant).max(0);
        if n > 1 {
            self.req[0] = carry + self.req[1];
            for i in 1..n - 1 {
                self.req[i] = self.req[i + 1];
            }
            self.req[n - 1] = 0;
        } else {
            self.req[0] = carry;
        }
        self.tokens_next = grant;
    }

    /// `handleGrantTimer`: piggy-backed request, then spend the grant.
    fn on_grant(&mut self, t: u64, inner: &Qdisc) {
        self.grant_ns = None;
        self.make_request(t, inner);
        match self.frag {
            None => self.ask_for_next(inner),
            Some((id, size)) => {
                if self.tokens_current < size {
                    self.frag_sent = self.tokens_current;
                } else {
                    self.release = Some((id, size));
                    self.tokens_current -= size;
                    self.frag = None;
                    self.frag_sent = 0;
                    self.ask_for_next(inner);
                }
            }
        }
    }

    /// `askForNextPacket`: keep serving whole packets while granted bytes are left;
    /// with an empty queue the grant's remainder is dumped.
    fn ask_for_next(&mut self, inner: &Qdisc) {
        self.pulling = false;
        if self.tokens_current > 0 {
            if inner.len_bytes() > 0 {
                self.pulling = true;
            } else {
                self.dumped_bytes += self.tokens_current as u64;
                self.tokens_current = 0;
            }
        }
    }

    /// `makeRequest`: refill the sustained bucket, ask for the queued bytes not yet
    /// requested or granted, capped by the sustained tokens and by the peak rate times
    /// the time since the last request.
    fn make_request(&mut self, now: u64, inner: &Qdisc) {
        let elapsed = now.saturating_sub(self.last_update_ns) as i128;
        self.msr_tokens = (self.msr_tokens + elapsed * self.rate_bps as i128).min(self.bucket);
        self.last_update_ns = now;
        let peak = self
            .peak_bps
            .map_or(i64::MAX, |p| (elapsed * p as i128 / UNITS_PER_BYTE) as i64);
        let curq = inner.len_bytes() as i64 + self.frag.map_or(0, |f| f.1);
        let total: i64 = self.req.iter().sum();
        let mut req = (curq - total - self.tokens_current - self.tokens_next).max(0);
        req = req
            .min((self.msr_tokens / UNITS_PER_BYTE).max(0) as i64)
            .min(peak);
        let n = self.req.len();
        self.req[n - 1] += req;
        self.msr_tokens -= req as i128 * UNITS_PER_BYTE;
    }

    /// The link asks for a packet (`recv` after the queue is resumed).
    fn dequeue(&mut self, inner: &mut Qdisc, ctx: &mut QdiscCtx<'_>) -> Option<PacketId> {
        self.advance(ctx.now_ns, inner, ctx.rng);
        if let Some((id, _)) = self.release.take() {
            return Some(id);
        }
        if !self.pulling || self.frag.is_some() {
            return None;
        }
        let Some(id) = inner.dequeue(ctx) else {
            // The discipline dropped what it held: wait for the next grant.
            self.pulling = false;
            return None;
        };
        let size = ctx.pool.get(id).size_bytes as i64;
        if self.tokens_current >= size {
            self.tokens_current -= size;
            self.ask_for_next(inner);
            Some(id)
        } else {
            // Does not fit in the grant: fragment it over the next grants.
            self.frag = Some((id, size));
            self.frag_sent = self.tokens_current;
            self.pulling = false;
            None
        }
    }

    fn next_ready_ns(&self, now: u64, inner: &Qdisc) -> u64 {
        if self.release.is_some() || (self.pulling && inner.len_packets() > 0) {
            now
        } else {
            self.next_event().max(now)
        }
    }
}
