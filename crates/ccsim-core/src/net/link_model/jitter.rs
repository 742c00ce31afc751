//! Delay jitter: each packet leaving a link propagates for the link's delay plus an extra
//! delay drawn from a distribution, after Linux netem (`net/sched/sch_netem.c`):
//!
//! - netem draws each packet's delay (`tabledist`) and files the packet by its
//!   `time_to_send` in a time-ordered queue (`tfifo_enqueue`, an rbtree), so a packet whose
//!   draw is shorter than its predecessor's by more than their spacing overtakes it:
//!   jitter reorders, netem's default. Here the packet is inserted in its link's
//!   [`crate::net::link::DelayLine`] by arrival time, which orders the same way.
//! - With netem's `rate` set, `netem_enqueue` takes the last queued packet's
//!   `time_to_send` as the reference and clamps the remaining delay at 0
//!   (`delay -= last->time_to_send - now; delay = max_t(s64, 0, delay)`): a packet leaves
//!   no earlier than the one before it, and nothing is reordered. `reorder = false` is
//!   that rule: arrival = max(own draw, the previous packet's arrival).
//! - netem's `reorder P` (with gap 1, as iproute2 sets it when no `gap` is given) sends a
//!   packet at once, without its delay draw, with probability P (`q->reorder <
//!   get_crandom(..)` fails, the packet goes to the head). `reorder_probability` is that:
//!   the packet skips its jitter, and overtakes whatever the jitter still holds.
//!
//! The draws come from the link's own stream ([`StreamKind::LinkJitter`]), apart from its
//! loss model's, so adding jitter to one link moves no other draw of the run, and a link
//! without jitter draws nothing. Durations cannot be negative (a scenario duration is
//! unsigned and the normal distribution is truncated at 0), so no draw can make a packet
//! arrive before its transmission ends.

use crate::engine::rng::{stream, SimRng, StreamKind};
use crate::scenario::{Dist, JitterSpec};

/// A link's jitter model with its random stream.
#[derive(Debug)]
pub struct LinkJitter {
    /// Extra delay per packet, ns (never negative).
    dist: Dist,
    /// Packets may overtake one another (netem's default); false: arrivals in send order.
    reorder: bool,
    /// netem's `reorder P`: the probability that a packet skips its jitter draw.
    skip_probability: f64,
    rng: SimRng,
    /// The latest arrival handed out (kept for `reorder = false`).
    last_arrive_ns: u64,
}

impl LinkJitter {
    /// The jitter `spec` of link number `link` in a run with `seed`.
    pub fn new(spec: &JitterSpec, seed: u64, link: u64) -> Self {
        LinkJitter {
            dist: spec.dist.clone(),
            reorder: spec.reorder,
            skip_probability: spec.reorder_probability,
            rng: stream(seed, StreamKind::LinkJitter, link),
            last_arrive_ns: 0,
        }
    }

    /// When a packet reaches the far end, given the time it would without jitter (its
    /// transmission's end plus the link's propagation delay).
    #[inline]
    pub fn arrival_ns(&mut self, unjittered_ns: u64) -> u64 {
        // The skip draw is made only when the knob is set, so a link without it draws
        // exactly one jitter value per packet.
        let skip = self.skip_probability > 0.0 && self.rng.uniform() < self.skip_probability;
        let extra_ns = if skip {
            0
        } else {
            // Non-negative by construction (see the module doc); `as` saturates.
            self.dist.sample(&mut self.rng).round() as u64
        };
        let mut arrive = unjittered_ns.saturating_add(extra_ns);
        if !self.reorder {
            arrive = arrive.max(self.last_arrive_ns);
            self.last_arrive_ns = arrive;
        }
        arrive
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jitter(dist: Dist, reorder: bool, p: f64) -> LinkJitter {
        let spec = JitterSpec {
            dist,
            reorder,
            reorder_probability: p,
        };
        LinkJitter::new(&spec, 5, 0)
    }

    /// Packets sent every `gap` ns through uniform jitter on [0, w): the arrivals, in send
    /// order.
    fn arrivals(j: &mut LinkJitter, gap: u64, n: u64) -> Vec<u64> {
        (0..n).map(|k| j.arrival_ns(k * gap)).collect()
    }

    #[test]
    fn without_reordering_arrivals_never_decrease() {
        let mut j = jitter(
            Dist::Uniform {
                low: 0.0,
                high: 10e6,
            },
            false,
            0.0,
        );
        let a = arrivals(&mut j, 1_000_000, 100_000);
        assert!(a.windows(2).all(|w| w[0] <= w[1]));
        // And the clamp only ever delays: no arrival precedes its unjittered time.
        assert!(a
            .iter()
            .enumerate()
            .all(|(k, &t)| t >= k as u64 * 1_000_000));
    }

    /// With uniform jitter on [0, w] and packets `g` apart (g < w), packet k+1 arrives
    /// before packet k when J(k+1) < J(k) - g: for independent uniforms the probability
    /// is (w - g)^2 / (2 w^2). Counted over 10^6 pairs the fraction is within 5 standard
    /// errors of it; a jitter width 10 % off moves it by far more.
    #[test]
    fn adjacent_overtakes_match_the_uniform_model() {
        let (w, g) = (10e6, 2e6);
        let mut j = jitter(Dist::Uniform { low: 0.0, high: w }, true, 0.0);
        let n = 1_000_000;
        let a = arrivals(&mut j, g as u64, n);
        let overtaken = a.windows(2).filter(|p| p[1] < p[0]).count() as f64 / (n - 1) as f64;
        let model = |w: f64| (w - g).powi(2) / (2.0 * w * w);
        // Adjacent pairs share a packet, so the count is not binomial; its variance is
        // below 3 x binomial (1-dependence), which 5 binomial sigmas x sqrt(3) covers.
        let se = (model(w) * (1.0 - model(w)) / n as f64).sqrt() * 3f64.sqrt();
        assert!(
            (overtaken - model(w)).abs() < 5.0 * se,
            "overtaken {overtaken:.5}, model {:.5}",
            model(w)
        );
        for off in [0.9, 1.1] {
            assert!(
                (overtaken - model(off * w)).abs() > 5.0 * se,
                "a {off} x jitter width is not told apart"
            );
        }
    }

    #[test]
    fn skip_probability_sends_that_fraction_without_jitter() {
        let mut j = jitter(Dist::Fixed(10e6), true, 0.25);
        let n = 200_000;
        let skipped = (0..n).filter(|_| j.arrival_ns(0) == 0).count() as f64 / n as f64;
        // Binomial sigma sqrt(0.25 0.75 / n) ~ 0.001; allow 5.
        assert!((skipped - 0.25).abs() < 0.005, "skipped {skipped}");
    }

    #[test]
    fn the_mean_extra_delay_is_the_distribution_mean() {
        let d = Dist::Normal { mean: 5e6, sd: 2e6 };
        let want = d.mean();
        let mut j = jitter(d, true, 0.0);
        let n = 400_000;
        let mean = (0..n).map(|_| j.arrival_ns(0) as f64).sum::<f64>() / n as f64;
        // sd <= 2 ms, standard error <= 3.2 us; allow 5.
        assert!((mean - want).abs() < 16e3, "mean {mean}, model {want}");
        assert!((want - 5e6).abs() < 0.01 * 5e6); // truncation at 0 barely moves it
    }
}
