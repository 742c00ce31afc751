"""The loop one policy-controlled flow runs, shared by the environment and by a policy
running as a congestion control: read the interval's statistics, build the observation
(a history of ``k`` intervals of named features), turn an action into the flow's new
rate or window and command it. Needs only numpy."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ccsim import _core
from ccsim.gym.stats import FEATURES, check_features, derived, interval_dict

#: PCC-RL's ``config.DELTA_SCALE`` (``apply_rate_delta``).
AURORA_DELTA = 0.025


@dataclass
class ActionSpec:
    """How an action becomes the flow's rate (``control="rate"``, bit/s on the wire) or
    window (``control="cwnd"``, packets).

    ``mode="multiplicative"`` is Aurora's: an action ``a`` multiplies the value by
    ``1 + delta a`` if ``a >= 0`` and divides it by ``1 - delta a`` otherwise (PCC-RL
    ``Sender.apply_rate_delta``); ``mode="absolute"``: the action is the new value (rate
    in Mbit/s, window in packets). Values are clipped to ``[low, high]``.
    """

    control: str = "rate"
    mode: str = "multiplicative"
    delta: float = AURORA_DELTA
    low: float = 0.1e6
    high: float = 1e9
    #: The largest |action| in multiplicative mode (the action space's bound).
    bound: float = 10.0

    def __post_init__(self) -> None:
        if self.control not in ("rate", "cwnd"):
            raise ValueError(f'control: expected "rate" or "cwnd", got {self.control!r}')
        if self.mode not in ("multiplicative", "absolute"):
            raise ValueError(f'action: expected "multiplicative" or "absolute", got {self.mode!r}')
        if not (0 < self.low < self.high):
            raise ValueError(f"bounds: expected 0 < low < high, got ({self.low}, {self.high})")

    def apply(self, current: float, action: float) -> float:
        a = float(action)
        if not math.isfinite(a):
            raise ValueError(f"action: expected a finite number, got {action!r}")
        if self.mode == "multiplicative":
            d = self.delta * a
            new = current * (1.0 + d) if d >= 0 else current / (1.0 - d)
        else:
            new = a * 1e6 if self.control == "rate" else a
        return min(max(new, self.low), self.high)

    @property
    def param(self) -> str:
        return "rate_bps" if self.control == "rate" else "cwnd_pkts"


class FlowAgent:
    """One flow of a :class:`ccsim._core.Stepper` driven interval by interval."""

    def __init__(
        self,
        stepper: _core.Stepper,
        flow_id: int,
        action: ActionSpec,
        features: Sequence[str],
        history: int,
        start_value: float,
    ) -> None:
        self.stepper = stepper
        self.flow_id = flow_id
        self.action = action
        self.features = check_features(features)
        if history < 1:
            raise ValueError(f"history: expected at least 1 interval, got {history}")
        self.history = history
        self.value = start_value
        self.min_rtt_ns = 0.0
        self.min_mean_rtt_ns = 0.0
        self.obs = np.zeros((history, len(self.features)), dtype=np.float32)
        self.last_stats: dict[str, float] = {}
        self.last_features: dict[str, float] = {}
        self.command(start_value)

    def command(self, value: float) -> None:
        self.value = value
        self.stepper.set_param(self.flow_id, self.action.param, float(value))

    def act(self, action: float) -> None:
        self.command(self.action.apply(self.value, action))

    def observe(self) -> np.ndarray:
        """Read the flow's statistics since the last read into the history."""
        stats = interval_dict(self.stepper.flow_stats(self.flow_id))
        if stats["rtt_samples"] > 0:
            lo, mean = stats["rtt_min_ns"], stats["rtt_mean_ns"]
            self.min_rtt_ns = lo if self.min_rtt_ns == 0 else min(self.min_rtt_ns, lo)
            self.min_mean_rtt_ns = (
                mean if self.min_mean_rtt_ns == 0 else min(self.min_mean_rtt_ns, mean)
            )
        feats = derived(stats, self.min_rtt_ns, self.min_mean_rtt_ns)
        self.last_stats, self.last_features = stats, feats
        self.obs[:-1] = self.obs[1:]
        self.obs[-1] = [min(max(feats[n], FEATURES[n][0]), FEATURES[n][1]) for n in self.features]
        return self.obs.reshape(-1).copy()
