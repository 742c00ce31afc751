//! `[trace] pcap`: packets leaving chosen links, written as pcapng for Wireshark/tshark.
//!
//! Format: pcapng (IETF draft-ietf-opsawg-pcapng; the Wireshark "PCAP Next Generation
//! Dump File Format"): one Section Header Block, one Interface Description Block per
//! captured link (`LINKTYPE_ETHERNET`, `if_name` = the link's name, `if_tsresol` = 9:
//! nanosecond timestamps), and one Enhanced Packet Block per packet, stamped when its
//! transmission onto the link starts (where a capture on the sending interface stamps
//! it).
//!
//! ccsim's packets carry no bytes, so the headers are synthesised from what a packet
//! models, and only the headers are captured (snap length = headers, original length =
//! the packet's size, as `tcpdump -s` writes a truncated capture):
//! - Ethernet II: locally administered MACs made from the IP addresses;
//! - IPv4 (RFC 791): the ECN field (RFC 3168 §5) as the packet carries it, DF, TTL 64,
//!   a correct header checksum; flow `f` runs from sender 10.(1 + 2k).(f >> 8).(f & 255)
//!   to receiver 10.(2 + 2k).(f >> 8).(f & 255), `k = (f >> 16) & 63`;
//! - TCP (RFC 9293): sender port 10000 + the connection number (each closed-loop transfer
//!   is a new connection), receiver port 80; sequence numbers in bytes from ISN 0 (the
//!   first data byte is 1, as after a SYN), ACK numbers likewise, capped at the
//!   transfer's size + 1; flags ACK (and PSH on data), ECE and CWR as modelled; the
//!   timestamps option (RFC 7323 §3, TSval in µs) and, on ACKs, the SACK option (RFC
//!   2018) with the blocks the ACK carries; window 65535 (no window scaling is
//!   captured); checksums are not computed (0: Wireshark does not verify them by
//!   default);
//! - UDP (RFC 768): ports 10000 and 9, checksum 0 ("not computed" in IPv4).
//!
//! The IP total length is the header (with the options actually written) plus the
//! payload; ccsim accounts every TCP/IP header as 52 bytes, so an ACK carrying SACK
//! blocks is 12 to 28 bytes longer on the capture than on ccsim's wire.

use crate::net::packet::{Packet, PacketKind, TCP_IP_HEADER_BYTES};

/// Per-flow facts the headers need (TCP: MSS and transfer size; UDP: none).
#[derive(Debug, Clone, Copy)]
pub struct FlowWire {
    pub mss: u32,
    /// Bytes of the current transfer; `None` for a bulk sender.
    pub total_bytes: Option<u64>,
}

/// The capture being written.
#[derive(Debug)]
pub struct Pcap {
    buf: Vec<u8>,
    packets: u64,
    max_packets: u64,
    /// Packets left out once `max_packets` was reached.
    pub dropped: u64,
}

const SHB: u32 = 0x0A0D_0D0A;
const IDB: u32 = 0x0000_0001;
const EPB: u32 = 0x0000_0006;
const LINKTYPE_ETHERNET: u16 = 1;

fn pad4(n: usize) -> usize {
    n.div_ceil(4) * 4
}

impl Pcap {
    /// A capture of the named links (interface ids in this order), keeping at most
    /// `max_packets` packets.
    pub fn new(interfaces: &[String], max_packets: u64) -> Self {
        let mut p = Pcap {
            buf: Vec::new(),
            packets: 0,
            max_packets,
            dropped: 0,
        };
        // Section Header Block: byte-order magic, version 1.0, section length unknown.
        let mut body = Vec::new();
        body.extend_from_slice(&0x1A2B_3C4Du32.to_le_bytes());
        body.extend_from_slice(&1u16.to_le_bytes());
        body.extend_from_slice(&0u16.to_le_bytes());
        body.extend_from_slice(&(-1i64).to_le_bytes());
        opt(&mut body, 4, b"ccsim"); // shb_userappl
        end_opts(&mut body);
        p.block(SHB, &body);
        for name in interfaces {
            let mut body = Vec::new();
            body.extend_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
            body.extend_from_slice(&0u16.to_le_bytes());
            body.extend_from_slice(&0u32.to_le_bytes()); // snaplen: no limit
            opt(&mut body, 2, name.as_bytes()); // if_name
            opt(&mut body, 9, &[9]); // if_tsresol: 10^-9 s
            end_opts(&mut body);
            p.block(IDB, &body);
        }
        p
    }

