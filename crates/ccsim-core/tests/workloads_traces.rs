//! Workloads and traces (issue 12): paper 002's closed-loop HTTP test gives its 2000
//! transfers and conserves bytes; PIE's drop probability in `qdisc_state` follows RFC
//! 8033 §4.2's update worked by hand from the delay in the same trace; CoDel's state,
//! `rtt_samples` and `queue_events` are recorded when asked for.

use ccsim_core::api;
use ccsim_core::results::{Column, RunOutput, Table};

fn run(text: &str) -> RunOutput {
    let sc = api::parse(text, "toml").unwrap_or_else(|e| panic!("{e}"));
    api::run(&sc, None).unwrap_or_else(|e| panic!("{e}"))
}

fn table<'a>(out: &'a RunOutput, name: &str) -> &'a Table {
    out.tables
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no table {name}"))
}

fn f64s<'a>(t: &'a Table, c: &str) -> &'a [f64] {
    match t.column(c) {
        Some(Column::F64(v)) => v,
        other => panic!("{}.{c}: {other:?}", t.name),
    }
}
fn u64s<'a>(t: &'a Table, c: &str) -> &'a [u64] {
    match t.column(c) {
        Some(Column::U64(v)) => v,
        other => panic!("{}.{c}: {other:?}", t.name),
    }
}
fn u32s<'a>(t: &'a Table, c: &str) -> &'a [u32] {
    match t.column(c) {
        Some(Column::U32(v)) => v,
        other => panic!("{}.{c}: {other:?}", t.name),
    }
}
fn strs<'a>(t: &'a Table, c: &str) -> &'a [String] {
    match t.column(c) {
        Some(Column::Str(v)) => v,
        other => panic!("{}.{c}: {other:?}", t.name),
    }
}

/// Paper 002 §IV.5: 15 long-lived flows and 100 clients fetching 75 KB pages 20 times
/// from four sites: 2000 downloads, each ending after it starts, each client's next
/// download starting after its previous one ended, every byte delivered once.
#[test]
fn http_test_gives_2000_transfers_and_conserves_bytes() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/http_pie2013_docsis.toml"
    ))
    .unwrap();
    let out = run(&text);
    let tr = table(&out, "transfers");
    assert_eq!(tr.num_rows(), 2000);
    let (flow, index) = (u32s(tr, "flow_id"), u32s(tr, "transfer"));
    let (start, end, fct) = (f64s(tr, "start_s"), f64s(tr, "end_s"), f64s(tr, "fct_s"));
    let size = u64s(tr, "size_bytes");
    for i in 0..tr.num_rows() {
        assert_eq!(size[i], 75_000);
        assert!(
            end[i] > start[i],
            "row {i}: ends at {} before {}",
            end[i],
            start[i]
        );
        assert!((fct[i] - (end[i] - start[i])).abs() < 1e-9);
    }
    // Per client: transfers 0..19 in order, each after the previous one's end.
    let n_flows = 115;
    let mut per_flow: Vec<Vec<(u32, f64, f64)>> = vec![Vec::new(); n_flows];
    for i in 0..tr.num_rows() {
        per_flow[flow[i] as usize].push((index[i], start[i], end[i]));
    }
    let delivered = u64s(table(&out, "flow_packets"), "bytes_delivered");
    for (f, rows) in per_flow.iter().enumerate() {
        if f < 15 {
            assert!(rows.is_empty(), "bulk flow {f} has transfers");
            continue;
        }
        assert_eq!(rows.len(), 20, "client {f}");
        for (k, w) in rows.windows(2).enumerate() {
            assert_eq!((w[0].0, w[1].0), (k as u32, k as u32 + 1));
            assert!(
                w[1].1 >= w[0].2,
                "client {f}: fetch {} starts before {} ended",
                k + 1,
                k
            );
        }
        assert_eq!(delivered[f], 20 * 75_000, "client {f}: bytes delivered");
    }
    // Packets: sent = arrived + dropped + still in the network, per flow.
    let p = table(&out, "flow_packets");
    let (sent, arrived, dropped, in_net) = (
        u64s(p, "sent"),
        u64s(p, "arrived"),
        u64s(p, "dropped"),
        u64s(p, "in_network"),
    );
    for f in 0..n_flows {
        assert_eq!(sent[f], arrived[f] + dropped[f] + in_net[f], "flow {f}");
    }
    let fct_summary = out.summary.fct.as_ref().expect("fct summary");
    assert_eq!(fct_summary.all.transfers, 2000);
    assert_eq!(fct_summary.all.completed, 2000);
}

