"""ccsim.gym: the stepping core, the Gymnasium environment and its vector form, and Python
policies run as congestion controls (issue 36)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ccsim
from ccsim import _core

gymnasium = pytest.importorskip(
    "gymnasium", reason="the rl extra (gymnasium) is not installed: pip install 'ccsim[rl]'"
)

from ccsim.gym import CcEnv, CcVectorEnv  # noqa: E402

LINK_BPS = 10e6


def _fixed(flows: list[dict], duration: str = "20s", buffer: str = "1bdp") -> dict:
    return {
        "duration": duration,
        "seed": 3,
        "bottleneck": {"rate": "10Mbps", "queue": {"kind": "droptail", "limit": buffer}},
        "flows": flows,
    }


def _strip_wall(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if "wall" not in k}


def test_a_stepped_run_without_commands_is_an_ordinary_run() -> None:
    """Advancing in uneven steps and reading statistics on the way changes nothing: the
    summary and every table equal those of one `run` call."""
    sc = _fixed([{"cc": "cubic", "rtt": "30ms"}, {"cc": "newreno", "rtt": "60ms"}], "5s")
    text = json.dumps(sc)
    ref_summary, ref_tables, _ = _core.run(text, "json")
    stepper = _core.Stepper(text, "json")
    acked = [0.0, 0.0]
    for t_ms in (7, 100, 101, 1500, 3333):
        stepper.advance(t_ms * 1_000_000)
        for row in stepper.stats():
            acked[int(row[0])] += row[STAT.index("bytes_acked")]
    summary, tables, _ = stepper.finish()
    assert _strip_wall(json.loads(summary)) == _strip_wall(json.loads(ref_summary))
    assert tables == ref_tables
    # The interval counts add up to what the run delivered by 3.333 s (no double counting).
    assert acked[0] > 0 and acked[1] > 0


STAT = list(_core.Stepper.STAT_FIELDS)


def test_check_env_passes() -> None:
    from gymnasium.utils.env_checker import check_env

    check_env(CcEnv(episode_steps=20), skip_render_check=True)
    check_env(
        CcEnv(episode_steps=20, control="cwnd", action="absolute", competing=(0, 1)),
        skip_render_check=True,
    )


def test_vector_env_follows_the_vector_api() -> None:
    env = CcVectorEnv(3, episode_steps=4)
    obs, _info = env.reset(seed=5)
    assert obs.shape == (3, *env.single_observation_space.shape)
    assert env.observation_space.contains(obs)
    one = CcEnv(episode_steps=4)
    # Sub-environment i is seeded seed + i, as Gymnasium's vector environments do.
    assert np.array_equal(obs[1], one.reset(seed=6)[0])
    for step in range(6):
        obs, rew, _term, trunc, _info = env.step(env.action_space.sample())
        assert obs.shape[0] == rew.shape[0] == 3 and env.observation_space.contains(obs)
        # Truncated at step 4; the next step resets (next-step autoreset) with reward 0.
        assert trunc.all() == (step == 3)
        if step == 4:
            assert (rew == 0).all()
    env.close()


def _episode(seed: int, actions: np.ndarray) -> tuple[list[np.ndarray], list[float], dict]:
    env = CcEnv(competing=(0, 2), buffer_bdp=(0.2, 2.0), episode_steps=len(actions))
    obs, info = env.reset(seed=seed)
    out, rewards = [obs], []
    for a in actions:
        obs, r, *_ = env.step(a)
        out.append(obs)
        rewards.append(r)
    return out, rewards, info["network"]


def test_same_seed_same_actions_same_episode() -> None:
    actions = np.random.default_rng(0).uniform(-10, 10, size=(60, 1)).astype(np.float32)
    obs_a, rew_a, net_a = _episode(11, actions)
    obs_b, rew_b, net_b = _episode(11, actions)
    assert net_a == net_b
    assert all(np.array_equal(a, b) for a, b in zip(obs_a, obs_b, strict=False))
    assert rew_a == rew_b
    _obs_c, rew_c, net_c = _episode(12, actions)
    assert net_c != net_a and rew_c != rew_a


POLICIES = '''
import numpy as np

def hold_90(obs):
    """Absolute rate: 90 % of the 10 Mbit/s link, in Mbit/s."""
    return 9.0

class Aimd:
    """Reno's rule on the window, decided once per interval (one base RTT): +1 packet per
    round trip, halve on a loss, at most once per round trip (the losses of one episode
    are reported over the following round trip, as Reno's recovery ignores them)."""
    features = ("loss_rate", "rtt_ms", "min_rtt_ms")
    history = 1

    def __init__(self):
        self.cwnd = 10.0
        self.quiet_rtts = 0.0

    def __call__(self, obs):
        loss_rate, rtt_ms, min_rtt_ms = obs
        rtts = min_rtt_ms / rtt_ms if rtt_ms > 0 and min_rtt_ms > 0 else 1.0
        self.quiet_rtts -= rtts
        if loss_rate > 0 and self.quiet_rtts <= 0:
            self.cwnd = max(self.cwnd / 2, 2.0)
            self.quiet_rtts = 1.0
        elif loss_rate == 0:
            self.cwnd += rtts
        return self.cwnd
'''


@pytest.fixture
def policies(tmp_path: Path) -> Path:
    path = tmp_path / "policies.py"
    path.write_text(POLICIES)
    return path


def _goodput_bps(result: ccsim.results.RunResult, flow: int = 0) -> float:
    return result.summary["flows"][flow]["goodput_mbps"] * 1e6


def test_a_policy_holding_90_percent_of_the_link_gets_90_percent_and_no_queue(
    policies: Path,
) -> None:
    cc = {
        "kind": "policy",
        "policy": f"{policies}:hold_90",
        "action": "absolute",
        "rate_bps": "9Mbps",
    }
    result = ccsim.run(_fixed([{"cc": cc, "rtt": "40ms"}], "10s"))
    bneck = result.summary["bottleneck"]
    # Paced at 9 Mbit/s on the wire, packets 1.33 ms apart on a link that sends one in
    # 1.2 ms: 90 % busy, and no packet waits behind another.
    assert bneck["utilisation"] == pytest.approx(0.9, abs=0.005)
    assert result.summary["flows"][0]["throughput_mbps"] == pytest.approx(9.0, rel=0.005)
    assert bneck["sojourn_p99_ms"] < 0.01
    assert bneck["drops"] == 0


def test_python_aimd_matches_newreno(policies: Path) -> None:
    sc_reno = _fixed([{"cc": "newreno", "rtt": "40ms"}], "30s")
    cc = {"kind": "policy", "policy": f"{policies}:Aimd", "mode": "cwnd", "action": "absolute"}
    sc_aimd = _fixed([{"cc": cc, "rtt": "40ms"}], "30s")
    reno = _goodput_bps(ccsim.run(sc_reno))
    aimd = _goodput_bps(ccsim.run(sc_aimd))
    assert aimd == pytest.approx(reno, rel=0.10)
    assert aimd < LINK_BPS


def test_policy_errors_name_the_key(policies: Path) -> None:
    cc = {"kind": "policy", "policy": f"{policies}:nothing"}
    with pytest.raises(ccsim.ScenarioError, match=r"flows\[0\]\.cc\.policy"):
        ccsim.run(_fixed([{"cc": cc, "rtt": "40ms"}], "1s"))
    cc = {"kind": "policy", "policy": "no_colon"}
    with pytest.raises(ccsim.ScenarioError, match=r"flows\[0\]\.cc\.policy"):
        ccsim.validate(_fixed([{"cc": cc, "rtt": "40ms"}], "1s"))


def test_latency_gradient_is_the_queues_growth_rate() -> None:
    """Paced at 12 Mbit/s into a 10 Mbit/s link with room to queue: in the fluid model each
    packet waits 0.2 s longer per s of sending (the excess 2 Mbit/s drained at 10), so the
    RTT grows 0.2 s per s against send time. The least-squares slope over send times gives
    that; the old last-minus-first over the interval (ack time, 1.2x longer) gave 0.167."""
    agent = {"kind": "policy", "rate_bps": "12Mbps", "cwnd_gain": 100}
    env = CcEnv(
        scenario=_fixed([{"cc": agent, "rtt": "40ms"}], "5s", buffer="50bdp"),
        observation=("latency_gradient",),
        history=1,
        action="absolute",
        episode_steps=20,
    )
    env.reset(seed=1)
    gradients = [env.step([12.0])[4]["latency_gradient"] for _ in range(8)]
    # from the second interval on (the first sees the queue start), every one is steady
    assert gradients[1:] == pytest.approx([0.2] * 7, rel=0.03)
