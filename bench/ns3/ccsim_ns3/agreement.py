"""When two systems agree on a metric measured over paired runs: the statistical rule of
issue 35, for any comparison of ccsim with a reference (ns-3 here; the kernel for a
future ``bench/LINUX.md``).

Nothing here knows about ns-3 or about which metric is which: the inputs are two
sequences of per-run values, run i of one side paired with run i of the other (same
scenario, same perturbation of starts and RTTs, same seed), and a tolerance. The module
imports only the standard library and numpy, so another harness can import it as it is.

The rule (``verdict``), in the metric's unit, with ``d`` the paired mean difference,
``h`` the half-width of its 95 % confidence interval and ``tol`` the target (the band
is ``[-tol, +tol]``):

1. ``|d| <= tol``: within the target, whatever the interval;
2. else, with an interval (n >= 2 pairs): agreement when the interval
   ``[d - h, d + h]`` overlaps the band (``|d| - h <= tol``) and is no wider than three
   times the band (``2h <= 3 * 2 tol``, i.e. ``h <= 3 tol``): the data cannot tell the
   difference from one inside the target, and they were precise enough to have told a
   difference of a few tolerances;
3. otherwise outside. A wide interval never rescues a miss, so the rule can still fail:
   too few or too noisy runs leave a miss a miss.

With one pair (n = 1) there is no interval and only the target applies. With zero
variance (identical differences in every pair, e.g. deterministic runs) the interval
has width 0 and the rule reduces to the target.

The interval is Student's: ``d +- t(0.975, n - 1) * s / sqrt(n)``, ``s`` the sample
standard deviation of the per-pair values, ``t`` the quantile of the t distribution
with n - 1 degrees of freedom (``t_quantile``: exact for whole degrees of freedom, from
Abramowitz & Stegun 26.7.3-4; scipy is not a dependency). For an absolute metric the
per-pair values are the differences ``other_i - reference_i`` (``mean_difference``).
For a metric compared relatively, as ``other / reference - 1`` of two ratios of sums
(a drop probability from summed drops and arrivals; a mean share, with unit
denominators), the per-pair values are the linearised influences of each pair on that
ratio (the delta method; Cochran, *Sampling Techniques*, 3rd ed., 1977, section 6.4,
the ratio estimator's variance), ``relative_difference``: the point estimate stays the
ratio of the pooled figures, so the interval is centred on the value the report shows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

CONFIDENCE = 0.95
# an interval that overlaps the band agrees only when no wider than this many bands
MAX_WIDTH_IN_BANDS = 3.0

WITHIN = "within target"
OVERLAP = "interval overlaps"
OUTSIDE = "outside"
# verdicts from best to worst (a metric over several groups takes its worst group's)
VERDICTS = (WITHIN, OVERLAP, OUTSIDE)


def t_two_sided_probability(t: float, df: int) -> float:
    """P(|T| <= t) for Student's t with ``df`` (whole) degrees of freedom: Abramowitz &
    Stegun (1964) 26.7.3 (odd df) and 26.7.4 (even df), finite sums, exact."""
    if df < 1 or int(df) != df:
        raise ValueError(f"degrees of freedom must be a whole number >= 1, got {df}")
    if t <= 0:
        return 0.0
    if math.isinf(t):
        return 1.0
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    if df % 2 == 1:
        # (2/pi) [theta + sin(theta) (cos + (2/3) cos^3 + (2.4)/(3.5) cos^5 + ...
        #                             + (2.4...(df-3))/(3.5...(df-2)) cos^(df-2))]
        term = math.cos(theta)
        total = term if df > 1 else 0.0
        for k in range(1, df - 2, 2):
            term *= (k + 1) / (k + 2) * c2
            total += term
        return 2 / math.pi * (theta + math.sin(theta) * total)
    # sin(theta) [1 + (1/2) cos^2 + (1.3)/(2.4) cos^4 + ...
    #             + (1.3...(df-3))/(2.4...(df-2)) cos^(df-2)]
    term = total = 1.0
    for k in range(0, df - 2, 2):
        term *= (k + 1) / (k + 2) * c2
        total += term
    return math.sin(theta) * total


def t_quantile(confidence: float, df: int) -> float:
    """The t such that P(|T| <= t) = ``confidence`` (the two-sided critical value; 12.706
    for 95 % and 1 degree of freedom, 1.960 in the limit), by bisection to 1e-12."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    lo, hi = 0.0, 1.0
    while t_two_sided_probability(hi, df) < confidence:
        lo, hi = hi, hi * 2
    while hi - lo > 1e-12 * hi:
        mid = (lo + hi) / 2
        if t_two_sided_probability(mid, df) < confidence:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


