//! Every recorder of a run, owned by one [`Recorders`] that the simulation calls at a few
//! fixed points: a packet departed a link (`on_departure_capture`), a discipline dropped
//! or marked (`on_queue_signals`), a discipline's timer updated its state
//! (`on_qdisc_update`), a transfer finished (`on_transfer_end`), a controller decided
//! (`on_deadline_decision`), a stats tick (`on_tick`, in `series.rs`) and the measurement
//! window's edges (`on_window_start`, `on_window_end`). The run's tables and summary are
//! assembled here too (`finish`, in `summary.rs`).
//!
//! Recorders read the network through a [`View`], a borrowed snapshot of the flows,
//! links and packets, and never see the simulation itself. Per-queue recorders are keyed
//! by link index: in a dumbbell `qdisc_state`, `queue_events` and `sojourn_cdf` watch one
//! link (`queue_link`, the bottleneck); in a `[network]` they, like `queue_series`, cover
//! every link of the network, keyed by link name (the links that never queued are left
//! out of the tables). An opt-in recorder that is off is `None`: the hot
//! path pays one compare and one branch, never a virtual call.

use crate::flow::{FlowBytes, FlowCounters, TcpFlow};
use crate::net::link::{CapacityMeter, DelayLine, Link};
use crate::net::packet::{PacketId, PacketPool};
use crate::qdisc::{Qdisc, QueueDisc};
use crate::scenario::{QdiscStateMode, Scenario};
use crate::stats::QueueSnapshot;
use crate::udp::UdpSource;

use super::series::Series;
use super::{DeadlineTrace, Pcap, QdiscStateTrace, QueueEvents, Transfer};

/// IPv4 (20) + UDP (8) header bytes: a UDP packet's goodput is its size less these.
const UDP_IP_HEADER_BYTES: u32 = 28;

/// A read-only view of the network for the recorders.
pub struct View<'a> {
    pub now_ns: u64,
    /// Events executed so far.
    pub events: u64,
    pub tcp: &'a [TcpFlow],
    pub udp: &'a [UdpSource],
    pub counters: &'a [FlowCounters],
    pub links: &'a [Link],
    pub lines: &'a [DelayLine],
    pub pool: &'a PacketPool,
}

impl View<'_> {
    /// (payload bytes delivered in order to the application, wire bytes received) per
    /// flow. A UDP packet's payload is its size less the IP and UDP headers.
    pub(crate) fn flow_bytes(&self) -> FlowBytes {
        let mut v: FlowBytes = self
            .tcp
            .iter()
            .map(|f| (f.bytes_delivered(), f.wire_received()))
            .collect();
        v.extend(self.udp.iter().map(|u| {
            let packets = u.bytes_received / u64::from(u.packet_size);
            let payload = u.packet_size.saturating_sub(UDP_IP_HEADER_BYTES);
            (packets * u64::from(payload), u.bytes_received)
        }));
        v
    }

    /// Per flow, over the whole run so far: packets sent (by both endpoints), TCP
    /// retransmissions and timeouts, drops and CE marks at any queue, losses on any
    /// link's wire. Differenced across
    /// the measurement window for the summary.
    pub(crate) fn flow_counts(&self) -> Vec<[u64; 6]> {
        let signals = |i: usize| (self.counters[i].dropped, self.counters[i].marked);
        let lost = |i: usize| self.counters[i].lost;
        let mut v: Vec<[u64; 6]> = self
            .tcp
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let (d, m) = signals(i);
                [
                    f.packets_sent(),
                    f.retransmits(),
                    f.timeouts(),
                    d,
                    m,
                    lost(i),
                ]
            })
            .collect();
        let n = v.len();
        v.extend(self.udp.iter().enumerate().map(|(k, u)| {
            let (d, m) = signals(n + k);
            [u.packets_sent, 0, 0, d, m, lost(n + k)]
        }));
        v
    }

    /// Packets of each flow still inside the network (queued or propagating).
    pub fn packets_in_network(&self) -> Vec<u64> {
        let mut v = vec![0u64; self.counters.len()];
        for link in self.links {
            for id in link
                .qdisc
                .held()
                .into_iter()
                .chain(link.in_flight().map(|e| e.id))
                // held on the transmitter by an outage (`retime_in_service`)
                .chain(link.service.held.as_ref().map(|e| e.id))
            {
                v[self.pool.get(id).flow as usize] += 1;
            }
        }
        for dl in self.lines {
            for e in &dl.queue {
                v[self.pool.get(e.id).flow as usize] += 1;
            }
        }
        v
    }
}

