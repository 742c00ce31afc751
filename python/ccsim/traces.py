"""Mahimahi link traces (``mm-link``'s format): read, describe and generate them.

**The format** (Mahimahi ``src/frontend/link_queue.cc`` and ``traces/README``, Netravali
et al., USENIX ATC 2015): one line per *delivery opportunity*, the line a whole number of
milliseconds from the start of the trace, the lines never decreasing. An opportunity can
carry 1500 bytes (one MTU-sized packet; mm-link accounts in bytes, so several small
packets can share one); ``k`` lines with the same timestamp are ``k`` opportunities in
that millisecond. The trace repeats when it ends, shifted each time by its *last*
timestamp: its period is its last timestamp, which must therefore be positive, and a
trace cannot end in silence. mm-link refuses an empty file, an empty line, anything but
an integer on a line (no comments, no trailing blanks) and a decreasing timestamp; so does
:func:`read_trace`, naming the line. A file holding just ``1`` is a 12 Mbit/s link (one
opportunity per millisecond, for ever).

**Generators** (``ccsim trace constant|square|cellular``), all writing timestamps in
``[1, period]`` so that a loop joins without a doubled or a missing millisecond:

- :func:`constant`: a fixed rate, its opportunities spread evenly (the shortest exact
  period unless a duration is given).
- :func:`square`: two rates alternating every half period (the second must be positive:
  the trace loops at its last opportunity).
- :func:`cellular`: a seeded cellular-like link, :class:`CellularModel`: Poisson delivery
  opportunities at a rate that fades as a log-normal Gauss-Markov process, switched off
  by outages of exponential length.

``ccsim trace show FILE`` prints a trace's period, mean rate, rate over windows and its
outages (:func:`describe`). ``python/ccsim/plots/run.py`` draws a trace-driven link's
capacity from :func:`capacity_mbps`.

This module imports only the standard library when it loads (the ``ccsim`` command builds
its parser from it); numpy is imported where it is used.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    import numpy as np

#: Bytes one delivery opportunity can carry (mm-link's ``PACKET_SIZE``, one MTU).
OPPORTUNITY_BYTES = 1500
OPPORTUNITY_BITS = OPPORTUNITY_BYTES * 8
#: One opportunity per millisecond is this rate (bit/s): the README's "12 Mbps" trace.
ONE_PER_MS_BPS = OPPORTUNITY_BITS * 1000
#: A generator refuses to write more lines than this (about 240 MB of text).
MAX_OPPORTUNITIES = 20_000_000
#: ``constant`` without ``duration``: the shortest exact period, unless it exceeds this.
MAX_EXACT_PERIOD_MS = 10_000
#: Default window of ``show`` and of the plots' capacity line.
DEFAULT_WINDOW_MS = 100
EXIT_BAD_INPUT = 2  # as the ccsim command's other bad input
#: Default shortest gap between opportunities that ``show`` calls an outage.
DEFAULT_OUTAGE_MS = 200


class TraceError(ValueError):
    """A trace file or a generator's argument that cannot be used; one line."""


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class Trace:
    """A trace's opportunity timestamps (ms, non-decreasing, the last positive)."""

    name: str
    timestamps_ms: np.ndarray

    @property
    def period_ms(self) -> int:
        """The loop's length: the last timestamp."""
        return int(self.timestamps_ms[-1])

    @property
    def opportunities(self) -> int:
        """Delivery opportunities per period."""
        return len(self.timestamps_ms)

    @property
    def mean_rate_bps(self) -> float:
        """The rate the trace offers on average over its loop."""
        return self.opportunities * OPPORTUNITY_BITS * 1000.0 / self.period_ms

    def per_ms(self, end_ms: int) -> np.ndarray:
        """Opportunities in each millisecond ``0 .. end_ms`` (inclusive) of the looped
        trace, as mm-link plays it: cycle ``c`` puts timestamp ``t`` at ``c·period + t``,
        so the last timestamp of one cycle and a ``0`` of the next share a millisecond."""
        import numpy as np

        period = self.period_ms
        cycle = np.bincount(self.timestamps_ms, minlength=period + 1)
        pattern = cycle[:period].copy()  # offset o in 0..period-1 of a cycle
        pattern[0] += cycle[period]  # the previous cycle's last millisecond
        reps = end_ms // period + 1
        counts = np.tile(pattern, reps)[: end_ms + 1]
        counts[0] = cycle[0]  # no previous cycle before the first
        return counts


