//! Scenario parsing: units, schema, defaults, validation and error messages.

use std::collections::BTreeMap;

use ccsim_core::scenario::*;

const EXAMPLE: &str = r#"
duration = "60s"
seed = 1
[bottleneck]
rate = "10Mbps"
queue = { kind = "droptail", limit = "1bdp" }
[[flows]]
count = 2
cc = "newreno"
rtt = "100ms"
ecn = false
[[udp]]
rate = "1Mbps"
pattern = "poisson"
rtt = "50ms"
"#;

fn ms(v: u64) -> SimDuration {
    SimDuration { ns: v * 1_000_000 }
}

fn secs(v: u64) -> SimDuration {
    SimDuration {
        ns: v * 1_000_000_000,
    }
}

fn algo(kind: &str, params: &[(&str, ParamValue)]) -> AlgoSpec {
    AlgoSpec {
        kind: kind.to_owned(),
        params: params
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    }
}

/// Parse TOML expecting an error; check path, message substring and one-line display.
#[track_caller]
fn toml_err(text: &str, path: &str, message: &str) -> ScenarioError {
    let err = match Scenario::from_toml(text) {
        Ok(s) => panic!("expected an error at {path}, got {s:?}"),
        Err(e) => e,
    };
    check_err(&err, path, message);
    err
}

#[track_caller]
fn json_err(text: &str, path: &str, message: &str) -> ScenarioError {
    let err = match Scenario::from_json(text) {
        Ok(s) => panic!("expected an error at {path}, got {s:?}"),
        Err(e) => e,
    };
    check_err(&err, path, message);
    err
}

#[track_caller]
fn check_err(err: &ScenarioError, path: &str, message: &str) {
    let shown = err.to_string();
    assert_eq!(err.path, path, "wrong path in {shown:?}");
    assert!(
        err.message.contains(message),
        "message {:?} does not contain {message:?}",
        err.message
    );
    assert_eq!(shown, format!("{}: {}", err.path, err.message));
    assert!(!shown.contains('\n'), "multi-line error: {shown:?}");
}

/// A valid scenario with `extra` TOML spliced into the top level (before any table).
fn with_top(extra: &str) -> String {
    format!(
        "duration = \"60s\"\n{extra}\n[bottleneck]\nrate = \"10Mbps\"\n[[flows]]\nrtt = \"100ms\"\n"
    )
}

/// A valid scenario with `extra` TOML lines in the bottleneck table.
fn with_bottleneck(extra: &str) -> String {
    format!("duration = \"60s\"\n[bottleneck]\nrate = \"10Mbps\"\n{extra}\n[[flows]]\nrtt = \"100ms\"\n")
}

/// A valid scenario with `extra` TOML lines in the (only) flows group (which gets
/// `rtt = "100ms"` unless `extra` sets the rtt).
fn with_flow(extra: &str) -> String {
    let rtt = if extra.starts_with("rtt") {
        ""
    } else {
        "rtt = \"100ms\"\n"
    };
    format!("duration = \"60s\"\n[bottleneck]\nrate = \"10Mbps\"\n[[flows]]\n{rtt}{extra}\n")
}

/// A valid scenario with one udp group made of `body` (which must give rate and rtt).
fn with_udp(body: &str) -> String {
    format!("duration = \"60s\"\n[bottleneck]\nrate = \"10Mbps\"\n[[udp]]\n{body}\n")
}

// ---------------------------------------------------------------------------------
// Units

