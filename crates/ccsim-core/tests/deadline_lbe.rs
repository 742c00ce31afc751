//! The deadline-aware LBE controller (`control/deadline.rs`) in whole runs, on paper 000's
//! bottleneck (10 Mbit/s, 1-BDP tail drop, RTT 50 ms, two greedy CUBIC flows): a feasible
//! deadline is met while the transfer takes a smaller share of the link than CDG with a
//! fixed G = 120 or CUBIC would; an infeasible one is reported missed with its lateness,
//! or missed while unfinished; LEDBAT's `target` works as the knob too; every transfer
//! of a closed-loop flow gets its own deadline. The control law itself is checked on a
//! hand-worked trace in the module's unit tests.

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

/// Paper 000's bottleneck with two CUBIC flows and one 30 MB transfer using `transfer`
/// (the lines of its `[[flows]]` table after `rtt`).
fn scenario(duration_s: u32, transfer: &str) -> String {
    format!(
        r#"
duration = "{duration_s}s"
measure = {{ start = "0s" }}
[bottleneck]
rate = "10Mbps"
queue = {{ kind = "droptail", limit = "1bdp" }}
[[flows]]
rtt = "50ms"
size = "30MB"
{transfer}
[[flows]]
count = 2
cc = "cubic"
rtt = "50ms"
"#
    )
}

struct Outcome {
    fct_s: f64,
    outcome: String,
    /// `deadline_met`: 1 met, 0 missed.
    met: f64,
    lateness_s: f64,
    /// The transfer's share of the link's capacity while it ran.
    share: f64,
}

fn outcome(out: &RunOutput) -> Outcome {
    let tr = table(out, "transfers");
    assert_eq!(tr.num_rows(), 1);
    let fct_s = f64s(tr, "fct_s")[0];
    Outcome {
        fct_s,
        outcome: strs(tr, "deadline_outcome")[0].clone(),
        met: f64s(tr, "deadline_met")[0],
        lateness_s: f64s(tr, "lateness_s")[0],
        share: 30e6 * 8.0 / (fct_s * 10e6),
    }
}

const CDG: &str = r#"cc = { kind = "cdg", coexistence = false, exact_factor = true }"#;

#[test]
fn feasible_deadline_is_met_taking_less_than_fixed_g120_or_cubic() {
    // 30 MB in 240 s needs 1 Mbit/s: G = 0.1 alone takes about 460 s (0.5 Mbit/s), G =
    // 120 about 100 s (2.4 Mbit/s), CUBIC about 80 s.
    let dalbe = outcome(&run(&scenario(300, &format!("{CDG}\ndeadline = \"240s\""))));
    assert_eq!(dalbe.outcome, "met", "FCT {} s", dalbe.fct_s);
    assert_eq!(dalbe.met, 1.0);
    assert!(dalbe.lateness_s < 0.0);
    // It plans to finish 10 % early (216 s) and should not finish far earlier: it gives
    // back what it does not need.
    assert!(
        dalbe.fct_s > 180.0,
        "finished at {} s: not deferential",
        dalbe.fct_s
    );

    // The baselines keep the same deadline without retuning (`retune = false`): its
    // outcome is recorded for them too.
    let baseline = "deadline = \"240s\"\ndeadline_control = { retune = false }";
    let g120 = outcome(&run(&scenario(
        200,
        &format!(
            "cc = {{ kind = \"cdg\", coexistence = false, exact_factor = true, g = 120.0 }}\n{baseline}"
        ),
    )));
    let cubic = outcome(&run(&scenario(200, &format!("cc = \"cubic\"\n{baseline}"))));
    let pure_lbe = outcome(&run(&scenario(
        700,
        &format!(
            "cc = {{ kind = \"cdg\", coexistence = false, exact_factor = true, g = 0.1 }}\n{baseline}"
        ),
    )));
    assert!(
        dalbe.share < 0.75 * g120.share && dalbe.share < 0.75 * cubic.share,
        "DA-LBE took {:.3} of the link, fixed G = 120 {:.3}, CUBIC {:.3}",
        dalbe.share,
        g120.share,
        cubic.share
    );
    assert!(
        pure_lbe.fct_s > 240.0,
        "pure LBE (G = 0.1) would miss: FCT {} s",
        pure_lbe.fct_s
    );
    assert_eq!(
        (
            g120.outcome.as_str(),
            cubic.outcome.as_str(),
            pure_lbe.outcome.as_str()
        ),
        ("met", "met", "missed")
    );
}

#[test]
fn decisions_are_recorded_every_interval() {
    let out = run(&scenario(
        200,
        &format!("{CDG}\ndeadline = \"120s\"\ndeadline_control = {{ interval = \"2s\" }}"),
    ));
    let dc = table(&out, "deadline_control");
    let t = f64s(dc, "time_s");
    let fct = outcome(&out).fct_s;
    assert_eq!(t.len(), (fct / 2.0).floor() as usize);
    for (k, &ti) in t.iter().enumerate() {
        assert!((ti - 2.0 * (k + 1) as f64).abs() < 1e-9);
    }
    let g = f64s(dc, "knob_value");
    assert!(g.iter().all(|&g| (0.1..=120.0).contains(&g)));
    assert!(strs(dc, "knob").iter().all(|k| k == "g"));
}