def _core_trace(name: str, data: bytes | None) -> np.ndarray:
    """The core's parser (``MahimahiTrace::parse_bytes``, the one the links use), so the
    tools and the links read a file alike; its error as a :class:`TraceError`."""
    import numpy as np

    from ccsim import _core

    try:
        raw = _core.mahimahi_trace(name, data)
    except ValueError as exc:
        raise TraceError(str(exc)) from None
    return np.frombuffer(raw, dtype="<u8").astype(np.int64)


def parse_trace(text: str | bytes, name: str = "<trace>") -> np.ndarray:
    """The timestamps of a trace file's text; :class:`TraceError` naming the first bad
    line otherwise (what mm-link refuses, by the core's parser)."""
    data = text.encode() if isinstance(text, str) else text
    return _core_trace(name, data)


def read_trace(path: str | os.PathLike[str]) -> Trace:
    """Read a trace file; :class:`TraceError` (one line) if it is missing, empty,
    unreadable, non-numeric or decreasing."""
    name = os.fspath(path)
    return Trace(name, _core_trace(name, None))


def capacity_mbps(
    trace: Trace, duration_s: float, bin_s: float = DEFAULT_WINDOW_MS / 1000
) -> tuple[np.ndarray, np.ndarray]:
    """The looped trace's capacity in bins of ``bin_s`` over the run's ``duration_s``: bin
    start times (s) and Mbit/s (opportunities times 12,000 bit over the bin's length, the
    last bin cut at ``duration_s``). A bin ``(a, a + bin]`` holds the opportunities after
    its start up to its end: the ``k``-th millisecond's opportunity happens at ``k`` ms, so
    ``1`` gives 12 Mbit/s in every bin, the first included."""
    import numpy as np

    bin_ms = max(1, round(bin_s * 1000))
    end_ms = max(1, math.ceil(duration_s * 1000))
    counts = trace.per_ms(end_ms)
    counts[1] += counts[0] if end_ms >= 1 else 0  # an opportunity at 0 goes to the first bin
    counts = counts[1:]  # milliseconds 1 .. end_ms
    starts = np.arange(0, end_ms, bin_ms)
    sums = np.add.reduceat(counts, starts)
    lengths = np.minimum(starts + bin_ms, end_ms) - starts
    rate = sums * OPPORTUNITY_BITS / (lengths / 1000.0) / 1e6
    return starts / 1000.0, rate


def rate_steps(
    trace: Trace, duration_s: float, bin_s: float = DEFAULT_WINDOW_MS / 1000
) -> list[tuple[float, int]]:
    """The looped trace as piecewise-constant rate steps for ``rate``/``rate_changes``:
    (start s, bit/s) per bin of ``bin_s`` (see :func:`capacity_mbps`), equal neighbours
    merged, zero in an outage. An approximation of the trace, not the trace: within a bin
    the rate is spread evenly where mm-link delivers at each opportunity's millisecond."""
    starts, mbps = capacity_mbps(trace, duration_s, bin_s)
    steps: list[tuple[float, int]] = []
    for start, rate in zip(starts, mbps, strict=True):
        bps = round(float(rate) * 1e6)
        if not steps or steps[-1][1] != bps:
            steps.append((float(start), bps))
    return steps


def format_rate_steps(steps: Sequence[tuple[float, int]]) -> str:
    """``rate`` and ``rate_changes`` lines for a scenario's ``[bottleneck]`` table."""
    lines = [f'rate = "{steps[0][1]}bps"', "rate_changes = ["]
    for start, bps in steps[1:]:
        lines.append(f'  {{ at = "{round(start * 1000)}ms", rate = "{bps}bps" }},')
    lines.append("]")
    return "\n".join(lines)


