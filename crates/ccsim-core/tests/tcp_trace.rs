//! Issue 32's sender-side defects, checked on whole runs: a flow is not traced before it
//! starts, and its data segments echo the peer's latest TSval (RFC 7323 §3-4, Linux
//! `tcp_options_write()` writes `tp->rx_opt.ts_recent` into every segment).

use ccsim_core::api;
use ccsim_core::results::{Column, RunOutput};

fn run(text: &str) -> RunOutput {
    api::run(&api::parse(text, "toml").expect("valid scenario"), None).expect("runs")
}

/// Two traced flows, the second starting at 0.5 s; 0.1 s stats ticks.
fn late_start(trace_extra: &str) -> RunOutput {
    run(&format!(
        r#"
duration = "1s"
stats_interval = "100ms"
{trace_extra}
[bottleneck]
rate = "10Mbps"
queue = {{ kind = "droptail", limit = "1bdp" }}
[[flows]]
cc = "newreno"
rtt = "40ms"
trace = true
[[flows]]
cc = "newreno"
rtt = "40ms"
start = "500ms"
trace = true
"#
    ))
}

#[test]
fn a_flow_has_no_cc_trace_rows_before_it_starts() {
    let out = late_start("");
    let trace = out.tables.iter().find(|t| t.name == "cc_trace").unwrap();
    let (Some(Column::F64(t)), Some(Column::U32(id))) =
        (trace.column("time_s"), trace.column("flow_id"))
    else {
        panic!("cc_trace columns")
    };
    let times = |flow: u32| -> Vec<f64> {
        (0..t.len())
            .filter(|&i| id[i] == flow)
            .map(|i| t[i])
            .collect()
    };
    let (early, late) = (times(0), times(1));
    assert_eq!(early.len(), 10, "flow 0 traced at every tick from 0.1 s");
    assert!(
        late.iter().all(|&x| x >= 0.5 - 1e-9),
        "flow 1 starts at 0.5 s but is traced at {late:?}"
    );
    assert!(late.len() >= 5, "flow 1 is traced once it runs: {late:?}");
}

/// Big-endian u32 at `at`.
fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}

/// (is data, TSval, TSecr, capture time µs) of every TCP packet of the capture's
/// enhanced packet blocks (Ethernet + IPv4 + TCP with NOP NOP TS first).
fn timestamps(pcap: &[u8]) -> Vec<(bool, u32, u32, u64)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < pcap.len() {
        let kind = u32::from_le_bytes(pcap[at..at + 4].try_into().unwrap());
        let total = u32::from_le_bytes(pcap[at + 4..at + 8].try_into().unwrap()) as usize;
        if kind == 6 {
            let body = &pcap[at + 8..at + total - 4];
            let ts_hi = u32::from_le_bytes(body[4..8].try_into().unwrap()) as u64;
            let ts_lo = u32::from_le_bytes(body[8..12].try_into().unwrap()) as u64;
            let frame = &body[20..];
            let ip = &frame[14..];
            if ip[9] == 6 {
                let tcp = &ip[((ip[0] & 0xf) as usize) * 4..];
                let header = ((tcp[12] >> 4) as usize) * 4;
                let total_len = u16::from_be_bytes([ip[2], ip[3]]) as usize;
                let is_data = total_len > ((ip[0] & 0xf) as usize) * 4 + header;
                assert_eq!(&tcp[20..24], &[1, 1, 8, 10], "NOP NOP TS first");
                out.push((is_data, be32(tcp, 24), be32(tcp, 28), (ts_hi << 32) | ts_lo));
            }
        }
        at += total;
    }
    out
}

#[test]
fn data_segments_echo_the_latest_tsval_the_sender_received() {
    let out = run(r#"
duration = "300ms"
[trace]
pcap = ["tcp0.0-access-up", "tcp0.0-access-ack-down"]
[bottleneck]
rate = "10Mbps"
queue = { kind = "droptail", limit = "1bdp" }
[[flows]]
cc = "newreno"
rtt = "40ms"
"#);
    let pkts = timestamps(out.pcap.as_deref().expect("a capture"));
    // Replay the capture in time order: the sender's access link carries data out, the
    // ACKs leave the last link towards the sender on the other, so an ACK is captured
    // before the sender has it. A data segment echoes the TSval of an ACK captured
    // before it (Linux's ts_recent), the echo never goes back, and a segment sent
    // before the first ACK echoes nothing (no handshake is simulated).
    let mut pkts = pkts;
    pkts.sort_by_key(|p| p.3);
    let mut seen = std::collections::HashSet::new();
    let (mut last_echo, mut data_after_ack) = (0u32, 0);
    for &(is_data, ts_val, ts_ecr, _) in &pkts {
        if !is_data {
            seen.insert(ts_val);
        } else if seen.is_empty() {
            assert_eq!(ts_ecr, 0);
        } else {
            assert!(ts_ecr >= last_echo, "the echo went back");
            if ts_ecr > 0 {
                assert!(seen.contains(&ts_ecr), "TSecr {ts_ecr} is no TSval sent");
                data_after_ack += 1;
            }
            last_echo = ts_ecr;
        }
    }
    assert!(
        data_after_ack > 100,
        "{data_after_ack} data segments checked"
    );
}
