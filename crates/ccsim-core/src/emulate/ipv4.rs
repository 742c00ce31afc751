//! The few fields of an IPv4/TCP packet the emulator reads or rewrites (RFC 791 §3.1,
//! RFC 9293 §3.1): ports to find the flow, lengths for the simulated packet, and the ECN
//! field (RFC 3168 §5), which a discipline's CE mark sets in the real header.

use crate::net::packet::Ecn;

/// What the emulator needs of a TCP segment (or a UDP datagram) in an IPv4 packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpView {
    pub total_len: u32,
    pub payload_len: u32,
    pub src_port: u16,
    pub dst_port: u16,
    pub ecn: Ecn,
}

/// Parse an IPv4 packet carrying UDP (RFC 768): its ports and lengths (the payload is
/// what follows the 8-byte UDP header); `None` for anything else.
pub fn parse_udp(pkt: &[u8]) -> Option<TcpView> {
    let (ihl, total_len) = ipv4_lengths(pkt, 17)?;
    if total_len < ihl + 8 {
        return None;
    }
    let udp = &pkt[ihl..total_len];
    Some(TcpView {
        total_len: total_len as u32,
        payload_len: (udp.len() - 8) as u32,
        src_port: u16::from_be_bytes([udp[0], udp[1]]),
        dst_port: u16::from_be_bytes([udp[2], udp[3]]),
        ecn: ecn_of(pkt),
    })
}

/// The header length and total length of an unfragmented IPv4 packet of protocol
/// `proto` that the buffer holds whole.
fn ipv4_lengths(pkt: &[u8], proto: u8) -> Option<(usize, usize)> {
    if pkt.len() < 20 || pkt[0] >> 4 != 4 {
        return None;
    }
    let ihl = usize::from(pkt[0] & 0x0f) * 4;
    let total_len = usize::from(u16::from_be_bytes([pkt[2], pkt[3]]));
    let frag = u16::from_be_bytes([pkt[6], pkt[7]]) & 0x3fff; // MF flag and offset
    (ihl >= 20 && pkt[9] == proto && frag == 0 && total_len <= pkt.len() && total_len >= ihl)
        .then_some((ihl, total_len))
}

fn ecn_of(pkt: &[u8]) -> Ecn {
    match pkt[1] & 3 {
        0 => Ecn::NotEct,
        1 => Ecn::Ect1,
        2 => Ecn::Ect0,
        _ => Ecn::Ce,
    }
}

/// The packet with its ECN field set to `ecn` (as the network carried it at some point)
/// and a valid header checksum; unchanged if it already has that field.
pub fn with_ecn(pkt: &[u8], ecn: Ecn) -> std::borrow::Cow<'_, [u8]> {
    if pkt.len() < 20 || pkt[1] & 3 == ecn as u8 {
        return std::borrow::Cow::Borrowed(pkt);
    }
    let mut out = pkt.to_vec();
    let ihl = usize::from(out[0] & 0x0f) * 4;
    out[1] = (out[1] & !3) | ecn as u8;
    let sum = header_checksum(&out[..ihl.min(out.len())]);
    out[10..12].copy_from_slice(&sum.to_be_bytes());
    std::borrow::Cow::Owned(out)
}

/// Parse an IPv4 packet carrying TCP; `None` for anything else (IPv6, ICMP, fragments,
/// truncated headers).
pub fn parse_tcp(pkt: &[u8]) -> Option<TcpView> {
    if pkt.len() < 20 || pkt[0] >> 4 != 4 {
        return None;
    }
    let ihl = usize::from(pkt[0] & 0x0f) * 4;
    let total_len = usize::from(u16::from_be_bytes([pkt[2], pkt[3]]));
    let frag = u16::from_be_bytes([pkt[6], pkt[7]]) & 0x3fff; // MF flag and offset
    if ihl < 20 || pkt[9] != 6 || frag != 0 || total_len > pkt.len() || total_len < ihl + 20 {
        return None;
    }
    let tcp = &pkt[ihl..total_len];
    let data_offset = usize::from(tcp[12] >> 4) * 4;
    if data_offset < 20 || data_offset > tcp.len() {
        return None;
    }
    let ecn = match pkt[1] & 3 {
        0 => Ecn::NotEct,
        1 => Ecn::Ect1,
        2 => Ecn::Ect0,
        _ => Ecn::Ce,
    };
    Some(TcpView {
        total_len: total_len as u32,
        payload_len: (tcp.len() - data_offset) as u32,
        src_port: u16::from_be_bytes([tcp[0], tcp[1]]),
        dst_port: u16::from_be_bytes([tcp[2], tcp[3]]),
        ecn,
    })
}

