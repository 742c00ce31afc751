//! Link models written on a link (`bottleneck.loss`, `bottleneck.reverse_loss`,
//! `[[network.links]] loss`): random loss on the wire, after the queue; and delay jitter
//! (`bottleneck.jitter`, `bottleneck.reverse_jitter`, `[[network.links]] jitter`), see
//! [`resolve_jitter`].
//!
//! ```toml
//! loss = 0.01                                              # Bernoulli, 1 %
//! loss = { kind = "bernoulli", p = 0.01 }                  # the same
//! loss = { kind = "gilbert_elliott", p = 0.01, r = 0.3 }   # netem `loss gemodel 1% 30%`
//! loss = { kind = "gilbert_elliott", p = 0.01, r = 0.3, loss_bad = 0.9, loss_good = 0.001 }
//! loss = { kind = "gilbert_elliott", mean_loss = 0.02, mean_burst = 3 }
//! ```
//!
//! `gilbert_elliott` follows netem's `gemodel` (iproute2 `tc-netem(8)`: `loss gemodel p
//! [r [1-h [1-k]]]`; the kernel's `loss_gilb_ell` in `net/sched/sch_netem.c`): `p` is the
//! good-to-bad transition probability, `r` bad-to-good, `loss_bad` = 1-h the loss
//! probability in the bad state, `loss_good` = 1-k in the good state. Defaults as
//! iproute2's: `r = 1 - p`, `loss_bad = 1`, `loss_good = 0`. The `mean_loss` +
//! `mean_burst` form is the simple Gilbert model (`loss_bad = 1`, `loss_good = 0`) with
//! `r = 1 / mean_burst` and `p = mean_loss * r / (1 - mean_loss)`, whose stationary
//! loss rate is `p / (p + r)` and mean burst `1 / r`.

use super::{error, join, AlgoSpec, ParamValue, ScenarioError};

/// A link's random loss model, validated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LossSpec {
    /// Each packet lost independently with probability `p`.
    Bernoulli { p: f64 },
    /// netem's two-state Gilbert-Elliott model (see the module doc).
    GilbertElliott {
        p: f64,
        r: f64,
        loss_bad: f64,
        loss_good: f64,
    },
}

impl LossSpec {
    /// The long-run fraction of packets lost.
    pub fn mean_loss(&self) -> f64 {
        match *self {
            LossSpec::Bernoulli { p } => p,
            LossSpec::GilbertElliott {
                p,
                r,
                loss_bad,
                loss_good,
            } => {
                if p + r == 0.0 {
                    return loss_good; // never leaves the good state it starts in
                }
                let bad = p / (p + r);
                bad * loss_bad + (1.0 - bad) * loss_good
            }
        }
    }
}

const LOSS_KINDS: &str = "\"bernoulli\" or \"gilbert_elliott\"";

/// A probability in [0, 1] under `path`.
fn probability(v: &ParamValue, path: &str) -> Result<f64, ScenarioError> {
    match v {
        ParamValue::Number(x) if (0.0..=1.0).contains(x) => Ok(*x),
        other => Err(error(
            path,
            format!(
                "expected a probability between 0 and 1, got {}",
                show(other)
            ),
        )),
    }
}

fn show(v: &ParamValue) -> String {
    match v {
        ParamValue::Number(x) => format!("{x}"),
        ParamValue::Bool(b) => format!("{b}"),
        ParamValue::Str(s) => format!("{s:?}"),
    }
}

