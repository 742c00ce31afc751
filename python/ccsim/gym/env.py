"""The Gymnasium environment: one policy-controlled TCP flow in a ccsim scenario.

Step = one monitor interval; action = the flow's rate or window (absolute, or Aurora's
multiplicative change); observation = a history of named per-interval features; reward =
Aurora's by default. See docs/gym.md.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces

from ccsim import _core
from ccsim.gym.agent import ActionSpec, FlowAgent
from ccsim.gym.policy_cc import _rate_bps
from ccsim.gym.stats import AURORA_FEATURES, FEATURES, RewardFn, aurora_reward, check_features

Range = float | tuple[float, float]


def _range(name: str, value: Range) -> tuple[float, float]:
    lo, hi = (value, value) if isinstance(value, (int, float)) else tuple(value)
    if not (math.isfinite(lo) and math.isfinite(hi) and 0 <= lo <= hi):
        raise ValueError(f"{name}: expected a number or a (low, high) range, got {value!r}")
    return float(lo), float(hi)


def _link_loss_supported() -> bool:
    """Whether this ccsim's scenario schema has a link loss rate (``bottleneck.loss``)."""
    probe = {
        "duration": "1s",
        "bottleneck": {"rate": "10Mbps", "loss": 0.01},
        "flows": [{"cc": "newreno", "rtt": "10ms"}],
    }
    try:
        _core.parse_check(json.dumps(probe), "json")
    except _core.ScenarioError:
        return False
    return True