/// What the scenario says about the run that the summary repeats: its clock, seed and
/// the flows' groups.
#[derive(Debug, Clone)]
pub(crate) struct RunInfo {
    pub(crate) seed: u64,
    pub(crate) duration_ns: u64,
    pub(crate) stats_interval_ns: u64,
    pub(crate) measure_start_ns: u64,
    pub(crate) measure_end_ns: u64,
    /// The `[[flows]]` and `[[udp]]` groups' names, if given.
    pub(crate) group_names: (Vec<Option<String>>, Vec<Option<String>>),
    /// Each UDP source's group and base RTT.
    pub(crate) udp_groups: Vec<u32>,
    pub(crate) udp_base_rtt_ns: Vec<u64>,
    /// Each TCP flow's congestion control.
    pub(crate) cc_names: Vec<&'static str>,
}

/// Counters at the last stats tick, which the next one differences.
#[derive(Debug, Default)]
pub(crate) struct TickState {
    pub(crate) bytes: FlowBytes,
    /// Per-flow (drops, marks).
    pub(crate) signals: Vec<(u64, u64)>,
    /// The watched link's counters (a dumbbell's `queue_series`).
    pub(crate) link: LinkTick,
    /// Each reported link's counters (a `[network]`'s `queue_series`, one per link).
    pub(crate) links: Vec<LinkTick>,
}

/// One link's counters at the last stats tick.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct LinkTick {
    pub(crate) queue: QueueSnapshot,
    /// Bytes the queue had departed and the link serialised.
    pub(crate) departed: u64,
    pub(crate) serialised: f64,
    /// The link's carried and offered capacity.
    pub(crate) meter: CapacityMeter,
}

/// Each reported link's queue counters and bytes serialised at one moment.
pub(crate) type LinkCounters = Vec<(QueueSnapshot, f64)>;

/// Counters at the measurement window's start and end.
#[derive(Debug, Default)]
pub(crate) struct WindowState {
    pub(crate) bytes: (FlowBytes, FlowBytes),
    pub(crate) queue: (QueueSnapshot, QueueSnapshot),
    /// Bytes the watched link had serialised ([`Link::bytes_serialised`]).
    pub(crate) serialised: (f64, f64),
    /// Per-flow counts (see [`View::flow_counts`]).
    pub(crate) counts: (Vec<[u64; 6]>, Vec<[u64; 6]>),
    /// Each reported link's queue counters and bytes serialised.
    pub(crate) links: (LinkCounters, LinkCounters),
    /// The watched link's and each reported link's capacity meters.
    pub(crate) meters: (CapacityMeter, CapacityMeter),
    pub(crate) link_meters: (Vec<CapacityMeter>, Vec<CapacityMeter>),
}

/// The bulk TCP flows, the last one's start, and their bytes delivered at the first
/// tick after it (convergence time).
#[derive(Debug, Default)]
pub(crate) struct Convergence {
    pub(crate) flows: Vec<usize>,
    pub(crate) last_start_ns: u64,
    pub(crate) base: Option<Vec<u64>>,
}

/// Every recorder of a run.
pub struct Recorders {
    pub(crate) info: RunInfo,
    /// The link whose queue the per-queue recorders watch.
    pub(crate) queue_link: u32,
    pub(crate) series: Series,
    pub(crate) tick: TickState,
    pub(crate) window: WindowState,
    pub(crate) convergence: Convergence,
    /// Finished transfers (one row each).
    pub(crate) transfers: Vec<Transfer>,
    /// `qdisc_state` recorder, and whether it also records after every timer update.
    pub(crate) qdisc_state: Option<QdiscStateTrace>,
    pub(crate) qdisc_state_updates: bool,
    /// `queue_events` recorder (opt-in).
    pub(crate) queue_events: Option<QueueEvents>,
    /// Decisions of the flows' DA-LBE controllers.
    pub(crate) deadline: DeadlineTrace,
    /// `[trace] pcap`: the capture of the chosen links' departures.
    pub(crate) pcap: Option<Box<Pcap>>,
    /// The links the summary reports one by one (a `[network]`'s; none in a dumbbell).
    pub(crate) reported: Vec<u32>,
    /// `watched[l]`: link `l` is reported, so its drops, marks and discipline updates are
    /// recorded (empty in a dumbbell, which watches `queue_link` alone).
    watched: Vec<bool>,
    /// Each flow's route through a `[network]`, as node names (empty in a dumbbell).
    pub(crate) flow_paths: Vec<Vec<String>>,
}

