"""``ccsim bench`` rows for ``ccsim.gym``: environment steps per second for one environment
(10 Mbit/s, 50 ms, one agent flow, one-RTT monitor intervals) and for a vector of 8.
Target (issue 36): at least 20 000 steps/s for one environment on one core."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

STEPS_PER_S_TARGET = 20_000.0

#: The benchmark's network: fixed 10 Mbit/s, 50 ms, 1 BDP of buffer, no competition.
ENV_KWARGS: dict[str, Any] = {
    "rate_mbps": 10.0,
    "rtt_ms": 50.0,
    "buffer_bdp": 1.0,
    "interval_rtts": 1.0,
    "episode_steps": 1_000_000,
}


@dataclass(frozen=True)
class GymBench:
    name: str
    description: str
    steps: int
    wall_s: float
    target: float | None

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.wall_s if self.wall_s > 0 else float("inf")

    @property
    def passed(self) -> bool | None:
        return None if self.target is None else self.steps_per_s >= self.target


def single_env(steps: int) -> GymBench:
    from ccsim.gym.env import CcEnv

    env = CcEnv(**ENV_KWARGS)
    env.reset(seed=1)
    action = np.zeros(1, dtype=np.float32)
    started = time.perf_counter()
    for _ in range(steps):
        env.step(action)
    wall = time.perf_counter() - started
    return GymBench(
        "gym-env",
        "1 env: 10Mbps, 50ms, 1 agent flow, 1-RTT intervals",
        steps,
        wall,
        STEPS_PER_S_TARGET,
    )


def vector_env(steps: int, n: int = 8) -> GymBench:
    from ccsim.gym.vector import CcVectorEnv

    env = CcVectorEnv(n, **ENV_KWARGS)
    env.reset(seed=1)
    actions = np.zeros((n, 1), dtype=np.float32)
    started = time.perf_counter()
    for _ in range(steps // n):
        env.step(actions)
    wall = time.perf_counter() - started
    return GymBench(
        "gym-vector",
        f"vector of {n} (same network), env steps summed",
        (steps // n) * n,
        wall,
        None,
    )


def run_gym_bench(console: Console, quick: bool = False) -> list[GymBench]:
    steps = 5_000 if quick else 50_000
    with console.status("gym: one environment"):
        results = [single_env(steps)]
    with console.status("gym: vector of 8"):
        results.append(vector_env(steps))
    table = Table(title="ccsim.gym environment steps", title_justify="left")
    for header in ("benchmark", "steps", "wall s", "steps/s", "target", "result"):
        table.add_column(header, justify="left" if header == "benchmark" else "right")
    for r in results:
        result = {True: "[green]pass[/green]", False: "[red]miss[/red]", None: "-"}[r.passed]
        table.add_row(
            f"{r.name}: {r.description}",
            str(r.steps),
            f"{r.wall_s:.3f}",
            f"{r.steps_per_s:,.0f}",
            f"{r.target:,.0f}" if r.target else "-",
            result,
        )
    console.print(table)
    return results


def gym_records(results: list[GymBench]) -> list[dict[str, Any]]:
    return [
        {
            "name": r.name,
            "description": r.description,
            "steps": r.steps,
            "wall_s": r.wall_s,
            "steps_per_s": r.steps_per_s,
            "target_steps_per_s": r.target,
            "passed": r.passed,
        }
        for r in results
    ]
