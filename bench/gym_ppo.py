"""docs/gym.md's tutorial: train a small PPO policy (Stable-Baselines3) on
``ccsim.gym.CcEnv`` (10-50 Mbit/s, 10-100 ms, 0.5-4 BDP DropTail buffers), save it, load it
as a ``policy`` congestion control and evaluate it with ``ccsim sweep`` against CUBIC and
BBR over RTT and buffer size; draws ``docs/img/gym_ppo_vs_cubic_bbr.png``.

    pip install 'ccsim[rl]'   # gymnasium, stable-baselines3 (and PyTorch)
    nice -n 10 python bench/gym_ppo.py --timesteps 150000 --seed 1 -o /tmp/gym_ppo

Not a test (minutes; needs PyTorch). Training uses one torch thread.

The reward is not Aurora's. Aurora's ``10 x packets/s - 1000 x latency_s - 2000 x loss``
was tuned for PCC-RL's 1.2-6 Mbit/s links; at 10-50 Mbit/s its throughput term dominates
(``bench/gym_cem.py``'s policy learnt to send far above the link rate). Here every term is
a fraction, so none can outgrow the others whatever the link::

    reward = delivered / link rate - (mean RTT / base RTT - 1) - 10 x loss ratio

Sending at the link rate with an empty queue earns 1 per interval, the most there is;
under-sending by x % costs x/100, a standing queue of x % of the base RTT costs x/100 too,
and each 1 % of bytes lost 0.1. The link rate and base RTT are the environment's (known to
the trainer, not to the policy, whose observation stays Aurora's).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from ccsim.gym import CcEnv

REPO = Path(__file__).resolve().parent.parent
ENV: dict[str, Any] = {
    "rate_mbps": (10, 50),
    "rtt_ms": (10, 100),
    "buffer_bdp": (0.5, 4),
    "episode_steps": 200,
}
#: Weights of the reward's queueing-delay and loss terms (see the module's docstring).
DELAY_WEIGHT, LOSS_WEIGHT = 1.0, 10.0
#: The policy acts in [-1, 1] (Stable-Baselines3's advice for Box actions); times this is
#: the environment's multiplicative action: +-1 changes the rate by +-25 %.
ACTION_SCALE = 10.0


def prepare(obs: np.ndarray) -> np.ndarray:
    """Aurora's observation (latency gradient, latency ratio, send ratio per interval) moved
    to around 0 and clipped, so that one congested interval (a send ratio of 1000) cannot
    swamp the network's inputs. The policy applies the same function at evaluation."""
    x = np.asarray(obs, dtype=np.float32).reshape(-1, 3)
    out = np.empty_like(x)
    out[:, 0] = np.clip(x[:, 0], -1.0, 1.0)  # s of RTT per s
    out[:, 1] = np.clip(x[:, 1] - 1.0, 0.0, 4.0)
    out[:, 2] = np.clip(x[:, 2] - 1.0, -1.0, 4.0)
    return out.reshape(-1)


