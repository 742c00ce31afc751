//! Issue 3, done-when 2 (DCTCP, RFC 8257 / Linux tcp_dctcp.c): with step marking at K
//! packets, one DCTCP flow at 1 Gbps / 100 µs RTT holds the queue near K at full
//! utilisation, and its α converges to the fraction of marked packets.

use ccsim_core::api;
use ccsim_core::results::{Column, RunOutput, Table};

fn run(k: u32) -> RunOutput {
    let text = format!(
        r#"
duration = "2s"
measure = {{ start = "0.5s" }}
[bottleneck]
rate = "1Gbps"
queue = {{ kind = "red", mode = "step", threshold = "{k}p", ecn = true, limit = "1000p" }}
[[flows]]
cc = "dctcp"
rtt = "100us"
ecn = true
trace = true
"#
    );
    api::run(&api::parse(&text, "toml").unwrap(), None).unwrap()
}

fn table<'a>(out: &'a RunOutput, name: &str) -> &'a Table {
    out.tables.iter().find(|t| t.name == name).unwrap()
}

#[test]
fn dctcp_holds_the_queue_near_k_and_alpha_tracks_the_mark_fraction() {
    for k in [20u32, 65] {
        let out = run(k);
        let q = table(&out, "queue_series");
        let (Some(Column::F64(t)), Some(Column::U64(len))) =
            (q.column("time_s"), q.column("qlen_pkts"))
        else {
            panic!()
        };
        let in_window: Vec<f64> = t
            .iter()
            .zip(len)
            .filter(|(t, _)| **t > 0.5)
            .map(|(_, l)| *l as f64)
            .collect();
        let mean_q = in_window.iter().sum::<f64>() / in_window.len() as f64;
        let util = out.summary.utilisation;
        println!("K = {k}: mean queue {mean_q:.1} packets, utilisation {util:.4}");
        assert!(
            (mean_q - k as f64).abs() <= 0.3 * k as f64,
            "K = {k}: mean queue {mean_q}"
        );
        assert!(util > 0.99, "K = {k}: utilisation {util}");

        // α (sampled every 100 ms) against the fraction of CE-marked packets in the window.
        let v = table(&out, "cc_vars");
        let (Some(Column::F64(vt)), Some(Column::Str(name)), Some(Column::F64(val))) =
            (v.column("time_s"), v.column("name"), v.column("value"))
        else {
            panic!()
        };
        let alphas: Vec<f64> = (0..vt.len())
            .filter(|&i| name[i] == "alpha" && vt[i] > 0.5)
            .map(|i| val[i])
            .collect();
        let alpha = alphas.iter().sum::<f64>() / alphas.len() as f64;
        let frac = out.summary.bottleneck.mark_probability;
        println!("K = {k}: mean alpha {alpha:.4}, marked fraction {frac:.4}");
        // Linux updates α with g = 1/16 in 1/1024 steps and snaps small values to 0,
        // so allow 25% relative (and 1/64 absolute) around the marked fraction.
        assert!(
            (alpha - frac).abs() <= (0.25 * frac).max(1.0 / 64.0),
            "alpha {alpha} vs fraction {frac}"
        );
    }
}
