//! Every discipline inside the simulator: a 20 Mbps dumbbell with four NewReno flows
//! (half ECN-capable) and a Poisson UDP source. Checks the engine's invariants during
//! the run, conservation at the end, and that each AQM holds the queueing delay near
//! what its reference says.

use ccsim_core::api;
use ccsim_core::results::{Column, QueueSummary};
use ccsim_core::sim;

fn run(queue: &str) -> QueueSummary {
    let text = format!(
        r#"
duration = "20s"
seed = 3
[bottleneck]
rate = "20Mbps"
queue = {queue}
[[flows]]
count = 2
rtt = "40ms"
[[flows]]
count = 2
rtt = "80ms"
ecn = true
[[udp]]
rate = "2Mbps"
pattern = "poisson"
rtt = "40ms"
"#
    );
    let sc = api::parse(&text, "toml").unwrap_or_else(|e| panic!("{queue}: {e}"));
    let mut world = sim::build(&sc).unwrap_or_else(|e| panic!("{queue}: {e}"));
    let end = world.duration_ns();
    for k in 1..=8 {
        world.run_until(end * k / 8);
        world
            .check_invariants()
            .unwrap_or_else(|e| panic!("{queue}: {e}"));
    }
    let out = world.finish(0.0);
    // Whole-run counters of every queue: arrivals = departures + drops + queued.
    let t = out
        .tables
        .iter()
        .find(|t| t.name == "queues")
        .expect("queues table");
    let col = |c: &str| match t.column(c) {
        Some(Column::U64(v)) => v.clone(),
        other => panic!("{c}: {other:?}"),
    };
    let (a, d, dr, qd) = (
        col("arrivals"),
        col("departures"),
        col("drops"),
        col("queued"),
    );
    for i in 0..a.len() {
        assert_eq!(a[i], d[i] + dr[i] + qd[i], "{queue}: queue {i}");
    }
    let q = out.summary.bottleneck.clone();
    assert!(
        q.utilisation > 0.85,
        "{queue}: utilisation {}",
        q.utilisation
    );
    q
}

#[test]
fn disciplines_run_in_the_simulator() {
    // (queue, lowest and highest acceptable median sojourn in ms)
    let cases = [
        (r#"{ kind = "codel" }"#, 0.5, 12.0),
        (r#"{ kind = "codel", ecn = true }"#, 0.5, 12.0),
        (r#"{ kind = "fq_codel" }"#, 0.5, 12.0),
        (r#"{ kind = "pie" }"#, 3.0, 30.0),
        (
            r#"{ kind = "pie", ecn = true, dq_rate_estimator = true }"#,
            3.0,
            30.0,
        ),
        (r#"{ kind = "pie", preset = "pie2013" }"#, 5.0, 40.0),
        (r#"{ kind = "pie", preset = "abe-linux" }"#, 5.0, 40.0),
        (
            r#"{ kind = "red", min_th = "20KB", max_th = "60KB", ecn = true }"#,
            3.0,
            40.0,
        ),
        (
            r#"{ kind = "red", mode = "step", threshold = "30p" }"#,
            1.0,
            20.0,
        ),
        (r#"{ kind = "csaqm" }"#, 3.0, 30.0),
    ];
    for (queue, lo, hi) in cases {
        let q = run(queue);
        eprintln!(
            "{queue}: p50 {:.2} ms mean {:.2} util {:.3} drops {} marks {}",
            q.sojourn_p50_ms, q.sojourn_mean_ms, q.utilisation, q.drops, q.marks
        );
        assert!(
            q.sojourn_p50_ms >= lo && q.sojourn_p50_ms <= hi,
            "{queue}: median sojourn {} ms not in [{lo}, {hi}]",
            q.sojourn_p50_ms
        );
        assert!(q.drops + q.marks > 0, "{queue}: no congestion signal");
    }
    // PVPIE with unmarked traffic (all values 0): the p-quantile is 0 and nothing is
    // below it, so it degenerates to tail drop at its limit; it must still run.
    run(r#"{ kind = "pvpie", limit = "200p" }"#);
}
