//! Emulation: a scenario's network run in real time between real kernel TCP sockets.
//!
//! The scenario is built as for a simulation ([`crate::sim::build`]), so the access links,
//! the bottleneck with its discipline and shaper, and the reverse path are exactly the
//! scenario's; only its TCP flows' endpoints are replaced by two TUN devices ([`tun`]),
//! one facing the senders' network namespace and one the receivers'. The caller (the
//! Python package) creates the namespaces, moves the devices into them and runs the
//! kernel's traffic; [`run`] then executes the world's events at their wall-clock time
//! (`CLOCK_MONOTONIC`), stamps every packet read from a TUN with the time it was read,
//! and writes every packet reaching a simulated endpoint to the far TUN, CE-marked in its
//! IP header if a discipline marked it ([`ipv4`]). Flow `i`'s packets are told apart by
//! the receiver's port, `base_port + i`; with the UDP sources played by kernel sockets
//! too, source `u`'s datagrams by their destination port, `udp_base_port + u`.
//!
//! `[trace] pcap` captures where a simulated run does, at the start of a packet's
//! transmission on each named link, but the packet's real bytes (its IP and transport
//! headers as the kernel wrote them, the ECN field as the network carried it then), so
//! an emulated and a simulated capture of the same link can be compared side by side.
//!
//! The emulator's own error is measured on every packet it releases: the wall-clock
//! time of the write minus the simulated time the packet left the network.

pub mod ipv4;
pub mod realtime;
pub mod tun;

pub use realtime::{run, EmulateOutput, Ports, Timing};
