//! Scheduled changes take effect: a congestion-control parameter retuned mid-run changes
//! the flow's behaviour (observed through utilisation, against paper 003's model), and a
//! bottleneck rate step changes the capacity.

use ccsim_core::api;

fn utilisation(extra: &str, measure: &str) -> f64 {
    let text = format!(
        r#"
duration = "300s"
measure = {measure}
[bottleneck]
rate = "10Mbps"
queue = {{ kind = "droptail", limit = "0.25bdp" }}
[[flows]]
cc = {{ kind = "newreno", beta = 0.5 }}
rtt = "100ms"
{extra}
"#
    );
    let sc = api::parse(&text, "toml").unwrap();
    api::run(&sc, None).unwrap().summary.utilisation
}

#[test]
fn scheduled_beta_change_takes_effect() {
    // Paper 003 Eq. (5) at b = 0.25 BDP: beta 0.5 gives U = 0.8875; beta 0.9 gives U = 1
    // (b >= delta (1 - beta) / beta = 0.11 delta).
    let window = r#"{ start = "160s", end = "300s" }"#;
    let before = utilisation("", window);
    let after = utilisation("[[flows.changes]]\nat = \"100s\"\nbeta = 0.9\n", window);
    assert!(
        (before - 0.8875).abs() < 0.03,
        "beta 0.5 throughout: {before}"
    );
    assert!(after > 0.98, "beta 0.9 from 100 s: {after}");
    // Before the change both runs are the same run.
    let early = r#"{ start = "40s", end = "100s" }"#;
    let a = utilisation("", early);
    let b = utilisation("[[flows.changes]]\nat = \"100s\"\nbeta = 0.9\n", early);
    assert_eq!(a, b);
}

#[test]
fn bad_change_parameter_is_rejected_with_its_path() {
    let text = r#"
duration = "10s"
[bottleneck]
rate = "10Mbps"
[[flows]]
rtt = "100ms"
[[flows.changes]]
at = "5s"
beta = 1.5
"#;
    let err = api::parse(text, "toml")
        .and_then(|sc| api::validate(&sc))
        .unwrap_err();
    assert_eq!(err.path, "flows[0].changes[0].beta", "{err}");
    let text = text
        .replace("at = \"5s\"", "at = \"50s\"")
        .replace("beta = 1.5", "beta = 0.7");
    let err = api::parse(&text, "toml").unwrap_err();
    assert_eq!(err.path, "flows[0].changes[0].at", "{err}");
}

#[test]
fn bottleneck_rate_step_changes_capacity() {
    let text = r#"
duration = "40s"
measure = { start = "25s", end = "40s" }
[bottleneck]
rate = "10Mbps"
rate_changes = [{ at = "20s", rate = "4Mbps" }]
[[flows]]
count = 2
rtt = "40ms"
"#;
    let out = api::run(&api::parse(text, "toml").unwrap(), None).unwrap();
    let goodput: f64 = out.summary.flows.iter().map(|f| f.goodput_mbps).sum();
    // After the step the two flows share 4 Mbps (goodput is payload: 1448/1500 of it).
    assert!(
        goodput > 3.5 && goodput < 4.0,
        "goodput after the step: {goodput}"
    );
}

#[test]
fn csaqm_follows_a_bottleneck_rate_step() {
    // CSAQM sizes its delay threshold as C x D from the link rate; after the rate halves,
    // the queueing delay must stay near D = 20 ms (it would double if C stayed stale).
    let text = r#"
duration = "40s"
measure = { start = "25s" }
[bottleneck]
rate = "40Mbps"
rate_changes = [{ at = "15s", rate = "20Mbps" }]
queue = { kind = "csaqm", d = "20ms" }
[[flows]]
count = 4
cc = "cubic"
rtt = "10ms"
ecn = true
ppv = "gold"
"#;
    let out = api::run(&api::parse(text, "toml").unwrap(), None).unwrap();
    let delay = out.summary.bottleneck.sojourn_mean_ms;
    assert!(
        (delay - 20.0).abs() <= 5.0,
        "mean queueing delay after the step: {delay}"
    );
}
