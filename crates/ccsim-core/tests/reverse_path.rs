//! The reverse (downstream) direction as a bottleneck of its own: `reverse_queue`,
//! `reverse_shaper` and `direction = "reverse"` groups (paper 002's web pages come down
//! a 20/50 Mbit/s, 20 MB token bucket while ACKs go up).

use ccsim_core::api;
use ccsim_core::results::{Column, RunOutput, Table};

fn run(text: &str) -> RunOutput {
    let sc = api::parse(text, "toml").unwrap_or_else(|e| panic!("{e}"));
    api::run(&sc, None).unwrap_or_else(|e| panic!("{e}"))
}

fn table<'a>(out: &'a RunOutput, name: &str) -> &'a Table {
    out.tables.iter().find(|t| t.name == name).unwrap()
}

fn col_f<'a>(t: &'a Table, c: &str) -> &'a [f64] {
    match t.column(c) {
        Some(Column::F64(v)) => v,
        other => panic!("{}.{c}: {other:?}", t.name),
    }
}
fn col_u<'a>(t: &'a Table, c: &str) -> &'a [u64] {
    match t.column(c) {
        Some(Column::U64(v)) => v,
        other => panic!("{}.{c}: {other:?}", t.name),
    }
}
fn col_u32<'a>(t: &'a Table, c: &str) -> &'a [u32] {
    match t.column(c) {
        Some(Column::U32(v)) => v,
        other => panic!("{}.{c}: {other:?}", t.name),
    }
}
fn col_s<'a>(t: &'a Table, c: &str) -> &'a [String] {
    match t.column(c) {
        Some(Column::Str(v)) => v,
        other => panic!("{}.{c}: {other:?}", t.name),
    }
}

/// Mean goodput (Mbit/s) of `flow` over `[from, to)` seconds of `flow_series`.
fn goodput(out: &RunOutput, flow: u32, from: f64, to: f64) -> f64 {
    let fs = table(out, "flow_series");
    let (t, id, g) = (
        col_f(fs, "time_s"),
        col_u32(fs, "flow_id"),
        col_f(fs, "goodput_mbps"),
    );
    let v: Vec<f64> = (0..t.len())
        .filter(|&i| id[i] == flow && t[i] > from && t[i] <= to)
        .map(|i| g[i])
        .collect();
    v.iter().sum::<f64>() / v.len() as f64
}

const DOWNSTREAM: &str = r#"
duration = "20s"
[bottleneck]
rate = "5Mbps"
reverse_rate = "100Mbps"
reverse_shaper = { sustained = "20Mbps", peak = "50Mbps", burst = "20MB" }
reverse_queue = { kind = "droptail", limit = "2000p" }
"#;

#[test]
fn a_reverse_flow_goes_through_the_downstream_shaper() {
    let out = run(&format!(
        "{DOWNSTREAM}[[flows]]\ncc = \"cubic\"\nrtt = \"40ms\"\ndirection = \"reverse\"\n"
    ));
    // The bucket holds 20 MB: at 50 Mbit/s in, 20 Mbit/s refilled, it lasts about
    // 20e6 * 8 / 30e6 = 5.3 s; afterwards the sustained rate.
    let early = goodput(&out, 0, 1.0, 4.0);
    let late = goodput(&out, 0, 10.0, 20.0);
    assert!(early > 40.0 && early <= 50.0, "peak phase {early} Mbit/s");
    assert!(late > 18.0 && late <= 20.0, "sustained phase {late} Mbit/s");
    // The data crossed the reverse link; the forward bottleneck carried only ACKs.
    let q = table(&out, "queues");
    let name = col_s(q, "queue");
    let at = |n: &str| name.iter().position(|x| x == n).unwrap();
    let dep = col_u(q, "departures");
    let (fwd, rev) = (dep[at("bottleneck")], dep[at("bottleneck-reverse")]);
    assert!(rev > 20_000, "{rev} data packets down");
    assert!(
        fwd > 0 && fwd < rev,
        "{fwd} ACKs up (delayed ACKs: about one per two)"
    );
}

#[test]
fn forward_and_reverse_flows_each_use_their_own_direction() {
    // The upstream flow's ACKs queue behind the downstream data: with the 2000-packet
    // (1.2 s) downstream queue above its RTT balloons and it reaches 2.2 of 5 Mbit/s
    // (the ACK-path bufferbloat of asymmetric links); a 50-packet queue keeps it short.
    let downstream = DOWNSTREAM.replace("2000p", "50p");
    let out = run(&format!(
        "{downstream}[[flows]]\ncc = \"cubic\"\nrtt = \"40ms\"\n\n[[flows]]\ncc = \"cubic\"\nrtt = \"40ms\"\ndirection = \"reverse\"\n[[udp]]\nrate = \"1Mbps\"\nrtt = \"40ms\"\ndirection = \"reverse\"\n"
    ));
    let up = goodput(&out, 0, 10.0, 20.0);
    let down = goodput(&out, 1, 10.0, 20.0);
    assert!(up > 4.0 && up <= 5.0, "upstream flow {up} Mbit/s of 5");
    assert!(
        down > 17.0 && down <= 19.5,
        "downstream flow {down} Mbit/s of 20 - 1 UDP"
    );
    let udp = &out.summary.flows[2];
    assert!((udp.goodput_mbps - 1.0).abs() < 0.1, "{}", udp.goodput_mbps);
}

#[test]
fn reverse_path_keys_are_checked() {
    let bad = |text: &str| match api::parse(text, "toml").and_then(|sc| api::validate(&sc)) {
        Err(e) => e.to_string(),
        Ok(()) => panic!("accepted:\n{text}"),
    };
    let base = "duration = \"10s\"\n[[udp]]\nrate = \"1Mbps\"\nrtt = \"10ms\"\n[bottleneck]\nrate = \"5Mbps\"\n";
    let e = bad(&format!(
        "{base}reverse_shaper = {{ sustained = \"20Mbps\", burst = \"1MB\", docsis = true }}\n"
    ));
    assert!(e.starts_with("bottleneck.reverse_shaper.docsis:"), "{e}");
    let e = bad(&format!("{base}reverse_queue = \"lifo\"\n"));
    assert!(e.starts_with("bottleneck.reverse_queue"), "{e}");
    let e = bad(&format!(
        "{base}[[flows]]\nrtt = \"10ms\"\ndirection = \"down\"\n"
    ));
    assert!(
        e.contains("flows[0].direction") && e.contains("\"forward\" or \"reverse\""),
        "{e}"
    );
}
