//! Throughput-Value Functions (TVFs): the operator policy of PPV.
//!
//! A TVF `V(x)` gives the packet value of the traffic at throughput `x` (bps); "for any
//! throughput value b, the traffic up to b shall receive a PV of V(b) or higher" (ccsim
//! paper 001 §2). At congestion threshold value `c`, a flow's desired throughput is the
//! largest `x` with `V(x) ≥ c` ([`Tvf::throughput_at`]).
//!
//! Representation: points `(rate_bps, value)` with rates non-decreasing (> 0) and values
//! non-increasing in [1, [`PV_MAX`]]; between points `V` is a straight line on log-log
//! axes (a power law), as Fig. 1 of paper 001 is drawn on "log-log scale"; below the
//! first point `V` is the first value and beyond the last point the last value. Two
//! points at the same rate make a vertical step; at the step rate itself `V` takes the
//! lower value (right-continuous).
//!
//! **Presets (paper 001, Fig. 1).** The figure itself is not in the text; the presets
//! are derived from its prose (§2) and are exact for every statement there:
//! - "Until Silver flows reach 10 Mbps, Gold flows get twice the throughput of Silver
//!   ones (I.). When the throughput of Silver flows is above 10 Mbps Gold flows get 4
//!   times the throughput (III.). In between Silver flows get 10 Mbps and Gold flows get
//!   the rest (which will be between 20 Mbps and 40 Mbps) (II.) ... the Silver policy
//!   pretends the behavior of a rate limiter at 10 Mbps."
//!   With a base curve `f(x) = 10¹²/x` (slope −1 on log-log axes; an assumption):
//!   `gold(x) = f(x/2)`; `silver(x) = f(x)` below 10 Mbps and `f(2x)` above, i.e. a
//!   vertical drop by a factor 2 at 10 Mbps. Then for every level `c`,
//!   gold⁻¹(c) = 2·silver⁻¹(c) while silver⁻¹(c) < 10 Mbps, = 4·silver⁻¹(c) above, and
//!   for `c` inside Silver's step, Silver gets exactly 10 Mbps and Gold 20–40 Mbps.
//!   Points: gold (2 kbps, 10⁹) – (100 Gbps, 20); silver (1 kbps, 10⁹) – (10 Mbps, 10⁵)
//!   – (10 Mbps, 5·10⁴) – (100 Gbps, 5).
//! - "Voice has strict priority up to 64 kbps": [`PV_MAX`] (above every other preset)
//!   up to 64 kbps, then the lowest value 1.
//! - "a background traffic class that has a small share of moderate PV to keep
//!   connectivity going, but receives larger bandwidth only if there is little or no
//!   congestion": 10⁵ (Silver's value at 10 Mbps) up to 100 kbps, then a drop to 10³
//!   falling as `10⁸/x` to 1 at 100 Mbps. The 100 kbps share and the levels are
//!   ccsim's choice.

use super::coding::PV_MAX;

/// A throughput-value function.
#[derive(Debug, Clone, PartialEq)]
pub struct Tvf {
    /// (rate bps, value), rates non-decreasing, values non-increasing.
    points: Vec<(f64, f64)>,
}

/// The preset names of [`Tvf::preset`].
pub const PRESETS: &[&str] = &["gold", "silver", "background", "voice"];

impl Tvf {
    /// A TVF through `points` (`(rate_bps, value)`). Errors name the offending index:
    /// `points[2]: value 5e4 is above the previous point's value 3e4 (a TVF must be
    /// non-increasing)`.
    pub fn from_points(points: &[(f64, f64)]) -> Result<Tvf, String> {
        if points.is_empty() {
            return Err("points: expected at least one (rate, value) point".into());
        }
        for (i, &(r, v)) in points.iter().enumerate() {
            if !(r.is_finite() && r > 0.0) {
                return Err(format!(
                    "points[{i}]: expected a positive finite rate in bps, got {r}"
                ));
            }
            if !(v.is_finite() && (1.0..=PV_MAX).contains(&v)) {
                return Err(format!(
                    "points[{i}]: expected a value in [1, {PV_MAX:e}], got {v}"
                ));
            }
            if i > 0 {
                let (pr, pv) = points[i - 1];
                if r < pr {
                    return Err(format!(
                        "points[{i}]: rate {r} is below the previous point's rate {pr} (rates must be non-decreasing)"
                    ));
                }
                if v > pv {
                    return Err(format!(
                        "points[{i}]: value {v} is above the previous point's value {pv} (a TVF must be non-increasing)"
                    ));
                }
            }
        }
        Ok(Tvf {
            points: points.to_vec(),
        })
    }

