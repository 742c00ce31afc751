//! Issue 4, done-when 3 (CSAQM, paper 001 §4): Gold/Silver sharing by packet value
//! whatever the senders' congestion control, and an unresponsive UDP flow.

use ccsim_core::api;
use ccsim_core::results::RunOutput;

const GOLD_SILVER: &str = include_str!("../../../examples/csaqm_gold_silver.toml");
const UDP: &str = include_str!("../../../examples/csaqm_unresponsive_udp.toml");

fn run(text: &str) -> RunOutput {
    api::run(&api::parse(text, "toml").expect("valid"), None).expect("runs")
}

#[test]
fn gold_gets_twice_silver_with_cubic_and_with_dctcp() {
    // Paper 001 Fig. 3: 5 Gold + 5 Silver flows at 100 Mbps: Silver stays below its
    // 10 Mbps knee, so Gold should get 2x Silver; queueing delay near D = 20 ms.
    for cc in ["cubic", "dctcp"] {
        let out = run(&GOLD_SILVER.replace("cc = \"cubic\"", &format!("cc = \"{cc}\"")));
        let f = &out.summary.flows;
        let gold: f64 = f[..5].iter().map(|x| x.goodput_mbps).sum();
        let silver: f64 = f[5..].iter().map(|x| x.goodput_mbps).sum();
        let delay = out.summary.bottleneck.sojourn_mean_ms;
        println!("{cc}: Gold {gold:.2} Mbps, Silver {silver:.2} Mbps, ratio {:.3}, mean queueing delay {delay:.2} ms", gold / silver);
        assert!(f.iter().all(|x| x.algorithm == cc));
        assert!(
            (gold / silver - 2.0).abs() <= 0.3,
            "{cc}: ratio {}",
            gold / silver
        );
        assert!((delay - 20.0).abs() <= 5.0, "{cc}: delay {delay}");
        assert!(out.summary.utilisation > 0.97);
    }
}

#[test]
fn unresponsive_udp_is_the_one_dropped_and_tcp_keeps_its_share() {
    // Paper 001 Fig. 10: "CSAQM drops the packets of the UDP flow with PV below CTV ...
    // the UDP share being close to the DCTCP share".
    let out = run(UDP);
    let f = &out.summary.flows;
    let (cubic, dctcp, udp) = (&f[0], &f[1], &f[2]);
    println!(
        "CUBIC {:.2} Mbps ({} drops), DCTCP {:.2} Mbps ({} drops), UDP {:.2} Mbps ({} drops)",
        cubic.goodput_mbps,
        cubic.drops,
        dctcp.goodput_mbps,
        dctcp.drops,
        udp.goodput_mbps,
        udp.drops
    );
    assert_eq!(
        (
            cubic.algorithm.as_str(),
            dctcp.algorithm.as_str(),
            udp.protocol.as_str()
        ),
        ("cubic", "dctcp", "udp")
    );
    let tcp_drops = cubic.drops + dctcp.drops;
    assert!(
        udp.drops > 1000 * tcp_drops.max(1),
        "UDP {} vs TCP {tcp_drops} drops",
        udp.drops
    );
    assert!(
        (dctcp.goodput_mbps / udp.goodput_mbps - 1.0).abs() < 0.2,
        "DCTCP vs UDP share"
    );
    assert!(
        cubic.goodput_mbps > 0.6 * udp.goodput_mbps,
        "CUBIC keeps a share close to UDP's"
    );
    assert!(out.summary.utilisation > 0.97);
}