impl Recorders {
    /// The recorders a scenario asks for, watching link `queue_link`'s queue.
    /// `cc_names`: each TCP flow's congestion control.
    pub(crate) fn new(sc: &Scenario, queue_link: u32, cc_names: Vec<&'static str>) -> Self {
        let n_flows = sc.flows.iter().map(|g| g.count as usize).sum::<usize>()
            + sc.udp.iter().map(|g| g.count as usize).sum::<usize>();
        let bulk = || {
            sc.flows
                .iter()
                .flat_map(|g| g.drawn.iter())
                .filter(|d| d.sizes.is_empty())
        };
        let udp_drawn = || {
            sc.udp
                .iter()
                .flat_map(|g| g.drawn.iter().map(move |d| (g, d)))
        };
        Recorders {
            info: RunInfo {
                seed: sc.seed,
                duration_ns: sc.duration.ns,
                stats_interval_ns: sc.stats_interval.ns,
                measure_start_ns: sc.measure_start.ns,
                measure_end_ns: sc.measure_end.ns,
                group_names: (
                    sc.flows.iter().map(|g| g.name.clone()).collect(),
                    sc.udp.iter().map(|g| g.name.clone()).collect(),
                ),
                udp_groups: sc
                    .udp
                    .iter()
                    .enumerate()
                    .flat_map(|(gi, g)| g.drawn.iter().map(move |_| gi as u32))
                    .collect(),
                udp_base_rtt_ns: udp_drawn().map(|(_, d)| d.rtt.ns).collect(),
                cc_names,
            },
            queue_link,
            series: Series::default(),
            tick: TickState {
                bytes: vec![(0, 0); n_flows],
                signals: vec![(0, 0); n_flows],
                ..TickState::default()
            },
            window: WindowState {
                bytes: (vec![(0, 0); n_flows], vec![(0, 0); n_flows]),
                counts: (vec![[0; 6]; n_flows], vec![[0; 6]; n_flows]),
                ..WindowState::default()
            },
            convergence: Convergence {
                flows: sc
                    .flows
                    .iter()
                    .flat_map(|g| g.drawn.iter())
                    .enumerate()
                    .filter(|(_, d)| d.sizes.is_empty())
                    .map(|(i, _)| i)
                    .collect(),
                last_start_ns: bulk().map(|d| d.start.ns).max().unwrap_or(0),
                base: None,
            },
            transfers: Vec::new(),
            qdisc_state: (sc.trace.qdisc_state != QdiscStateMode::Off)
                .then(QdiscStateTrace::default),
            qdisc_state_updates: sc.trace.qdisc_state == QdiscStateMode::Updates,
            queue_events: sc.trace.queue_events.then(QueueEvents::default),
            deadline: DeadlineTrace::default(),
            pcap: (!sc.trace.pcap.is_empty())
                .then(|| Box::new(Pcap::new(&sc.trace.pcap, sc.trace.pcap_max_packets))),
            reported: Vec::new(),
            watched: Vec::new(),
            flow_paths: Vec::new(),
        }
    }

    /// Also summarise links `reported` one by one (by link index), and give each flow's
    /// route (`flow_paths`, node names in flow order).
    pub(crate) fn report_links(&mut self, reported: Vec<u32>, flow_paths: Vec<Vec<String>>) {
        self.tick.links = vec![LinkTick::default(); reported.len()];
        let n = reported.iter().map(|&l| l as usize + 1).max().unwrap_or(0);
        self.watched = vec![false; n];
        for &l in &reported {
            self.watched[l as usize] = true;
        }
        self.reported = reported;
        self.flow_paths = flow_paths;
    }

    /// Whether link `l`'s queue is recorded (`qdisc_state`, `queue_events`): the
    /// bottleneck's in a dumbbell, every network link's in a `[network]`.
    #[inline]
    fn watches(&self, l: u32) -> bool {
        if self.watched.is_empty() {
            l == self.queue_link
        } else {
            self.watched.get(l as usize).copied().unwrap_or(false)
        }
    }

    /// The links whose per-interval statistics the stats tick reads and then restarts:
    /// every reported link of a `[network]` (none in a dumbbell, where it is the watched
    /// link alone).
    pub fn interval_links(&self) -> &[u32] {
        &self.reported
    }

    /// The reported links' counters now.
    fn link_snapshots(&self, v: &View) -> LinkCounters {
        self.reported
            .iter()
            .map(|&l| {
                let link = &v.links[l as usize];
                (link.stats.snapshot(), link.bytes_serialised(v.now_ns))
            })
            .collect()
    }

