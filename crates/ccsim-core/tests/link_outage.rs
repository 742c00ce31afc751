//! Outages and re-timing (issue 31): a zero rate in `rate_changes` holds the link's
//! packets until it comes back, and a rate change re-times the packet on the
//! transmitter (the bits already sent at the old rate count, the rest go at the new
//! rate). Checked against hand-worked serialisation times and against the arrivals a
//! constant-bit-rate source makes, observed through a pcap of the bottleneck
//! (timestamps at the start of each transmission, in nanoseconds).

use ccsim_core::api;
use ccsim_core::results::{Column, RunOutput, Table};

fn run(text: &str) -> RunOutput {
    api::run(&api::parse(text, "toml").expect("valid scenario"), None).expect("runs")
}

/// Start times (ns) of every packet of the capture's enhanced packet blocks.
fn starts_ns(pcap: &[u8]) -> Vec<u64> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < pcap.len() {
        let word = |k: usize| u32::from_le_bytes(pcap[k..k + 4].try_into().unwrap());
        let (kind, total) = (word(at), word(at + 4) as usize);
        if kind == 6 {
            out.push(((word(at + 12) as u64) << 32) | word(at + 16) as u64);
        }
        at += total;
    }
    out
}

/// A 13 Mbit/s CBR source of 1500 B packets into a 12 Mbit/s bottleneck: after its first
/// packet the link is never idle, so each transmission starts when the one before ends.
fn cbr(changes: &str) -> Vec<u64> {
    let out = run(&format!(
        r#"
duration = "1.2s"
[trace]
pcap = ["bottleneck"]
[bottleneck]
rate = "12Mbps"
queue = {{ kind = "droptail", limit = "1000p" }}
{changes}
[[udp]]
rate = "13Mbps"
rtt = "20ms"
"#
    ));
    starts_ns(&out.pcap.expect("a capture"))
}

#[test]
fn a_rate_step_retimes_the_packet_being_sent() {
    let base = cbr("");
    // Back to back at 12 Mbit/s: 12000 bits each, exactly 1 ms apart.
    let k = base.iter().position(|&t| t >= 500_000_000).unwrap();
    assert_eq!(base[k + 1] - base[k], 1_000_000);
    // Halve the rate when packet k is half sent (6000 of its 12000 bits, 0.5 ms in).
    // By hand: its other 6000 bits take 1 ms at 6 Mbit/s, so it ends 1.5 ms after its
    // start; each later packet takes 2 ms. (Keeping its old time it would end at 1 ms.)
    let half = base[k] + 500_000;
    let stepped = cbr(&format!(
        "rate_changes = [{{ at = \"{half}ns\", rate = \"6Mbps\" }}]"
    ));
    assert_eq!(stepped[..=k], base[..=k], "nothing changes before the step");
    assert_eq!(stepped[k + 1] - stepped[k], 1_500_000, "re-timed end");
    assert_eq!(
        stepped[k + 2] - stepped[k + 1],
        2_000_000,
        "next at 6 Mbit/s"
    );
    // A step up re-times the same way: a quarter sent (3000 bits) at 12 Mbit/s, the other
    // 9000 bits at 36 Mbit/s take 0.25 ms: it ends 0.5 ms after its start.
    let quarter = base[k] + 250_000;
    let up = cbr(&format!(
        "rate_changes = [{{ at = \"{quarter}ns\", rate = \"36Mbps\" }}]"
    ));
    assert_eq!(up[k + 1] - up[k], 500_000, "re-timed end after a step up");
}

#[test]
fn an_outage_holds_the_packet_on_the_transmitter() {
    let base = cbr("");
    let k = base.iter().position(|&t| t >= 500_000_000).unwrap();
    // Out for 100 ms when packet k is a quarter sent (3000 bits): its other 9000 bits go
    // at 12 Mbit/s once the link is back, so it ends 0.75 ms after the link returns.
    let out_at = base[k] + 250_000;
    let back_at = out_at + 100_000_000;
    let held = cbr(&format!(
        "rate_changes = [{{ at = \"{out_at}ns\", rate = \"0Mbps\" }}, \
         {{ at = \"{back_at}ns\", rate = \"12Mbps\" }}]"
    ));
    assert_eq!(held[..=k], base[..=k]);
    assert_eq!(
        held[k + 1],
        back_at + 750_000,
        "held, then finished at 12 Mbit/s"
    );
    assert_eq!(held[k + 2] - held[k + 1], 1_000_000);
}

fn table<'a>(out: &'a RunOutput, name: &str) -> &'a Table {
    out.tables.iter().find(|t| t.name == name).unwrap()
}

fn u64s<'a>(t: &'a Table, c: &str) -> &'a [u64] {
    match t.column(c) {
        Some(Column::U64(v)) => v,
        other => panic!("{c}: {other:?}"),
    }
}

