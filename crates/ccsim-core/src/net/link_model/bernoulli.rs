//! Independent (Bernoulli) loss: each packet lost with probability `p`, as netem's
//! `loss random PERCENT` without correlation (`loss_event`, `CLG_RANDOM`, in Linux
//! `net/sched/sch_netem.c`) and ns-3's `RateErrorModel` in packet units.

use super::LossModel;
use crate::engine::rng::SimRng;

#[derive(Debug)]
pub struct Bernoulli {
    p: f64,
}

impl Bernoulli {
    pub fn new(p: f64) -> Self {
        Bernoulli { p }
    }
}

impl LossModel for Bernoulli {
    #[inline]
    fn lose(&mut self, rng: &mut SimRng) -> bool {
        // One draw per packet whatever p is, so the stream's position depends only on
        // the number of packets sent.
        rng.uniform() < self.p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{stream, StreamKind};

    #[test]
    fn loss_fraction_is_p() {
        let mut m = Bernoulli::new(0.02);
        let mut rng = stream(3, StreamKind::LinkModel, 0);
        let n = 1_000_000;
        let lost = (0..n).filter(|_| m.lose(&mut rng)).count();
        // Binomial standard deviation sqrt(n p (1-p)) = 140 packets; allow 5 sigma.
        let expect = 0.02 * n as f64;
        assert!((lost as f64 - expect).abs() < 700.0, "lost {lost} of {n}");
    }
}
