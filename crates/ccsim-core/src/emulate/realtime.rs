//! The real-time loop (see the module above): run due events, move packets between the
//! TUN devices and the simulated network, sleep in `ppoll` until the next event or packet.

use std::time::Instant;

use hdrhistogram::Histogram;

use super::ipv4::{self, parse_tcp, parse_udp};
use super::tun::Tun;
use crate::net::packet::{Ecn, PacketId, PacketKind};
use crate::results::RunOutput;
use crate::sim::{ExternalCapture, World};

/// The emulator's timing error over a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timing {
    /// Packets written to a TUN, and their lateness (write time minus the simulated
    /// time they left the network) quantiles, ns.
    pub releases: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
    /// Packets read from a TUN and injected (of them, UDP datagrams); read but not a
    /// known flow's TCP or a known source's UDP (ignored);
    /// released but not written (the device's queue was full or it was gone).
    pub injected: u64,
    pub injected_udp: u64,
    pub ignored: u64,
    pub write_failures: u64,
    /// The largest IP packet read from a TUN (at most one MTU when no offload merged
    /// segments, as the simulation assumes).
    pub max_packet_bytes: u32,
    /// Wall-clock seconds of the loop.
    pub wall_s: f64,
    /// The loop ran under `SCHED_FIFO` (see `RealtimePriority`).
    pub realtime_priority: bool,
}

/// A finished emulation: the world's tables and summary, and the timing.
pub struct EmulateOutput {
    pub output: RunOutput,
    pub timing: Timing,
}

/// `CLOCK_MONOTONIC` in ns (the clock Python's `time.monotonic()` reads, shared by every
/// process on the machine, so the traffic programs start on the emulator's time zero).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleep until a TUN is readable or `timeout_ns` passes.
fn wait(fds: &mut [libc::pollfd], timeout_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: valid pollfd array and timespec; a null signal mask keeps the current one.
    unsafe {
        libc::ppoll(
            fds.as_mut_ptr(),
            fds.len() as libc::nfds_t,
            &ts,
            std::ptr::null(),
        )
    };
}

/// The emulating thread under `SCHED_FIFO` while it runs (root may ask for it): on a
/// machine whose cores other work shares, an ordinary thread wakes from `ppoll` late by
/// however long the scheduler lets the other work run, and that lateness is the
/// emulator's timing error. Dropping it restores the thread's former policy. The
/// kernel's real-time throttling (`sched_rt_runtime_us`) still leaves the rest of the
/// machine 5 % of every second.
struct RealtimePriority {
    policy: libc::c_int,
    param: libc::sched_param,
}

impl RealtimePriority {
    /// Priority 50 of 99: above every ordinary thread, below the kernel's own
    /// real-time threads (watchdogs, threaded interrupts at 50 are equal, not starved).
    fn raise() -> Option<RealtimePriority> {
        // SAFETY: plain calls on the calling thread with valid pointers.
        unsafe {
            let policy = libc::sched_getscheduler(0);
            let mut param = libc::sched_param { sched_priority: 0 };
            libc::sched_getparam(0, &mut param);
            let rt = libc::sched_param { sched_priority: 50 };
            (libc::sched_setscheduler(0, libc::SCHED_FIFO, &rt) == 0)
                .then_some(RealtimePriority { policy, param })
        }
    }
}

impl Drop for RealtimePriority {
    fn drop(&mut self) {
        // SAFETY: restores the policy read in `raise`.
        unsafe { libc::sched_setscheduler(0, self.policy, &self.param) };
    }
}

/// The packets' bytes while they cross the simulated network, by packet id (the hot-path
/// packet stays as the simulation has it).
struct Payloads {
    bytes: Vec<Vec<u8>>,
}

impl Payloads {
    fn put(&mut self, id: PacketId, pkt: &[u8]) {
        let i = id as usize;
        if self.bytes.len() <= i {
            self.bytes.resize_with(i + 1, Vec::new);
        }
        let slot = &mut self.bytes[i];
        slot.clear();
        slot.extend_from_slice(pkt);
    }
}

