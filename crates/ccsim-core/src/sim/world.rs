//! The simulated world: its tables (links, routes, flows, the packet pool) and the
//! event loop that interprets the scheduler's events. Algorithms are reached only
//! through the `cc` and `qdisc` registries, never by name here.

use super::{Control, ProgressFn};
use crate::cc::{self, CongestionControl};
use crate::engine::rng::{stream, SimRng, StreamKind};
use crate::engine::sched::TcpTimerKind;
use crate::engine::TimerFire;
use crate::engine::{Event, Scheduler, NS_PER_SEC};
use crate::flow::{FlowCounters, TcpFlow};
use crate::net::datapath::{self, LinkEnv, LinkIo};
use crate::net::link::{DelayLine, Link, Next};
use crate::net::packet::{
    prefetch_read, Ecn, Packet, PacketId, PacketKind, PacketPool, TCP_IP_HEADER_BYTES,
};
use crate::net::route::Routes;
use crate::ppv::marker::Marker;
use crate::qdisc::QueueDisc;
use crate::results::{Cancelled, RowBatches, RunOutput};
use crate::scenario::{ParamValue, ScenarioError};
use crate::tcp::receiver::{TcpReceiver, DELACK_NS};
use crate::tcp::sender::TcpSender;
use crate::tcp::TcpIo;
use crate::trace::{Recorders, View};
use crate::udp::UdpSource;

/// What a scheduled change does.
#[derive(Debug, Clone)]
pub(crate) enum ChangeAction {
    /// Set congestion-control parameters of flows `first..first + count`.
    CcParams {
        first: u32,
        count: u32,
        params: Vec<(String, ParamValue)>,
        path: String,
    },
    /// Set a link's rate; the packet being serialised keeps its time.
    LinkRate { link: u32, rate_bps: u64 },
}

/// The state of one TCP flow as an external controller sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowState {
    pub flow_id: u32,
    pub group: u32,
    pub time_s: f64,
    /// Application bytes sent (first transmissions) and acknowledged so far.
    pub bytes_sent: u64,
    pub bytes_acked: u64,
    /// Bytes of a finite transfer not yet acknowledged; `None` for a bulk flow.
    pub bytes_left: Option<u64>,
    pub cwnd_pkts: u32,
    /// `None` while ssthresh is still infinite.
    pub ssthresh_pkts: Option<u32>,
    pub srtt_ms: f64,
    pub min_rtt_ms: f64,
    /// Whether the application has started and the transfer is not complete.
    pub active: bool,
}

/// A parameter change an external controller asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamUpdate {
    pub flow_id: u32,
    pub name: String,
    pub value: ParamValue,
}

/// A read-only [`View`] of a world's network for its recorders, built from disjoint
/// field borrows so that `self.rec` can be borrowed mutably beside it.
macro_rules! view {
    ($w:expr) => {
        View {
            now_ns: $w.sched.now(),
            events: $w.sched.executed(),
            tcp: &$w.tcp,
            udp: &$w.udp,
            counters: &$w.counters,
            links: &$w.links,
            lines: &$w.lines,
            pool: &$w.pool,
        }
    };
}

/// The simulated world.
pub struct World {
    pub(crate) sched: Scheduler,
    pub(crate) pool: PacketPool,
    pub(crate) links: Vec<Link>,
    pub(crate) lines: Vec<DelayLine>,
    pub(crate) routes: Routes,
    pub(crate) tcp: Vec<TcpFlow>,
    pub(crate) udp: Vec<UdpSource>,
    /// Per-flow packet accounting (conservation: sent = arrived + dropped + in network).
    pub(crate) counters: Vec<FlowCounters>,
    pub(crate) out_buf: Vec<PacketId>,
    pub(crate) drop_buf: Vec<PacketId>,
    pub(crate) mark_buf: Vec<PacketId>,
    pub(crate) bottleneck: u32,
    pub(crate) duration_ns: u64,
    /// Inside the measurement window: departures feed the links' sojourn histograms.
    pub(crate) in_window: bool,
    pub(crate) seed: u64,
    pub(crate) changes: Vec<ChangeAction>,
    /// PPV edge markers with their random streams, and each flow's marker, if any.
    pub(crate) markers: Vec<(Marker, SimRng)>,
    pub(crate) marker_of: Vec<Option<u32>>,
    /// Every measurement of the run.
    pub(crate) rec: Recorders,
    /// Emulation (`crate::emulate`): the TCP flows' endpoints are kernel sockets outside
    /// the simulation, so their packets reaching an endpoint are parked in
    /// `external_arrivals` for the emulator to write out, and their simulated senders
    /// never start. Off in every simulated run.
    pub(crate) external_tcp: bool,
    pub(crate) external_arrivals: Vec<PacketId>,
    /// Emulation with the UDP sources played by kernel sockets too: their simulated
    /// sources never send, and their packets are parked like the TCP flows'.
    pub(crate) external_udp: bool,
    /// Emulation: external packets starting transmission on a captured link, for the
    /// emulator to write with their real bytes (`[trace] pcap`).
    pub(crate) external_captures: Vec<super::external::ExternalCapture>,
}