    fn block(&mut self, kind: u32, body: &[u8]) {
        let total = (12 + pad4(body.len())) as u32;
        self.buf.extend_from_slice(&kind.to_le_bytes());
        self.buf.extend_from_slice(&total.to_le_bytes());
        self.buf.extend_from_slice(body);
        self.buf
            .resize(self.buf.len() + pad4(body.len()) - body.len(), 0);
        self.buf.extend_from_slice(&total.to_le_bytes());
    }

    /// Record packet `p` leaving interface `iface` at `now_ns`.
    pub fn record(
        &mut self,
        iface: u32,
        now_ns: u64,
        p: &Packet,
        sack: &[(u64, u64)],
        wire: Option<FlowWire>,
    ) {
        if self.packets >= self.max_packets {
            self.dropped += 1;
            return;
        }
        self.packets += 1;
        let (frame, orig_len) = frame(p, sack, wire);
        let mut body = Vec::with_capacity(20 + frame.len());
        body.extend_from_slice(&iface.to_le_bytes());
        body.extend_from_slice(&((now_ns >> 32) as u32).to_le_bytes());
        body.extend_from_slice(&(now_ns as u32).to_le_bytes());
        body.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        body.extend_from_slice(&(orig_len as u32).to_le_bytes());
        body.extend_from_slice(&frame);
        body.resize(pad4(body.len()), 0);
        self.block(EPB, &body);
    }

    /// Record a real IPv4 packet (an emulated run's kernel packet, [`crate::emulate`])
    /// leaving interface `iface` at `now_ns`: Ethernet II with the same locally
    /// administered MACs made from its addresses as a synthesised frame, then its own IP
    /// and transport headers, truncated after them as [`Pcap::record`] truncates (the
    /// original length is the whole packet's). Counts against the same `max_packets`.
    pub fn record_ip(&mut self, iface: u32, now_ns: u64, ip: &[u8]) {
        if self.packets >= self.max_packets {
            self.dropped += 1;
            return;
        }
        self.packets += 1;
        let (snap, total) = ip_headers_len(ip);
        let mut frame = Vec::with_capacity(14 + snap);
        let (src, dst) = if ip.len() >= 20 {
            (&ip[12..16], &ip[16..20])
        } else {
            (&[0u8; 4][..], &[0u8; 4][..])
        };
        frame.extend_from_slice(&[0x02, 0x00]);
        frame.extend_from_slice(dst);
        frame.extend_from_slice(&[0x02, 0x00]);
        frame.extend_from_slice(src);
        frame.extend_from_slice(&0x0800u16.to_be_bytes());
        frame.extend_from_slice(&ip[..snap]);
        let mut body = Vec::with_capacity(20 + frame.len());
        body.extend_from_slice(&iface.to_le_bytes());
        body.extend_from_slice(&((now_ns >> 32) as u32).to_le_bytes());
        body.extend_from_slice(&(now_ns as u32).to_le_bytes());
        body.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        body.extend_from_slice(&((14 + total) as u32).to_le_bytes());
        body.extend_from_slice(&frame);
        body.resize(pad4(body.len()), 0);
        self.block(EPB, &body);
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }
}

/// An option (code, value), padded to 32 bits.
fn opt(body: &mut Vec<u8>, code: u16, value: &[u8]) {
    body.extend_from_slice(&code.to_le_bytes());
    body.extend_from_slice(&(value.len() as u16).to_le_bytes());
    body.extend_from_slice(value);
    body.resize(pad4(body.len()), 0);
}

fn end_opts(body: &mut Vec<u8>) {
    body.extend_from_slice(&[0, 0, 0, 0]);
}

/// The sender's and receiver's IPv4 addresses of flow `f`.
pub fn addresses(f: u32) -> ([u8; 4], [u8; 4]) {
    let k = ((f >> 16) & 63) as u8;
    let (hi, lo) = ((f >> 8) as u8, f as u8);
    ([10, 1 + 2 * k, hi, lo], [10, 2 + 2 * k, hi, lo])
}

