use super::*;
use crate::cc::tests::state;

const MS: u64 = 1_000_000;

fn cdg(params: &[(&str, ParamValue)]) -> Cdg {
    let mut c = Cdg::new(7);
    for (n, v) in params {
        c.set_param("p", n, v).unwrap();
    }
    c
}

/// Drives CDG through rounds in congestion avoidance with controlled RTTs, playing the
/// sender's part: a requested backoff enters CWR (ssthresh hook), the reduction round
/// still delivers RTT samples, then CWR completes.
struct Driver {
    cc: Cdg,
    tp: CcState,
    rounds: u64,
    opportunities: u64,
    backoffs: u64,
}

impl Driver {
    fn new(cc: Cdg) -> Self {
        let mut tp = state(100);
        tp.ssthresh = 50; // congestion avoidance: no HyStart
        let mut d = Driver {
            cc,
            tp,
            rounds: 0,
            opportunities: 0,
            backoffs: 0,
        };
        d.cc.init(&mut d.tp);
        d
    }

    /// Feed one round's RTT samples (min and max), single-packet ACKs.
    fn samples(&mut self, min_us: u64, max_us: u64) {
        for r in [min_us, max_us, (min_us + max_us) / 2] {
            let sample = AckSample {
                pkts_acked: 1,
                rtt_ns: Some(r * 1000),
                in_flight: self.tp.cwnd,
            };
            self.cc.pkts_acked(&mut self.tp, &sample);
        }
    }

    /// One round with RTTs in [min, max], ended by an ACK past the round's snd_nxt.
    fn round(&mut self, min_us: u64, max_us: u64) {
        self.rounds += 1;
        self.samples(min_us, max_us);
        self.end_round();
        let evaluates = self.cc.rtt.is_set() && self.cc.rtt_prev.is_set();
        let cwnd = self.tp.cwnd;
        self.cc.cong_avoid(&mut self.tp, 1);
        if evaluates && self.cc.gfilled {
            self.opportunities += 1;
        }
        if std::mem::take(&mut self.tp.request_cwr) {
            self.backoffs += 1;
            self.tp.cwnd = cwnd;
            let ss = self.cc.ssthresh(&self.tp, ReductionCause::Delay);
            assert_eq!(
                ss,
                ((cwnd as u64 * 724) >> 10) as u32,
                "backoff_beta 724/1024"
            );
            // The CWR round: samples continue, then the reduction completes. The
            // window is kept constant so that rounds stay comparable.
            self.tp.cwnd = cwnd;
            self.samples(min_us, max_us);
            self.end_round();
            self.cc.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
        }
    }

    /// A round's data goes out and the first ACK beyond the round's start mark arrives.
    fn end_round(&mut self) {
        self.tp.now_ns += 100 * MS;
        let mark = self.tp.snd_nxt;
        self.tp.snd_nxt += self.tp.cwnd as u64;
        self.tp.snd_una = mark + 1;
    }
}

/// Rounds with a constant gradient `d_us` per round; returns (backoffs, opportunities).
fn constant_gradient(cc: Cdg, d_us: u64, rounds: u64) -> (u64, u64) {
    let mut d = Driver::new(cc);
    let mut base = 100_000u64;
    for _ in 0..rounds {
        d.round(base, base + 5_000);
        base += d_us;
    }
    (d.backoffs, d.opportunities)
}