impl World {
    /// Run every event up to the scenario's duration.
    pub fn run_until_end(&mut self, progress: Option<ProgressFn<'_>>) {
        self.run_until_end_controlled(progress, None)
            .expect("without a controller a run cannot fail");
    }

    /// Run to the end, calling the external controller at its ticks.
    pub fn run_until_end_controlled(
        &mut self,
        mut progress: Option<ProgressFn<'_>>,
        mut control: Option<Control<'_>>,
    ) -> Result<(), ScenarioError> {
        let end = self.duration_ns;
        let step = (end / 100).max(1);
        let mut next_report = step;
        // Besides every 1% of simulated time, report every PROGRESS_WALL of wall time,
        // looking at the clock once per 4096 events: a run that advances simulated time
        // slowly (many flows, high rates) still shows progress and hears Ctrl-C (the
        // Python layer checks signals in the callback) within a fraction of a second.
        const PROGRESS_WALL: std::time::Duration = std::time::Duration::from_millis(100);
        let mut last_wall = std::time::Instant::now();
        let mut countdown = 4096u32;
        while let Some(ev) = self.sched.pop_until(end) {
            if ev == Event::ControlTick {
                if let Some(c) = control.as_mut() {
                    let states = self.flow_states();
                    let updates = (c.callback)(&states);
                    self.apply_updates(&updates)?;
                    let next = self.sched.now() + c.interval_ns;
                    if next <= end {
                        self.sched.at(next, Event::ControlTick);
                    }
                }
                continue;
            }
            self.dispatch(ev);
            if let Some(p) = progress.as_mut() {
                let now = self.sched.now();
                countdown -= 1;
                let wall_due = countdown == 0 && {
                    countdown = 4096;
                    last_wall.elapsed() >= PROGRESS_WALL
                };
                if now >= next_report || wall_due {
                    p(now as f64 / end as f64);
                    next_report = (now / step + 1) * step;
                    last_wall = std::time::Instant::now();
                }
            }
        }
        self.sched.advance_to(end);
        if let Some(p) = progress.as_mut() {
            p(1.0);
        }
        Ok(())
    }

