"""``ccsim.gym``: learned congestion control on ccsim.

- :class:`CcEnv` (and :class:`CcVectorEnv`): a Gymnasium environment in which the agent
  sets one TCP flow's rate or window every monitor interval (Aurora's formulation; needs
  the ``rl`` extra, ``pip install 'ccsim[rl]'``);
- :mod:`ccsim.gym.policy_cc`: any Python callable as a congestion control in ordinary
  scenarios (``cc = { kind = "policy", policy = "module:attr" }``), in ``ccsim run`` and
  sweeps;
- :mod:`ccsim.gym.stats`: the per-interval features and Aurora's reward.

See docs/gym.md.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CcEnv", "CcVectorEnv"]


def __getattr__(name: str) -> Any:
    # gymnasium is imported only when the environment is asked for: policies run as
    # congestion controls without the extra.
    if name == "CcEnv":
        from ccsim.gym.env import CcEnv

        return CcEnv
    if name == "CcVectorEnv":
        from ccsim.gym.vector import CcVectorEnv

        return CcVectorEnv
    raise AttributeError(f"module 'ccsim.gym' has no attribute {name!r}")