/// Validate a loss written at `path` (a number is already `{ kind = "bernoulli", p }`).
pub(super) fn resolve_loss(spec: &AlgoSpec, path: &str) -> Result<LossSpec, ScenarioError> {
    let allowed: &[&str] = match spec.kind.as_str() {
        "bernoulli" => &["p"],
        "gilbert_elliott" | "gemodel" => {
            &["p", "r", "loss_bad", "loss_good", "mean_loss", "mean_burst"]
        }
        other => {
            return Err(error(
                join(path, "kind"),
                format!("expected {LOSS_KINDS}, got {other:?}"),
            ))
        }
    };
    if let Some(k) = spec.params.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(error(
            join(path, k),
            format!("unknown key for loss kind {:?}", spec.kind),
        ));
    }
    let get = |k: &str| -> Result<Option<f64>, ScenarioError> {
        spec.params
            .get(k)
            .map(|v| probability(v, &join(path, k)))
            .transpose()
    };
    if spec.kind == "bernoulli" {
        let p = get("p")?.ok_or_else(|| error(join(path, "p"), "missing (a probability)"))?;
        return Ok(LossSpec::Bernoulli { p });
    }
    if spec.params.contains_key("mean_loss") || spec.params.contains_key("mean_burst") {
        return burst_form(spec, path);
    }
    let p = get("p")?.ok_or_else(|| {
        error(
            join(path, "p"),
            "missing (the good-to-bad probability; or give mean_loss and mean_burst)",
        )
    })?;
    let r = get("r")?.unwrap_or(1.0 - p);
    let loss_bad = get("loss_bad")?.unwrap_or(1.0);
    let loss_good = get("loss_good")?.unwrap_or(0.0);
    if p > 0.0 && r == 0.0 && loss_bad > 0.0 {
        return Err(error(
            join(path, "r"),
            "must be > 0: with r = 0 the model never leaves the bad (loss) state",
        ));
    }
    Ok(LossSpec::GilbertElliott {
        p,
        r,
        loss_bad,
        loss_good,
    })
}

/// `mean_loss` + `mean_burst`: the simple Gilbert model with those stationary values.
fn burst_form(spec: &AlgoSpec, path: &str) -> Result<LossSpec, ScenarioError> {
    for k in ["p", "r", "loss_bad", "loss_good"] {
        if spec.params.contains_key(k) {
            return Err(error(
                join(path, k),
                "give either p, r, loss_bad, loss_good or mean_loss and mean_burst, not both",
            ));
        }
    }
    let need = |k: &str, what: &str| {
        spec.params
            .get(k)
            .ok_or_else(|| error(join(path, k), format!("missing ({what})")))
    };
    let mean_loss = probability(
        need("mean_loss", "the long-run loss fraction")?,
        &join(path, "mean_loss"),
    )?;
    let burst_path = join(path, "mean_burst");
    let mean_burst = match need("mean_burst", "the mean number of packets lost in a row")? {
        ParamValue::Number(b) if b.is_finite() && *b >= 1.0 => *b,
        other => {
            return Err(error(
                burst_path,
                format!("expected a number of packets >= 1, got {}", show(other)),
            ))
        }
    };
    if mean_loss >= 1.0 {
        return Err(error(
            join(path, "mean_loss"),
            "must be < 1 with a finite mean_burst",
        ));
    }
    let r = 1.0 / mean_burst;
    let p = mean_loss * r / (1.0 - mean_loss);
    if p > 1.0 {
        return Err(error(
            join(path, "mean_loss"),
            format!(
                "{mean_loss} cannot be reached with bursts of {mean_burst} packets \
                 (needs a good-to-bad probability of {p:.3} > 1); lengthen mean_burst"
            ),
        ));
    }
    Ok(LossSpec::GilbertElliott {
        p,
        r,
        loss_bad: 1.0,
        loss_good: 0.0,
    })
}

/// A link's `loss` key as written, validated (`path`: `bottleneck.loss`).
pub(super) fn resolve_raw_loss(
    raw: super::raw::RawLoss,
    path: &str,
) -> Result<LossSpec, ScenarioError> {
    use super::lit::Lit;
    use super::raw::RawLoss;
    match raw {
        RawLoss::Table(spec) => resolve_loss(&spec, path),
        RawLoss::Probability(lit) => {
            let p = match lit {
                Lit::U(v) => v as f64,
                Lit::I(v) => v as f64,
                Lit::F(v) => v,
                _ => f64::NAN,
            };
            if (0.0..=1.0).contains(&p) {
                Ok(LossSpec::Bernoulli { p })
            } else {
                Err(error(
                    path,
                    format!("expected a loss probability between 0 and 1, got {lit}"),
                ))
            }
        }
    }
}