/// The IPv4 header checksum (RFC 791 §3.1; RFC 1071): the ones' complement of the ones'
/// complement sum of the header's 16-bit words, the checksum field taken as zero.
pub fn header_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for (i, w) in header.chunks(2).enumerate() {
        if i == 5 {
            continue; // the checksum field itself
        }
        let word = u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)]);
        sum += u32::from(word);
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Set the ECN field to CE (a discipline marked the packet), keeping the header valid.
/// Only an ECN-capable packet is marked (RFC 3168 §5: a router never sets CE on Not-ECT).
pub fn set_ce(pkt: &mut [u8]) {
    if pkt.len() < 20 || pkt[1] & 3 == 0 || pkt[1] & 3 == 3 {
        return;
    }
    let ihl = usize::from(pkt[0] & 0x0f) * 4;
    pkt[1] |= 3;
    let sum = header_checksum(&pkt[..ihl]);
    pkt[10..12].copy_from_slice(&sum.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worked example of the IPv4 header checksum on Wikipedia's "Internet checksum"
    /// page (header 4500 0073 0000 4000 4011 .... c0a8 0001 c0a8 00c7): checksum b861.
    fn example_header() -> Vec<u8> {
        let words: [u16; 10] = [
            0x4500, 0x0073, 0x0000, 0x4000, 0x4011, 0xb861, 0xc0a8, 0x0001, 0xc0a8, 0x00c7,
        ];
        words.iter().flat_map(|w| w.to_be_bytes()).collect()
    }

    #[test]
    fn checksum_matches_the_published_example() {
        assert_eq!(header_checksum(&example_header()), 0xb861);
    }

    /// A TCP segment: 20-byte IP header (ECT(0)), 32-byte TCP header, 100 bytes of data.
    fn segment(tos: u8) -> Vec<u8> {
        let total = 20 + 32 + 100;
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[1] = tos;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[8] = 64;
        p[9] = 6;
        p[12..16].copy_from_slice(&[10, 0, 1, 1]);
        p[16..20].copy_from_slice(&[10, 0, 2, 1]);
        let sum = header_checksum(&p[..20]);
        p[10..12].copy_from_slice(&sum.to_be_bytes());
        p[20..22].copy_from_slice(&40000u16.to_be_bytes());
        p[22..24].copy_from_slice(&5201u16.to_be_bytes());
        p[32] = 8 << 4; // data offset: 8 words
        p
    }

    /// A header whose checksum is right sums (with its checksum) to 0xffff.
    fn verifies(h: &[u8]) -> bool {
        let mut sum: u32 = h
            .chunks(2)
            .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
            .sum();
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        sum == 0xffff
    }

    #[test]
    fn parses_ports_lengths_and_ecn() {
        let v = parse_tcp(&segment(2)).unwrap();
        assert_eq!(v.total_len, 152);
        assert_eq!(v.payload_len, 100);
        assert_eq!((v.src_port, v.dst_port), (40000, 5201));
        assert_eq!(v.ecn, Ecn::Ect0);
        let mut udp = segment(0);
        udp[9] = 17;
        assert_eq!(parse_tcp(&udp), None);
        assert_eq!(parse_tcp(&segment(0)[..30]), None);
    }

    #[test]
    fn ce_mark_keeps_the_header_valid_and_spares_not_ect() {
        let mut p = segment(2);
        assert!(verifies(&p[..20]));
        set_ce(&mut p);
        assert_eq!(p[1] & 3, 3);
        assert!(verifies(&p[..20]));
        let mut not_ect = segment(0);
        set_ce(&mut not_ect);
        assert_eq!(not_ect, segment(0));
    }

    /// A UDP datagram (RFC 768: 8-byte header, ports first) in a 152-byte IP packet:
    /// 152 - 20 - 8 bytes of payload; the same bytes marked TCP are not UDP.
    #[test]
    fn parses_udp_datagrams() {
        let mut p = segment(1);
        p[9] = 17;
        p[20..22].copy_from_slice(&40001u16.to_be_bytes());
        p[22..24].copy_from_slice(&6201u16.to_be_bytes());
        let v = parse_udp(&p).unwrap();
        assert_eq!((v.total_len, v.payload_len), (152, 152 - 28));
        assert_eq!((v.src_port, v.dst_port, v.ecn), (40001, 6201, Ecn::Ect1));
        assert_eq!(parse_udp(&segment(0)), None);
    }

    /// A capture shows the ECN field as the network carried the packet: setting it
    /// rewrites only that field and keeps the header checksum valid.
    #[test]
    fn with_ecn_sets_the_field_and_the_checksum() {
        let p = segment(2);
        assert!(matches!(
            with_ecn(&p, Ecn::Ect0),
            std::borrow::Cow::Borrowed(_)
        ));
        let ce = with_ecn(&p, Ecn::Ce);
        assert_eq!(ce[1] & 3, 3);
        assert!(verifies(&ce[..20]));
        assert_eq!(&ce[20..], &p[20..]);
        let back = with_ecn(&ce, Ecn::Ect0);
        assert_eq!(&back[..], &p[..]);
    }
}
