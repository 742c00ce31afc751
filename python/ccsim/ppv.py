"""Throughput-value functions of Per Packet Value marking, for the papers' ideal lines.

Paper 001 §2 (Nádas et al., core-stateless AQM, ANRW 2018; after Nádas et al. 2016): a
marker gives each packet the value ``V(u · R)`` of its throughput-value function (TVF)
``V``, with ``R`` the measured rate of the marked subject and ``u ~ U(0, 1)``. A
bottleneck that drops the lowest values first settles at a *congestion threshold value*
``c``: every flow then gets the throughput ``x`` at which ``V(x) = c``, and ``c`` is the
value at which these throughputs just fill the link. So the TVFs alone fix the ideal
shares, e.g. Gold twice Silver's throughput while Silver is below 10 Mbit/s (region I)
and four times above it (region III).

The functions are the core's own (``ccsim._core``), the ones the ``ppv`` markers of a
scenario use:

>>> import ccsim.ppv
>>> ccsim.ppv.values("silver", ["1Mbps", "20Mbps"])           # doctest: +SKIP
array([1.e+06, 2.5e+04])
>>> shares = ccsim.ppv.ideal_shares({"gold": 5, "silver": 5}, "100Mbps")
>>> shares.per_flow_bps                                       # doctest: +SKIP
{'gold': 13333333.3, 'silver': 6666666.7}
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ccsim import _core

__all__ = ["PRESETS", "IdealShares", "Rate", "Tvf", "ideal_shares", "parse_rate", "values"]

#: The preset value functions (README "Packet values"): derived from paper 001 Fig. 1.
PRESETS: tuple[str, ...] = ("gold", "silver", "background", "voice")

#: A throughput: bit/s as a number, or a string with a unit like ``"10Mbps"``.
Rate = float | int | str

#: A value function: a preset name, or ``[(rate, value), ...]`` points as in a scenario's
#: ``ppv.points`` (rates non-decreasing, values non-increasing, a power law between
#: points and constant outside them).
Tvf = str | Sequence[Sequence[Rate | float]]

_UNITS = {"bps": 1.0, "kbps": 1e3, "Kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9, "Tbps": 1e12}
_RATE = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z]+)\s*$")


def parse_rate(rate: Rate, what: str = "rate") -> float:
    """A throughput in bit/s: a number as it is, or a string like ``"10Mbps"``.

    Units as in scenarios: ``bps``, ``kbps`` (``Kbps``), ``Mbps``, ``Gbps``, ``Tbps``
    (SI). Raises ``ValueError`` (one line naming ``what``) for anything else.
    """
    if isinstance(rate, bool):
        raise ValueError(f'{what}: expected a rate like "10Mbps" or bit/s, got {rate!r}')
    if isinstance(rate, (int, float, np.integer, np.floating)):
        return float(rate)
    if isinstance(rate, str):
        m = _RATE.match(rate)
        if m and m.group(2) in _UNITS:
            return float(m.group(1)) * _UNITS[m.group(2)]
    raise ValueError(f'{what}: expected a rate like "10Mbps" or bit/s, got {rate!r}')


def _spec(tvf: Tvf) -> str | list[tuple[float, float]]:
    """The core's form of a value function: a name, or points as (bit/s, value) tuples."""
    if isinstance(tvf, str):
        return tvf
    points: list[tuple[float, float]] = []
    try:
        for i, point in enumerate(tvf):
            rate, value = point
            points.append((parse_rate(rate, f"points[{i}]"), float(value)))
    except (TypeError, ValueError) as err:
        if isinstance(err, ValueError) and str(err).startswith("points["):
            raise
        raise ValueError(
            f'expected a value function name like "gold" or [[rate, value], ...] points, '
            f"got {tvf!r}"
        ) from None
    return points