/// A link's delay jitter, validated (see `crate::net::link_model::jitter`).
#[derive(Debug, Clone, PartialEq)]
pub struct JitterSpec {
    /// Extra propagation delay per packet, ns; never negative (durations are unsigned,
    /// the normal distribution is truncated at 0).
    pub dist: super::Dist,
    /// Packets may overtake one another (netem's default); false: each packet arrives no
    /// earlier than the one sent before it on the link.
    pub reorder: bool,
    /// netem's `reorder P`: the probability that a packet skips its jitter (and so
    /// overtakes the packets it still holds). Needs `reorder`.
    pub reorder_probability: f64,
}

/// A link's `jitter` key as written, validated (`path`: `bottleneck.jitter`):
///
/// ```toml
/// jitter = { dist = { uniform = ["0ms", "10ms"] } }                  # reorders (netem)
/// jitter = { dist = { normal = ["5ms", "2ms"] }, reorder = false }   # keeps the order
/// jitter = { dist = { cdf = [["0ms", 0.5], ["20ms", 1.0]] } }        # empirical
/// jitter = { dist = "10ms", reorder_probability = 0.25 }             # netem `reorder 25%`
/// ```
pub(super) fn resolve_jitter(
    raw: super::raw::RawJitter,
    path: &str,
) -> Result<JitterSpec, ScenarioError> {
    let dist = raw.dist.resolve(&join(path, "dist"))?;
    let reorder = raw.reorder.is_none_or(|g| g.value.0);
    let reorder_probability = raw.reorder_probability.map_or(0.0, |g| g.value.0);
    if !reorder && reorder_probability > 0.0 {
        return Err(error(
            join(path, "reorder_probability"),
            "reorders packets, which reorder = false forbids: give one or the other",
        ));
    }
    Ok(JitterSpec {
        dist,
        reorder,
        reorder_probability,
    })
}

/// When a trace-driven link takes its next packet from the queue (`trace_dequeue`).
///
/// The two differ only in where the wait for a delivery opportunity is counted: as
/// queueing delay (what the queue discipline sees as sojourn, and what mm-link's
/// queue-delay graphs show) or as service on the transmitter (what a rate link does with
/// a packet's serialisation time). Departures are the same rule either way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TraceDequeue {
    /// At the opportunity that starts the packet (the default, as Mahimahi does:
    /// `mahimahi/src/packet/link_queue.cc`, `LinkQueue::rationalize` dequeues a packet
    /// when an opportunity begins delivering it), so an outage's wait is sojourn.
    #[default]
    Opportunity,
    /// As soon as the transmitter is free, as on a rate link: the head packet then waits
    /// on the transmitter for the opportunity that carries it, so a trace of one
    /// opportunity per millisecond shows the sojourn of a 12 Mbit/s link.
    LinkFree,
}

/// A Mahimahi trace file under `path` (`bottleneck.trace`), read and checked now so that
/// `validate` refuses a missing, empty, non-numeric or decreasing file. A relative name is
/// read from the working directory; `ccsim` and `ccsim.run` make a scenario file's
/// relative trace paths absolute from the file's directory before the core sees them.
pub(super) fn resolve_trace(
    given: Option<&super::lit::Given<super::raw::FilePath>>,
    path: &str,
) -> Result<Option<std::sync::Arc<crate::net::link_model::mahimahi::MahimahiTrace>>, ScenarioError>
{
    let Some(g) = given else { return Ok(None) };
    crate::net::link_model::mahimahi::MahimahiTrace::from_file(std::path::Path::new(&g.value.0))
        .map(|t| Some(std::sync::Arc::new(t)))
        .map_err(|e| error(path, format!("expected a Mahimahi trace file: {e}")))
}

/// `trace_dequeue` under `prefix`: only where a trace drives a link (`traced`).
pub(super) fn resolve_trace_dequeue(
    given: Option<super::lit::Given<TraceDequeue>>,
    traced: bool,
    prefix: &str,
) -> Result<TraceDequeue, ScenarioError> {
    match given {
        None => Ok(TraceDequeue::default()),
        Some(_) if !traced => Err(error(
            join(prefix, "trace_dequeue"),
            "only with a trace (trace or reverse_trace)",
        )),
        Some(g) => Ok(g.value),
    }
}