#[test]
fn infeasible_deadline_is_reported_missed() {
    // 30 MB in 20 s needs 12 Mbit/s of a 10 Mbit/s link.
    let late = outcome(&run(&scenario(200, &format!("{CDG}\ndeadline = \"20s\""))));
    assert_eq!(late.outcome, "missed");
    assert_eq!(late.met, 0.0);
    assert!(late.lateness_s > 0.0);

    // The run ends before the transfer does: missed once the deadline has passed, open
    // while it has not.
    let out = run(&scenario(30, &format!("{CDG}\ndeadline = \"20s\"")));
    let tr = table(&out, "transfers");
    assert_eq!(strs(tr, "deadline_outcome")[0], "missed");
    assert!(f64s(tr, "end_s")[0].is_nan() && f64s(tr, "lateness_s")[0].is_nan());
    let out = run(&scenario(30, &format!("{CDG}\ndeadline = \"100s\"")));
    assert_eq!(
        strs(table(&out, "transfers"), "deadline_outcome")[0],
        "open"
    );

    // With escalation it switches to CUBIC for good: after the switch no more delay
    // backoffs, and losses cut to CUBIC's 717/1024 instead of CDG's 1/2 (no shadow).
    let out = run(&scenario(
        200,
        &format!(
            "{CDG}\ntrace = true\ndeadline = \"20s\"\ndeadline_control = {{ escalate = \"cubic\" }}"
        ),
    ));
    assert_eq!(outcome(&out).outcome, "missed");
    let dc = table(&out, "deadline_control");
    let flags = u32s(dc, "escalated");
    let k = flags.iter().position(|&f| f == 1).expect("never escalated");
    assert!(flags[k..].iter().all(|&f| f == 1), "escalation is for good");
    let switched_s = f64s(dc, "time_s")[k];
    let red = table(&out, "cc_reductions");
    let (t, cause) = (f64s(red, "time_s"), strs(red, "cause"));
    let (before, after) = (
        f64s(red, "cwnd_before_pkts"),
        f64s(red, "ssthresh_after_pkts"),
    );
    let flow = u32s(red, "flow_id");
    let mut losses_after = 0;
    for i in 0..t.len() {
        if flow[i] != 0 || t[i] <= switched_s {
            continue;
        }
        assert_ne!(
            cause[i], "delay",
            "a CDG delay backoff at {} s after the switch",
            t[i]
        );
        if before[i] >= 20.0 {
            let beta = after[i] / before[i];
            assert!(
                (beta - 717.0 / 1024.0).abs() < 0.05,
                "loss cut to {beta} at {} s",
                t[i]
            );
            losses_after += 1;
        }
    }
    assert!(
        losses_after > 5,
        "only {losses_after} loss reductions after the switch"
    );
}

#[test]
fn ledbat_target_is_a_knob_too() {
    let out = run(&scenario(
        200,
        // Tuned under the pre-RACK sender: with RACK-TLP on, the transfer ends at 121.9 s
        // against 117.7 s without (89 against 80 retransmissions as the CUBIC flows'
        // loss episodes fall elsewhere), just past the 120 s deadline; the knob is what
        // this test is about, so the sender is pinned.
        "cc = { kind = \"ledbat\", slow_start = true }\ndeadline = \"120s\"\nrack = false\ntlp = false",
    ));
    let o = outcome(&out);
    assert_eq!(o.outcome, "met", "FCT {} s", o.fct_s);
    let dc = table(&out, "deadline_control");
    assert!(strs(dc, "knob").iter().all(|k| k == "target"));
    assert!(f64s(dc, "knob_value")
        .iter()
        .all(|&ns| (1e6..=1e8).contains(&ns)));
}

#[test]
fn each_repeated_transfer_has_its_own_deadline() {
    let text = r#"
duration = "120s"
[bottleneck]
rate = "10Mbps"
[[flows]]
cc = { kind = "cdg", coexistence = false }
rtt = "50ms"
size = "2MB"
repeat = { times = 3, think = "1s" }
deadline = "15s"
deadline_control = { interval = "500ms" }
[[flows]]
cc = "cubic"
rtt = "50ms"
"#;
    let out = run(text);
    let tr = table(&out, "transfers");
    assert_eq!(tr.num_rows(), 3);
    let (start, deadline) = (f64s(tr, "start_s"), f64s(tr, "deadline_s"));
    for k in 0..3 {
        assert!((deadline[k] - start[k] - 15.0).abs() < 1e-9);
        assert_eq!(strs(tr, "deadline_outcome")[k], "met");
    }
    // Decisions of one transfer never run past its end (stale ticks are dropped); the
    // sender learns of the end one ACK after the receiver has the last byte.
    let dc = table(&out, "deadline_control");
    let t = f64s(dc, "time_s");
    let end = f64s(tr, "end_s");
    for &ti in t {
        assert!(
            (0..3).any(|k| ti > start[k] && ti <= end[k] + 0.1),
            "decision at {ti} s outside every transfer"
        );
    }
}

#[test]
fn an_easy_deadline_at_a_long_rtt_does_not_escalate_on_a_dip() {
    // 000:dalbe's case: one CUBIC competitor, RTT 200 ms, 30 MB in 480 s (0.5 Mbit/s of
    // 10). With escalation judged on two intervals of the short average, CUBIC's
    // sawtooth dips escalated the transfer for good at 26-42 s and it finished at about
    // 100 s, taking more than fixed G = 120. Judged on the trend it stays deferential.
    let text = r#"
duration = "600s"
measure = { start = "0s" }
[bottleneck]
rate = "10Mbps"
queue = { kind = "droptail", limit = "1bdp" }
[[flows]]
rtt = "200ms"
size = "30MB"
cc = { kind = "cdg", coexistence = false, exact_factor = true }
deadline = "480s"
deadline_control = { escalate = "cubic" }
[[flows]]
cc = "cubic"
rtt = "200ms"
"#;
    let out = run(text);
    let o = outcome(&out);
    assert_eq!(o.outcome, "met");
    assert!(o.fct_s > 300.0, "finished at {} s of a 432 s plan", o.fct_s);
}