class CcEnv(gymnasium.Env):
    """A flow whose rate (or window) the agent sets once per monitor interval.

    The network is drawn at every ``reset(seed=...)`` from ranges (uniform on each
    ``(low, high)``; a number fixes it): ``rate_mbps`` the bottleneck rate, ``rtt_ms``
    every flow's base RTT (a ccsim ``{uniform = [...]}`` distribution, drawn per flow by
    the scenario's seed), ``buffer_bdp`` the DropTail queue in bandwidth-delay products,
    ``loss`` the link's random loss rate (only where the scenario schema has
    ``bottleneck.loss``), ``competing`` the number of ``competing_cc`` flows. Or give a
    whole ``scenario`` (dict): the agent drives its first flow whose ``cc`` is
    ``{kind = "policy"}``; ``reset`` sets only its seed.

    ``interval_rtts`` sets the monitor interval in base RTTs of the agent's path, or
    ``interval_ms`` as a fixed duration. ``control`` ("rate" or "cwnd") and ``action``
    ("multiplicative", Aurora's, or "absolute") with ``bounds`` (bit/s or packets) and
    ``delta`` define the action; ``observation`` names the features
    (:data:`ccsim.gym.stats.FEATURES`) and ``history`` how many intervals are kept.
    ``reward(stats, features)`` replaces Aurora's. An episode ends (truncated) after
    ``episode_steps`` intervals.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}

    def __init__(
        self,
        *,
        scenario: Mapping[str, Any] | None = None,
        rate_mbps: Range = (10.0, 50.0),
        rtt_ms: Range = (10.0, 100.0),
        buffer_bdp: Range = (0.5, 4.0),
        loss: Range = 0.0,
        competing: int | tuple[int, int] = 0,
        competing_cc: str = "cubic",
        interval_rtts: float = 1.0,
        interval_ms: float | None = None,
        control: str = "rate",
        action: str = "multiplicative",
        delta: float = 0.025,
        bounds: tuple[float, float] | None = None,
        observation: Sequence[str] = AURORA_FEATURES,
        history: int = 10,
        reward: RewardFn | None = None,
        episode_steps: int = 400,
    ) -> None:
        super().__init__()
        self.scenario = dict(scenario) if scenario is not None else None
        self.rate_mbps = _range("rate_mbps", rate_mbps)
        self.rtt_ms = _range("rtt_ms", rtt_ms)
        self.buffer_bdp = _range("buffer_bdp", buffer_bdp)
        self.loss = _range("loss", loss)
        if self.loss[1] > 0 and not _link_loss_supported():
            raise ValueError("loss: this ccsim's scenario schema has no link loss rate yet")
        lo, hi = (competing, competing) if isinstance(competing, int) else competing
        if not (0 <= lo <= hi):
            raise ValueError(
                f"competing: expected a count or a (low, high) range, got {competing!r}"
            )
        self.competing = (int(lo), int(hi))
        self.competing_cc = competing_cc
        if interval_rtts <= 0 or (interval_ms is not None and interval_ms <= 0):
            raise ValueError("interval: expected a positive duration or number of RTTs")
        self.interval_rtts = float(interval_rtts)
        self.interval_ms = interval_ms
        if bounds is None:
            bounds = (0.1e6, 2e9) if control == "rate" else (1.0, 1e5)
        self.action_spec = ActionSpec(control, action, delta, float(bounds[0]), float(bounds[1]))
        self.features = check_features(observation)
        self.history = int(history)
        self.reward_fn: RewardFn = reward or aurora_reward
        if episode_steps < 1:
            raise ValueError(f"episode_steps: expected at least 1, got {episode_steps}")
        self.episode_steps = int(episode_steps)
        if self.action_spec.mode == "multiplicative":
            b = self.action_spec.bound
            self.action_space = spaces.Box(-b, b, shape=(1,), dtype=np.float32)
        else:
            scale = 1e6 if control == "rate" else 1.0
            self.action_space = spaces.Box(
                np.float32(bounds[0] / scale),
                np.float32(bounds[1] / scale),
                shape=(1,),
                dtype=np.float32,
            )
        low = np.tile([FEATURES[n][0] for n in self.features], self.history).astype(np.float32)
        high = np.tile([FEATURES[n][1] for n in self.features], self.history).astype(np.float32)
        self.observation_space = spaces.Box(low, high, dtype=np.float32)
        self._stepper: _core.Stepper | None = None
        self._agent: FlowAgent | None = None
        self._steps = 0
        self._interval_ns = 0
        #: The network of the current episode (what reset drew).
        self.network: dict[str, Any] = {}

    # ----- the scenario ---------------------------------------------------------

    def _draw(self) -> tuple[dict[str, Any], int, float]:
        """The episode's scenario, the agent's flow index and its start value."""
        rng = self.np_random
        seed = int(rng.integers(1, 2**31 - 1))
        rate_bps = float(rng.uniform(*self.rate_mbps)) * 1e6
        if self.scenario is not None:
            sc = json.loads(json.dumps(self.scenario))
            sc["seed"] = seed
            agent = next(
                (
                    i
                    for i, f in enumerate(sc.get("flows", []))
                    if isinstance(f.get("cc"), Mapping) and f["cc"].get("kind") == "policy"
                ),
                None,
            )
            if agent is None:
                raise ValueError('scenario: no flow with cc = { kind = "policy" } for the agent')
            if any(f.get("count", 1) != 1 for f in sc["flows"][: agent + 1]):
                raise ValueError(
                    "scenario: the agent's group and those before it must have count = 1"
                )
            given = sc["flows"][agent]["cc"].get("rate_bps", 0.3 * rate_bps)
            # a rate string as the scenario file writes it ("12Mbps"), or bit/s
            start = (
                _rate_bps(given, f"flows[{agent}].cc.rate_bps")
                if isinstance(given, str)
                else float(given)
            )
            self.network = {"scenario": sc}
            return sc, agent, start
        rtt = (
            {"uniform": [f"{self.rtt_ms[0]}ms", f"{self.rtt_ms[1]}ms"]}
            if self.rtt_ms[0] < self.rtt_ms[1]
            else f"{self.rtt_ms[0]}ms"
        )
        buffer_bdp = float(rng.uniform(*self.buffer_bdp))
        loss = float(rng.uniform(*self.loss))
        n_comp = int(rng.integers(self.competing[0], self.competing[1] + 1))
        # Aurora starts the sender at 0.3-1.5x the link's rate (create_new_links_and_senders).
        start = (
            float(rng.uniform(0.3, 1.5)) * rate_bps if self.action_spec.control == "rate" else 10.0
        )
        interval_max_ms = self.interval_ms or self.interval_rtts * self.rtt_ms[1] * 1.2
        duration_ms = (self.episode_steps + 2) * interval_max_ms + 100.0
        bottleneck: dict[str, Any] = {
            "rate": f"{rate_bps:.0f}bps",
            "queue": {"kind": "droptail", "limit": f"{max(buffer_bdp, 0.01):.4f}bdp"},
        }
        if loss > 0:
            bottleneck["loss"] = loss
        flows: list[dict[str, Any]] = [
            {
                "name": "agent",
                "cc": {"kind": "policy", "mode": self.action_spec.control},
                "rtt": rtt,
            }
        ]
        if n_comp:
            flows.append(
                {"name": self.competing_cc, "cc": self.competing_cc, "rtt": rtt, "count": n_comp}
            )
        sc = {
            "duration": f"{duration_ms:.3f}ms",
            "seed": seed,
            "bottleneck": bottleneck,
            "flows": flows,
        }
        self.network = {
            "rate_bps": rate_bps,
            "buffer_bdp": buffer_bdp,
            "loss": loss,
            "competing": n_comp,
            "seed": seed,
        }
        return sc, 0, start

    # ----- Gymnasium ------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        sc, agent, start = self._draw()
        self._stepper = _core.Stepper(json.dumps(sc), "json")
        base_rtt_ns = self._stepper.path_rtt_ns()[agent]
        self.network["rtt_ms"] = base_rtt_ns / 1e6
        self._interval_ns = (
            int(self.interval_ms * 1e6)
            if self.interval_ms
            else max(int(self.interval_rtts * base_rtt_ns), 1)
        )
        spec = self.action_spec
        self._agent = FlowAgent(
            self._stepper,
            agent,
            spec,
            self.features,
            self.history,
            min(max(start, spec.low), spec.high),
        )
        self._steps = 0
        # One interval at the start value so the first observation has data (PCC-RL's
        # reset runs the network before its first observation too).
        self._stepper.advance(self._stepper.now_ns + self._interval_ns)
        obs = self._agent.observe()
        return obs, {"network": dict(self.network)}

    def _act(self, action: Any) -> int:
        """Apply an action; the time to advance to."""
        if self._agent is None or self._stepper is None:
            raise RuntimeError("call reset() before step()")
        self._agent.act(float(np.asarray(action, dtype=np.float64).reshape(-1)[0]))
        return self._stepper.now_ns + self._interval_ns

    def _outcome(self, time_left: bool) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        assert self._agent is not None and self._stepper is not None
        obs = self._agent.observe()
        reward = float(self.reward_fn(self._agent.last_stats, self._agent.last_features))
        self._steps += 1
        truncated = self._steps >= self.episode_steps or not time_left
        info = dict(self._agent.last_features)
        info["value"] = self._agent.value
        return obs, reward, False, truncated, info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        until = self._act(action)
        assert self._stepper is not None
        return self._outcome(self._stepper.advance(until))