# --------------------------------------------------------------------------- describing


@dataclass(frozen=True)
class Outage:
    """A gap between delivery opportunities (ms): none in ``(start_ms, start_ms +
    length_ms)``."""

    start_ms: int
    length_ms: int


def outages(trace: Trace, min_ms: int = DEFAULT_OUTAGE_MS) -> list[Outage]:
    """Gaps of at least ``min_ms`` between consecutive opportunities over one loop,
    including the gap across the loop's end (from the last timestamp to the first of the
    next cycle), by start time."""
    import numpy as np

    times = np.unique(trace.timestamps_ms)
    period = trace.period_ms
    # the first opportunity of the next cycle is at period + times[0]
    following = np.append(times[1:], period + times[0])
    gaps = following - times
    found = [Outage(int(t), int(g)) for t, g in zip(times, gaps, strict=True) if g >= min_ms]
    # a gap across the loop's end starts at the period: in cycle time it starts at 0
    return sorted(
        (Outage(o.start_ms % period, o.length_ms) for o in found), key=lambda o: o.start_ms
    )


def describe(
    trace: Trace, window_ms: int = DEFAULT_WINDOW_MS, outage_ms: int = DEFAULT_OUTAGE_MS
) -> list[str]:
    """``ccsim trace show``'s lines: period, mean rate, the rate over windows of one loop,
    and the outages."""
    import numpy as np

    period = trace.period_ms
    lines = [
        f"{trace.name}: Mahimahi trace, period {period} ms (it loops), "
        f"{trace.opportunities} delivery opportunit{'y' if trace.opportunities == 1 else 'ies'} "
        f"of {OPPORTUNITY_BYTES} B",
        f"mean rate {trace.mean_rate_bps / 1e6:.3f} Mbit/s",
    ]
    pattern = trace.per_ms(2 * period)[period + 1 : 2 * period + 1]  # a cycle in steady loop
    window = min(window_ms, period)
    whole = period // window
    sums = pattern[: whole * window].reshape(whole, window).sum(axis=1)
    rates = sums * OPPORTUNITY_BITS / (window / 1000.0) / 1e6
    p10, p50, p90 = np.percentile(rates, [10, 50, 90])
    note = "" if whole * window == period else f" (the last {period - whole * window} ms left out)"
    lines.append(
        f"rate over {window} ms windows{note}: min {rates.min():.2f}, p10 {p10:.2f}, "
        f"median {p50:.2f}, p90 {p90:.2f}, max {rates.max():.2f} Mbit/s"
    )
    found = outages(trace, outage_ms)
    if not found:
        lines.append(f"outages (no opportunity for {outage_ms} ms or more): none")
    else:
        lengths = [o.length_ms for o in found]
        total = sum(lengths)
        at = ", ".join(f"{o.start_ms / 1000:g} s" for o in found[:8])
        more = f" and {len(found) - 8} more" if len(found) > 8 else ""
        lines.append(
            f"outages (no opportunity for {outage_ms} ms or more): {len(found)}, "
            f"{total} ms in all ({total / period:.1%} of the period), longest "
            f"{max(lengths)} ms, mean {total / len(found):.0f} ms; starting at {at}{more}"
        )
    return lines


# --------------------------------------------------------------------------- generating