def values(
    tvf: Tvf, rates: Rate | Sequence[Rate] | npt.ArrayLike
) -> npt.NDArray[np.float64] | float:
    """``V(x)``: the packet value the function gives throughput ``x``, at each rate.

    ``tvf`` is a preset (``"gold"``, ``"silver"``, ``"background"``, ``"voice"``) or
    ``[(rate, value), ...]`` points; ``rates`` one rate or any array of them, in bit/s or
    strings with units (``"10Mbps"``). Returns a float for one rate, else a float64 array
    of the input's shape. Paper 001 §2: the traffic of a subject up to throughput ``x``
    gets values of at least ``V(x)``. A bad function raises ``ValueError`` with one line.
    """
    spec = _spec(tvf)
    if isinstance(rates, str) or np.ndim(rates) == 0:
        return float(_core.tvf_values(spec, [parse_rate(rates)])[0])  # type: ignore[arg-type]
    array = np.asarray(rates)
    if array.dtype.kind in "fiu":
        flat = array.astype(np.float64).ravel().tolist()
    else:
        array = np.asarray(rates, dtype=object)
        flat = [parse_rate(r) for r in array.ravel().tolist()]
    out = np.asarray(_core.tvf_values(spec, flat), dtype=np.float64)  # type: ignore[arg-type]
    return out.reshape(array.shape)


@dataclass(frozen=True)
class IdealShares:
    """The ideal PPV allocation of a link (paper 001 §2).

    ``threshold`` is the congestion threshold value ``c``; ``per_flow_bps[name]`` the
    throughput each flow of class ``name`` gets, where its function's value is ``c``;
    ``flows[name]`` the class's number of flows.
    """

    threshold: float
    per_flow_bps: dict[str, float]
    flows: dict[str, int]
    capacity_bps: float

    def class_bps(self, name: str) -> float:
        """The whole class's throughput, bit/s."""
        return self.per_flow_bps[name] * self.flows[name]

    @property
    def total_bps(self) -> float:
        """All classes' throughput; the capacity unless the functions ask for less."""
        return sum(self.class_bps(n) for n in self.per_flow_bps)


def ideal_shares(classes: Mapping[str, int | tuple[Tvf, int]], capacity: Rate) -> IdealShares:
    """Share ``capacity`` among flows by their value functions, as PPV ideally does.

    ``classes`` maps a class name to its number of flows when the name is a preset
    (``{"gold": 5, "silver": 5}``), or to ``(tvf, flows)`` for any other function
    (``{"mine": ([("1Mbps", 1e6), ("10Mbps", 1e4)], 3)}``). Paper 001 §2: the link
    settles at the congestion threshold value ``c`` at which the flows' throughputs
    ``V⁻¹(c)`` add up to the capacity, found by bisection on ``ln c`` in the core (when
    the functions ask for less than the capacity even at the lowest value, 1, that is
    the allocation). Returns per-flow throughputs in bit/s and ``c``: 5 Gold and 5 Silver
    flows on 100 Mbit/s get 13.33 and 6.67 Mbit/s each (2:1, region I).
    """
    names: list[str] = []
    specs: list[tuple[str | list[tuple[float, float]], int]] = []
    counts: dict[str, int] = {}
    for name, entry in classes.items():
        tvf, n = (name, entry) if isinstance(entry, int) else entry
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"{name}: expected a number of flows >= 1, got {n!r}")
        names.append(name)
        specs.append((_spec(tvf), int(n)))
        counts[name] = int(n)
    if not specs:
        raise ValueError("classes: expected at least one class of flows")
    capacity_bps = parse_rate(capacity, "capacity")
    if not (math.isfinite(capacity_bps) and capacity_bps > 0):
        raise ValueError(f"capacity: expected a positive rate, got {capacity!r}")
    threshold, per_flow = _core.tvf_ideal_shares(specs, capacity_bps)  # type: ignore[arg-type]
    return IdealShares(
        threshold=threshold,
        per_flow_bps=dict(zip(names, per_flow, strict=True)),
        flows=counts,
        capacity_bps=capacity_bps,
    )
