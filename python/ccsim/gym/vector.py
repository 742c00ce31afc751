"""N environments stepped together: every sub-environment's action is applied, then all
N simulations advance in one call into the core with the GIL released
(``_core.advance_many``), then every observation is read. Gymnasium's vector API with
next-step autoreset (as ``SyncVectorEnv``'s default)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ccsim import _core
from ccsim.gym.env import CcEnv


class CcVectorEnv(VectorEnv):
    """``num_envs`` :class:`CcEnv` built with the same keyword arguments."""

    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int, **env_kwargs: Any) -> None:
        if num_envs < 1:
            raise ValueError(f"num_envs: expected at least 1, got {num_envs}")
        self.envs = [CcEnv(**env_kwargs) for _ in range(num_envs)]
        self.num_envs = num_envs
        self.single_observation_space = self.envs[0].observation_space
        self.single_action_space = self.envs[0].action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._autoreset = np.zeros(num_envs, dtype=bool)

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if seed is None or isinstance(seed, int):
            seeds = [None if seed is None else seed + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"seed: expected {self.num_envs} seeds, got {len(seeds)}")
        pairs = zip(self.envs, seeds, strict=True)
        obs = [env.reset(seed=s, options=options)[0] for env, s in pairs]
        self._autoreset[:] = False
        return np.stack(obs), {}

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        actions = np.asarray(actions).reshape(self.num_envs, -1)
        n = self.num_envs
        obs: list[np.ndarray | None] = [None] * n
        rewards = np.zeros(n, dtype=np.float64)
        terminated = np.zeros(n, dtype=bool)
        truncated = np.zeros(n, dtype=bool)
        stepping, targets = [], []
        for i, env in enumerate(self.envs):
            if self._autoreset[i]:
                obs[i] = env.reset()[0]
            else:
                targets.append(env._act(actions[i]))
                stepping.append(i)
        left = _core.advance_many([self.envs[i]._stepper for i in stepping], targets)
        for i, time_left in zip(stepping, left, strict=False):
            o, r, term, trunc, _ = self.envs[i]._outcome(time_left)
            obs[i], rewards[i], terminated[i], truncated[i] = o, r, term, trunc
        self._autoreset = terminated | truncated
        return np.stack(obs), rewards, terminated, truncated, {}

    def close_extras(self, **kwargs: Any) -> None:
        for env in self.envs:
            env.close()