    /// Every TCP flow's state, for an external controller.
    pub fn flow_states(&self) -> Vec<FlowState> {
        let t = self.sched.now() as f64 / NS_PER_SEC as f64;
        self.tcp
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let s = &f.sender;
                let mss = s.cfg.mss as u64;
                let acked = (s.tp.snd_una * mss).min(s.cfg.total_bytes.unwrap_or(u64::MAX));
                let sent = (s.tp.snd_nxt * mss).min(s.cfg.total_bytes.unwrap_or(u64::MAX));
                FlowState {
                    flow_id: i as u32,
                    group: f.group,
                    time_s: t,
                    bytes_sent: sent,
                    bytes_acked: acked,
                    bytes_left: s.cfg.total_bytes.map(|b| b - acked),
                    cwnd_pkts: s.tp.cwnd,
                    ssthresh_pkts: (s.tp.ssthresh < cc::INFINITE_SSTHRESH).then_some(s.tp.ssthresh),
                    srtt_ms: s.srtt_ns() as f64 / 1e6,
                    min_rtt_ms: s.tp.min_rtt_ns as f64 / 1e6,
                    active: self.sched.now() >= f.start_ns && !s.is_complete(),
                }
            })
            .collect()
    }

    /// Apply an external controller's parameter changes.
    pub fn apply_updates(&mut self, updates: &[ParamUpdate]) -> Result<(), ScenarioError> {
        for u in updates {
            let path = format!("controller.flows[{}].cc", u.flow_id);
            let flow = self.tcp.get_mut(u.flow_id as usize).ok_or_else(|| {
                ScenarioError::new("controller", format!("no TCP flow {}", u.flow_id))
            })?;
            flow.sender.cc.set_param(&path, &u.name, &u.value)?;
            if let Some(t) = flow.template.as_mut() {
                t.1.set_param(&path, &u.name, &u.value)?;
            }
        }
        Ok(())
    }

    /// Every byte of flow `f`'s current transfer is acknowledged: record it and, for a
    /// closed-loop flow with transfers to come, open a new connection for the next one
    /// after its think time (a fresh sender and receiver: slow start again, as a new
    /// HTTP/1.0 connection would).
    pub(crate) fn transfer_ended(&mut self, f: u32) {
        let seed = self.seed;
        let now = self.sched.now();
        let flow = &mut self.tcp[f as usize];
        flow.awaiting_end = false;
        self.rec.on_transfer_end(flow, f);
        if let Some(d) = flow.deadline.as_mut() {
            d.ctl.end();
        }
        let Some((size, think_ns)) = flow.next.pop_front() else {
            return;
        };
        let (cfg, cc) = &**flow
            .template
            .as_ref()
            .expect("repeating flows keep a template");
        let mut cfg = cfg.clone();
        cfg.total_bytes = Some(size);
        let mut cc = cc.clone();
        flow.conn += 1;
        cc.seed_rng(stream(
            seed,
            StreamKind::Cc,
            u64::from(f) | (u64::from(flow.conn) << 32),
        ));
        let receiver = TcpReceiver::new(f, 2 * f + 1, &cfg, DELACK_NS);
        let mut sender = TcpSender::new(f, 2 * f, cfg, cc, flow.path_rtt_ns);
        sender.trace_reductions = flow.sender.trace_reductions;
        sender.rtt_log = flow.sender.rtt_log.as_ref().map(|_| Vec::new());
        // The flow's next transfer goes on with what its traces' budgets have left.
        sender.reductions_budget = flow.sender.reductions_budget.clone();
        sender.rtt_log_budget = flow.sender.rtt_log_budget.clone();
        let old_sender = std::mem::replace(&mut flow.sender, sender);
        let old_receiver = std::mem::replace(&mut flow.receiver, receiver);
        let b = &mut flow.before;
        b.bytes_delivered += old_receiver.stats.bytes_delivered;
        b.wire_received += old_receiver.stats.bytes_received
            + old_receiver.stats.segments_received * u64::from(TCP_IP_HEADER_BYTES);
        b.packets_sent += old_sender.stats.packets_sent;
        b.retransmits += old_sender.stats.retransmits;
        b.timeouts += old_sender.stats.timeouts;
        flow.past_reductions.extend(old_sender.reductions);
        flow.past_rtts
            .extend(old_sender.rtt_log.unwrap_or_default());
        flow.transfer += 1;
        flow.awaiting_end = true;
        flow.start_ns = now + think_ns;
        if flow.start_ns < self.duration_ns {
            self.sched.at(flow.start_ns, Event::FlowStart(f));
        }
    }

    fn apply_change(&mut self, i: u32) {
        match self.changes[i as usize].clone() {
            ChangeAction::CcParams {
                first,
                count,
                params,
                path,
            } => {
                for f in first..first + count {
                    let flow = &mut self.tcp[f as usize];
                    for (name, value) in &params {
                        flow.sender
                            .cc
                            .set_param(&path, name, value)
                            .expect("validated when the scenario was built");
                        if let Some(t) = flow.template.as_mut() {
                            t.1.set_param(&path, name, value)
                                .expect("validated when the scenario was built");
                        }
                    }
                }
            }
            ChangeAction::LinkRate { link, rate_bps } => {
                datapath::change_rate(self, link, rate_bps);
            }
        }
    }

    /// A transfer of a flow with a deadline starts: its controller starts from the knob's
    /// lowest (most deferential) value and decides every interval.
    fn deadline_begin(&mut self, f: u32) {
        let now = self.sched.now();
        let flow = &mut self.tcp[f as usize];
        let Some(d) = flow.deadline.as_mut().filter(|d| d.ctl.params.retune) else {
            return;
        };
        let size = flow.sender.cfg.total_bytes.unwrap_or(0);
        let knob = d.ctl.begin(now, size);
        let value = d.ctl.params.knob.param(knob);
        flow.sender
            .cc
            .set_param("deadline_control", &d.ctl.params.knob.name, &value)
            .expect("the knob's range was validated when the scenario was built");
        if d.ctl.next_tick_ns <= self.duration_ns {
            self.sched.at(d.ctl.next_tick_ns, Event::DeadlineTick(f));
        }
    }

    /// A DA-LBE decision (see [`crate::control::deadline`]).
    fn deadline_tick(&mut self, f: u32) {
        let now = self.sched.now();
        let flow = &mut self.tcp[f as usize];
        let Some(d) = flow.deadline.as_mut() else {
            return;
        };
        // A tick of a transfer that has ended (a new one may have started since).
        if now != d.ctl.next_tick_ns {
            return;
        }
        let s = &flow.sender;
        let total = s.cfg.total_bytes.unwrap_or(0);
        let acked = (s.tp.snd_una * u64::from(s.cfg.mss)).min(total);
        let decision = d.ctl.tick(now, acked, s.srtt_ns());
        // A switch seeds the new instance's random stream from the flow, connection and
        // decision time, so every switch draws afresh and deterministically.
        let seed_stream = u64::from(f) ^ (u64::from(flow.conn) << 32) ^ now.rotate_left(17);
        if decision.escalate_now {
            let mut cc = d
                .escalate_to
                .clone()
                .expect("escalation is on only with a congestion control to switch to");
            cc.seed_rng(stream(self.seed, StreamKind::Cc, seed_stream));
            flow.sender.switch_cc(cc, now);
        } else if !decision.escalated {
            if decision.deescalate_now {
                let mut cc = d.original.clone();
                cc.seed_rng(stream(self.seed, StreamKind::Cc, seed_stream));
                flow.sender.switch_cc(cc, now);
            }
            let value = d.ctl.params.knob.param(decision.knob);
            flow.sender
                .cc
                .set_param("deadline_control", &d.ctl.params.knob.name, &value)
                .expect("the knob's range was validated when the scenario was built");
        }
        self.rec
            .on_deadline_decision(f, &d.ctl.params.knob.name, decision);
        if d.ctl.next_tick_ns <= self.duration_ns {
            self.sched.at(d.ctl.next_tick_ns, Event::DeadlineTick(f));
        }
    }

    /// Run every event up to `t_ns` (at most the scenario's duration); for tests that
    /// inspect the world part-way.
    pub fn run_until(&mut self, t_ns: u64) {
        let end = t_ns.min(self.duration_ns);
        while let Some(ev) = self.sched.pop_until(end) {
            self.dispatch(ev);
        }
        self.sched.advance_to(end);
    }

    /// The scenario's duration.
    pub fn duration_ns(&self) -> u64 {
        self.duration_ns
    }

    /// Check internal consistency: every sender's scoreboard counters match its tags, and
    /// every live packet is in exactly one queue or delay line.
    pub fn check_invariants(&self) -> Result<(), String> {
        for (i, f) in self.tcp.iter().enumerate() {
            f.sender
                .check_invariants()
                .map_err(|e| format!("flow {i}: {e}"))?;
        }
        let held: usize = self
            .links
            .iter()
            .map(|l| {
                // an outage's packet waits on the transmitter, in no queue or line
                l.qdisc.len_packets()
                    + l.has_in_flight() as usize
                    + l.service.held.is_some() as usize
            })
            .sum::<usize>()
            + self.lines.iter().map(|d| d.queue.len()).sum::<usize>();
        if held != self.pool.live() {
            return Err(format!(
                "{} live packets but {} in queues, lines and held on transmitters",
                self.pool.live(),
                held
            ));
        }
        Ok(())
    }

    /// Summarise the run (`wall_s`: the wall-clock seconds it took).
    pub fn finish(&self, wall_s: f64) -> RunOutput {
        match self.finish_in_batches(wall_s, &mut RowBatches::unchecked()) {
            Ok(output) => output,
            Err(Cancelled) => unreachable!("unchecked batches never stop"),
        }
    }

    /// [`World::finish`], building the tables in `batches` (which may stop it).
    pub fn finish_in_batches(
        &self,
        wall_s: f64,
        batches: &mut RowBatches,
    ) -> Result<RunOutput, Cancelled> {
        self.rec.finish(&view!(self), wall_s, batches)
    }

    /// Packets of each flow still inside the network (queued or propagating).
    pub fn packets_in_network(&self) -> Vec<u64> {
        view!(self).packets_in_network()
    }

    /// A stats tick: the recorders take their rows, the bottleneck's interval ends.
    fn stats_tick(&mut self) {
        let now = self.sched.now();
        self.rec.on_tick(&view!(self));
        self.links[self.bottleneck as usize].stats.end_interval();
        for &l in self.rec.interval_links() {
            self.links[l as usize].stats.end_interval();
        }
        let interval_ns = self.rec.info.stats_interval_ns;
        if now + interval_ns <= self.duration_ns {
            self.sched.at(now + interval_ns, Event::StatsTick);
        }
    }

    /// Events executed so far.
    pub fn events(&self) -> u64 {
        self.sched.executed()
    }

    #[inline]
    pub(crate) fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::LinkTxDone(l) => {
                let arrived = datapath::on_tx_done(self, l);
                if let Some(e) = arrived {
                    self.deliver(e.id, e.next);
                }
            }
            Event::LineArrive(k) => self.line_arrive(k),
            Event::QdiscTimer(l) => datapath::on_qdisc_timer(self, l),
            Event::TcpTimer { flow, timer } => self.tcp_timer(flow, timer),
            // Emulated: the kernel's socket plays this flow (see `external_tcp`).
            Event::FlowStart(_) if self.external_tcp => {}
            Event::FlowStart(f) => {
                let now = self.sched.now();
                let mut io = TcpIo {
                    now_ns: now,
                    pool: &mut self.pool,
                    out: &mut self.out_buf,
                };
                self.tcp[f as usize].sender.start(&mut io);
                self.deadline_begin(f);
                self.flush_tcp(f);
            }
            Event::DeadlineTick(f) => self.deadline_tick(f),
            Event::FlowStop(f) => self.tcp[f as usize].sender.stop(),
            // Emulated: a kernel UDP socket plays this source (see `external_udp`).
            Event::UdpSend(_) if self.external_udp => {}
            Event::UdpSend(u) => self.udp_send(u),
            Event::StatsTick => self.stats_tick(),
            Event::MeasureStart => {
                self.in_window = true;
                self.rec.on_window_start(&view!(self));
            }
            Event::MeasureEnd => {
                self.in_window = false;
                self.rec.on_window_end(&view!(self));
            }
            Event::Change(i) => self.apply_change(i),
            Event::ControlTick => {}
        }
    }

    // ----- links -----------------------------------------------------------------

    /// Packet `id` arrives at link `l`.
    #[inline]
    fn link_enqueue(&mut self, l: u32, id: PacketId) {
        datapath::enqueue(self, l, id);
    }

    /// Keep link `l`'s timer in step with what its discipline asks for.
    pub(crate) fn sync_qdisc_timer(&mut self, l: u32) {
        self.links[l as usize].sync_qdisc_timer(l, &mut self.sched);
    }

    /// Delay line `k`'s arrival event: hand every packet that reached the far end to
    /// its next link or endpoint.
    fn line_arrive(&mut self, k: u32) {
        let now = self.sched.now();
        if !self.lines[k as usize].begin_arrivals(now) {
            return; // superseded by an earlier head
        }
        while let Some(e) = self.lines[k as usize].pop_due(now) {
            self.deliver(e.id, e.next);
        }
        self.prefetch_arrivals(k);
        if let Some(t) = self.lines[k as usize].rearm() {
            self.sched.at(t, Event::LineArrive(k));
        }
    }

    /// Bring into cache what the next arrivals on line `k` will touch.
    #[inline]
    fn prefetch_arrivals(&self, k: u32) {
        for e in self.lines[k as usize].queue.iter().take(2) {
            self.pool.prefetch(e.id);
            if e.next.0 & Next::ENDPOINT == 0 {
                let link = &self.links[e.next.0 as usize];
                prefetch_read(link);
                prefetch_read(&link.qdisc);
            } else if let Some(f) = self.tcp.get((e.next.0 & !Next::ENDPOINT) as usize) {
                prefetch_read(&f.sender.tp);
                prefetch_read(&f.receiver);
            }
        }
    }

    /// A packet reached the far end of a link: forward it or hand it to its endpoint.
    fn deliver(&mut self, id: PacketId, next: Next) {
        let p = self.pool.get_mut(id);
        p.hop += 1;
        if next.0 & Next::ENDPOINT == 0 {
            self.link_enqueue(next.0, id);
            return;
        }
        if self.external_tcp && p.kind != PacketKind::Udp {
            self.counters[p.flow as usize].arrived += 1;
            self.external_arrivals.push(id);
            return;
        }
        if self.external_udp && p.kind == PacketKind::Udp {
            // Counted as a simulated source's arrival is, then written out.
            let (flow, payload) = (p.flow as usize, u64::from(p.payload_bytes));
            self.counters[flow].arrived += 1;
            self.udp[flow - self.tcp.len()].bytes_received += payload;
            self.external_arrivals.push(id);
            return;
        }
        let pkt: Packet = *p;
        let sack = if pkt.n_sack > 0 {
            *self.pool.sack(id)
        } else {
            Default::default()
        };
        self.pool.free(id);
        self.counters[pkt.flow as usize].arrived += 1;
        let now = self.sched.now();
        if pkt.kind != PacketKind::Udp && pkt.conn != self.tcp[pkt.flow as usize].conn {
            return; // a late packet of a closed connection
        }
        match pkt.kind {
            PacketKind::TcpData => {
                let mut io = TcpIo {
                    now_ns: now,
                    pool: &mut self.pool,
                    out: &mut self.out_buf,
                };
                self.tcp[pkt.flow as usize].receiver.on_data(&pkt, &mut io);
                self.flush_tcp(pkt.flow);
            }
            PacketKind::TcpAck => {
                let mut io = TcpIo {
                    now_ns: now,
                    pool: &mut self.pool,
                    out: &mut self.out_buf,
                };
                let flow = &mut self.tcp[pkt.flow as usize];
                flow.sender
                    .on_ack(&pkt, &sack[..pkt.n_sack as usize], &mut io);
                let ended = flow.awaiting_end && flow.sender.is_complete();
                self.flush_tcp(pkt.flow);
                if ended {
                    self.transfer_ended(pkt.flow);
                }
            }
            PacketKind::Udp => {
                let u = pkt.flow as usize - self.tcp.len();
                self.udp[u].bytes_received += pkt.payload_bytes as u64;
            }
        }
    }

    /// Put a TCP flow's outgoing packets on their routes and schedule its timers.
    fn flush_tcp(&mut self, f: u32) {
        let mut out = std::mem::take(&mut self.out_buf);
        let marker = self.marker_of[f as usize];
        let conn = self.tcp[f as usize].conn;
        for &id in &out {
            self.counters[f as usize].sent += 1;
            self.pool.get_mut(id).conn = conn;
            if let Some(m) = marker {
                let p = self.pool.get_mut(id);
                if p.kind == PacketKind::TcpData {
                    let (mk, rng) = &mut self.markers[m as usize];
                    p.value = mk.mark(self.sched.now(), p.size_bytes, rng);
                }
            }
            let first = self.routes.first_link(self.pool.get(id).route);
            self.link_enqueue(first, id);
        }
        out.clear();
        self.out_buf = out;
        let flow = &mut self.tcp[f as usize];
        if let Some(t) = flow.sender.rto_timer.sync() {
            self.sched.at(
                t,
                Event::TcpTimer {
                    flow: f,
                    timer: TcpTimerKind::Rto,
                },
            );
        }
        if let Some(t) = flow.sender.pacing_timer.sync() {
            self.sched.at(
                t,
                Event::TcpTimer {
                    flow: f,
                    timer: TcpTimerKind::Pacing,
                },
            );
        }
        if let Some(t) = flow.receiver.delack_timer.sync() {
            self.sched.at(
                t,
                Event::TcpTimer {
                    flow: f,
                    timer: TcpTimerKind::DelAck,
                },
            );
        }
    }

    fn tcp_timer(&mut self, f: u32, kind: TcpTimerKind) {
        let now = self.sched.now();
        let flow = &mut self.tcp[f as usize];
        let timer = match kind {
            TcpTimerKind::Rto => &mut flow.sender.rto_timer,
            TcpTimerKind::Pacing => &mut flow.sender.pacing_timer,
            TcpTimerKind::DelAck => &mut flow.receiver.delack_timer,
        };
        match timer.on_event(now) {
            TimerFire::Stale => {}
            TimerFire::Reschedule(t) => self.sched.at(
                t,
                Event::TcpTimer {
                    flow: f,
                    timer: kind,
                },
            ),
            TimerFire::Fire => {
                let mut io = TcpIo {
                    now_ns: now,
                    pool: &mut self.pool,
                    out: &mut self.out_buf,
                };
                match kind {
                    TcpTimerKind::Rto => flow.sender.on_rto(&mut io),
                    TcpTimerKind::Pacing => flow.sender.on_pacing_timer(&mut io),
                    TcpTimerKind::DelAck => flow.receiver.on_delack_timer(&mut io),
                }
                self.flush_tcp(f);
            }
        }
    }

    fn udp_send(&mut self, u: u32) {
        let now = self.sched.now();
        let src = &mut self.udp[u as usize];
        if now >= src.stop_ns {
            return;
        }
        let p = Packet {
            kind: PacketKind::Udp,
            flow: src.flow,
            route: src.route,
            size_bytes: src.packet_size,
            payload_bytes: src.packet_size,
            ecn: if src.ecn { Ecn::Ect0 } else { Ecn::NotEct },
            ts_val: now,
            // The source's packet number: a capture shows it as the IPv4 identification,
            // which a real stack increments per packet, so arrival order can be read.
            seq: src.packets_sent,
            ..Packet::default()
        };
        src.packets_sent += 1;
        src.bytes_sent += src.packet_size as u64;
        let gap = src.next_gap_ns();
        let flow = src.flow;
        let route = src.route;
        if now + gap < src.stop_ns {
            self.sched.at(now + gap, Event::UdpSend(u));
        }
        let id = self.pool.alloc(p);
        if let Some(m) = self.marker_of[flow as usize] {
            let (mk, rng) = &mut self.markers[m as usize];
            let size = self.pool.get(id).size_bytes;
            self.pool.get_mut(id).value = mk.mark(now, size, rng);
        }
        self.counters[flow as usize].sent += 1;
        let first = self.routes.first_link(route);
        self.link_enqueue(first, id);
    }
}

