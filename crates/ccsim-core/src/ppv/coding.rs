//! Logarithmic 16-bit coding of packet values (ccsim paper 001 §3: "We code PV
//! logarithmically to 2 octets (v = ⌈log(PV)/log(PV_max) × 65535⌉) ... PV = 0 is coded
//! to v = 0").
//!
//! The paper does not give `PV_max`. ccsim uses [`PV_MAX`] = 10¹⁰, the top of the value
//! scale of its TVF presets ([`super::tvf`]): consecutive codes then differ by a factor
//! `PV_MAX^(1/65535)` ≈ 1.000351 (0.035%).
//!
//! Departures: values outside the coded range saturate: PV ≥ `PV_MAX` codes to 65535 and
//! 0 < PV ≤ 1 to 0 (the same code as "unmarked"); TVFs are validated to stay within
//! [1, `PV_MAX`], so markers never produce such values.

/// The largest packet value, coded as 65535.
pub const PV_MAX: f64 = 1e10;

/// The largest code.
pub const V_MAX: u16 = u16::MAX;

/// Code a packet value: `⌈ln(pv)/ln(PV_MAX) · 65535⌉`, 0 for `pv ≤ 1` (and NaN),
/// 65535 for `pv ≥ PV_MAX`. Monotone non-decreasing. (The ceiling ignores excesses
/// below 10⁻⁹ of a code step, which are floating-point error.)
#[inline]
pub fn encode(pv: f64) -> u16 {
    if pv.is_nan() || pv <= 1.0 {
        return 0;
    }
    if pv >= PV_MAX {
        return V_MAX;
    }
    // A tolerance of 1e-9 code steps absorbs floating-point error, so that
    // `encode(decode(v)) == v` for every code.
    let x = (pv.ln() / PV_MAX.ln() * V_MAX as f64 - 1e-9).ceil();
    x.clamp(0.0, V_MAX as f64) as u16
}

/// The packet value a code stands for: `PV_MAX^(v/65535)`, 0 for `v = 0`. Strictly
/// increasing; `decode(encode(pv)) ≥ pv` and within one code step (×1.000351) of it.
#[inline]
pub fn decode(v: u16) -> f64 {
    if v == 0 {
        return 0.0;
    }
    (PV_MAX.ln() * v as f64 / V_MAX as f64).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coding_is_monotone_and_round_trips() {
        let step = PV_MAX.powf(1.0 / 65535.0);
        assert!((step - 1.000_351_4).abs() < 1e-6);
        assert_eq!(encode(0.0), 0);
        assert_eq!(encode(1.0), 0);
        assert_eq!(encode(PV_MAX), 65535);
        assert_eq!(decode(0), 0.0);
        assert!((decode(65535) - PV_MAX).abs() / PV_MAX < 1e-12);
        // sqrt(PV_MAX) = 1e5 codes to the middle: ceil(0.5 · 65535) = 32768.
        assert_eq!(encode(1e5), 32768);
        let mut prev = 0u16;
        let mut pv = 1.0001;
        while pv < PV_MAX {
            let v = encode(pv);
            assert!(v >= prev, "not monotone at {pv}");
            let back = decode(v);
            assert!(back >= pv * (1.0 - 1e-12), "{pv} -> {v} -> {back}");
            assert!(back <= pv * step * (1.0 + 1e-12), "{pv} -> {v} -> {back}");
            prev = v;
            pv *= 1.37;
        }
        for v in 1..=65535u16 {
            assert!(decode(v) > decode(v - 1));
            assert_eq!(encode(decode(v)), v, "code {v} does not round-trip");
        }
    }
}