    /// Link `l`'s discipline dropped the packets in `dropped` and marked those in
    /// `marked` (its queue as it is after acting).
    #[inline]
    pub fn on_queue_signals(
        &mut self,
        l: u32,
        now_ns: u64,
        qdisc: &Qdisc,
        dropped: &[PacketId],
        marked: &[PacketId],
        pool: &PacketPool,
    ) {
        if self.queue_events.is_none() || !self.watches(l) {
            return;
        }
        let Some(ev) = self.queue_events.as_mut() else {
            return;
        };
        let (pkts, bytes) = (qdisc.len_packets() as u64, qdisc.len_bytes());
        for (buf, mark) in [(dropped, false), (marked, true)] {
            for &id in buf {
                let p = pool.get(id);
                // A packet dropped on arrival was stamped now: it waited 0.
                ev.push(
                    now_ns,
                    l,
                    p.flow,
                    mark,
                    pkts,
                    bytes,
                    now_ns.saturating_sub(p.enqueue_ns),
                );
            }
        }
    }

    /// Link `l`'s discipline ran its timer.
    #[inline]
    pub fn on_qdisc_update(&mut self, l: u32, now_ns: u64, qdisc: &Qdisc) {
        if self.qdisc_state_updates && self.watches(l) {
            if let Some(tr) = self.qdisc_state.as_mut() {
                qdisc.state(now_ns, &mut tr.buf);
                tr.commit(now_ns, l);
            }
        }
    }

    /// Write packet `id`, starting its transmission on a link captured on pcapng
    /// interface `iface`, to the capture.
    #[cold]
    pub fn on_departure_capture(
        &mut self,
        iface: u32,
        now_ns: u64,
        pool: &PacketPool,
        id: PacketId,
        tcp: &[TcpFlow],
    ) {
        let Some(cap) = self.pcap.as_mut() else {
            return;
        };
        let p = pool.get(id);
        let wire = tcp.get(p.flow as usize).map(|f| super::pcap::FlowWire {
            mss: f.sender.cfg.mss,
            total_bytes: f.sender.cfg.total_bytes,
        });
        let sack = if p.n_sack > 0 {
            &pool.sack(id)[..p.n_sack as usize]
        } else {
            &[][..]
        };
        cap.record(iface, now_ns, p, sack, wire);
    }

    /// Write a real packet's bytes (an emulated run's kernel packet), starting its
    /// transmission on a link captured on pcapng interface `iface`, to the capture.
    #[cold]
    pub fn on_external_capture(&mut self, iface: u32, now_ns: u64, ip: &[u8]) {
        if let Some(cap) = self.pcap.as_mut() {
            cap.record_ip(iface, now_ns, ip);
        }
    }

    /// Flow `flow`'s current transfer ended (every byte acknowledged).
    pub fn on_transfer_end(&mut self, flow: &TcpFlow, id: u32) {
        self.transfers.push(Transfer::current(flow, id));
    }

    /// A DA-LBE controller's decision for flow `flow`.
    pub fn on_deadline_decision(
        &mut self,
        flow: u32,
        knob_name: &str,
        d: crate::control::deadline::Decision,
    ) {
        self.deadline.push(flow, knob_name, d);
    }

    /// The measurement window opens.
    pub fn on_window_start(&mut self, v: &View) {
        let link = &v.links[self.queue_link as usize];
        self.window.bytes.0 = v.flow_bytes();
        self.window.queue.0 = link.stats.snapshot();
        self.window.serialised.0 = link.bytes_serialised(v.now_ns);
        self.window.counts.0 = v.flow_counts();
        self.window.links.0 = self.link_snapshots(v);
        self.window.meters.0 = link.capacity_meter(v.now_ns);
        self.window.link_meters.0 = self.link_meters(v);
    }

    /// The measurement window closes.
    pub fn on_window_end(&mut self, v: &View) {
        let link = &v.links[self.queue_link as usize];
        self.window.bytes.1 = v.flow_bytes();
        self.window.queue.1 = link.stats.snapshot();
        self.window.serialised.1 = link.bytes_serialised(v.now_ns);
        self.window.counts.1 = v.flow_counts();
        self.window.links.1 = self.link_snapshots(v);
        self.window.meters.1 = link.capacity_meter(v.now_ns);
        self.window.link_meters.1 = self.link_meters(v);
    }

    /// The reported links' capacity meters now.
    fn link_meters(&self, v: &View) -> Vec<CapacityMeter> {
        let meter = |&l: &u32| v.links[l as usize].capacity_meter(v.now_ns);
        self.reported.iter().map(meter).collect()
    }

    /// `(protocol, group)` of flow `i`.
    pub(crate) fn group_key(&self, v: &View, i: usize) -> (&'static str, u32) {
        match v.tcp.get(i) {
            Some(f) => ("tcp", f.group),
            None => ("udp", self.info.udp_groups[i - v.tcp.len()]),
        }
    }
}