#[test]
fn during_a_two_second_outage_nothing_departs_and_the_queue_grows_by_the_arrivals() {
    // A 4 Mbit/s CBR source of 1500 B packets (one every 3 ms) into a 10 Mbit/s link that
    // is out from 5 s to 7 s: the 2 s outage must hold every one of the 2 s x 4 Mbit/s /
    // 12000 bit = 666.7 packets that arrive in it.
    let out = run(r#"
duration = "10s"
stats_interval = "100ms"
[bottleneck]
rate = "10Mbps"
queue = { kind = "droptail", limit = "5000p" }
rate_changes = [{ at = "5s", rate = "0Mbps" }, { at = "7s", rate = "10Mbps" }]
[[udp]]
rate = "4Mbps"
rtt = "20ms"
"#);
    let q = table(&out, "queue_series");
    let t = match q.column("time_s") {
        Some(Column::F64(v)) => v,
        other => panic!("{other:?}"),
    };
    let (departed, qlen, arrivals) = (
        u64s(q, "departed_bytes"),
        u64s(q, "qlen_pkts"),
        u64s(q, "arrivals"),
    );
    let at = |s: f64| t.iter().position(|&x| (x - s).abs() < 1e-9).unwrap();
    let (i5, i7) = (at(5.0), at(7.0));
    // Departures are booked when a transmission starts: none starts in (5 s, 7 s].
    assert!(
        departed[i5 + 1..=i7].iter().all(|&b| b == 0),
        "{:?}",
        &departed[i5..=i7]
    );
    let arrived: u64 = arrivals[i5 + 1..=i7].iter().sum();
    assert!(
        (666..=668).contains(&arrived),
        "CBR arrivals in the outage: {arrived}"
    );
    // Every arrival waits (the packet on the transmitter at 5 s is not in the queue).
    assert_eq!(qlen[i7] - qlen[i5], arrived, "queue growth = arrivals");
    // Before and after, the link keeps up; after the outage it drains the backlog at
    // 10 - 4 = 6 Mbit/s: 667 x 12000 bit / 6 Mbit/s = 1.33 s, so by 8.5 s it is empty.
    assert!(departed[i5] > 0 && departed[i7 + 1] > 0);
    assert!(
        qlen[at(8.0)] > 0 && qlen[at(8.5)] <= 1,
        "drained: {}",
        qlen[at(8.5)]
    );
    assert!(out.summary.bottleneck.utilisation <= 1.0);
}

#[test]
fn a_zero_rate_is_accepted_in_rate_changes_and_a_negative_one_is_refused() {
    let text = |rate: &str| {
        format!(
            "duration = \"10s\"\n[bottleneck]\nrate = \"10Mbps\"\n\
             rate_changes = [{{ at = \"5s\", rate = \"{rate}\" }}]\n\
             [[flows]]\nrtt = \"40ms\"\n"
        )
    };
    assert!(api::parse(&text("0Mbps"), "toml").is_ok());
    let err = api::parse(&text("-1Mbps"), "toml").unwrap_err();
    assert_eq!(err.path, "bottleneck.rate_changes[0].rate", "{err}");
    assert!(!err.to_string().contains('\n'), "{err}");
    // The initial rate still must be positive.
    let err = api::parse(
        &text("5Mbps").replace("rate = \"10Mbps\"", "rate = \"0Mbps\""),
        "toml",
    )
    .unwrap_err();
    assert_eq!(err.path, "bottleneck.rate", "{err}");
}

fn f64s<'a>(t: &'a Table, c: &str) -> &'a [f64] {
    match t.column(c) {
        Some(Column::F64(v)) => v,
        other => panic!("{c}: {other:?}"),
    }
}

#[test]
fn utilisation_is_against_the_capacity_offered_through_an_outage() {
    // 4 Mbit/s of CBR over 10 s into a 10 Mbit/s link that is out from 5 s to 7 s: the
    // link offers 8 s x 10 Mbit/s = 80 Mbit and carries the 40 Mbit the source sends
    // (every packet eventually goes: the backlog drains by 8.5 s). Utilisation 0.5;
    // against the final rate over the whole window it would read 0.4.
    let out = run(r#"
duration = "10s"
measure = { start = "0s" }
stats_interval = "100ms"
[bottleneck]
rate = "10Mbps"
queue = { kind = "droptail", limit = "5000p" }
rate_changes = [{ at = "5s", rate = "0Mbps" }, { at = "7s", rate = "10Mbps" }]
[[udp]]
rate = "4Mbps"
rtt = "20ms"
"#);
    let u = out.summary.bottleneck.utilisation;
    assert!((u - 0.5).abs() < 0.005, "utilisation {u}");
    // Every tick of the outage offered nothing: its utilisation is 0, not NaN or inf.
    let q = table(&out, "queue_series");
    let ticks = f64s(q, "utilisation");
    assert!(ticks.iter().all(|&x| (0.0..=1.0).contains(&x)), "{ticks:?}");
    assert_eq!(ticks[60], 0.0, "in the outage");
}

#[test]
fn a_saturated_link_whose_rate_keeps_changing_is_fully_utilised_never_above_one() {
    // The issue's trace-as-rate_changes case: the rate steps every 10 ms between 20 and
    // 2 Mbit/s, with outages, under a 30 Mbit/s CBR flood: the link is never idle, so the
    // carried bits equal the offered bits (less the last packet's unsent part at the
    // window's edges). Against the final rate it read 2.44.
    let mut steps = Vec::new();
    for k in 1..1000 {
        let rate = ["20Mbps", "2Mbps", "0Mbps", "7Mbps"][k % 4];
        steps.push(format!("{{ at = \"{}ms\", rate = \"{rate}\" }}", k * 10));
    }
    let out = run(&format!(
        r#"
duration = "10s"
measure = {{ start = "1s" }}
stats_interval = "100ms"
[bottleneck]
rate = "20Mbps"
queue = {{ kind = "droptail", limit = "2000p" }}
rate_changes = [{}]
[[udp]]
rate = "30Mbps"
rtt = "20ms"
"#,
        steps.join(", ")
    ));
    let u = out.summary.bottleneck.utilisation;
    assert!(u <= 1.0 && u > 0.999, "utilisation {u}");
    let ticks = f64s(table(&out, "queue_series"), "utilisation");
    // (The first tick includes the wait for the first packet.)
    assert!(ticks.iter().all(|&x| x <= 1.0), "{ticks:?}");
    assert!(ticks[1..].iter().all(|&x| x > 0.99), "{ticks:?}");
}