def _spread(count: int, start_ms: int, length_ms: int) -> list[int]:
    """``count`` opportunities spread evenly over the milliseconds ``start_ms + 1 ..
    start_ms + length_ms``, the last one in the last millisecond (``count ≥ 1``): the
    ``i``-th at the millisecond where ``i·length/count`` is reached."""
    return [start_ms + -(-(i * length_ms) // count) for i in range(1, count + 1)]


def _check_size(opportunities: float) -> None:
    if opportunities > MAX_OPPORTUNITIES:
        raise TraceError(
            f"the trace would have {opportunities:.3g} lines, more than {MAX_OPPORTUNITIES:,} "
            "(a lower rate or a shorter duration; the trace loops)"
        )


def constant(rate_bps: float, duration_ms: int | None = None) -> list[int]:
    """A fixed rate: ``rate_bps`` rounded to whole opportunities over the period. Without
    ``duration_ms``, the shortest period over which the rate is exact (1 ms for 12 Mbit/s,
    6 ms for 10 Mbit/s), or :data:`MAX_EXACT_PERIOD_MS` if there is none shorter."""
    if not math.isfinite(rate_bps) or rate_bps <= 0:
        raise TraceError(f"--rate: expected a positive rate like 12Mbps, got {rate_bps:g} bit/s")
    if duration_ms is None:
        per_ms = _exact_fraction(rate_bps / ONE_PER_MS_BPS)
        duration_ms = per_ms[1] if per_ms and per_ms[1] <= MAX_EXACT_PERIOD_MS else None
        duration_ms = duration_ms or MAX_EXACT_PERIOD_MS
    _check_size(rate_bps * duration_ms / 1000 / OPPORTUNITY_BITS)
    count = round(rate_bps * duration_ms / 1000 / OPPORTUNITY_BITS)
    if count < 1:
        raise TraceError(
            f"--rate: {rate_bps:g} bit/s gives no delivery opportunity in {duration_ms} ms "
            f"(one is {OPPORTUNITY_BITS} bit): a longer --duration"
        )
    return _spread(count, 0, duration_ms)


def _exact_fraction(value: float) -> tuple[int, int] | None:
    """``value`` as numerator/denominator if a denominator up to
    :data:`MAX_EXACT_PERIOD_MS` gives it to within a part in 10^12."""
    from fractions import Fraction

    frac = Fraction(value).limit_denominator(MAX_EXACT_PERIOD_MS)
    if abs(float(frac) - value) > 1e-12 * max(value, 1e-300):
        return None
    return frac.numerator, frac.denominator


def square(rates_bps: Sequence[float], period_ms: int) -> list[int]:
    """Two rates alternating: ``rates_bps[0]`` for the first half of ``period_ms``, then
    ``rates_bps[1]`` (each rounded to whole opportunities over its half). The second rate
    must be positive: the trace loops at its last opportunity, so it cannot end in an
    outage (give ``0`` first for an on-off link)."""
    if len(rates_bps) != 2:
        raise TraceError(f"--rates: expected two rates like 24Mbps,6Mbps, got {len(rates_bps)}")
    if period_ms < 2 or period_ms % 2:
        raise TraceError(f"--period: expected an even number of milliseconds ≥ 2, got {period_ms}")
    half = period_ms // 2
    out: list[int] = []
    _check_size(sum(rates_bps) * half / 1000 / OPPORTUNITY_BITS)
    for i, rate in enumerate(rates_bps):
        if not math.isfinite(rate) or rate < 0:
            raise TraceError(f"--rates: expected rates ≥ 0 like 24Mbps,6Mbps, got {rate:g} bit/s")
        count = round(rate * half / 1000 / OPPORTUNITY_BITS)
        if i == 1 and count < 1:
            raise TraceError(
                "--rates: the second rate gives no opportunity in its half period, but a "
                "Mahimahi trace loops at its last opportunity and so cannot end in an "
                "outage: give the zero (or lower) rate first"
            )
        if count:
            out += _spread(count, i * half, half)
    return out


@dataclass(frozen=True)
class CellularModel:
    """A cellular-like link for :func:`cellular`: a doubly stochastic Poisson process of
    delivery opportunities, as Sprout models a cellular link (Winstein, Sivaraman and
    Balakrishnan, NSDI 2013 §3; the Mahimahi traces were recorded for that paper), with a
    stationary rate process and explicit outages instead of Sprout's random walk:

    - **fading**: the rate while the link is up is ``rate_bps · exp(X(t) - s²/2)``, with
      ``X`` a Gauss-Markov (Ornstein-Uhlenbeck) process of standard deviation ``s =
      sqrt(ln(1 + rate_cv²))`` and autocorrelation ``exp(-Δt / correlation_s)``:
      log-normal shadowing with Gudmundson's exponential correlation (Electronics Letters
      27(23), 1991). The rate is then log-normal with mean ``rate_bps`` and coefficient of
      variation ``rate_cv``. ``X`` steps once per millisecond by the exact recursion
      ``X ← a·X + s·sqrt(1 - a²)·N(0, 1)``, ``a = exp(-1 ms / correlation_s)``, from a
      stationary start.
    - **deliveries**: in each millisecond a Poisson number of opportunities with mean the
      rate times 1 ms over 12,000 bit (Sprout's Poisson deliveries).
    - **outages**: the link alternates between up and out, up for an exponential time of
      mean ``outage_every_s``, out for one of mean ``outage_mean_s`` (Sprout's "outage
      escape rate" is 1/s: a mean outage of 1 s), starting up. Out, nothing is delivered;
      the fading goes on underneath. The long-run fraction out is ``outage_mean_s /
      (outage_every_s + outage_mean_s)``, and the long-run mean rate ``rate_bps`` times
      the fraction up. ``outage_every_s = inf`` turns outages off.

    The trace is cut at its last opportunity (mm-link loops there), so a run of the
    generator ending in an outage gives a slightly shorter trace.
    """

    rate_bps: float = 12e6
    rate_cv: float = 0.5
    correlation_s: float = 1.0
    outage_every_s: float = 10.0
    outage_mean_s: float = 1.0

    def check(self) -> None:
        """:class:`TraceError` naming the option of a parameter out of range."""
        checks = [
            ("--rate", self.rate_bps, self.rate_bps > 0, "a positive rate like 12Mbps"),
            ("--rate-cv", self.rate_cv, self.rate_cv >= 0, "a coefficient of variation ≥ 0"),
            ("--correlation", self.correlation_s, self.correlation_s > 0, "a positive duration"),
            ("--outage-every", self.outage_every_s, self.outage_every_s > 0, "a positive duration"),
            ("--outage-mean", self.outage_mean_s, self.outage_mean_s > 0, "a positive duration"),
        ]
        for option, value, ok, expected in checks:
            finite = math.isfinite(value) or (option == "--outage-every" and value > 0)
            if not ok or not finite:
                raise TraceError(f"{option}: expected {expected}, got {value:g}")

    @property
    def log_sd(self) -> float:
        """``s``, the standard deviation of ``X`` (natural log of the rate)."""
        return math.sqrt(math.log1p(self.rate_cv**2))

    @property
    def fraction_up(self) -> float:
        """The long-run fraction of time the link is up."""
        if math.isinf(self.outage_every_s):
            return 1.0
        return self.outage_every_s / (self.outage_every_s + self.outage_mean_s)


def poisson(rng: random.Random, mean: float) -> int:
    """A Poisson draw by inversion (Knuth, TAOCP vol. 2 §3.4.1), in chunks of mean at
    most 30 so that ``exp(-mean)`` never underflows (a sum of Poissons is Poisson)."""
    count = 0
    while mean > 0:
        part = min(mean, 30.0)
        mean -= part
        p = math.exp(-part)
        cumulative = p
        u = rng.random()
        k = 0
        while u > cumulative and p > 0:
            k += 1
            p *= part / k
            cumulative += p
        count += k
    return count


def cellular_path(
    model: CellularModel, duration_ms: int, seed: int
) -> tuple[list[float], list[bool]]:
    """The model's state per millisecond ``1 .. duration_ms``: the rate the fading gives
    (bit/s, whether up or not) and whether the link is up. :func:`cellular` draws the
    deliveries from it; tests check it against the model's stationary figures."""
    model.check()
    rng = random.Random(seed)
    s = model.log_sd
    a = math.exp(-1e-3 / model.correlation_s)
    step_sd = s * math.sqrt(1.0 - a * a)
    drift = -s * s / 2  # E[exp(X - s²/2)] = 1
    x = rng.gauss(0.0, s)
    up = True
    every_ms = model.outage_every_s * 1000
    mean_out_ms = model.outage_mean_s * 1000
    change_at = math.inf if math.isinf(every_ms) else 1 + _exponential_ms(rng, every_ms)
    rates: list[float] = []
    ups: list[bool] = []
    for ms in range(1, duration_ms + 1):
        x = a * x + step_sd * rng.gauss(0.0, 1.0)
        while ms >= change_at:
            up = not up
            change_at += _exponential_ms(rng, every_ms if up else mean_out_ms)
        rates.append(model.rate_bps * math.exp(x + drift))
        ups.append(up)
    return rates, ups


def _exponential_ms(rng: random.Random, mean_ms: float) -> int:
    """An exponential duration rounded to whole milliseconds (at least 1)."""
    return max(1, round(rng.expovariate(1.0 / mean_ms)))


def cellular(model: CellularModel, duration_ms: int, seed: int) -> list[int]:
    """A cellular-like trace of ``duration_ms`` (see :class:`CellularModel`), the same for
    the same seed on every platform (Python's Mersenne Twister, no numpy draws)."""
    model.check()
    if duration_ms < 1:
        raise TraceError(f"--duration: expected at least 1 ms, got {duration_ms} ms")
    _check_size(model.rate_bps * duration_ms / 1000 / OPPORTUNITY_BITS)
    rates, ups = cellular_path(model, duration_ms, seed)
    rng = random.Random(f"deliveries {seed}")  # a stream apart from the path's
    out: list[int] = []
    per_bit = 1e-3 / OPPORTUNITY_BITS
    for ms, (rate, up) in enumerate(zip(rates, ups, strict=True), start=1):
        if up:
            out.extend([ms] * poisson(rng, rate * per_bit))
    if not out:
        raise TraceError(
            "the trace has no delivery opportunity (a higher --rate, a longer --duration "
            "or fewer outages)"
        )
    return out


def format_trace(timestamps_ms: Sequence[int]) -> str:
    """The file's text: one timestamp per line, each line ending in a newline."""
    return "".join(f"{t}\n" for t in timestamps_ms)


def write_trace(path: str | os.PathLike[str], timestamps_ms: Sequence[int]) -> None:
    """Write atomically (a temporary file renamed over ``path``), so that a failure
    leaves nothing behind and a reader never sees half a trace."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:40]}.", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="ascii", newline="\n") as f:
            f.write(format_trace(timestamps_ms))
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as open() would have made it, not mkstemp's 0600
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# --------------------------------------------------------------------------- the command


class _OneLineParser(argparse.ArgumentParser):
    """argparse's errors in one line and exit 2 (the CLI's rule for bad input), instead
    of the usage and the message on two."""

    def error(self, message: str) -> NoReturn:
        print(f"error: {self.prog}: {message}", file=sys.stderr)
        raise SystemExit(2)


def _rate(text: str, option: str) -> float:
    from ccsim.ppv import parse_rate

    try:
        value = parse_rate(text.strip(), option)
    except ValueError:
        raise TraceError(f'{option}: expected a rate like "12Mbps", got {text!r}') from None
    if not math.isfinite(value) or value < 0:
        raise TraceError(f'{option}: expected a rate ≥ 0 like "12Mbps", got {text!r}')
    return value


def _duration_ms(text: str, option: str) -> int:
    from ccsim import _core
    from ccsim._core import ScenarioError

    try:
        ns = _core.duration_ns(text.strip(), option)
    except ScenarioError as exc:
        raise TraceError(str(exc)) from None
    if ns % 1_000_000:
        raise TraceError(f"{option}: expected whole milliseconds, got {text!r}")
    return ns // 1_000_000


def _seconds(text: str, option: str) -> float:
    if text.strip() in ("inf", "never"):
        return math.inf
    return _duration_ms(text, option) / 1000.0


def _number(text: str, option: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise TraceError(f"{option}: expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise TraceError(f"{option}: expected a finite number, got {text!r}")
    return value


def _check_output(path: str) -> Path:
    target = Path(path)
    if path == "" or target.is_dir():
        raise TraceError(f"-o: {path or '(empty)'}: expected a file name, not a directory")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise TraceError(f"-o: {path}: {parent} is not a directory")
    return target


def generate(args: argparse.Namespace) -> tuple[list[int], str]:
    """The timestamps the arguments ask for, and a description of them."""
    if args.kind == "constant":
        rate = _rate(args.rate, "--rate")
        duration = _duration_ms(args.duration, "--duration") if args.duration else None
        if duration is not None and duration < 1:
            raise TraceError(f"--duration: expected at least 1 ms, got {args.duration!r}")
        return constant(rate, duration), f"constant {args.rate}"
    if args.kind == "square":
        rates = [_rate(r, "--rates") for r in args.rates.split(",")]
        period = _duration_ms(args.period, "--period")
        return square(rates, period), f"square wave {args.rates} every {args.period}"
    model = CellularModel(
        rate_bps=_rate(args.rate, "--rate"),
        rate_cv=_number(args.rate_cv, "--rate-cv"),
        correlation_s=_seconds(args.correlation, "--correlation"),
        outage_every_s=_seconds(args.outage_every, "--outage-every"),
        outage_mean_s=_seconds(args.outage_mean, "--outage-mean"),
    )
    duration = _duration_ms(args.duration, "--duration")
    return cellular(model, duration, args.seed), f"cellular-like, seed {args.seed}"


def cmd_trace(args: argparse.Namespace) -> int:
    """``ccsim trace KIND ... -o FILE`` and ``ccsim trace show FILE``: exit status 0, or
    2 with one line ``error: ...`` and nothing written."""
    try:
        return _trace_command(args)
    except TraceError as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _trace_command(args: argparse.Namespace) -> int:
    if args.kind == "rates":
        bin_ms = _duration_ms(args.bin, "--bin")
        duration_ms = _duration_ms(args.duration, "--duration")
        if bin_ms < 1 or duration_ms < bin_ms:
            raise TraceError("--bin, --duration: expected 1ms <= bin <= duration")
        trace = read_trace(args.file)
        print(format_rate_steps(rate_steps(trace, duration_ms / 1000, bin_ms / 1000)))
        return 0
    if args.kind == "show":
        window = _duration_ms(args.window, "--window")
        gap = _duration_ms(args.outage, "--outage")
        if window < 1 or gap < 1:
            raise TraceError("--window and --outage: expected at least 1ms")
        for line in describe(read_trace(args.file), window, gap):
            print(line)
        return 0
    target = _check_output(args.output)
    timestamps, what = generate(args)
    try:
        write_trace(target, timestamps)
    except OSError as exc:
        raise TraceError(f"-o: {args.output}: cannot write: {exc.strerror or exc}") from None
    trace = Trace(str(target), _as_array(timestamps))
    print(
        f"wrote {target}: {what}, period {trace.period_ms} ms, {trace.opportunities} "
        f"opportunit{'y' if trace.opportunities == 1 else 'ies'}, mean "
        f"{trace.mean_rate_bps / 1e6:.3f} Mbit/s"
    )
    return 0


def _as_array(values: Sequence[int]) -> np.ndarray:
    import numpy as np

    return np.asarray(values, dtype=np.int64)


def add_parser(sub: Any) -> None:
    """Register ``ccsim trace`` on the CLI's subparsers."""
    p = sub.add_parser(
        "trace",
        help="write a Mahimahi link trace (constant, square wave, cellular-like) or show one",
        description="Write a link trace in Mahimahi's mm-link format (one delivery "
        "opportunity of 1500 bytes per line, in ms; the trace loops at its last line) for "
        "bottleneck.trace, or describe one. Bad arguments: one line, exit status 2, "
        "nothing written. See docs/traces.md.",
    )
    p.error = _OneLineParser.error.__get__(p)  # type: ignore[method-assign]
    kinds = p.add_subparsers(
        dest="kind", required=True, metavar="KIND", parser_class=_OneLineParser
    )

    def output(q: argparse.ArgumentParser) -> None:
        q.add_argument("-o", "--output", required=True, metavar="FILE", help="trace file")

    q = kinds.add_parser(
        "constant",
        help="a fixed rate",
        description="A fixed rate, its opportunities spread evenly; without --duration the "
        "shortest period over which the rate is exact (12Mbps: the one line '1').",
    )
    q.add_argument("--rate", required=True, help="the rate, e.g. 12Mbps")
    q.add_argument("--duration", help="the trace's period (default: the shortest exact one)")
    output(q)

    q = kinds.add_parser(
        "square",
        help="two rates alternating",
        description="The first rate for half the period, then the second (which must be "
        "positive: a trace loops at its last opportunity).",
    )
    q.add_argument("--rates", required=True, help="two rates, e.g. 24Mbps,6Mbps (or 0Mbps,12Mbps)")
    q.add_argument("--period", required=True, help="a whole cycle, e.g. 2s (an even number of ms)")
    output(q)

    q = kinds.add_parser(
        "cellular",
        help="a seeded cellular-like link with fading and outages",
        description="Poisson delivery opportunities at a log-normally fading rate (a "
        "Gauss-Markov process), switched off by outages of exponential length "
        "(ccsim.traces.CellularModel; docs/traces.md). The same seed gives the same file.",
    )
    defaults = CellularModel()
    q.add_argument("--duration", required=True, help="the trace's length, e.g. 30s")
    q.add_argument("--seed", type=int, default=1, help="random seed (default: 1)")
    q.add_argument("--rate", default="12Mbps", help="mean rate while up (default: 12Mbps)")
    q.add_argument(
        "--rate-cv",
        default=str(defaults.rate_cv),
        help=f"coefficient of variation of the rate while up (default: {defaults.rate_cv})",
    )
    q.add_argument(
        "--correlation",
        default="1s",
        help="the fading's correlation time (default: 1s)",
    )
    q.add_argument(
        "--outage-every",
        default="10s",
        help="mean time up between outages, or 'never' (default: 10s)",
    )
    q.add_argument("--outage-mean", default="1s", help="mean outage length (default: 1s)")
    output(q)

    q = kinds.add_parser(
        "show",
        help="describe a trace file",
        description="Print a trace's period, mean rate, its rate over windows of one loop "
        "and its outages (gaps between opportunities of at least --outage).",
    )
    q.add_argument("file", metavar="FILE", help="a Mahimahi trace file")
    q.add_argument("--window", default=f"{DEFAULT_WINDOW_MS}ms", help="window (default: 100ms)")
    q.add_argument(
        "--outage",
        default=f"{DEFAULT_OUTAGE_MS}ms",
        help=f"shortest gap counted as an outage (default: {DEFAULT_OUTAGE_MS}ms)",
    )
    q = kinds.add_parser(
        "rates",
        help="a trace as rate/rate_changes steps (an approximation)",
        description="Print [bottleneck] rate and rate_changes lines that follow the looped "
        "trace in bins of --bin (zero rate in an outage) over --duration: a "
        "piecewise-constant approximation to drive a link until bottleneck.trace exists.",
    )
    q.add_argument("file", metavar="FILE", help="a Mahimahi trace file")
    q.add_argument("--duration", required=True, help="the run's length, e.g. 30s")
    q.add_argument("--bin", default=f"{DEFAULT_WINDOW_MS}ms", help="bin (default: 100ms)")
    p.set_defaults(func=cmd_trace)


__all__ = [
    "CellularModel",
    "Outage",
    "Trace",
    "TraceError",
    "capacity_mbps",
    "cellular",
    "constant",
    "describe",
    "format_rate_steps",
    "outages",
    "rate_steps",
    "read_trace",
    "square",
]
