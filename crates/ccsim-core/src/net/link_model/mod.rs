//! Link models: what a link does to a packet between its transmitter and the far end:
//! random loss and delay jitter ([`jitter`]). Random loss happens "on the wire": the
//! packet has been dequeued and serialised (it occupied the link and counts in its
//! utilisation), then it is lost instead of propagating. Such losses are counted apart
//! from the queue's drops (`QueueStats::losses`, `FlowCounters::lost`), so "drops" keeps
//! meaning what the queue discipline or its buffer discarded.
//!
//! Each lossy link draws from its own random stream ([`StreamKind::LinkModel`], indexed
//! by the link), so adding a loss model to one link changes no other draw of the run.

pub mod bernoulli;
pub mod gilbert_elliott;
pub mod jitter;
pub mod mahimahi;

pub use jitter::LinkJitter;

use crate::engine::rng::{stream, SimRng, StreamKind};
use crate::scenario::LossSpec;

/// A random loss process over the packets a link sends, one decision per packet.
pub trait LossModel: std::fmt::Debug + Send {
    /// Whether the next packet is lost, drawing from `rng`.
    fn lose(&mut self, rng: &mut SimRng) -> bool;
}

/// A link's loss model with its random stream.
#[derive(Debug)]
pub struct LinkLoss {
    model: Box<dyn LossModel>,
    rng: SimRng,
}

impl LinkLoss {
    /// The loss model `spec` of link number `link` in a run with `seed`.
    pub fn new(spec: &LossSpec, seed: u64, link: u64) -> Self {
        let model: Box<dyn LossModel> = match *spec {
            LossSpec::Bernoulli { p } => Box::new(bernoulli::Bernoulli::new(p)),
            LossSpec::GilbertElliott {
                p,
                r,
                loss_bad,
                loss_good,
            } => Box::new(gilbert_elliott::GilbertElliott::new(
                p, r, loss_bad, loss_good,
            )),
        };
        LinkLoss {
            model,
            rng: stream(seed, StreamKind::LinkModel, link),
        }
    }

    /// Whether the packet now leaving the transmitter is lost on the wire.
    #[inline]
    pub fn lose(&mut self) -> bool {
        self.model.lose(&mut self.rng)
    }
}
