//! The flows as the network's endpoints see them: a TCP flow's sender and receiver with
//! what the scenario said about it and the totals of its finished connections, and the
//! per-flow packet counters. Below both `sim` (which runs them) and `trace` (which
//! records them), so neither reaches into the other.

use crate::cc;
use crate::control::deadline::DeadlineController;
use crate::net::packet::TCP_IP_HEADER_BYTES;
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::sender::TcpSender;
use crate::tcp::TcpConfig;

/// One TCP flow: both endpoints and what the scenario said about it.
#[derive(Debug)]
pub struct TcpFlow {
    pub sender: TcpSender,
    pub receiver: TcpReceiver,
    pub group: u32,
    pub base_rtt_ns: u64,
    /// Start of the current transfer (of the flow, for a bulk flow).
    pub start_ns: u64,
    /// Start of the flow's first transfer.
    pub first_start_ns: u64,
    pub trace: bool,
    /// Connection number, carried by the flow's packets: a closed-loop flow opens a new
    /// connection for every transfer, and a late packet of an earlier one is discarded.
    pub conn: u32,
    /// The path's RTT with serialisation, which seeds a new connection's estimator.
    pub(crate) path_rtt_ns: u64,
    /// What a new connection starts from (flows with repeated transfers only).
    pub(crate) template: Option<Box<(TcpConfig, cc::Cc)>>,
    /// Sizes of the transfers still to come, and the think time before each.
    pub(crate) next: std::collections::VecDeque<(u64, u64)>,
    /// Index of the current transfer.
    pub(crate) transfer: u32,
    /// A finite transfer is running whose end has not been recorded yet.
    pub(crate) awaiting_end: bool,
    /// Counters of the flow's finished connections.
    pub(crate) before: ConnTotals,
    /// Reductions and RTT samples of finished connections.
    pub(crate) past_reductions: Vec<crate::tcp::sender::Reduction>,
    pub(crate) past_rtts: Vec<(u64, u64)>,
    /// The DA-LBE controller of a group with a `deadline`.
    pub(crate) deadline: Option<Box<FlowDeadline>>,
}

/// A flow's deadline-aware LBE controller and what it escalates to.
#[derive(Debug, Clone)]
pub(crate) struct FlowDeadline {
    pub(crate) ctl: DeadlineController,
    /// The congestion control to switch to (a fresh instance, cloned at each switch).
    pub(crate) escalate_to: Option<cc::Cc>,
    /// The group's own congestion control, fresh, to switch back to.
    pub(crate) original: cc::Cc,
}

/// Counters of a flow's finished connections, so that its totals run on across them.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ConnTotals {
    pub(crate) bytes_delivered: u64,
    pub(crate) wire_received: u64,
    pub(crate) packets_sent: u64,
    pub(crate) retransmits: u64,
    pub(crate) timeouts: u64,
}

impl TcpFlow {
    /// Payload bytes delivered in order, over all the flow's connections.
    pub fn bytes_delivered(&self) -> u64 {
        self.before.bytes_delivered + self.receiver.stats.bytes_delivered
    }
    /// Wire bytes (headers included, duplicates too) that reached the receiver.
    pub fn wire_received(&self) -> u64 {
        let s = &self.receiver.stats;
        self.before.wire_received
            + s.bytes_received
            + s.segments_received * u64::from(TCP_IP_HEADER_BYTES)
    }
    pub(crate) fn packets_sent(&self) -> u64 {
        self.before.packets_sent + self.sender.stats.packets_sent
    }
    pub(crate) fn retransmits(&self) -> u64 {
        self.before.retransmits + self.sender.stats.retransmits
    }
    pub(crate) fn timeouts(&self) -> u64 {
        self.before.timeouts + self.sender.stats.timeouts
    }
}

/// Per-flow packet accounting across the whole network (both directions).
#[derive(Debug, Clone, Copy, Default)]
pub struct FlowCounters {
    /// Packets created by the flow's endpoints.
    pub sent: u64,
    /// Packets that reached an endpoint of the flow.
    pub arrived: u64,
    /// Packets of the flow dropped at any queue.
    pub dropped: u64,
    /// Packets of the flow CE-marked at any queue.
    pub marked: u64,
    /// Packets of the flow lost on a link's wire (a link model's random loss), apart
    /// from `dropped`: sent = arrived + dropped + lost + in the network.
    pub lost: u64,
}

/// Snapshot of per-flow byte counters (delivered, received).
pub(crate) type FlowBytes = Vec<(u64, u64)>;
