"""A small learned congestion control without PyTorch: the cross-entropy method on a
linear policy over Aurora's observation, trained on ``ccsim.gym.CcEnv`` (10-50 Mbit/s,
10-100 ms, 0.5-4 BDP buffers), then evaluated with ``ccsim sweep`` against CUBIC and BBR
over RTT and buffer size. Writes the policy (``policy.npz`` + ``cem_policy.py``), the sweep
and ``docs/img/gym_cem_vs_cubic_bbr.png``.

    python bench/gym_cem.py --minutes 4 -o /tmp/gym_cem

Not a test (minutes). The docs' tutorial trains PPO (Stable-Baselines3) the same way; this
script exists so the comparison can be drawn on a machine without PyTorch.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from ccsim.gym import CcEnv

REPO = Path(__file__).resolve().parent.parent
ENV = {"rate_mbps": (10, 50), "rtt_ms": (10, 100), "buffer_bdp": (0.5, 4), "episode_steps": 150}


def act(theta: np.ndarray, obs: np.ndarray) -> float:
    # Aurora's features are ratios around 1 (send, latency) and a gradient around 0.
    return float(np.tanh(theta[:-1] @ (obs - OBS_CENTER) + theta[-1]) * 10.0)


OBS_CENTER = np.tile([0.0, 1.0, 1.0], 10)


def episode_return(theta: np.ndarray, seed: int) -> float:
    env = CcEnv(**ENV)
    obs, _ = env.reset(seed=seed)
    total = 0.0
    for _ in range(ENV["episode_steps"]):
        obs, r, term, trunc, _ = env.step([act(theta, obs)])
        total += r
        if term or trunc:
            break
    return total


def train(minutes: float, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dim = OBS_CENTER.size + 1
    mean, std = np.zeros(dim), np.full(dim, 0.5)
    pop, elite, episodes = 24, 6, 3
    deadline = time.monotonic() + minutes * 60
    it = 0
    while time.monotonic() < deadline:
        thetas = mean + std * rng.standard_normal((pop, dim))
        seeds = rng.integers(1, 2**31 - 1, size=episodes)
        scores = np.array([np.mean([episode_return(t, int(s)) for s in seeds]) for t in thetas])
        best = thetas[np.argsort(scores)[-elite:]]
        mean, std = best.mean(axis=0), best.std(axis=0) + 0.02
        it += 1
        print(
            f"iteration {it}: mean return {scores.mean():.1f}, best {scores.max():.1f}", flush=True
        )
    return mean


POLICY_MODULE = '''"""The linear policy bench/gym_cem.py trained (policy.npz beside it)."""
from pathlib import Path

import numpy as np

_THETA = np.load(Path(__file__).with_name("policy.npz"))["theta"]
_CENTER = np.tile([0.0, 1.0, 1.0], 10)


def policy(obs):
    return float(np.tanh(_THETA[:-1] @ (obs - _CENTER) + _THETA[-1]) * 10.0)
'''


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=4.0)
    p.add_argument("-o", "--out", type=Path, default=Path("gym_cem"))
    args = p.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    theta = train(args.minutes)
    np.savez(out / "policy.npz", theta=theta)
    (out / "cem_policy.py").write_text(POLICY_MODULE)
    (out / "scenario.toml").write_text(
        'duration = "30s"\nseed = 1\n[bottleneck]\nrate = "20Mbps"\n'
        'queue = { kind = "droptail", limit = "1bdp" }\n[[flows]]\ncc = "cubic"\nrtt = "40ms"\n'
    )
    policy = f"{out}/cem_policy.py:policy"
    (out / "sweep.toml").write_text(
        'base = "scenario.toml"\n[grid]\n'
        '"flows[0].rtt" = ["10ms", "40ms", "100ms"]\n'
        '"bottleneck.queue.limit" = ["0.5bdp", "1bdp", "4bdp"]\n'
        f'"flows[0].cc" = ["cubic", "bbr", {{ kind = "policy", policy = "{policy}", '
        'rate_bps = "10Mbps" }]\n'
    )
    subprocess.run(
        ["ccsim", "sweep", str(out / "sweep.toml"), "-o", str(out / "eval"), "--force"],
        check=True,
    )
    figure(out / "eval" / "results.parquet", REPO / "docs" / "img" / "gym_cem_vs_cubic_bbr.png")
    return 0


def figure(results: Path, png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pyarrow.parquet as pq

    rows = pq.read_table(results).to_pylist()
    label = {"cubic": "CUBIC", "bbr": "BBR"}
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for rtt, marker in (("10ms", "o"), ("40ms", "s"), ("100ms", "^")):
        for cc, color in (("cubic", "C0"), ("bbr", "C1"), ("policy", "C2")):
            pts = [
                r
                for r in rows
                if r["flows[0].rtt"] == rtt and cc in r["flows[0].cc"] and r["status"] == "ok"
            ]
            pts.sort(key=lambda r: float(r["bottleneck.queue.limit"].rstrip("bdp")))
            x = [float(r["bottleneck.queue.limit"].rstrip("bdp")) for r in pts]
            name = label.get(cc, "learned (CEM, linear)")
            axes[0].plot(
                x,
                [r["utilisation"] for r in pts],
                marker=marker,
                color=color,
                label=f"{name}, {rtt}",
            )
            axes[1].plot(x, [r["sojourn_mean_ms"] for r in pts], marker=marker, color=color)
            axes[2].plot(x, [r["drop_probability"] for r in pts], marker=marker, color=color)
    axes[0].set(xlabel="buffer (BDP)", ylabel="bottleneck utilisation", xscale="log")
    axes[1].set(xlabel="buffer (BDP)", ylabel="mean queueing delay (ms)", xscale="log")
    axes[2].set(xlabel="buffer (BDP)", ylabel="drop probability", xscale="log")
    fig.legend(*axes[0].get_legend_handles_labels(), fontsize=7, ncol=3, loc="lower center")
    fig.suptitle("20 Mbit/s, one flow, 30 s: learned policy vs CUBIC vs BBR")
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=120)
    print(f"wrote {png}")


if __name__ == "__main__":
    sys.exit(main())