    /// One of [`PRESETS`] (see the module documentation for their derivation).
    pub fn preset(name: &str) -> Option<Tvf> {
        let pts: &[(f64, f64)] = match name {
            "gold" => &[(2e3, 1e9), (1e11, 20.0)],
            "silver" => &[(1e3, 1e9), (1e7, 1e5), (1e7, 5e4), (1e11, 5.0)],
            "background" => &[(1e5, 1e5), (1e5, 1e3), (1e8, 1.0)],
            "voice" => &[(64e3, PV_MAX), (64e3, 1.0)],
            _ => return None,
        };
        Some(Tvf::from_points(pts).expect("presets are valid"))
    }

    /// The points.
    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    /// `V(x)` for a throughput `x` in bps.
    pub fn value(&self, x: f64) -> f64 {
        let pts = &self.points;
        // First point strictly to the right of x.
        let j = pts.partition_point(|&(r, _)| r <= x);
        if j == 0 {
            return pts[0].1;
        }
        if j == pts.len() {
            return pts[j - 1].1;
        }
        let (r0, v0) = pts[j - 1];
        let (r1, v1) = pts[j];
        // r0 <= x < r1, so r0 < r1.
        let t = (x / r0).ln() / (r1 / r0).ln();
        (v0.ln() + t * (v1 / v0).ln()).exp()
    }

    /// The desired throughput at congestion threshold value `c`: the largest `x` with
    /// `V(x) ≥ c` (the measure of `{x : V(x) ≥ c}`); 0 if even `V(0) < c`, infinite if
    /// the last value is ≥ `c`.
    pub fn throughput_at(&self, c: f64) -> f64 {
        let pts = &self.points;
        if pts[0].1 < c {
            return 0.0;
        }
        if pts[pts.len() - 1].1 >= c {
            return f64::INFINITY;
        }
        // Last point with value ≥ c; the next one has value < c.
        let k = pts
            .iter()
            .rposition(|&(_, v)| v >= c)
            .expect("first value ≥ c");
        let (r0, v0) = pts[k];
        let (r1, v1) = pts[k + 1];
        if r1 == r0 {
            return r0;
        }
        // Solve ln c = ln v0 + t·ln(v1/v0) on the log-log segment.
        let t = (c / v0).ln() / (v1 / v0).ln();
        (r0.ln() + t * (r1 / r0).ln()).exp()
    }
}