#[test]
fn durations() {
    let d = |s: &str| SimDuration::parse(s).map(|d| d.ns);
    assert_eq!(d("50ms"), Ok(50_000_000));
    assert_eq!(d("0.25ms"), Ok(250_000));
    assert_eq!(d("1.5s"), Ok(1_500_000_000));
    assert_eq!(d("60s"), Ok(60_000_000_000));
    assert_eq!(d("2min"), Ok(120_000_000_000));
    assert_eq!(d("0.5min"), Ok(30_000_000_000));
    assert_eq!(d("7ns"), Ok(7));
    assert_eq!(d("20us"), Ok(20_000));
    assert_eq!(d("20µs"), Ok(20_000));
    assert_eq!(d("10 ms"), Ok(10_000_000));
    assert_eq!(d("  10ms "), Ok(10_000_000));
    assert_eq!(d("0s"), Ok(0));
    assert_eq!(d(".5s"), Ok(500_000_000));
    assert_eq!(d("1.0000000004s"), Ok(1_000_000_000)); // rounded to whole ns
    assert_eq!(d("1.0000000005s"), Ok(1_000_000_001)); // half rounds up
    assert_eq!(d("18446744073709551615ns"), Ok(u64::MAX));

    assert_eq!(
        d("50"),
        Err(r#"expected a duration like "50ms", got "50""#.to_owned())
    );
    for bad in [
        "",
        "ms",
        "-5ms",
        "+5ms",
        "5 h",
        "5hours",
        "5MS",
        "1.2.3s",
        "1e3ms",
        "NaN",
        "infs",
        "nans",
        "5 m s",
        "18446744073709551616ns",
        "999999999999min",
    ] {
        let err = SimDuration::parse(bad).expect_err(bad);
        assert_eq!(
            err,
            format!("expected a duration like \"50ms\", got {bad:?}")
        );
    }
}

#[test]
fn rates() {
    let r = |s: &str| DataRate::parse(s).map(|r| r.bps);
    assert_eq!(r("10Mbps"), Ok(10_000_000));
    assert_eq!(r("1.5Mbps"), Ok(1_500_000));
    assert_eq!(r("100bps"), Ok(100));
    assert_eq!(r("64kbps"), Ok(64_000));
    assert_eq!(r("64Kbps"), Ok(64_000));
    assert_eq!(r("2.5Gbps"), Ok(2_500_000_000));
    assert_eq!(r("1Tbps"), Ok(1_000_000_000_000));
    assert_eq!(r("10 Mbps"), Ok(10_000_000));
    assert_eq!(
        r("0Mbps"),
        Err(r#"expected a positive rate like "10Mbps", got "0Mbps""#.to_owned())
    );
    assert_eq!(
        r("-5Mbps"),
        Err(r#"expected a positive rate like "10Mbps", got "-5Mbps""#.to_owned())
    );
    for bad in [
        "10",
        "10mbps",
        "10MBps",
        "10Mb",
        "0.0001bps",
        "",
        "Mbps",
        "10 M bps",
    ] {
        let err = DataRate::parse(bad).expect_err(bad);
        assert_eq!(
            err,
            format!("expected a positive rate like \"10Mbps\", got {bad:?}")
        );
    }
}

#[test]
fn byte_sizes() {
    let b = |s: &str| ByteSize::parse(s).map(|b| b.bytes);
    assert_eq!(b("1500B"), Ok(1500));
    assert_eq!(b("1.5MB"), Ok(1_500_000));
    assert_eq!(b("64KiB"), Ok(65_536));
    assert_eq!(b("64KB"), Ok(64_000));
    assert_eq!(b("1MiB"), Ok(1_048_576));
    assert_eq!(b("2GB"), Ok(2_000_000_000));
    assert_eq!(b("1GiB"), Ok(1_073_741_824));
    assert_eq!(b("0.5KiB"), Ok(512));
    assert_eq!(b("100 B"), Ok(100));
    assert_eq!(b("0B"), Ok(0));
    for bad in ["1500", "-1B", "1Mb", "1mb", "1.5", "B", "10 bytes"] {
        let err = ByteSize::parse(bad).expect_err(bad);
        assert_eq!(
            err,
            format!("expected a size like \"1500B\" or \"1.5MB\", got {bad:?}")
        );
    }
}

#[test]
fn queue_limits() {
    let q = QueueLimit::parse;
    assert_eq!(q("100p"), Ok(QueueLimit::Packets(100)));
    assert_eq!(q("100pkts"), Ok(QueueLimit::Packets(100)));
    assert_eq!(q("100packets"), Ok(QueueLimit::Packets(100)));
    assert_eq!(q("100 packets"), Ok(QueueLimit::Packets(100)));
    assert_eq!(q("150KB"), Ok(QueueLimit::Bytes(150_000)));
    assert_eq!(q("64KiB"), Ok(QueueLimit::Bytes(65_536)));
    assert_eq!(q("1bdp"), Ok(QueueLimit::Bdp(1.0)));
    assert_eq!(q("0.25bdp"), Ok(QueueLimit::Bdp(0.25)));
    assert_eq!(q("1.5BDP"), Ok(QueueLimit::Bdp(1.5)));
    for bad in [
        "0p", "0B", "0bdp", "0.0bdp", "1.5p", "-1p", "100", "1xdp", "bdp", "",
    ] {
        let err = QueueLimit::parse(bad).expect_err(bad);
        assert!(
            err.starts_with("expected a positive queue limit like"),
            "{err}"
        );
        assert!(err.ends_with(&format!("got {bad:?}")), "{err}");
    }
}

// ---------------------------------------------------------------------------------
// The schema

#[test]
fn example_resolves_every_field() {
    let s = Scenario::from_toml(EXAMPLE).expect("example parses");
    assert_eq!(s.duration, secs(60));
    assert_eq!(s.seed, 1);
    assert_eq!(s.stats_interval, ms(100));
    assert_eq!(s.measure_start, secs(30));
    assert_eq!(s.measure_end, secs(60));

    let b = &s.bottleneck;
    assert_eq!(b.rate, DataRate { bps: 10_000_000 });
    assert_eq!(b.delay, SimDuration { ns: 0 });
    assert_eq!(
        b.queue,
        algo("droptail", &[("limit", ParamValue::Str("1bdp".into()))])
    );
    assert_eq!(b.bdp_rtt, None);
    assert_eq!(b.reverse_rate, None);
    assert_eq!(b.access_rate, None);

    assert_eq!(s.flows.len(), 1);
    let f = &s.flows[0];
    assert_eq!(f.count, 2);
    assert_eq!(f.cc, algo("newreno", &[]));
    assert!(f.drawn.iter().all(|d| d.rtt == ms(100)));
    assert!(!f.ecn);
    assert!(f.sack);
    assert!(f.delayed_ack);
    assert_eq!(f.initial_window, 10);
    assert_eq!(f.mss, 1448);
    assert!(!f.pacing);
    assert_eq!(f.min_rto, ms(200));
    assert_eq!(f.drawn.len(), 2);
    assert!(f.drawn.iter().all(|d| d.start == SimDuration { ns: 0 }));
    assert_eq!(f.stop, None);
    assert!(f
        .drawn
        .iter()
        .all(|d| d.sizes.is_empty() && d.thinks.is_empty()));
    assert!(!f.trace);
    assert_eq!(f.access_rate, None);

    assert_eq!(s.udp.len(), 1);
    let u = &s.udp[0];
    assert_eq!(u.count, 1);
    assert_eq!(u.drawn[0].rate, DataRate { bps: 1_000_000 });
    assert_eq!(u.pattern, UdpPattern::Poisson);
    assert_eq!(u.packet_size, ByteSize { bytes: 1500 });
    assert_eq!(u.drawn[0].rtt, ms(50));
    assert!(!u.ecn);
    assert_eq!(u.drawn[0].start, SimDuration { ns: 0 });
    assert_eq!(u.stop, None);
    assert_eq!(u.access_rate, None);
}

#[test]
fn defaults_when_optional_tables_are_absent() {
    let s = Scenario::from_toml(&with_top("")).unwrap();
    assert_eq!(
        s.bottleneck.queue,
        algo("droptail", &[("limit", ParamValue::Str("1bdp".into()))])
    );
    assert_eq!(s.flows[0].cc, algo("newreno", &[]));
    assert_eq!(s.flows[0].count, 1);
    assert!(s.udp.is_empty());

    // udp-only scenarios are fine; default pattern is cbr.
    let s = Scenario::from_toml(&with_udp("rate = \"1Mbps\"\nrtt = \"10ms\"")).unwrap();
    assert!(s.flows.is_empty());
    assert_eq!(s.udp[0].pattern, UdpPattern::Cbr);

    // The default stats interval never exceeds a short run.
    let s = Scenario::from_toml(&with_top("").replace("60s", "50ms")).unwrap();
    assert_eq!(s.stats_interval, ms(50));
    assert_eq!(s.measure_start, ms(25));
    assert_eq!(s.measure_end, ms(50));
}

const FULL_TOML: &str = r#"
duration = "2min"
seed = 42
stats_interval = "250ms"
measure = { start = "10s", end = "100s" }

[bottleneck]
rate = "1.5Gbps"
delay = "5ms"
queue = { kind = "CoDel", target = "5ms", interval = 100, ecn = true, beta = 0.5 }
bdp_rtt = "80ms"
reverse_rate = "100Mbps"
access_rate = "10Gbps"

[[flows]]
count = 3
cc = { kind = "cdg", g = 0.1, backoff = -2 }
rtt = "40ms"
ecn = true
sack = false
delayed_ack = false
initial_window = 4
mss = 9000
pacing = true
min_rto = "1s"
start = "5s"
stop = "90s"
size = "1.5MB"
trace = true
access_rate = "1Gbps"

[[flows]]
rtt = "0.25ms"

[[udp]]
count = 4
rate = "2Mbps"
pattern = "cbr"
packet_size = "64B"
rtt = "30ms"
ecn = true
start = "1s"
stop = "2s"
access_rate = "100Mbps"
"#;

const FULL_JSON: &str = r#"{
  "duration": "2min",
  "seed": 42,
  "stats_interval": "250ms",
  "measure": {"start": "10s", "end": "100s"},
  "bottleneck": {
    "rate": "1.5Gbps", "delay": "5ms",
    "queue": {"kind": "CoDel", "target": "5ms", "interval": 100, "ecn": true, "beta": 0.5},
    "bdp_rtt": "80ms", "reverse_rate": "100Mbps", "access_rate": "10Gbps"
  },
  "flows": [
    {"count": 3, "cc": {"kind": "cdg", "g": 0.1, "backoff": -2}, "rtt": "40ms",
     "ecn": true, "sack": false, "delayed_ack": false, "initial_window": 4, "mss": 9000,
     "pacing": true, "min_rto": "1s", "start": "5s", "stop": "90s", "size": "1.5MB",
     "trace": true, "access_rate": "1Gbps"},
    {"rtt": "0.25ms", "stop": null}
  ],
  "udp": [
    {"count": 4, "rate": "2Mbps", "pattern": "cbr", "packet_size": "64B", "rtt": "30ms",
     "ecn": true, "start": "1s", "stop": "2s", "access_rate": "100Mbps"}
  ]
}"#;

#[test]
fn every_field_explicit() {
    let s = Scenario::from_toml(FULL_TOML).unwrap();
    assert_eq!(s.duration, secs(120));
    assert_eq!(s.seed, 42);
    assert_eq!(s.stats_interval, ms(250));
    assert_eq!((s.measure_start, s.measure_end), (secs(10), secs(100)));

    let b = &s.bottleneck;
    assert_eq!(b.rate.bps, 1_500_000_000);
    assert_eq!(b.delay, ms(5));
    let mut params = BTreeMap::new();
    params.insert("target".to_owned(), ParamValue::Str("5ms".into()));
    params.insert("interval".to_owned(), ParamValue::Number(100.0));
    params.insert("ecn".to_owned(), ParamValue::Bool(true));
    params.insert("beta".to_owned(), ParamValue::Number(0.5));
    assert_eq!(
        b.queue,
        AlgoSpec {
            kind: "codel".into(),
            params
        }
    );
    assert_eq!(b.bdp_rtt, Some(ms(80)));
    assert_eq!(b.reverse_rate, Some(DataRate { bps: 100_000_000 }));
    assert_eq!(
        b.access_rate,
        Some(DataRate {
            bps: 10_000_000_000
        })
    );

    let f = &s.flows[0];
    let expected = TcpFlowGroup {
        endpoints: None,
        name: None,
        count: 3,
        cc: algo(
            "cdg",
            &[
                ("g", ParamValue::Number(0.1)),
                ("backoff", ParamValue::Number(-2.0)),
            ],
        ),
        ecn: true,
        sack: false,
        delayed_ack: false,
        initial_window: 4,
        mss: 9000,
        pacing: true,
        recovery_exit: Default::default(),
        rack: true,
        tlp: true,
        ce_quickack: true,
        min_rto: secs(1),
        stop: Some(secs(90)),
        drawn: vec![
            TcpFlowDraw {
                start: secs(5),
                rtt: ms(40),
                sizes: vec![ByteSize { bytes: 1_500_000 }],
                thinks: vec![],
            };
            3
        ],
        trace: true,
        access_rate: Some(DataRate { bps: 1_000_000_000 }),
        changes: vec![],
        ppv: None,
        deadline: None,
        direction: Direction::Forward,
    };
    assert_eq!(f, &expected);
    assert_eq!(s.flows[1].drawn[0].rtt, SimDuration { ns: 250_000 });

    let expected = UdpGroup {
        endpoints: None,
        name: None,
        count: 4,
        pattern: UdpPattern::Cbr,
        packet_size: ByteSize { bytes: 64 },
        ecn: true,
        drawn: vec![
            UdpDraw {
                start: secs(1),
                rtt: ms(30),
                rate: DataRate { bps: 2_000_000 },
            };
            4
        ],
        stop: Some(secs(2)),
        access_rate: Some(DataRate { bps: 100_000_000 }),
        ppv: None,
        direction: Direction::Forward,
    };
    assert_eq!(s.udp, vec![expected]);
}

#[test]
fn json_and_toml_agree() {
    let t = Scenario::from_toml(FULL_TOML).unwrap();
    let j = Scenario::from_json(FULL_JSON).unwrap();
    assert_eq!(t, j);

    let example_json = r#"{"duration": "60s", "seed": 1,
        "bottleneck": {"rate": "10Mbps", "queue": {"kind": "droptail", "limit": "1bdp"}},
        "flows": [{"count": 2, "cc": "newreno", "rtt": "100ms", "ecn": false}],
        "udp": [{"rate": "1Mbps", "pattern": "poisson", "rtt": "50ms"}]}"#;
    assert_eq!(
        Scenario::from_toml(EXAMPLE).unwrap(),
        Scenario::from_json(example_json).unwrap()
    );
}

#[test]
fn json_and_toml_errors_agree() {
    let t = toml_err(
        &with_flow("count = \"two\""),
        "flows[0].count",
        "got \"two\"",
    );
    let j = json_err(
        r#"{"duration": "60s", "bottleneck": {"rate": "10Mbps"}, "flows": [{"rtt": "100ms", "count": "two"}]}"#,
        "flows[0].count",
        "got \"two\"",
    );
    assert_eq!(t, j);
}

#[test]
fn algo_specs() {
    let s = Scenario::from_toml(&with_flow("cc = \"BBR\"")).unwrap();
    assert_eq!(s.flows[0].cc, algo("bbr", &[]));
    let s = Scenario::from_toml(&with_flow(
        "cc = { kind = \"Cubic\", fast_convergence = false, name = \"x\" }",
    ))
    .unwrap();
    assert_eq!(
        s.flows[0].cc,
        algo(
            "cubic",
            &[
                ("fast_convergence", ParamValue::Bool(false)),
                ("name", ParamValue::Str("x".into()))
            ]
        )
    );
    let s = Scenario::from_toml(&with_bottleneck("queue = \"red\"")).unwrap();
    assert_eq!(s.bottleneck.queue, algo("red", &[]));

    toml_err(
        &with_flow("cc = { g = 0.1 }"),
        "flows[0].cc.kind",
        "missing required key",
    );
    toml_err(&with_flow("cc = \"\""), "flows[0].cc", "got \"\"");
    toml_err(
        &with_flow("cc = { kind = \" \" }"),
        "flows[0].cc.kind",
        "got \" \"",
    );
    toml_err(
        &with_flow("cc = { kind = 5 }"),
        "flows[0].cc.kind",
        "expected an algorithm name",
    );
    toml_err(&with_flow("cc = 5"), "flows[0].cc", "got 5");
    toml_err(&with_flow("cc = [\"a\"]"), "flows[0].cc", "got an array");
    toml_err(
        &with_flow("cc = { kind = \"cdg\", g = { a = 1 } }"),
        "flows[0].cc.g",
        "expected a number, boolean or string, got a table",
    );
    toml_err(
        &with_bottleneck("queue = { kind = \"red\", w = [1, 2] }"),
        "bottleneck.queue.w",
        "got an array",
    );
    toml_err(
        &with_bottleneck("queue = { limit = \"1bdp\" }"),
        "bottleneck.queue.kind",
        "missing required key",
    );
}

// ---------------------------------------------------------------------------------
// Errors

#[test]
fn required_error_texts() {
    let text = format!("{}[[flows]]\nrtt = \"50\"\n", with_top(""));
    let e = toml_err(&text, "flows[1].rtt", "");
    assert_eq!(
        e.to_string(),
        r#"flows[1].rtt: expected a duration like "50ms", got "50""#
    );

    let e = toml_err(
        "duration = \"60s\"\n[bottleneck]\nrate = \"0Mbps\"\n[[flows]]\nrtt = \"1s\"\n",
        "bottleneck.rate",
        "",
    );
    assert_eq!(
        e.to_string(),
        r#"bottleneck.rate: expected a positive rate like "10Mbps", got "0Mbps""#
    );

    let e = toml_err(
        "duration = \"60s\"\n[bottleneck]\nrate = \"-5Mbps\"\n[[flows]]\nrtt = \"1s\"\n",
        "bottleneck.rate",
        "",
    );
    assert_eq!(
        e.to_string(),
        r#"bottleneck.rate: expected a positive rate like "10Mbps", got "-5Mbps""#
    );

    let e = toml_err(
        &with_bottleneck("rat = \"1Mbps\""),
        "bottleneck.rat",
        "unknown key",
    );
    assert_eq!(
        e.to_string(),
        "bottleneck.rat: unknown key (expected one of: rate, delay, queue, bdp_rtt, reverse_rate, reverse_queue, reverse_shaper, access_rate, rate_changes, shaper, loss, reverse_loss, jitter, reverse_jitter, trace, reverse_trace, trace_dequeue)"
    );

    let e = toml_err(
        "duration = \"60s\"\n[bottleneck]\ndelay = \"1ms\"\n[[flows]]\nrtt = \"1s\"\n",
        "bottleneck.rate",
        "",
    );
    assert_eq!(e.to_string(), "bottleneck.rate: missing required key");
}

#[test]
fn unknown_keys_everywhere() {
    toml_err(
        &with_top("bogus = 1"),
        "bogus",
        "unknown key (expected one of: duration, seed,",
    );
    toml_err(
        &with_flow("rtt_ms = 5"),
        "flows[0].rtt_ms",
        "unknown key (expected one of: count, cc, rtt,",
    );
    toml_err(
        &with_udp("rate = \"1Mbps\"\nrtt = \"1ms\"\nburst = 3"),
        "udp[0].burst",
        "unknown key",
    );
    toml_err(
        &with_top("measure = { begin = \"1s\" }"),
        "measure.begin",
        "unknown key (expected one of: start, end)",
    );
    toml_err(
        &with_bottleneck("\"a.b\" = 1"),
        "bottleneck.\"a.b\"",
        "unknown key",
    );
    toml_err(
        &with_bottleneck("bottleneck = 1"),
        "bottleneck.bottleneck",
        "unknown key",
    );
    toml_err(&with_flow("flows = 1"), "flows[0].flows", "unknown key");
    json_err(
        r#"{"duration": "60s", "bottleneck": {"rate": "10Mbps"}, "flows": [{"rtt": "1s"}, {"rtt": "1s", "sz": "1MB"}]}"#,
        "flows[1].sz",
        "unknown key",
    );
}

#[test]
fn missing_keys() {
    toml_err(
        "[bottleneck]\nrate = \"1Mbps\"\n[[flows]]\nrtt = \"1s\"\n",
        "duration",
        "missing required key",
    );
    toml_err(
        "duration = \"1s\"\n[[flows]]\nrtt = \"1s\"\n",
        "bottleneck",
        "missing required key",
    );
    toml_err(
        &with_flow("[[flows]]\ncount = 2"),
        "flows[1].rtt",
        "missing required key",
    );
    toml_err(
        &with_udp("rtt = \"1s\""),
        "udp[0].rate",
        "missing required key",
    );
    toml_err(
        &with_udp("rate = \"1Mbps\""),
        "udp[0].rtt",
        "missing required key",
    );
}

#[test]
fn wrong_types() {
    toml_err(
        &with_flow("count = \"two\""),
        "flows[0].count",
        "expected an integer >= 1, got \"two\"",
    );
    toml_err(
        &with_flow("count = 0"),
        "flows[0].count",
        "expected an integer >= 1, got 0",
    );
    toml_err(
        &with_flow("count = -1"),
        "flows[0].count",
        "expected an integer >= 1, got -1",
    );
    toml_err(
        &with_flow("count = 2.5"),
        "flows[0].count",
        "expected an integer >= 1, got 2.5",
    );
    toml_err(&with_flow("count = 2.0"), "flows[0].count", "got 2.0");
    toml_err(
        &with_flow("count = 5000000000"),
        "flows[0].count",
        "between 1 and 4294967295, got 5000000000",
    );
    toml_err(
        &with_flow("initial_window = 0"),
        "flows[0].initial_window",
        "expected an integer >= 1, got 0",
    );
    toml_err(
        &with_flow("mss = 10"),
        "flows[0].mss",
        "expected an integer between 64 and 9000, got 10",
    );
    toml_err(&with_flow("mss = 9001"), "flows[0].mss", "got 9001");
    toml_err(
        &with_flow("mss = \"1448B\""),
        "flows[0].mss",
        "got \"1448B\"",
    );
    toml_err(
        &with_top("seed = -1"),
        "seed",
        "expected an integer >= 0, got -1",
    );
    toml_err(&with_top("seed = \"1\""), "seed", "got \"1\"");
    toml_err(
        &with_flow("ecn = \"yes\""),
        "flows[0].ecn",
        "expected true or false, got \"yes\"",
    );
    toml_err(
        &with_flow("sack = 1"),
        "flows[0].sack",
        "expected true or false, got 1",
    );
    toml_err(
        &with_flow("rtt = 100"),
        "flows[0].rtt",
        r#"expected a duration like "50ms", got 100"#,
    );
    toml_err(
        &with_flow("rtt = { a = 1 }"),
        "flows[0].rtt",
        "unknown distribution \"a\" (expected one of: uniform, exponential, normal, choice, cdf",
    );
    toml_err(
        &with_flow("size = 1000"),
        "flows[0].size",
        r#"expected a size like "1500B" or "1.5MB", got 1000"#,
    );
    toml_err(
        &with_bottleneck("delay = true"),
        "bottleneck.delay",
        "got true",
    );
    toml_err(
        &with_bottleneck("access_rate = 10"),
        "bottleneck.access_rate",
        r#"expected a positive rate like "10Mbps", got 10"#,
    );
    toml_err(
        &with_top("measure = \"30s\""),
        "measure",
        "expected a table, got \"30s\"",
    );
    toml_err(
        "duration = \"60s\"\nbottleneck = \"10Mbps\"\n[[flows]]\nrtt = \"1s\"\n",
        "bottleneck",
        "expected a table, got \"10Mbps\"",
    );
    toml_err(
        "duration = \"60s\"\n[bottleneck]\nrate = \"1Mbps\"\n[flows]\nrtt = \"1s\"\n",
        "flows",
        "expected an array of tables",
    );
    toml_err(
        &with_top("duration2 = 1979-05-27"),
        "duration2",
        "dates and times are not supported",
    );
    toml_err(
        &with_bottleneck("queue = { kind = \"red\", w = nan }"),
        "bottleneck.queue.w",
        "expected a finite number, got nan",
    );
    json_err(r#"[1, 2]"#, "<json>", "expected a table, got an array");
    json_err(
        r#"{"duration": "60s", "bottleneck": ["10Mbps"], "flows": [{"rtt": "1s"}]}"#,
        "bottleneck",
        "expected a table, got an array",
    );
    json_err(
        r#"{"duration": null, "bottleneck": {"rate": "1Mbps"}, "flows": [{"rtt": "1s"}]}"#,
        "duration",
        "got null",
    );
}

#[test]
fn value_errors() {
    toml_err(
        &with_top("").replace("60s", "0s"),
        "duration",
        r#"expected a positive duration like "50ms", got "0s""#,
    );
    toml_err(
        &with_flow("rtt = \"0ms\""),
        "flows[0].rtt",
        "expected a positive duration",
    );
    toml_err(
        &with_flow("min_rto = \"0s\""),
        "flows[0].min_rto",
        "expected a positive duration",
    );
    toml_err(
        &with_top("stats_interval = \"0s\""),
        "stats_interval",
        "expected a positive duration",
    );
    toml_err(
        &with_top("stats_interval = \"61s\""),
        "stats_interval",
        "must not exceed the run duration (60s), got \"61s\"",
    );
    toml_err(
        &with_bottleneck("bdp_rtt = \"0ms\""),
        "bottleneck.bdp_rtt",
        "expected a positive duration",
    );
    toml_err(
        &with_bottleneck("reverse_rate = \"0bps\""),
        "bottleneck.reverse_rate",
        "expected a positive rate",
    );
    toml_err(
        &with_flow("access_rate = \"5\""),
        "flows[0].access_rate",
        "expected a positive rate",
    );
    toml_err(
        &with_flow("size = \"0B\""),
        "flows[0].size",
        "expected a positive size",
    );
    toml_err(
        &with_flow("start = \"60s\""),
        "flows[0].start",
        "must be before the end of the run (60s), got \"60s\"",
    );
    toml_err(
        &with_flow("start = \"10s\"\nstop = \"5s\""),
        "flows[0].stop",
        "must be after the start (10s), got \"5s\"",
    );
    toml_err(
        &with_flow("stop = \"0s\""),
        "flows[0].stop",
        "must be after the start (0s)",
    );
    toml_err(
        &with_udp("rate = \"1Mbps\"\nrtt = \"1ms\"\npattern = \"x\""),
        "udp[0].pattern",
        r#"expected "cbr" or "poisson", got "x""#,
    );
    toml_err(
        &with_udp("rate = \"1Mbps\"\nrtt = \"1ms\"\npacket_size = \"10B\""),
        "udp[0].packet_size",
        "between 64B and 9000B, got \"10B\"",
    );
    toml_err(
        &with_udp("rate = \"1Mbps\"\nrtt = \"1ms\"\npacket_size = \"9001B\""),
        "udp[0].packet_size",
        "got \"9001B\"",
    );
    toml_err(
        &with_udp("rate = \"0Mbps\"\nrtt = \"1ms\""),
        "udp[0].rate",
        "expected a positive rate",
    );
    toml_err(
        &with_udp("rate = \"1Mbps\"\nrtt = \"1ms\"\nstart = \"2s\"\nstop = \"2s\""),
        "udp[0].stop",
        "must be after the start (2s)",
    );
    toml_err(
        &with_udp("count = 0\nrate = \"1Mbps\"\nrtt = \"1ms\""),
        "udp[0].count",
        "expected an integer >= 1, got 0",
    );
}

#[test]
fn measurement_window() {
    let s = Scenario::from_toml(&with_top("measure = { start = \"10s\" }")).unwrap();
    assert_eq!((s.measure_start, s.measure_end), (secs(10), secs(60)));
    let s = Scenario::from_toml(&with_top("measure = { end = \"40s\" }")).unwrap();
    assert_eq!((s.measure_start, s.measure_end), (secs(30), secs(40)));
    let s = Scenario::from_toml(&with_top("measure = {}")).unwrap();
    assert_eq!((s.measure_start, s.measure_end), (secs(30), secs(60)));

    let e = toml_err(
        &with_top("measure = { start = \"30s\", end = \"90s\" }"),
        "measure.end",
        "",
    );
    assert_eq!(
        e.message,
        "measurement window must lie inside the run (0s..60s), got 30s..90s"
    );
    toml_err(
        &with_top("measure = { start = \"60s\" }"),
        "measure.start",
        "must lie inside the run (0s..60s), got 60s..60s",
    );
    toml_err(
        &with_top("measure = { end = \"20s\" }"),
        "measure.end",
        "must end after it starts, got 30s..20s",
    );
    toml_err(
        &with_top("measure = { start = \"40s\", end = \"40s\" }"),
        "measure.end",
        "got 40s..40s",
    );
    toml_err(
        &with_top("measure = { start = \"1.5s\", end = \"1.25s\" }"),
        "measure.end",
        "got 1.5s..1.25s",
    );
}

#[test]
fn no_traffic() {
    let e = toml_err(
        "duration = \"60s\"\n[bottleneck]\nrate = \"10Mbps\"\n",
        "flows",
        "",
    );
    assert_eq!(
        e.to_string(),
        "flows: the scenario has no traffic: add a [[flows]] or [[udp]] group"
    );
    json_err(
        r#"{"duration": "60s", "bottleneck": {"rate": "10Mbps"}, "flows": [], "udp": null}"#,
        "flows",
        "no traffic",
    );
}

#[test]
fn syntax_errors_are_one_line() {
    let e = toml_err(
        "duration = \"60s\"\n[bottleneck\nrate = \"1Mbps\"\n",
        "<toml>",
        "line 2",
    );
    assert!(e.message.starts_with("syntax error at line 2"), "{e}");
    toml_err(
        "duration = \"60s\"\nduration = \"1s\"\n",
        "<toml>",
        "line 2",
    );
    toml_err("duration = \n", "<toml>", "syntax error");
    json_err("{\"duration\": \n \"60s\",", "<json>", "line 2");
    json_err("", "<json>", "syntax error");
}

#[test]
fn garbage_never_panics() {
    let inputs = [
        "", "=", "[[", "[[flows]]", "flows = 5", "udp = [1, 2]", "udp = [[1]]", "duration = \"\u{0}\"",
        "duration = \"9999999999999999999999999min\"", "bottleneck = {}", "measure = []",
        "duration = \"1s\"\n[bottleneck]\nrate = \"1bps\"\n[[flows]]\nrtt = \"1ns\"\ncc = {kind=\"x\", \"\" = 1}",
    ];
    for input in inputs {
        let _ = Scenario::from_toml(input);
        let _ = Scenario::from_json(input);
    }
    for input in [
        "null",
        "1",
        "\"x\"",
        "{\"flows\": {}}",
        "{\"udp\": [null]}",
        "{\"measure\": null}",
    ] {
        let e = Scenario::from_json(input).unwrap_err();
        assert!(!e.to_string().contains('\n'));
    }
}

#[test]
fn more_flows_than_events_can_name_is_a_one_line_error() {
    // Events carry 28-bit link and flow indices; the check runs before anything is
    // allocated for the flows: while the scenario is read, before drawing each flow's
    // values, naming the group that crosses the limit.
    let text = EXAMPLE.replace("count = 2", "count = 70000000");
    let err = Scenario::from_toml(&text).expect_err("too many flows");
    check_err(&err, "flows[0].count", "at most 67108863 are supported");
    let text = format!("{EXAMPLE}\n[[udp]]\ncount = 67108862\nrate = \"1Mbps\"\nrtt = \"50ms\"\n");
    let err = Scenario::from_toml(&text).expect_err("too many flows");
    check_err(&err, "udp[1].count", "67108865 flows in all");
}

#[test]
fn duplicate_keys_are_refused_in_json_and_toml_naming_the_key() {
    let json = r#"{"duration": "1s", "duration": "2s", "bottleneck": {"rate": "1Mbps"}}"#;
    let e = Scenario::from_json(json).unwrap_err();
    assert_eq!(e.path, "<json>");
    assert!(e.message.contains("duplicate key \"duration\""), "{e}");
    let nested = r#"{"duration": "1s", "bottleneck": {"rate": "1Mbps", "rate": "2Mbps"}}"#;
    let e = Scenario::from_json(nested).unwrap_err();
    assert!(e.message.contains("duplicate key \"rate\""), "{e}");
    let e = Scenario::from_toml("duration = \"1s\"\nduration = \"2s\"\n").unwrap_err();
    assert!(e.message.contains("duplicate key \"duration\""), "{e}");
    assert!(e.message.contains("line 2"), "{e}");
}

#[test]
fn long_values_are_cut_in_messages() {
    let long = "x".repeat(3000);
    let text =
        format!("duration = \"1s\"\n[bottleneck]\nrate = \"{long}\"\n[[flows]]\nrtt = \"10ms\"\n");
    let e = Scenario::from_toml(&text).unwrap_err();
    assert_eq!(e.path, "bottleneck.rate");
    assert!(
        e.to_string().len() < 200,
        "{} characters",
        e.to_string().len()
    );
    assert!(e.message.contains("(3000 characters)"), "{e}");
}

/// Values that validate but could not run in any memory are refused up front, each
/// with its key (issue reproducers: a 1e9-packet window, a 1 ns stats interval, a 1e9
/// packet queue, 292 years, 1.8e19 bit/s).
#[test]
fn physically_meaningless_values_are_refused() {
    let cases = [
        (
            "initial_window = 1000000000",
            "flows[0].initial_window",
            "TCP's largest window",
        ),
        ("", "stats_interval", "rows of time series"),
    ];
    for (flow_key, path, message) in cases {
        let mut text = format!(
            "duration = \"10s\"\n[bottleneck]\nrate = \"10Mbps\"\n[[flows]]\nrtt = \"10ms\"\n{flow_key}\n"
        );
        if path == "stats_interval" {
            text = text.replace(
                "duration = \"10s\"",
                "duration = \"10s\"\nstats_interval = \"1ns\"",
            );
        }
        toml_err(&text, path, message);
    }
    let top = |extra: &str, rate: &str, limit: &str| {
        format!(
            "{extra}\n[bottleneck]\nrate = \"{rate}\"\nqueue = {{ kind = \"droptail\", limit = \"{limit}\" }}\n[[flows]]\nrtt = \"10ms\"\n"
        )
    };
    // Queue parameters are read by the discipline when the network is built.
    let sc = Scenario::from_toml(&top("duration = \"10s\"", "10Gbps", "1000000000p")).unwrap();
    let err = ccsim_core::api::validate(&sc).unwrap_err();
    check_err(&err, "bottleneck.queue.limit", "at most 10000000 packets");
    toml_err(
        &top("duration = \"10s\"", "18000000Tbps", "100p"),
        "bottleneck.rate",
        "at most 100Tbps",
    );
    toml_err(
        &top("duration = \"153000000min\"", "10Mbps", "100p"),
        "duration",
        "at most 365 days",
    );
    // The largest accepted values still pass.
    let sc = Scenario::from_toml(&top("duration = \"10s\"", "100Tbps", "10000000p")).unwrap();
    ccsim_core::api::validate(&sc).unwrap();
}