/// Of a real IPv4 packet: the bytes up to the end of its TCP (data offset) or UDP (8
/// bytes) header, which a headers-only capture keeps, and its total length; anything it
/// cannot read is kept whole.
fn ip_headers_len(ip: &[u8]) -> (usize, usize) {
    if ip.len() < 20 || ip[0] >> 4 != 4 {
        return (ip.len(), ip.len());
    }
    let ihl = usize::from(ip[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([ip[2], ip[3]])).min(ip.len());
    let l4 = match ip[9] {
        6 if ip.len() >= ihl + 13 => usize::from(ip[ihl + 12] >> 4) * 4,
        17 => 8,
        _ => total.saturating_sub(ihl),
    };
    ((ihl + l4).min(total), total)
}

/// RFC 1071 checksum of an IPv4 header.
fn ip_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = h
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The captured bytes (headers) of `p` and its length on the wire.
fn frame(p: &Packet, sack: &[(u64, u64)], wire: Option<FlowWire>) -> (Vec<u8>, usize) {
    let (sender, receiver) = addresses(p.flow);
    let (src, dst) = if p.kind == PacketKind::TcpAck {
        (receiver, sender)
    } else {
        (sender, receiver)
    };
    // Transport header.
    let mut l4 = Vec::with_capacity(60);
    let payload = p.payload_bytes as usize;
    let proto;
    match p.kind {
        PacketKind::Udp => {
            proto = 17u8;
            l4.extend_from_slice(&10000u16.to_be_bytes());
            l4.extend_from_slice(&9u16.to_be_bytes());
            let udp_payload = (p.size_bytes as usize).saturating_sub(28);
            l4.extend_from_slice(&((8 + udp_payload) as u16).to_be_bytes());
            l4.extend_from_slice(&0u16.to_be_bytes());
            let total = 20 + 8 + udp_payload;
            (finish(src, dst, proto, p, &l4, total), 14 + total)
        }
        _ => {
            proto = 6;
            let w = wire.unwrap_or(FlowWire {
                mss: 1448,
                total_bytes: None,
            });
            let mss = u64::from(w.mss);
            let cap = |seg: u64| {
                let b = seg * mss;
                w.total_bytes.map_or(b, |t| b.min(t)) as u32
            };
            let sport = 10000u16.wrapping_add(p.conn as u16);
            let (s, d, seq, ack) = if p.kind == PacketKind::TcpData {
                // The receiver's ACK number is unknown here: the data's ACK field
                // repeats ISN + 1 (the handshake's), as a one-way bulk sender's does.
                (sport, 80u16, cap(p.seq).wrapping_add(1), 1u32)
            } else {
                (80u16, sport, 1u32, cap(p.seq).wrapping_add(1))
            };
            l4.extend_from_slice(&s.to_be_bytes());
            l4.extend_from_slice(&d.to_be_bytes());
            l4.extend_from_slice(&seq.to_be_bytes());
            l4.extend_from_slice(&ack.to_be_bytes());
            // Options: NOP NOP TS (12), then NOP NOP SACK on ACKs.
            let mut opts = vec![1u8, 1, 8, 10];
            opts.extend_from_slice(&((p.ts_val / 1000) as u32).to_be_bytes());
            opts.extend_from_slice(&((p.ts_ecr / 1000) as u32).to_be_bytes());
            if p.kind == PacketKind::TcpAck && !sack.is_empty() {
                opts.extend_from_slice(&[1, 1, 5, (2 + 8 * sack.len()) as u8]);
                for &(a, b) in sack {
                    opts.extend_from_slice(&cap(a).wrapping_add(1).to_be_bytes());
                    opts.extend_from_slice(&cap(b).wrapping_add(1).to_be_bytes());
                }
            }
            let header_len = 20 + opts.len();
            let mut flags: u8 = 0x10; // ACK
            if p.kind == PacketKind::TcpData && payload > 0 {
                flags |= 0x08; // PSH
            }
            if p.tcp_flags & crate::net::packet::tcp_flags::ECE != 0 {
                flags |= 0x40;
            }
            if p.tcp_flags & crate::net::packet::tcp_flags::CWR != 0 {
                flags |= 0x80;
            }
            l4.push(((header_len / 4) as u8) << 4);
            l4.push(flags);
            l4.extend_from_slice(&65535u16.to_be_bytes());
            l4.extend_from_slice(&0u16.to_be_bytes()); // checksum (not computed)
            l4.extend_from_slice(&0u16.to_be_bytes()); // urgent pointer
            l4.extend_from_slice(&opts);
            let total = 20 + header_len + payload;
            debug_assert!(
                p.kind == PacketKind::TcpAck
                    || p.size_bytes as usize == payload + TCP_IP_HEADER_BYTES as usize
            );
            (finish(src, dst, proto, p, &l4, total), 14 + total)
        }
    }
}

/// Ethernet + IPv4 header in front of the transport header `l4`; `total` is the IP
/// total length.
fn finish(src: [u8; 4], dst: [u8; 4], proto: u8, p: &Packet, l4: &[u8], total: usize) -> Vec<u8> {
    let mut f = Vec::with_capacity(34 + l4.len());
    f.extend_from_slice(&[0x02, 0x00, dst[0], dst[1], dst[2], dst[3]]);
    f.extend_from_slice(&[0x02, 0x00, src[0], src[1], src[2], src[3]]);
    f.extend_from_slice(&0x0800u16.to_be_bytes());
    let mut ip = [0u8; 20];
    ip[0] = 0x45;
    ip[1] = p.ecn as u8; // DSCP 0, ECN field (RFC 3168 §5)
    ip[2..4].copy_from_slice(&(total.min(65535) as u16).to_be_bytes());
    ip[4..6].copy_from_slice(&(p.seq as u16).to_be_bytes()); // identification
    ip[6] = 0x40; // DF
    ip[8] = 64;
    ip[9] = proto;
    ip[12..16].copy_from_slice(&src);
    ip[16..20].copy_from_slice(&dst);
    let c = ip_checksum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(l4);
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::Ecn;

    /// RFC 1071's example: the one's complement of the one's-complement sum. A header
    /// with its checksum in place sums to 0xffff (checksum of it = 0).
    #[test]
    fn ip_header_checksum_verifies() {
        let p = Packet {
            size_bytes: 1500,
            payload_bytes: 1448,
            flow: 3,
            kind: PacketKind::TcpData,
            ecn: Ecn::Ce,
            seq: 7,
            ..Default::default()
        };
        let (f, orig) = frame(&p, &[], None);
        assert_eq!(orig, 14 + 1500);
        let ip = &f[14..34];
        assert_eq!(ip_checksum(ip), 0);
        assert_eq!(ip[1] & 3, 3, "CE in the ECN field");
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]), 1500);
        // Sequence number: segment 7 of 1448 B from ISN 0 = byte 10137.
        assert_eq!(
            u32::from_be_bytes([f[38], f[39], f[40], f[41]]),
            7 * 1448 + 1
        );
    }

    /// A real packet (20-byte IP header, 32-byte TCP header with options, 100 bytes of
    /// data) is kept up to the end of its TCP header: an Enhanced Packet Block whose
    /// captured length is 14 + 52 and original length 14 + 152 (pcapng §4.3), the
    /// Ethernet addresses made from the IP ones as in a synthesised frame; a UDP packet
    /// keeps 8 transport bytes.
    #[test]
    fn real_packets_keep_their_headers_only() {
        let mut ip = vec![0u8; 152];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&152u16.to_be_bytes());
        ip[9] = 6;
        ip[12..16].copy_from_slice(&[10, 203, 1, 1]);
        ip[16..20].copy_from_slice(&[10, 203, 2, 1]);
        ip[32] = 8 << 4;
        let mut cap = Pcap::new(&["bottleneck".into()], 1);
        let header_len = cap.bytes().len();
        cap.record_ip(0, 5_000_000_001, &ip);
        cap.record_ip(0, 6, &ip); // over the budget of one packet
        assert_eq!(cap.dropped, 1);
        let epb = &cap.bytes()[header_len..];
        let word = |o: usize| u32::from_le_bytes(epb[o..o + 4].try_into().unwrap());
        assert_eq!(word(0), EPB);
        assert_eq!(word(8), 0, "interface 0");
        assert_eq!(
            (u64::from(word(12)) << 32) | u64::from(word(16)),
            5_000_000_001
        );
        assert_eq!((word(20), word(24)), (14 + 52, 14 + 152));
        let frame = &epb[28..28 + 66];
        assert_eq!(&frame[..6], &[2, 0, 10, 203, 2, 1]);
        assert_eq!(&frame[6..12], &[2, 0, 10, 203, 1, 1]);
        assert_eq!(&frame[14..], &ip[..52]);
        let mut udp = ip.clone();
        udp[9] = 17;
        assert_eq!(ip_headers_len(&udp), (28, 152));
    }
}
