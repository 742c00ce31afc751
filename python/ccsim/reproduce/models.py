"""Analytic models the papers draw beside their simulations, by name.

An experiment file names a model (``model = "abe_utilisation"``) and maps its parameters
to result columns or numbers (``args = { b = "buffer_bdp", beta = "beta" }``); the figure
draws it as a reference curve and the checks compare ccsim's results against it. A model
is the paper's own equation, so comparing against it is legitimate; adding one is a
function and a registry entry, never code per figure.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass


def abe_utilisation(b: float, beta: float, delta: float = 1.0) -> float:
    """Paper 003, Eqs. (5)/(6): utilisation U = ψ / C of one AIMD flow (additive increase 1, backoff
    ``beta``) through a DropTail buffer ``b`` on a path of BDP ``delta`` (same unit as
    ``b``; by default b is in BDPs). U = 1 once b ≥ δ (1 - β) / β (Eq. (1))."""
    if b >= delta * (1 - beta) / beta:
        return 1.0
    return 1 - (delta - beta * (b + delta)) ** 2 / (2 * delta * (1 - beta) * (b + delta))


def _ppv_ideal_mbps(capacity_mbps: float, gold: float, silver: float) -> dict[str, float]:
    """Paper 001 §2: the per-flow throughput (Mbit/s) of ``gold`` Gold and ``silver``
    Silver flows sharing ``capacity_mbps`` ideally by their value functions (the presets
    of Fig. 1, :func:`ccsim.ppv.ideal_shares`)."""
    from ccsim import ppv  # the core's functions, imported when first evaluated

    classes = {name: round(n) for name, n in (("gold", gold), ("silver", silver)) if n >= 1}
    if not classes:
        return {}
    shares = ppv.ideal_shares(classes, capacity_mbps * 1e6)
    return {name: bps / 1e6 for name, bps in shares.per_flow_bps.items()}


def ppv_ideal_gold_mbps(capacity_mbps: float, gold: float = 1, silver: float = 1) -> float:
    """Paper 001 §2: one Gold flow's ideal throughput (Mbit/s) among ``gold`` Gold and
    ``silver`` Silver flows on ``capacity_mbps``."""
    return _ppv_ideal_mbps(capacity_mbps, gold, silver).get("gold", math.nan)


def ppv_ideal_silver_mbps(capacity_mbps: float, gold: float = 1, silver: float = 1) -> float:
    """Paper 001 §2: one Silver flow's ideal throughput (Mbit/s), as above."""
    return _ppv_ideal_mbps(capacity_mbps, gold, silver).get("silver", math.nan)


def ppv_ideal_ratio(capacity_mbps: float, gold: float = 1, silver: float = 1) -> float:
    """Paper 001 §2, Fig. 1: the ideal ratio of a Gold flow's throughput to a Silver
    flow's (2 while Silver is below 10 Mbit/s, 4 above, between in region II)."""
    shares = _ppv_ideal_mbps(capacity_mbps, gold, silver)
    return shares["gold"] / shares["silver"] if len(shares) == 2 else math.nan


def _tvf_model(preset: str) -> Callable[..., float]:
    def tvf(rate_mbps: float) -> float:
        from ccsim import ppv

        return float(ppv.values(preset, rate_mbps * 1e6))

    tvf.__name__ = f"tvf_{preset}"
    tvf.__doc__ = f"Paper 001 Fig. 1: the {preset} throughput-value function V(x), x in Mbit/s."
    return tvf


#: The preset value functions (ccsim.ppv.PRESETS), drawn as paper 001 draws Fig. 1.
TVF_PRESETS = ("gold", "silver", "background", "voice")


@dataclass(frozen=True)
class Model:
    name: str
    function: Callable[..., float]
    label: str  # legend text: where the paper gives it

    @property
    def parameters(self) -> tuple[str, ...]:
        return tuple(inspect.signature(self.function).parameters)

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(
            name
            for name, p in inspect.signature(self.function).parameters.items()
            if p.default is inspect.Parameter.empty
        )


MODELS: dict[str, Model] = {
    m.name: m
    for m in (
        Model("abe_utilisation", abe_utilisation, "model, paper 003 Eq. (5)/(6)"),
        Model("ppv_ideal_ratio", ppv_ideal_ratio, "ideal from the TVFs, paper 001 §2"),
        Model("ppv_ideal_gold_mbps", ppv_ideal_gold_mbps, "ideal Gold, paper 001 §2"),
        Model("ppv_ideal_silver_mbps", ppv_ideal_silver_mbps, "ideal Silver, paper 001 §2"),
        *(Model(f"tvf_{p}", _tvf_model(p), f"{p.capitalize()} TVF") for p in TVF_PRESETS),
    )
}