/// Which ports name which flows: TCP flow `i`'s receiver listens on `tcp_base + i`; UDP
/// source `u` sends to `udp_base + u` when the kernel plays the UDP sources (`None`:
/// they stay simulated and the emulator's reads ignore UDP).
#[derive(Debug, Clone, Copy)]
pub struct Ports {
    pub tcp_base: u16,
    pub udp_base: Option<u16>,
}

struct Emulator<'a> {
    tuns: [&'a Tun; 2],
    base_port: u16,
    udp_base_port: Option<u16>,
    n_flows: u32,
    n_udp: u32,
    captures: Vec<ExternalCapture>,
    start_ns: u64,
    payloads: Payloads,
    lateness: Histogram<u64>,
    timing: Timing,
    arrivals: Vec<(PacketId, PacketKind, Ecn)>,
    write_error: Option<std::io::Error>,
}

impl Emulator<'_> {
    fn elapsed_ns(&self) -> u64 {
        monotonic_ns().saturating_sub(self.start_ns)
    }

    /// Write the external packets that started transmission on a captured link to the
    /// capture, with their real bytes and the ECN field they had then. Called before any
    /// new packet is injected, so every id still names the bytes it named then.
    fn capture(&mut self, world: &mut World) {
        world.take_captures(&mut self.captures);
        for c in self.captures.drain(..) {
            if let Some(pkt) = self.payloads.bytes.get(c.id as usize) {
                world.record_capture(&c, &ipv4::with_ecn(pkt, c.ecn));
            }
        }
    }

    /// Write the packets that reached an endpoint: data and UDP to the receivers' TUN,
    /// ACKs to the senders', each CE-marked if the network marked it.
    fn release(&mut self, world: &mut World) {
        let due = world.now_ns();
        world.take_arrivals(&mut self.arrivals);
        for (id, kind, ecn) in self.arrivals.drain(..) {
            let pkt = &mut self.payloads.bytes[id as usize];
            if ecn == Ecn::Ce {
                ipv4::set_ce(pkt);
            }
            let tun = if kind != PacketKind::TcpAck {
                self.tuns[1]
            } else {
                self.tuns[0]
            };
            match tun.write(pkt) {
                Ok(true) => {}
                Ok(false) => self.timing.write_failures += 1,
                Err(e) => {
                    self.write_error.get_or_insert(e);
                }
            }
            let late = monotonic_ns()
                .saturating_sub(self.start_ns)
                .saturating_sub(due);
            self.lateness.saturating_record(late);
            self.timing.releases += 1;
        }
    }

    /// A UDP datagram from the senders' side to a known source's port: inject it (its
    /// whole IP packet counts as payload, as a simulated source's packet does).
    fn inject_udp(&mut self, world: &mut World, pkt: &[u8]) -> bool {
        let (Some(base), Some(v)) = (self.udp_base_port, parse_udp(pkt)) else {
            return false;
        };
        let u = u32::from(v.dst_port.wrapping_sub(base));
        if v.dst_port < base || u >= self.n_udp {
            return false;
        }
        self.timing.max_packet_bytes = self.timing.max_packet_bytes.max(v.total_len);
        let id = world.inject_udp(u, v.total_len, v.total_len, v.ecn);
        self.payloads.put(id, pkt);
        self.timing.injected += 1;
        self.timing.injected_udp += 1;
        self.capture(world);
        true
    }

    /// Inject every packet waiting on either TUN at the current time.
    fn read_all(&mut self, world: &mut World, buf: &mut [u8], live: bool) -> std::io::Result<()> {
        for side in 0..2 {
            while let Some(n) = self.tuns[side].read(buf)? {
                let pkt = &buf[..n];
                if live && side == 0 && self.inject_udp(world, pkt) {
                    continue;
                }
                let view = parse_tcp(pkt);
                let flow = view.and_then(|v| {
                    let port = if side == 0 { v.dst_port } else { v.src_port };
                    let f = u32::from(port.wrapping_sub(self.base_port));
                    (port >= self.base_port && f < self.n_flows).then_some(f)
                });
                let (Some(v), Some(f), true) = (view, flow, live) else {
                    self.timing.ignored += 1;
                    continue;
                };
                self.timing.max_packet_bytes = self.timing.max_packet_bytes.max(v.total_len);
                let id = world.inject_tcp(f, side == 0, v.total_len, v.payload_len, v.ecn);
                self.payloads.put(id, pkt);
                self.timing.injected += 1;
                // An idle first link starts sending it at once.
                self.capture(world);
            }
        }
        Ok(())
    }
}