/// The RFC 8033 §4.2 update, written here from the RFC's pseudo-code (with Linux's two
/// additions the default variant follows: a 2% cap on increases once p ≥ 10% and +2%
/// above 250 ms), from p and the current and previous delay estimates.
fn rfc8033_update(p: f64, qdelay_s: f64, qdelay_old_s: f64) -> f64 {
    let (alpha, beta, target) = (0.125, 1.25, 0.015);
    let scale = if p < 0.000_001 {
        1.0 / 2048.0
    } else if p < 0.000_01 {
        1.0 / 512.0
    } else if p < 0.0001 {
        1.0 / 128.0
    } else if p < 0.001 {
        1.0 / 32.0
    } else if p < 0.01 {
        1.0 / 8.0
    } else if p < 0.1 {
        1.0 / 2.0
    } else {
        1.0
    };
    let mut delta = scale * alpha * (qdelay_s - target) + scale * beta * (qdelay_s - qdelay_old_s);
    if delta > 0.02 && p >= 0.1 {
        delta = 0.02;
    }
    if qdelay_s > 0.25 {
        delta += 0.02;
    }
    (p + delta).max(0.0)
}

#[test]
fn pie_drop_probability_follows_rfc8033_from_the_traced_delay() {
    // 8 NewReno flows over 10 Mbit/s and PIE (Linux defaults): p rises, falls, settles.
    // stats_interval = duration, so every row but the last comes from an update.
    let out = run("duration = \"30s\"\nstats_interval = \"30s\"\n\
         [trace]\nqdisc_state = \"updates\"\n\
         [bottleneck]\nrate = \"10Mbps\"\nqueue = \"pie\"\n\
         [[flows]]\ncount = 8\nrtt = \"80ms\"\n");
    let qs = table(&out, "qdisc_state");
    let (t, name, value) = (f64s(qs, "time_s"), strs(qs, "name"), f64s(qs, "value"));
    // Rows come in (drop_prob, qdelay_ms, qdelay_old_ms, burst_allowance_ms) per update.
    let mut updates = Vec::new();
    for i in (0..qs.num_rows()).step_by(4) {
        assert_eq!(
            [&name[i], &name[i + 1], &name[i + 2]],
            ["drop_prob", "qdelay_ms", "qdelay_old_ms"]
        );
        if t[i] < 30.0 {
            updates.push((t[i], value[i], value[i + 1] / 1e3, value[i + 2] / 1e3));
        }
    }
    // One update every 15 ms for 30 s (the timer's first run is not at 0).
    assert!(
        (1900..=2001).contains(&updates.len()),
        "{} updates",
        updates.len()
    );
    let (mut checked, mut nonzero) = (0, 0);
    for w in updates.windows(2) {
        let ((_, p0, _, old), (at, p1, qdelay, _)) = (w[0], w[1]);
        if qdelay == 0.0 && old == 0.0 {
            continue; // idle decay, which also depends on the backlog: not in the trace
        }
        let expected = rfc8033_update(p0, qdelay, old);
        assert!(
            (p1 - expected).abs() <= 1e-12 + 1e-9 * expected,
            "at {at:.3} s: p {p1:.9} but RFC 8033 gives {expected:.9} from p {p0:.9}, \
             qdelay {:.3} ms, old {:.3} ms",
            qdelay * 1e3,
            old * 1e3
        );
        checked += 1;
        nonzero += usize::from(p1 > 0.0);
    }
    assert!(
        checked > 1500 && nonzero > 1000,
        "{checked} checked, {nonzero} with p > 0"
    );
}

