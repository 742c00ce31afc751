"""Analytic models the papers draw beside their simulations, by name.

An experiment file names a model (``model = "abe_utilisation"``) and maps its parameters
to result columns or numbers (``args = { b = "buffer_bdp", beta = "beta" }``); the figure
draws it as a reference curve and the checks compare ccsim's results against it. A model
is the paper's own equation, so comparing against it is legitimate; adding one is a
function and a registry entry, never code per figure.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass


def abe_utilisation(b: float, beta: float, delta: float = 1.0) -> float:
    """Paper 003, Eqs. (5)/(6): utilisation U = ψ / C of one AIMD flow (additive increase 1, backoff
    ``beta``) through a DropTail buffer ``b`` on a path of BDP ``delta`` (same unit as
    ``b``; by default b is in BDPs). U = 1 once b ≥ δ (1 - β) / β (Eq. (1))."""
    if b >= delta * (1 - beta) / beta:
        return 1.0
    return 1 - (delta - beta * (b + delta)) ** 2 / (2 * delta * (1 - beta) * (b + delta))


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
    m.name: m for m in (Model("abe_utilisation", abe_utilisation, "model, paper 003 Eq. (5)/(6)"),)
}
