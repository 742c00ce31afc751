//! The Gilbert-Elliott two-state loss model, as netem's `loss gemodel p r 1-h 1-k`
//! (Linux `net/sched/sch_netem.c`, `loss_gilb_ell`; Salsano et al., "Definition of a
//! general and intuitive loss model for packet networks and its implementation in the
//! Netem module", 2012). Per packet, in the current state: one draw decides the
//! transition for the next packet (good -> bad with `p`, bad -> good with `r`), a
//! second draw decides this packet's loss with the current state's probability
//! (`loss_good` = 1-k, `loss_bad` = 1-h). The model starts in the good state, as netem's
//! (`clg.state = GOOD_STATE` when configured).

use super::LossModel;
use crate::engine::rng::SimRng;

#[derive(Debug)]
pub struct GilbertElliott {
    p: f64,
    r: f64,
    loss_bad: f64,
    loss_good: f64,
    bad: bool,
}

impl GilbertElliott {
    pub fn new(p: f64, r: f64, loss_bad: f64, loss_good: f64) -> Self {
        GilbertElliott {
            p,
            r,
            loss_bad,
            loss_good,
            bad: false,
        }
    }
}

impl LossModel for GilbertElliott {
    #[inline]
    fn lose(&mut self, rng: &mut SimRng) -> bool {
        // netem draws the transition first, then the loss with the state the packet
        // was sent in (the switch's case), so keep that order and that state.
        let transition = rng.uniform();
        let loss = rng.uniform();
        if self.bad {
            if transition < self.r {
                self.bad = false;
            }
            loss < self.loss_bad
        } else {
            if transition < self.p {
                self.bad = true;
            }
            loss < self.loss_good
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{stream, StreamKind};

    /// Stationary loss rate and mean burst length of the chain, worked from the
    /// transition matrix (not from the simulation): with state s at packet n-1 and s'
    /// at packet n, P(loss) = sum_s pi_s l_s and P(no loss at n-1, loss at n) =
    /// sum_s pi_s (1 - l_s) sum_s' P(s -> s') l_s'; a burst starts at each such pair, so
    /// the mean burst length is their ratio.
    fn stationary(p: f64, r: f64, lb: f64, lg: f64) -> (f64, f64) {
        let (pi_b, pi_g) = (p / (p + r), r / (p + r));
        let loss = pi_g * lg + pi_b * lb;
        let next_loss_from_g = (1.0 - p) * lg + p * lb;
        let next_loss_from_b = r * lg + (1.0 - r) * lb;
        let starts = pi_g * (1.0 - lg) * next_loss_from_g + pi_b * (1.0 - lb) * next_loss_from_b;
        (loss, loss / starts)
    }

    fn measure(p: f64, r: f64, lb: f64, lg: f64, n: usize) -> (f64, f64) {
        let mut m = GilbertElliott::new(p, r, lb, lg);
        let mut rng = stream(11, StreamKind::LinkModel, 7);
        let (mut lost, mut bursts, mut prev) = (0u64, 0u64, false);
        for _ in 0..n {
            let l = m.lose(&mut rng);
            if l {
                lost += 1;
                if !prev {
                    bursts += 1;
                }
            }
            prev = l;
        }
        (lost as f64 / n as f64, lost as f64 / bursts as f64)
    }

    fn within(measured: f64, reference: f64, tol: f64) -> bool {
        (measured / reference - 1.0).abs() <= tol
    }

    #[test]
    fn loss_rate_and_burst_length_match_the_stationary_values() {
        // Simple Gilbert (netem `gemodel 2% 25%`), and a full Gilbert-Elliott with
        // losses in both states.
        for &(p, r, lb, lg) in &[(0.02, 0.25, 1.0, 0.0), (0.05, 0.3, 0.8, 0.01)] {
            let (loss_ref, burst_ref) = stationary(p, r, lb, lg);
            let (loss, burst) = measure(p, r, lb, lg, 1_000_000);
            eprintln!(
                "GE p={p} r={r} 1-h={lb} 1-k={lg}: loss {loss:.5} (stationary {loss_ref:.5}), \
                 mean burst {burst:.4} (stationary {burst_ref:.4})"
            );
            assert!(within(loss, loss_ref, 0.03), "loss {loss} vs {loss_ref}");
            assert!(
                within(burst, burst_ref, 0.03),
                "burst {burst} vs {burst_ref}"
            );
            // A model 10 % off in r would be told apart: its stationary values differ by
            // more than the tolerance.
            let (loss_off, burst_off) = stationary(p, r * 1.1, lb, lg);
            assert!(!within(loss, loss_off, 0.03) || !within(burst, burst_off, 0.03));
        }
    }

    #[test]
    fn mean_loss_and_burst_form_maps_onto_the_model() {
        // mean_loss 3 %, mean_burst 4: r = 1/4, p = 0.03 r / 0.97 (scenario::link_model).
        let (mean_loss, mean_burst) = (0.03, 4.0);
        let r = 1.0 / mean_burst;
        let p = mean_loss * r / (1.0 - mean_loss);
        let (loss, burst) = measure(p, r, 1.0, 0.0, 1_000_000);
        assert!(within(loss, mean_loss, 0.03), "loss {loss}");
        assert!(within(burst, mean_burst, 0.03), "burst {burst}");
    }
}
