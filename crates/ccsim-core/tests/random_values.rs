//! Randomised scenario values (issue 12): the drawn values follow their distributions
//! (Kolmogorov-Smirnov against closed-form CDFs written here, not the core's), seeds
//! change them and only them, `after_previous` chains flows, and open-loop arrivals are
//! Poisson.

use ccsim_core::scenario::Scenario;

/// n = 2000 draws; the KS critical value at α = 0.001 is 1.95 / √n ≈ 0.0436.
const N: usize = 2000;
const KS_CRIT: f64 = 1.95 / 44.721_359_549_995_8;

fn scenario(flows: &str) -> Scenario {
    let text = format!("duration = \"1000s\"\nseed = 7\n[bottleneck]\nrate = \"10Mbps\"\n{flows}");
    Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// The KS statistic of `xs` against `cdf`.
fn ks(mut xs: Vec<f64>, cdf: impl Fn(f64) -> f64) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len() as f64;
    xs.iter()
        .enumerate()
        .map(|(i, &x)| {
            let f = cdf(x);
            (f - i as f64 / n).abs().max((f - (i + 1) as f64 / n).abs())
        })
        .fold(0.0, f64::max)
}

/// erfc by Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let r = poly * (-z * z).exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

fn phi(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

fn rtts_ms(sc: &Scenario) -> Vec<f64> {
    sc.flows[0]
        .drawn
        .iter()
        .map(|d| d.rtt.ns as f64 / 1e6)
        .collect()
}

#[test]
fn uniform_rtts_follow_their_distribution() {
    let sc = scenario(&format!(
        "[[flows]]\ncount = {N}\nrtt = {{ uniform = [\"20ms\", \"100ms\"] }}"
    ));
    let d = ks(rtts_ms(&sc), |x| ((x - 20.0) / 80.0).clamp(0.0, 1.0));
    assert!(d < KS_CRIT, "KS {d:.4} >= {KS_CRIT:.4}");
}

#[test]
fn exponential_starts_follow_their_distribution() {
    let sc = scenario(&format!(
        "[[flows]]\ncount = {N}\nrtt = \"50ms\"\nstart = {{ exponential = \"2s\" }}"
    ));
    let starts: Vec<f64> = sc.flows[0]
        .drawn
        .iter()
        .map(|d| d.start.ns as f64 / 1e9)
        .collect();
    let d = ks(starts, |x| 1.0 - (-x / 2.0).exp());
    assert!(d < KS_CRIT, "KS {d:.4}");
}

#[test]
fn normal_is_truncated_at_zero_and_follows_its_distribution() {
    // mean 30 ms, sd 20 ms: 6.7% of the untruncated mass lies below 0 and is redrawn.
    let sc = scenario(&format!(
        "[[flows]]\ncount = {N}\nrtt = {{ normal = [\"30ms\", \"20ms\"] }}"
    ));
    let xs = rtts_ms(&sc);
    assert!(xs.iter().all(|&x| x > 0.0));
    let below = phi(-1.5);
    let d = ks(xs, |x| (phi((x - 30.0) / 20.0) - below) / (1.0 - below));
    assert!(d < KS_CRIT, "KS {d:.4}");
}

#[test]
fn empirical_cdf_sizes_interpolate_between_points() {
    // 20% exactly 1 KB, then linear up to 10 KB at 50% and 100 KB at 100%.
    let sc = scenario(&format!(
        "[[flows]]\ncount = {N}\nrtt = \"50ms\"\n\
         size = {{ cdf = [[\"1KB\", 0.2], [\"10KB\", 0.5], [\"100KB\", 1.0]] }}"
    ));
    let sizes: Vec<f64> = sc.flows[0]
        .drawn
        .iter()
        .map(|d| d.sizes[0].bytes as f64)
        .collect();
    let at_1kb = sizes.iter().filter(|&&s| s == 1000.0).count() as f64 / N as f64;
    assert!((at_1kb - 0.2).abs() < 0.035, "mass at 1 KB {at_1kb}");
    let cdf = |x: f64| {
        if x < 1000.0 {
            0.0
        } else if x < 10_000.0 {
            0.2 + 0.3 * (x - 1000.0) / 9000.0
        } else if x < 100_000.0 {
            0.5 + 0.5 * (x - 10_000.0) / 90_000.0
        } else {
            1.0
        }
    };
    // Compare above the atom, where the CDF is continuous.
    let d = ks(sizes.into_iter().filter(|&s| s > 1000.0).collect(), |x| {
        (cdf(x) - 0.2) / 0.8
    });
    assert!(d < 1.95 / (0.8 * N as f64).sqrt(), "KS {d:.4}");
}

#[test]
fn choice_picks_each_value_equally_often() {
    let sc = scenario(&format!(
        "[[flows]]\ncount = {N}\nrtt = {{ choice = [\"20ms\", \"30ms\", \"50ms\", \"100ms\"] }}"
    ));
    let xs = rtts_ms(&sc);
    for v in [20.0, 30.0, 50.0, 100.0] {
        let k = xs.iter().filter(|&&x| x == v).count() as f64;
        // Binomial(2000, 1/4): mean 500, sd 19.4; 5 sd.
        assert!((k - 500.0).abs() < 97.0, "{v} ms drawn {k} times");
    }
}

#[test]
fn udp_rates_are_drawn_too() {
    let sc = scenario(&format!(
        "[[udp]]\ncount = {N}\nrtt = \"50ms\"\nrate = {{ uniform = [\"1Mbps\", \"3Mbps\"] }}"
    ));
    let rates: Vec<f64> = sc.udp[0].drawn.iter().map(|d| d.rate.bps as f64).collect();
    let d = ks(rates, |x| ((x - 1e6) / 2e6).clamp(0.0, 1.0));
    assert!(d < KS_CRIT, "KS {d:.4}");
}

/// Paper 000: each flow starts 30 + U[0,5] s after the previous one, CDG first; the
/// chain runs across groups, and the very first flow starts at 0 s.
#[test]
fn after_previous_chains_across_groups() {
    let gap = "start = { after_previous = { uniform = [\"30s\", \"35s\"] } }";
    let sc = scenario(&format!(
        "[[flows]]\ncount = 2\nrtt = \"50ms\"\n{gap}\n[[flows]]\ncount = 2\nrtt = \"50ms\"\n{gap}"
    ));
    let starts: Vec<u64> = sc
        .flows
        .iter()
        .flat_map(|g| g.drawn.iter().map(|d| d.start.ns))
        .collect();
    assert_eq!(starts[0], 0);
    for w in starts.windows(2) {
        let gap_s = (w[1] - w[0]) as f64 / 1e9;
        assert!(
            (30.0..=35.0).contains(&gap_s),
            "gap {gap_s} s in {starts:?}"
        );
    }
}

#[test]
fn seeds_change_the_draws_and_only_the_seed_does() {
    let flows = "[[flows]]\ncount = 3\nrtt = { uniform = [\"20ms\", \"80ms\"] }";
    let a = scenario(flows);
    let b = scenario(flows);
    assert_eq!(a, b, "same seed, same draws");
    let other = Scenario::from_toml(&format!(
        "duration = \"1000s\"\nseed = 8\n[bottleneck]\nrate = \"10Mbps\"\n{flows}"
    ))
    .unwrap();
    assert_ne!(rtts_ms(&a), rtts_ms(&other));
    // A group added after it does not change its draws (streams per group and field).
    let more = scenario(&format!(
        "{flows}\n[[udp]]\nrate = \"1Mbps\"\nrtt = {{ uniform = [\"20ms\", \"80ms\"] }}"
    ));
    assert_eq!(rtts_ms(&a), rtts_ms(&more));
}

/// Poisson arrivals at 2/s over 1000 s: about 2000 flows, exponential gaps of mean 0.5 s.
#[test]
fn poisson_arrivals_have_exponential_gaps() {
    let sc = scenario(
        "[[flows]]\nrtt = \"50ms\"\nsize = \"10KB\"\n\
         arrivals = { poisson = \"2/s\", start = \"10s\", end = \"1000s\" }",
    );
    let starts: Vec<f64> = sc.flows[0]
        .drawn
        .iter()
        .map(|d| d.start.ns as f64 / 1e9)
        .collect();
    let n = starts.len() as f64;
    // Poisson(1980): sd 44.5.
    assert!((n - 1980.0).abs() < 5.0 * 44.5, "{n} arrivals");
    assert_eq!(sc.flows[0].count as usize, starts.len());
    assert!(starts[0] >= 10.0 && *starts.last().unwrap() < 1000.0);
    let gaps: Vec<f64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
    let d = ks(gaps, |x| 1.0 - (-x / 0.5).exp());
    assert!(d < 1.95 / n.sqrt(), "KS {d:.4}");
}

#[test]
fn bad_values_name_their_key() {
    let cases = [
        (
            "[[flows]]\nrtt = { uniform = [\"50ms\", \"10ms\"] }",
            "flows[0].rtt.uniform",
            "empty range",
        ),
        (
            "[[flows]]\nrtt = { gamma = \"1ms\" }",
            "flows[0].rtt",
            "unknown distribution \"gamma\"",
        ),
        (
            "[[flows]]\nrtt = \"50ms\"\nsize = { cdf = [[\"10KB\", 0.5], [\"1KB\", 1.0]] }",
            "flows[0].size.cdf[1]",
            "must not decrease",
        ),
        (
            "[[flows]]\nrtt = \"50ms\"\nsize = { cdf = [[\"1KB\", 0.5], [\"10KB\", 0.9]] }",
            "flows[0].size.cdf",
            "last point's probability must be 1",
        ),
        (
            "[[flows]]\nrtt = \"50ms\"\nsize = \"1KB\"\narrivals = { poisson = \"0/s\" }",
            "flows[0].arrivals.poisson",
            "positive arrival rate",
        ),
        (
            "[[flows]]\ncount = 2\nrtt = \"50ms\"\narrivals = { poisson = \"1/s\" }",
            "flows[0].count",
            "either count or arrivals",
        ),
        (
            "[[flows]]\nrtt = \"50ms\"\nrepeat = { times = 3 }",
            "flows[0].repeat",
            "need a finite size",
        ),
        (
            "[[flows]]\nrtt = \"50ms\"\nstop = { uniform = [\"1s\", \"2s\"] }",
            "flows[0].stop",
            "expected a duration",
        ),
        (
            "[[flows]]\nrtt = \"50ms\"\nstart = { uniform = [\"1500s\", \"2000s\"] }",
            "flows[0].start",
            "before the end of the run",
        ),
        (
            "[[flows]]\nrtt = \"50ms\"\nstart = { after_previous = { after_previous = \"1s\" } }",
            "flows[0].start.after_previous.after_previous",
            "cannot be nested",
        ),
        (
            "[[flows]]\nrtt = { after_previous = \"1s\" }",
            "flows[0].rtt.after_previous",
            "only allowed for start",
        ),
    ];
    for (flows, path, message) in cases {
        let text =
            format!("duration = \"1000s\"\nseed = 7\n[bottleneck]\nrate = \"10Mbps\"\n{flows}");
        let e = Scenario::from_toml(&text).expect_err(flows);
        assert_eq!(e.path, path, "{flows}: {e}");
        assert!(e.message.contains(message), "{flows}: {e}");
        assert!(!e.to_string().contains('\n'));
    }
}
