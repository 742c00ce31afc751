//! The world's side of emulation (`crate::emulate`): TCP flows whose endpoints are kernel
//! sockets outside the simulation. Their packets enter the simulated network when the
//! emulator reads them and leave it, parked for the emulator, when they reach the far
//! end; everything between (access links, the bottleneck's discipline and shaper, the
//! reverse path) is the scenario's own build. Nothing here runs in a simulated run.

use super::world::World;

/// An external packet starting its transmission on a captured link: the emulator writes
/// its real bytes, with the ECN field as the network left it so far, to the capture.
#[derive(Debug, Clone, Copy)]
pub struct ExternalCapture {
    pub iface: u32,
    pub time_ns: u64,
    pub id: PacketId,
    pub ecn: Ecn,
}
use crate::engine::Event;
use crate::net::packet::{Ecn, Packet, PacketId, PacketKind};

impl World {
    /// Hand every TCP flow's endpoints to the outside: their simulated senders never
    /// start, and their packets reaching an endpoint wait in [`World::take_arrivals`].
    pub fn set_external_tcp(&mut self) {
        self.external_tcp = true;
    }

    /// Hand every UDP source to the outside as well: the simulated sources never send,
    /// and their packets reaching the receiver wait in [`World::take_arrivals`] (still
    /// counted as a simulated source's arrivals are).
    pub fn set_external_udp(&mut self) {
        self.external_udp = true;
    }

    /// The number of UDP sources (flows `tcp_flows()..` in the scenario's order).
    pub fn udp_sources(&self) -> usize {
        self.udp.len()
    }

    /// A packet of external UDP source `u` (0-based among the UDP sources) enters the
    /// network now on the source's route, counted as a simulated source's packet is.
    pub fn inject_udp(
        &mut self,
        u: u32,
        size_bytes: u32,
        payload_bytes: u32,
        ecn: Ecn,
    ) -> PacketId {
        let now = self.sched.now();
        let src = &mut self.udp[u as usize];
        let p = Packet {
            kind: PacketKind::Udp,
            flow: src.flow,
            route: src.route,
            size_bytes,
            payload_bytes,
            ecn,
            ts_val: now,
            seq: src.packets_sent,
            ..Packet::default()
        };
        src.packets_sent += 1;
        src.bytes_sent += u64::from(size_bytes);
        let (flow, route) = (src.flow, src.route);
        let id = self.pool.alloc(p);
        self.counters[flow as usize].sent += 1;
        let first = self.routes.first_link(route);
        crate::net::datapath::enqueue(self, first, id);
        id
    }

    /// Take the external packets that started transmission on a captured link since the
    /// last call (their pool slots stay theirs until they arrive or are dropped).
    pub fn take_captures(&mut self, out: &mut Vec<ExternalCapture>) {
        out.append(&mut self.external_captures);
    }

    /// Write an external packet's real bytes to the capture (see [`ExternalCapture`]).
    pub fn record_capture(&mut self, c: &ExternalCapture, ip: &[u8]) {
        self.rec.on_external_capture(c.iface, c.time_ns, ip);
    }

    /// The number of TCP flows (flows `0..n` are TCP, in the scenario's order).
    pub fn tcp_flows(&self) -> usize {
        self.tcp.len()
    }

    /// Run every event due no later than `t_ns`, then set the clock to `t_ns` (if no
    /// later than the scenario's end). `on_arrivals` is called after each event that
    /// brought packets to an external endpoint, with the clock at that event's time.
    pub fn run_due(&mut self, t_ns: u64, on_arrivals: &mut dyn FnMut(&mut World)) {
        let end = t_ns.min(self.duration_ns);
        while let Some(ev) = self.sched.pop_until(end) {
            if ev == Event::ControlTick {
                continue;
            }
            self.dispatch(ev);
            if !self.external_arrivals.is_empty() {
                on_arrivals(self);
            }
        }
        self.sched.advance_to(end);
    }

    /// When the next event is due, if any.
    pub fn next_event_ns(&self) -> Option<u64> {
        self.sched.next_time_ns()
    }

    /// The clock.
    pub fn now_ns(&self) -> u64 {
        self.sched.now()
    }

    /// A packet of external TCP flow `flow` enters the network now: a data-direction
    /// packet (sender to receiver) on the flow's data route, else on its ACK route.
    /// `size_bytes` is the IP packet's length; returns the packet's id, under which the
    /// emulator keeps its bytes until it leaves.
    pub fn inject_tcp(
        &mut self,
        flow: u32,
        data_direction: bool,
        size_bytes: u32,
        payload_bytes: u32,
        ecn: Ecn,
    ) -> PacketId {
        let (kind, route) = if data_direction {
            (PacketKind::TcpData, 2 * flow)
        } else {
            (PacketKind::TcpAck, 2 * flow + 1)
        };
        let now = self.sched.now();
        let p = Packet {
            kind,
            flow,
            route,
            size_bytes,
            payload_bytes,
            ecn,
            ts_val: now,
            conn: self.tcp[flow as usize].conn,
            ..Packet::default()
        };
        let id = self.pool.alloc(p);
        self.counters[flow as usize].sent += 1;
        let first = self.routes.first_link(route);
        crate::net::datapath::enqueue(self, first, id);
        id
    }

    /// Take the packets that reached an external endpoint: their id, kind and ECN field
    /// as the network left it (a discipline may have marked CE). Their pool slots are
    /// freed; the ids are only names for the emulator's side table from now on.
    pub fn take_arrivals(&mut self, out: &mut Vec<(PacketId, PacketKind, Ecn)>) {
        for id in self.external_arrivals.drain(..) {
            let p = self.pool.get(id);
            out.push((id, p.kind, p.ecn));
            self.pool.free(id);
        }
    }
}

impl World {
    /// The bottleneck's rate now, bit/s (the emulator's timing error is judged against
    /// one packet's serialisation time there).
    pub fn bottleneck_rate_bps(&self) -> u64 {
        self.links[self.bottleneck as usize].rate_bps
    }
}