#[test]
fn backoff_frequency_matches_one_minus_exp_of_gradient_over_g() {
    // Paper 000 Eq. (4): P = 1 - exp(-ḡ/G), ḡ the mean per-round gradient in ms.
    // G = 3 ms, exact factor 1000 / (3 x 8): ḡ = 1.07 ms gives P = 0.30.
    let g_ms = 3.0;
    let d_us = 1070;
    let cc = cdg(&[
        ("g", ParamValue::Number(g_ms)),
        ("exact_factor", ParamValue::Bool(true)),
        ("coexistence", ParamValue::Bool(false)),
    ]);
    let (backoffs, n) = constant_gradient(cc, d_us, 30_000);
    let p = 1.0 - (-(d_us as f64 / 1000.0) / g_ms).exp();
    let freq = backoffs as f64 / n as f64;
    let sigma = (p * (1.0 - p) / n as f64).sqrt();
    assert!(n > 15_000, "{n} opportunities");
    assert!(
        (freq - p).abs() < 4.0 * sigma,
        "backoff frequency {freq:.4} vs P {p:.4} (n = {n}, 4σ = {:.4})",
        4.0 * sigma
    );
    // The integer factor (Linux default 42) at the same gradient:
    // P = 1 - exp(-8 x 1070 x 42 x 1e-6) = 0.302.
    let cc = cdg(&[("coexistence", ParamValue::Bool(false))]);
    let (backoffs, n) = constant_gradient(cc, d_us, 30_000);
    let p = 1.0 - (-(8.0 * d_us as f64) * 42.0 * 1e-6).exp();
    let freq = backoffs as f64 / n as f64;
    let sigma = (p * (1.0 - p) / n as f64).sqrt();
    assert!((freq - p).abs() < 4.0 * sigma, "{freq:.4} vs {p:.4}");
}

#[test]
fn no_backoff_without_a_positive_gradient() {
    let cc = cdg(&[("coexistence", ParamValue::Bool(false))]);
    let (backoffs, n) = constant_gradient(cc, 0, 2_000);
    assert_eq!(backoffs, 0);
    assert!(n > 1_000);
}

#[test]
fn g_is_rounded_to_an_integer_factor_unless_exact() {
    let f = |g: f64, exact: bool| {
        cdg(&[
            ("exact_factor", ParamValue::Bool(exact)),
            ("g", ParamValue::Number(g)),
        ])
        .backoff_factor()
    };
    assert_eq!(f(3.0, false), 42.0, "Linux's default is G = 3");
    assert_eq!(f(100.0, false), 1.0);
    assert_eq!(f(120.0, false), 1.0);
    assert_eq!(f(100.0, true), 1.25);
    assert!((f(120.0, true) - 1000.0 / 960.0).abs() < 1e-12);
    // Observed: with the same random stream G = 100 and G = 120 back off identically
    // by default, differently with exact factors.
    let run = |g: f64, exact: bool| {
        let cc = cdg(&[
            ("g", ParamValue::Number(g)),
            ("exact_factor", ParamValue::Bool(exact)),
            ("coexistence", ParamValue::Bool(false)),
        ]);
        constant_gradient(cc, 20_000, 3_000).0
    };
    assert_eq!(run(100.0, false), run(120.0, false));
    assert_ne!(run(100.0, true), run(120.0, true));
}

#[test]
fn g_change_mid_flow_changes_the_backoff_rate() {
    // Start with G = 100 ms (rare backoffs at 1 ms/round), then G = 1 ms.
    let cc = cdg(&[
        ("g", ParamValue::Number(100.0)),
        ("exact_factor", ParamValue::Bool(true)),
        ("coexistence", ParamValue::Bool(false)),
    ]);
    let mut d = Driver::new(cc);
    let mut base = 100_000u64;
    for _ in 0..2_000 {
        d.round(base, base + 5_000);
        base += 1_000;
    }
    let early = d.backoffs as f64 / d.opportunities as f64;
    d.cc.set_param("p", "g", &ParamValue::Number(1.0)).unwrap();
    let (b0, n0) = (d.backoffs, d.opportunities);
    for _ in 0..2_000 {
        d.round(base, base + 5_000);
        base += 1_000;
    }
    let late = (d.backoffs - b0) as f64 / (d.opportunities - n0) as f64;
    // P = 1 - exp(-1/100) = 0.01 vs 1 - exp(-1) = 0.63.
    assert!(early < 0.03, "{early}");
    assert!((late - 0.632).abs() < 0.06, "{late}");
}

#[test]
fn ineffectual_backoffs_are_suppressed_until_a_negative_gradient() {
    // Linux default use_ineff = 5: a constant positive gradient backs off 5 times, then
    // never again.
    let cc = cdg(&[("g", ParamValue::Number(0.1))]); // near-certain backoff
    let (backoffs, _) = constant_gradient(cc, 2_000, 500);
    assert_eq!(backoffs, 5);
    // A falling RTT (summed gradient <= -32 µs) re-arms it.
    let mut d = Driver::new(cdg(&[("g", ParamValue::Number(0.1))]));
    let mut base = 100_000u64;
    for _ in 0..100 {
        d.round(base, base + 5_000);
        base += 2_000;
    }
    assert_eq!(d.backoffs, 5);
    for _ in 0..20 {
        d.round(base, base + 5_000);
        base -= 2_000;
    }
    for _ in 0..20 {
        d.round(base, base + 5_000);
        base += 2_000;
    }
    assert!(d.backoffs > 5, "{}", d.backoffs);
}