/// The ideal allocation PPV aims at (paper 001 §2): the congestion threshold value `c`
/// at which the flows' desired throughputs fill `capacity_bps`, and each class's
/// per-flow throughput there. `classes` are `(tvf, flows)`; returns `(c, per-flow bps)`.
/// Found by bisection on `ln c` over `[1, PV_MAX]` (every desired throughput is
/// non-increasing in `c`); when even `c = PV_MAX` over-fills the link, that is returned.
pub fn ideal_shares(classes: &[(&Tvf, u32)], capacity_bps: f64) -> (f64, Vec<f64>) {
    let demand = |c: f64| -> f64 {
        classes
            .iter()
            .map(|(t, n)| f64::from(*n) * t.throughput_at(c))
            .sum()
    };
    if demand(1.0) <= capacity_bps {
        // Everyone gets what its function asks for at the lowest value.
        return (
            1.0,
            classes.iter().map(|(t, _)| t.throughput_at(1.0)).collect(),
        );
    }
    let (mut lo, mut hi) = (0.0f64, PV_MAX.ln());
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if demand(mid.exp()) > capacity_bps {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let c = hi.exp();
    (c, classes.iter().map(|(t, _)| t.throughput_at(c)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
    }

    /// Paper 001 §2, regions I–III of Fig. 1.
    #[test]
    fn gold_silver_shares() {
        let g = Tvf::preset("gold").unwrap();
        let s = Tvf::preset("silver").unwrap();
        // Region I: Silver below 10 Mbps, Gold gets twice Silver.
        for c in [1e6, 3e5, 1.0000001e5, 5e8] {
            let (tg, ts) = (g.throughput_at(c), s.throughput_at(c));
            assert!(ts < 1e7, "c = {c}");
            assert!(close(tg, 2.0 * ts), "c = {c}: gold {tg}, silver {ts}");
        }
        // Region II: Silver held at 10 Mbps, Gold between 20 and 40 Mbps.
        for c in [9.9e4, 7e4, 5.0001e4] {
            let (tg, ts) = (g.throughput_at(c), s.throughput_at(c));
            assert!(close(ts, 1e7), "c = {c}: silver {ts}");
            assert!(tg > 2e7 && tg < 4e7, "c = {c}: gold {tg}");
        }
        // Region III: Silver above 10 Mbps, Gold gets 4 times Silver.
        for c in [5e4, 1e4, 100.0, 21.0] {
            let (tg, ts) = (g.throughput_at(c), s.throughput_at(c));
            assert!(ts >= 1e7, "c = {c}");
            assert!(close(tg, 4.0 * ts), "c = {c}: gold {tg}, silver {ts}");
        }
        // Hand-worked: silver(1 Mbps) = 1e12/1e6 = 1e6; gold(1 Mbps) = 2e12/1e6 = 2e6;
        // silver(20 Mbps) = 1e12/(2·2e7) = 2.5e4.
        assert!(close(s.value(1e6), 1e6));
        assert!(close(g.value(1e6), 2e6));
        assert!(close(s.value(2e7), 2.5e4));
        assert!(close(s.value(1e7), 5e4)); // right-continuous at the step
    }

    /// Paper 001 §4: 5 Gold and 5 Silver flows on 100 Mbps (region I: Silver below
    /// 10 Mbps) share 2:1, so Gold gets 2·100/15 and Silver 100/15 Mbps per flow.
    #[test]
    fn ideal_shares_fill_the_link_in_the_papers_ratio() {
        let g = Tvf::preset("gold").unwrap();
        let s = Tvf::preset("silver").unwrap();
        let (_, x) = ideal_shares(&[(&g, 5), (&s, 5)], 1e8);
        assert!((x[0] - 2e8 / 15.0).abs() < 1.0, "{x:?}");
        assert!((x[1] - 1e8 / 15.0).abs() < 1.0, "{x:?}");
        // Region III (Silver above 10 Mbps): 1 Gold + 1 Silver on 100 Mbps share 4:1.
        let (_, x) = ideal_shares(&[(&g, 1), (&s, 1)], 1e8);
        assert!(
            (x[0] - 8e7).abs() < 1.0 && (x[1] - 2e7).abs() < 1.0,
            "{x:?}"
        );
    }

    #[test]
    fn voice_has_priority_up_to_64kbps() {
        let v = Tvf::preset("voice").unwrap();
        assert_eq!(v.value(0.0), PV_MAX);
        assert_eq!(v.value(63_999.0), PV_MAX);
        assert_eq!(v.value(64_000.0), 1.0);
        for name in ["gold", "silver", "background"] {
            let t = Tvf::preset(name).unwrap();
            assert!(t.value(0.0) < PV_MAX, "{name}");
        }
        assert_eq!(v.throughput_at(1e9), 64e3);
    }

    #[test]
    fn background_gets_little_under_congestion() {
        let b = Tvf::preset("background").unwrap();
        let s = Tvf::preset("silver").unwrap();
        // At Silver's 10 Mbps level (c = 1e5) background keeps 100 kbps.
        assert!(close(b.throughput_at(1e5), 1e5));
        assert_eq!(b.throughput_at(1.5e5), 0.0);
        // Little congestion (c = 10): background 1e8/10 = 10 Mbps, silver 5e11/10 = 50 Gbps.
        assert!(close(b.throughput_at(10.0), 1e7));
        assert!(close(s.throughput_at(10.0), 5e10));
    }

    #[test]
    fn non_monotone_tvf_is_rejected_with_the_index() {
        let e = Tvf::from_points(&[(1e3, 100.0), (1e4, 50.0), (1e5, 60.0)]).unwrap_err();
        assert!(e.starts_with("points[2]: value 60"), "{e}");
        assert!(e.contains("non-increasing"), "{e}");
        let e = Tvf::from_points(&[(1e3, 100.0), (1e2, 50.0)]).unwrap_err();
        assert!(e.starts_with("points[1]: rate 100"), "{e}");
        let e = Tvf::from_points(&[(1e3, 0.5)]).unwrap_err();
        assert!(e.starts_with("points[0]: expected a value"), "{e}");
        assert!(Tvf::from_points(&[]).is_err());
    }
}