/// The world lends its links' datapath what it works on, counts their congestion signals
/// per flow and hands every observable point to the recorders.
impl LinkEnv for World {
    #[inline]
    fn link_io(&mut self, l: u32) -> LinkIo<'_> {
        LinkIo {
            link: &mut self.links[l as usize],
            now_ns: self.sched.now(),
            sched: &mut self.sched,
            pool: &mut self.pool,
            lines: &mut self.lines,
            routes: &self.routes,
            dropped: &mut self.drop_buf,
            marked: &mut self.mark_buf,
            in_window: self.in_window,
        }
    }

    #[inline]
    fn on_queue_signals(&mut self, l: u32) {
        let now = self.sched.now();
        let qdisc = &self.links[l as usize].qdisc;
        self.rec
            .on_queue_signals(l, now, qdisc, &self.drop_buf, &self.mark_buf, &self.pool);
        for &id in &self.mark_buf {
            self.counters[self.pool.get(id).flow as usize].marked += 1;
        }
        for &id in &self.drop_buf {
            self.counters[self.pool.get(id).flow as usize].dropped += 1;
        }
    }

    #[inline]
    fn on_qdisc_update(&mut self, l: u32) {
        let now = self.sched.now();
        self.rec
            .on_qdisc_update(l, now, &self.links[l as usize].qdisc);
    }

    #[cold]
    fn on_wire_loss(&mut self, _l: u32, id: PacketId) {
        self.counters[self.pool.get(id).flow as usize].lost += 1;
        self.pool.free(id);
    }

    #[cold]
    fn on_capture(&mut self, l: u32, id: PacketId) {
        let (iface, now) = (self.links[l as usize].pcap_iface, self.sched.now());
        if self.external_tcp || self.external_udp {
            let p = self.pool.get(id);
            let external = if p.kind == PacketKind::Udp {
                self.external_udp
            } else {
                self.external_tcp
            };
            if external {
                let ecn = p.ecn;
                self.external_captures
                    .push(super::external::ExternalCapture {
                        iface,
                        time_ns: now,
                        id,
                        ecn,
                    });
                return;
            }
        }
        self.rec
            .on_departure_capture(iface, now, &self.pool, id, &self.tcp);
    }
}