class LinkReward(gymnasium.Wrapper):
    """The tutorial's environment: :func:`prepare`'s observation and the link-normalised
    reward of the module's docstring (computed from the step's info and the episode's
    drawn network)."""

    def __init__(self, env: CcEnv):
        super().__init__(env)
        n = env.observation_space.shape[0]
        self.observation_space = gymnasium.spaces.Box(-1.0, 4.0, (n,), np.float32)
        self.action_space = gymnasium.spaces.Box(-1.0, 1.0, (1,), np.float32)

    def reset(self, **kwargs: Any) -> tuple[np.ndarray, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        return prepare(obs), info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        scaled = ACTION_SCALE * np.clip(np.asarray(action, dtype=np.float32), -1.0, 1.0)
        obs, _, terminated, truncated, info = self.env.step(scaled)
        net = self.env.unwrapped.network
        throughput = info["delivery_rate_mbps"] * 1e6 / net["rate_bps"]
        queueing = max(info["rtt_ms"] / net["rtt_ms"] - 1.0, 0.0)
        reward = throughput - DELAY_WEIGHT * queueing - LOSS_WEIGHT * info["loss_rate"]
        return prepare(obs), float(reward), terminated, truncated, info


def make_env() -> LinkReward:
    return LinkReward(CcEnv(**ENV))


def train(timesteps: int, seed: int, out: Path) -> None:
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    torch.set_num_threads(1)
    envs = make_vec_env(make_env, n_envs=4, seed=seed)
    model = PPO(
        "MlpPolicy",
        envs,
        n_steps=512,
        batch_size=256,
        n_epochs=5,
        gamma=0.95,
        learning_rate=3e-4,
        # a start standard deviation of 0.37: +-9 % rate changes while exploring
        policy_kwargs={"net_arch": [32, 32], "log_std_init": -1.0},
        seed=seed,
        verbose=0,
    )
    start = time.monotonic()
    done = 0
    while done < timesteps:
        chunk = min(4 * 512 * 5, timesteps - done)
        model.learn(total_timesteps=chunk, reset_num_timesteps=False)
        done = model.num_timesteps
        rewards = [ep["r"] / ep["l"] for ep in model.ep_info_buffer]
        print(
            f"{done:7d} steps, {time.monotonic() - start:6.0f} s: mean reward per step "
            f"{np.mean(rewards) if rewards else float('nan'):.3f} "
            f"(last {len(rewards)} episodes)",
            flush=True,
        )
    model.save(out / "model.zip")


def evaluate_in_env(out: Path, seeds: range) -> dict[str, float]:
    """Mean reward per step of the deterministic policy on held-out episodes, and of
    holding the start rate (a baseline the policy should beat)."""
    from stable_baselines3 import PPO

    model = PPO.load(out / "model.zip", device="cpu")
    means: dict[str, float] = {}
    for name in ("learned", "hold"):
        totals = []
        for seed in seeds:
            env = make_env()
            obs, _ = env.reset(seed=seed)
            total, steps, done = 0.0, 0, False
            while not done:
                action = model.predict(obs, deterministic=True)[0] if name == "learned" else [0.0]
                obs, r, term, trunc, _ = env.step(action)
                total, steps, done = total + r, steps + 1, term or trunc
            totals.append(total / steps)
        means[name] = float(np.mean(totals))
    return means


POLICY_MODULE = '''# aurora_policy.py: the PPO model bench/gym_ppo.py trained (model.zip beside this
# file) as a ccsim `policy` congestion control; Aurora's observation, prepared as in training
from pathlib import Path

import numpy as np
import torch
from stable_baselines3 import PPO

torch.set_num_threads(1)
_MODEL = PPO.load(Path(__file__).with_name("model.zip"), device="cpu")


def prepare(obs):
    x = np.asarray(obs, dtype=np.float32).reshape(-1, 3)
    out = np.empty_like(x)
    out[:, 0] = np.clip(x[:, 0], -1.0, 1.0)
    out[:, 1] = np.clip(x[:, 1] - 1.0, 0.0, 4.0)
    out[:, 2] = np.clip(x[:, 2] - 1.0, -1.0, 4.0)
    return out.reshape(-1)


def policy(obs):
    action = _MODEL.predict(prepare(obs), deterministic=True)[0]
    return 10.0 * np.clip(action, -1.0, 1.0)
'''

SCENARIO = """duration = "30s"
seed = 1
[bottleneck]
rate = "20Mbps"
queue = { kind = "droptail", limit = "1bdp" }
[[flows]]
cc = "cubic"
rtt = "40ms"
"""


def sweep(out: Path) -> Path:
    from ccsim.cli import main as ccsim_main

    (out / "aurora_policy.py").write_text(POLICY_MODULE)
    (out / "scenario.toml").write_text(SCENARIO)
    policy = f"{out}/aurora_policy.py:policy"
    (out / "aurora_sweep.toml").write_text(
        'base = "scenario.toml"\n[grid]\n'
        '"flows[0].rtt" = ["10ms", "40ms", "100ms"]\n'
        '"bottleneck.queue.limit" = ["0.5bdp", "1bdp", "4bdp"]\n'
        f'"flows[0].cc" = ["cubic", "bbr", {{ kind = "policy", policy = "{policy}", '
        'rate_bps = "10Mbps" }]\n'
    )
    status = ccsim_main(
        ["sweep", str(out / "aurora_sweep.toml"), "-o", str(out / "eval"), "--force", "-j", "1"]
    )
    if status:
        raise SystemExit(f"ccsim sweep failed ({status})")
    return out / "eval" / "results.parquet"


def table(results: Path) -> None:
    import pyarrow.parquet as pq

    print("| RTT | buffer | CC | utilisation | queueing delay (ms) | drop probability |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in sorted(
        pq.read_table(results).to_pylist(),
        key=lambda r: (
            float(r["flows[0].rtt"].rstrip("ms")),
            float(r["bottleneck.queue.limit"].rstrip("bdp")),
            _name(r["flows[0].cc"]),
        ),
    ):
        print(
            f"| {r['flows[0].rtt']} | {r['bottleneck.queue.limit']} | {_name(r['flows[0].cc'])} "
            f"| {r['utilisation']:.3f} | {r['sojourn_mean_ms']:.1f} | {r['drop_probability']:.4f} |"
        )


def _name(cc: str) -> str:
    # the sweep's table holds each axis value as JSON text ('"cubic"', '{"kind": ...}')
    name = cc.strip('"')
    return "learned (PPO)" if "policy" in name else {"cubic": "CUBIC", "bbr": "BBR"}.get(name, name)


def delayed_ack_check(out: Path) -> None:
    """The learned policy on the 10 ms path with and without the receiver's delayed ACKs
    (on by default): see docs/gym.md on why the short-RTT result depends on them."""
    import ccsim

    cc = {"kind": "policy", "policy": f"{out}/aurora_policy.py:policy", "rate_bps": "10Mbps"}
    for delayed_ack in (True, False):
        summary = ccsim.run(
            {
                "duration": "30s",
                "seed": 1,
                "bottleneck": {"rate": "20Mbps", "queue": {"kind": "droptail", "limit": "1bdp"}},
                "flows": [{"cc": cc, "rtt": "10ms", "delayed_ack": delayed_ack}],
            }
        ).summary["bottleneck"]
        print(
            f"10 ms, 1 BDP, delayed_ack = {str(delayed_ack).lower()}: utilisation "
            f"{summary['utilisation']:.3f}, queueing delay {summary['sojourn_mean_ms']:.1f} ms"
        )


def figure(results: Path, png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pyarrow.parquet as pq

    rows = [r for r in pq.read_table(results).to_pylist() if r["status"] == "ok"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.9))
    for rtt, marker in (("10ms", "o"), ("40ms", "s"), ("100ms", "^")):
        for cc, color in (("CUBIC", "C0"), ("BBR", "C1"), ("learned (PPO)", "C2")):
            pts = sorted(
                (float(r["bottleneck.queue.limit"].rstrip("bdp")), r)
                for r in rows
                if r["flows[0].rtt"] == rtt and _name(r["flows[0].cc"]) == cc
            )
            x = [b for b, _ in pts]
            axes[0].plot(
                x,
                [r["utilisation"] for _, r in pts],
                marker=marker,
                color=color,
                label=f"{cc}, {rtt}",
            )
            axes[1].plot(x, [r["sojourn_mean_ms"] for _, r in pts], marker=marker, color=color)
    axes[0].set(xlabel="buffer (BDP)", ylabel="bottleneck utilisation", ylim=(0, 1.05))
    axes[1].set(xlabel="buffer (BDP)", ylabel="mean queueing delay (ms)")
    # CUBIC's queue reaches hundreds of ms, the learned policy's a few
    axes[1].set_yscale("symlog", linthresh=1.0)
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xticks([0.5, 1, 4], ["0.5", "1", "4"])
        ax.minorticks_off()
        ax.grid(alpha=0.3)
    fig.legend(*axes[0].get_legend_handles_labels(), fontsize=7, ncol=3, loc="lower center")
    fig.suptitle("20 Mbit/s DropTail, one flow, 30 s: PPO policy vs CUBIC vs BBR")
    fig.tight_layout(rect=(0, 0.16, 1, 1))
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=120)
    print(f"wrote {png}")


def redraw(out: Path) -> None:
    """Only the figure, from OUT's finished sweep."""
    figure(out / "eval" / "results.parquet", REPO / "docs" / "img" / "gym_ppo_vs_cubic_bbr.png")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--timesteps", type=int, default=150_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("-o", "--out", type=Path, default=Path("gym_ppo"))
    p.add_argument("--skip-training", action="store_true", help="reuse OUT/model.zip")
    args = p.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    if not args.skip_training:
        start = time.monotonic()
        train(args.timesteps, args.seed, out)
        print(f"trained {args.timesteps} steps in {time.monotonic() - start:.0f} s")
    print(
        "held-out episodes (seeds 10000-10019), mean reward per step:",
        evaluate_in_env(out, range(10_000, 10_020)),
    )
    results = sweep(out)
    table(results)
    delayed_ack_check(out)
    figure(results, REPO / "docs" / "img" / "gym_ppo_vs_cubic_bbr.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
