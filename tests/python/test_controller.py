"""The external controller: a Python callback that retunes congestion controllers while
flows run (what a deadline-aware controller does), observed through the flows' behaviour."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import ccsim

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# One NewReno flow over a 0.25-BDP DropTail buffer: paper 003 Eq. (5) gives utilisation
# 0.8875 with beta = 0.5 and 1.0 with beta = 0.9.
SCENARIO: dict[str, Any] = {
    "duration": "300s",
    "measure": {"start": "160s", "end": "300s"},
    "bottleneck": {"rate": "10Mbps", "queue": {"kind": "droptail", "limit": "0.25bdp"}},
    "flows": [{"cc": {"kind": "newreno", "beta": 0.5}, "rtt": "100ms"}],
}


def test_controller_retune_changes_behaviour() -> None:
    seen: list[float] = []

    def controller(flows: list[dict[str, Any]]) -> list[tuple[int, str, float]]:
        seen.append(flows[0]["time_s"])
        assert flows[0]["bytes_left"] is None  # a bulk flow
        if flows[0]["time_s"] >= 100.0:
            return [(f["flow_id"], "beta", 0.9) for f in flows]
        return []

    plain = ccsim.run(SCENARIO).summary["utilisation"]
    tuned = ccsim.run(SCENARIO, controller=controller, control_interval="1s").summary["utilisation"]
    assert abs(plain - 0.8875) < 0.03
    assert tuned > 0.98
    # Called once per simulated second.
    assert seen[:3] == [1.0, 2.0, 3.0]
    assert len(seen) == 300


def test_controller_sees_a_finite_transfer_progress() -> None:
    scenario = {
        "duration": "20s",
        "bottleneck": {"rate": "10Mbps"},
        "flows": [{"rtt": "50ms", "size": "2MB"}],
    }
    left: list[int | None] = []

    def controller(flows: list[dict[str, Any]]) -> None:
        left.append(flows[0]["bytes_left"])

    ccsim.run(scenario, controller=controller, control_interval="200ms")
    assert left[0] is not None and left[0] < 2_000_000
    assert left == sorted(left, reverse=True)
    assert left[-1] == 0


def test_controller_bad_parameter_is_a_scenario_error() -> None:
    def controller(flows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"flow_id": 0, "name": "beta", "value": 2.0}]

    with pytest.raises(ccsim.ScenarioError, match=r"controller\.flows\[0\]\.cc\.beta"):
        ccsim.run(SCENARIO, controller=controller)


def test_controller_exception_stops_the_run() -> None:
    def controller(flows: list[dict[str, Any]]) -> None:
        raise RuntimeError("deadline missed")

    with pytest.raises(RuntimeError, match="deadline missed"):
        ccsim.run(SCENARIO, controller=controller)


def test_bad_control_interval() -> None:
    with pytest.raises(ccsim.ScenarioError, match="control_interval"):
        ccsim.run(SCENARIO, controller=lambda flows: None, control_interval="100")


def _cdg_share(result: ccsim.RunResult) -> float:
    flows = [f for f in result.summary["flows"] if f["protocol"] == "tcp"]
    cdg = sum(f["goodput_mbps"] for f in flows if f["algorithm"] == "cdg")
    return cdg / sum(f["goodput_mbps"] for f in flows)


def test_controller_retuning_cdg_g_every_rtt_takes_effect() -> None:
    """Paper 000's set-up (examples/cdg_vs_cubic.toml) with G = 120: a controller that
    sets G = 0.1 on the CDG flows every RTT (50 ms) makes CDG as yielding as a static
    G = 0.1 — the deadline-aware LBE use case of paper 000's future work."""
    example = (EXAMPLES / "cdg_vs_cubic.toml").read_text()
    assert "g = 6.0" in example
    permissive = example.replace("g = 6.0", "g = 120.0")
    yielding = example.replace("g = 6.0", "g = 0.1")
    calls = 0

    def controller(flows: list[dict[str, Any]]) -> list[tuple[int, str, float]]:
        nonlocal calls
        calls += 1
        return [(f["flow_id"], "g", 0.1) for f in flows if f["group"] == 0]

    tuned = _cdg_share(ccsim.run(permissive, controller=controller, control_interval="50ms"))
    static_120 = _cdg_share(ccsim.run(permissive))
    static_01 = _cdg_share(ccsim.run(yielding))
    assert calls == 300 * 20
    assert tuned < static_120 - 0.15
    assert abs(tuned - static_01) < 0.05