@dataclass(frozen=True)
class PairedDifference:
    """A paired mean difference and its confidence interval, in the metric's unit."""

    diff: float
    half_width: float | None  # None: one pair, no interval
    n: int  # pairs

    @property
    def low(self) -> float | None:
        return None if self.half_width is None else self.diff - self.half_width

    @property
    def high(self) -> float | None:
        return None if self.half_width is None else self.diff + self.half_width

    def scaled(self, factor: float) -> PairedDifference:
        """The same difference in another unit (e.g. a fraction as %)."""
        hw = None if self.half_width is None else self.half_width * abs(factor)
        return PairedDifference(self.diff * factor, hw, self.n)


def _half_width(values: np.ndarray, confidence: float) -> float | None:
    """Student's half-width for the mean of ``values`` (None for one value)."""
    n = len(values)
    if n < 2:
        return None
    s = float(np.std(values, ddof=1))
    return t_quantile(confidence, n - 1) * s / math.sqrt(n)


def _pairs(reference: Sequence[float], other: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    ref = np.asarray(reference, dtype=float)
    oth = np.asarray(other, dtype=float)
    if ref.shape != oth.shape or ref.ndim != 1 or len(ref) == 0:
        raise ValueError(f"need as many runs on each side (>= 1), got {len(ref)} and {len(oth)}")
    return ref, oth


def mean_difference(
    reference: Sequence[float],
    other: Sequence[float],
    scale: float = 1.0,
    confidence: float = CONFIDENCE,
) -> PairedDifference:
    """``scale * (other_i - reference_i)``, its mean over the pairs and Student's interval."""
    ref, oth = _pairs(reference, other)
    d = scale * (oth - ref)
    return PairedDifference(float(d.mean()), _half_width(d, confidence), len(d))


def relative_difference(
    reference: Sequence[float],
    other: Sequence[float],
    reference_den: Sequence[float] | None = None,
    other_den: Sequence[float] | None = None,
    confidence: float = CONFIDENCE,
) -> PairedDifference:
    """``R = P_other / P_reference - 1`` (a fraction), each ``P`` the ratio of sums
    ``sum(x_i) / sum(den_i)`` over the pairs (``den`` absent: ones, so ``P`` is the
    mean), with the delta-method interval.

    Linearised, run i moves ``log P`` by ``u_i = (x_i - P den_i) / (P mean(den))``, so
    ``log(1 + R)`` by ``u_other_i - u_reference_i`` (these average to zero), and ``R`` by
    ``(1 + R)`` times that: Student's interval of those per-pair values. With constant
    denominators and reference this is the plain paired t interval of the relative
    differences. ``P_reference = 0``: R is infinite (0 when both are 0) and so is the
    interval; ``P_other = 0``: R = -1, and the interval has width 0 (every run of the other
    side has none)."""
    ref, oth = _pairs(reference, other)
    ref_den = np.ones_like(ref) if reference_den is None else np.asarray(reference_den, float)
    oth_den = np.ones_like(oth) if other_den is None else np.asarray(other_den, float)
    n = len(ref)
    p_ref = ref.sum() / ref_den.sum() if ref_den.sum() else 0.0
    p_oth = oth.sum() / oth_den.sum() if oth_den.sum() else 0.0
    if p_ref == 0:
        if p_oth == 0:
            return PairedDifference(0.0, None if n < 2 else 0.0, n)
        return PairedDifference(math.inf, None if n < 2 else math.inf, n)
    r = p_oth / p_ref - 1

    def influence(x: np.ndarray, den: np.ndarray, p: float) -> np.ndarray:
        if p == 0:
            return np.zeros_like(x)
        return (x - p * den) / (p * den.mean())

    u = (1 + r) * (influence(oth, oth_den, p_oth) - influence(ref, ref_den, p_ref))
    return PairedDifference(float(r), _half_width(u, confidence), n)


def verdict(
    diff: float,
    tolerance: float,
    half_width: float | None = None,
    max_width_in_bands: float = MAX_WIDTH_IN_BANDS,
) -> str:
    """The rule (module docstring): ``WITHIN`` when ``|diff| <= tolerance``; else
    ``OVERLAP`` when the interval ``diff +- half_width`` overlaps ``[-tolerance,
    tolerance]`` and is at most ``max_width_in_bands`` times as wide; else ``OUTSIDE``
    (also for a NaN difference, and without an interval: ``half_width`` None)."""
    if abs(diff) <= tolerance:
        return WITHIN
    if (
        half_width is not None
        and abs(diff) - half_width <= tolerance
        and half_width <= max_width_in_bands * tolerance
    ):
        return OVERLAP
    return OUTSIDE


def agrees(diff: float, tolerance: float, half_width: float | None = None) -> bool:
    """``verdict`` is not ``OUTSIDE``."""
    return verdict(diff, tolerance, half_width) != OUTSIDE


def worst(verdicts: Sequence[str]) -> str:
    """The worst of several verdicts (``WITHIN`` for none)."""
    return max(verdicts, key=VERDICTS.index, default=WITHIN)