/// Run `world` (built from the scenario) in real time between the senders' TUN
/// (`tuns[0]`) and the receivers' (`tuns[1]`), flows told apart by `ports` (with a UDP
/// base port the kernel plays the UDP sources too), simulated time zero at `start_ns` on
/// `CLOCK_MONOTONIC`. `progress` is called about every 100 ms with the fraction done; it
/// returns false to stop early (the run's tables are still returned).
pub fn run(
    mut world: World,
    tuns: [&Tun; 2],
    ports: Ports,
    start_ns: u64,
    progress: &mut dyn FnMut(f64) -> bool,
) -> std::io::Result<EmulateOutput> {
    world.set_external_tcp();
    if ports.udp_base.is_some() {
        world.set_external_udp();
    }
    // Wake from ppoll on time, not up to the default 50 µs timer slack late.
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
    let rt = RealtimePriority::raise();
    let rt_on = rt.is_some();
    let mut em = Emulator {
        tuns,
        base_port: ports.tcp_base,
        udp_base_port: ports.udp_base,
        n_flows: world.tcp_flows() as u32,
        n_udp: world.udp_sources() as u32,
        captures: Vec::new(),
        start_ns,
        payloads: Payloads { bytes: Vec::new() },
        // 1 ns to 100 s, 3 significant figures (lateness beyond is clamped to 100 s).
        lateness: Histogram::new_with_bounds(1, 100_000_000_000, 3)
            .expect("valid histogram bounds"),
        timing: Timing::default(),
        arrivals: Vec::new(),
        write_error: None,
    };
    let mut fds: Vec<libc::pollfd> = tuns
        .iter()
        .map(|t| libc::pollfd {
            fd: t.raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let mut buf = vec![0u8; 65536];
    let end = world.duration_ns();
    // Before time zero: discard what the namespaces send while they come up.
    while monotonic_ns() < start_ns {
        em.read_all(&mut world, &mut buf, false)?;
        wait(&mut fds, (start_ns - monotonic_ns()).min(1_000_000));
    }
    let wall = Instant::now();
    let mut next_report = 0u64;
    loop {
        let now = em.elapsed_ns();
        world.run_due(now, &mut |w| em.release(w));
        em.capture(&mut world);
        if let Some(e) = em.write_error.take() {
            return Err(e);
        }
        if now >= end {
            break;
        }
        em.read_all(&mut world, &mut buf, true)?;
        if now >= next_report {
            next_report = now + 100_000_000;
            if !progress(now as f64 / end as f64) {
                break;
            }
        }
        let next = world
            .next_event_ns()
            .unwrap_or(end)
            .min(end)
            .min(next_report);
        let now = em.elapsed_ns();
        if next > now {
            wait(&mut fds, next - now);
        }
    }
    drop(rt);
    em.timing.realtime_priority = rt_on;
    em.timing.wall_s = wall.elapsed().as_secs_f64();
    em.timing.p50_ns = em.lateness.value_at_quantile(0.5);
    em.timing.p99_ns = em.lateness.value_at_quantile(0.99);
    em.timing.max_ns = em.lateness.max();
    let output = world.finish(em.timing.wall_s);
    Ok(EmulateOutput {
        output,
        timing: em.timing,
    })
}