#[test]
fn gradient_is_extrapolated_until_the_window_fills() {
    let mut cc = cdg(&[]);
    let mut tp = state(100);
    cc.init(&mut tp);
    cc.rtt_prev = MinMax {
        min: 100_000,
        max: 105_000,
    };
    cc.rtt = MinMax {
        min: 100_100,
        max: 105_000,
    };
    // First round of the window: 100 µs x 8 / 1.
    assert_eq!(cc.grad(), 800);
    cc.rtt_prev = cc.rtt;
    cc.rtt = MinMax {
        min: 100_200,
        max: 105_000,
    };
    // Sum 200 µs over 2 of 8 slots: 200 x 8 / 2.
    assert_eq!(cc.grad(), 800);
    // Min gradient zero: the max gradient is used.
    cc.rtt_prev = cc.rtt;
    cc.rtt = MinMax {
        min: 100_000,
        max: 106_000,
    };
    assert_eq!(cc.grad(), 1_000 * 8 / 3);
}

#[test]
fn loss_uses_the_shadow_window() {
    let mut cc = cdg(&[]);
    let mut tp = state(100);
    cc.init(&mut tp);
    cc.shadow_wnd = 180;
    // shadow = min(180 / 2, 100) = 90; ssthresh = max(2, 90, 50).
    assert_eq!(cc.ssthresh(&tp, ReductionCause::Loss), 90);
    cc.set_param("p", "use_shadow", &ParamValue::Bool(false))
        .unwrap();
    cc.shadow_wnd = 180;
    assert_eq!(cc.ssthresh(&tp, ReductionCause::Loss), 50);
}

#[test]
fn delayed_ack_filter_keeps_single_packet_acks_out_of_the_max() {
    let mut cc = cdg(&[]);
    let mut tp = state(100);
    cc.init(&mut tp);
    let ack = |cc: &mut Cdg, tp: &mut CcState, n: u32, ms: u64| {
        cc.pkts_acked(
            tp,
            &AckSample {
                pkts_acked: n,
                rtt_ns: Some(ms * MS),
                in_flight: 100,
            },
        )
    };
    ack(&mut cc, &mut tp, 2, 100);
    ack(&mut cc, &mut tp, 1, 140); // delayed ACK: not a max
    assert_eq!(
        cc.rtt,
        MinMax {
            min: 100_000,
            max: 100_000
        }
    );
    ack(&mut cc, &mut tp, 1, 90); // lowers the min
    assert_eq!(cc.rtt.min, 90_000);
}

#[test]
fn hystart_delay_ends_slow_start_at_nine_eighths_of_the_min() {
    let mut cc = cdg(&[("hystart_detect", ParamValue::Number(2.0))]);
    let mut tp = state(4);
    tp.ssthresh = crate::cc::INFINITE_SSTHRESH;
    cc.init(&mut tp);
    cc.delay_min = 100_000;
    cc.rtt.min = 112_600; // > 112.5 ms
    for _ in 0..9 {
        cc.cong_avoid(&mut tp, 0);
    }
    assert_eq!(tp.ssthresh, tp.cwnd, "at any cwnd (here 4)");
}

#[test]
fn bad_values_name_the_parameter() {
    let mut cc = Cdg::new(1);
    let e = cc
        .set_param("flows[1].cc", "window", &ParamValue::Number(6.0))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "flows[1].cc.window: expected a power of two in [1, 256], got 6"
    );
    let e = cc
        .set_param("flows[1].cc", "g", &ParamValue::Number(0.0))
        .unwrap_err();
    assert_eq!(e.path, "flows[1].cc.g");
    let e = cc
        .set_param("flows[1].cc", "use_shadow", &ParamValue::Number(1.0))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "flows[1].cc.use_shadow: expected true or false, got 1"
    );
}