#[test]
fn codel_state_queue_events_and_rtt_samples_are_recorded() {
    let out = run("duration = \"20s\"\n\
         [trace]\nqueue_events = true\nrtt_samples = true\n\
         [bottleneck]\nrate = \"10Mbps\"\nqueue = { kind = \"codel\", ecn = true }\n\
         [[flows]]\ncount = 2\nrtt = \"50ms\"\necn = true\ntrace = true\n\
         [[flows]]\ncount = 2\nrtt = \"50ms\"\n");
    // CoDel's dropping state and count over time.
    let qs = table(&out, "qdisc_state");
    let (name, value) = (strs(qs, "name"), f64s(qs, "value"));
    let of = |n: &str| -> Vec<f64> {
        name.iter()
            .zip(value)
            .filter(|(m, _)| *m == n)
            .map(|(_, v)| *v)
            .collect()
    };
    let (dropping, count) = (of("dropping"), of("count"));
    assert_eq!(dropping.len(), 200, "one row per 100 ms tick");
    assert!(dropping.iter().all(|&d| d == 0.0 || d == 1.0));
    assert!(dropping.contains(&1.0) && dropping.contains(&0.0));
    assert!(count.iter().any(|&c| c >= 1.0));

    // Every drop and mark at the bottleneck is an event, with the queue behind it.
    let ev = table(&out, "queue_events");
    let kind = strs(ev, "event");
    let q = &out.summary.bottleneck;
    let queues = table(&out, "queues");
    let (drops, marks) = (u64s(queues, "drops")[0], u64s(queues, "marks")[0]);
    assert!(
        marks > 0 && drops > 0,
        "ECN flows are marked, the others dropped"
    );
    assert_eq!(kind.iter().filter(|k| *k == "mark").count() as u64, marks);
    assert_eq!(kind.iter().filter(|k| *k == "drop").count() as u64, drops);
    let ev_flow = u32s(ev, "flow_id");
    for (k, f) in kind.iter().zip(ev_flow) {
        // Flows 0 and 1 negotiate ECN: CoDel marks them and drops the others.
        assert_eq!(k == "mark", *f < 2, "{k} of flow {f}");
    }
    assert!(u64s(ev, "qlen_pkts").iter().all(|&n| n <= 1000));
    assert!(
        f64s(ev, "sojourn_ms").iter().any(|&s| s > 5.0),
        "CoDel acts above target"
    );
    assert!(q.drop_probability > 0.0);

    // RTT samples of the traced flows only, never below the path's base RTT.
    let rs = table(&out, "rtt_samples");
    assert!(rs.num_rows() > 1000);
    assert!(u32s(rs, "flow_id").iter().all(|&f| f < 2));
    assert!(
        f64s(rs, "rtt_ms").iter().all(|&r| r >= 50.0),
        "below the 50 ms base RTT"
    );
    let times = f64s(rs, "time_s");
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "sorted by time");
}

#[test]
fn optional_traces_are_empty_unless_asked_for() {
    let out = run(
        "duration = \"5s\"\n[bottleneck]\nrate = \"10Mbps\"\nqueue = \"codel\"\n\
         [[flows]]\nname = \"Gold\"\nrtt = \"50ms\"\ntrace = true\n\
         [[udp]]\nrate = \"1Mbps\"\nrtt = \"50ms\"\n",
    );
    // Group names reach the tables and the summary (empty when not given).
    assert_eq!(strs(table(&out, "flows"), "group_name"), ["Gold", ""]);
    assert_eq!(out.summary.groups[0].name.as_deref(), Some("Gold"));
    assert_eq!(out.summary.groups[1].name, None);
    assert_eq!(
        &strs(table(&out, "group_series"), "name")[..2],
        ["Gold", ""]
    );
    assert_eq!(table(&out, "queue_events").num_rows(), 0);
    assert_eq!(table(&out, "rtt_samples").num_rows(), 0);
    assert!(
        table(&out, "qdisc_state").num_rows() > 0,
        "on at every interval by default"
    );
    let names: Vec<&str> = out.tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ccsim_core::sim::TABLE_NAMES);
}
