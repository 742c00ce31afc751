"""Per-interval statistics of one flow, the observation features built from them and
Aurora's reward. Needs only numpy (no gymnasium), so a policy can run as a congestion
control (:mod:`ccsim.gym.policy_cc`) without the RL extra.

Features follow Aurora (Jay et al., ICML 2019) as PCC-RL computes them
(``src/common/sender_obs.py``, ``SenderMonitorInterval``):

- ``send_ratio``: send rate / delivery rate ("send ratio"; 1 when nothing was delivered
  or the ratio reaches 1000, as there);
- ``latency_ratio``: mean RTT of the interval / the smallest interval mean seen so far
  ("latency ratio" over "conn min latency");
- ``latency_gradient``: how fast the RTT grows, s per s: the least-squares slope of the
  interval's RTT samples against their packets' send times (the core's ``rtt_slope``), as
  PCC Vivace computes its "RTT gradient" (WebRTC's ``PccMonitorInterval::
  ComputeDelayGradient``). PCC-RL's "sent latency inflation" is the mean of the second
  half of the samples minus that of the first over the interval's send duration (a
  departure; both are 0 for a flat RTT and the queue's growth rate for a steady one).

and the plain quantities the literature also uses: ``send_rate_mbps``,
``delivery_rate_mbps``, ``rtt_ms`` (mean of the interval's samples), ``min_rtt_ms``,
``loss_rate`` (bytes lost / (lost + acked), PCC-RL's "loss ratio"), ``mark_rate`` (CE
marks per packet sent), ``cwnd_pkts``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ccsim import _core

#: The numbers the core gives per flow and interval (``Stepper.stats()`` order).
STAT_FIELDS: tuple[str, ...] = tuple(_core.Stepper.STAT_FIELDS)
_INDEX = {name: i for i, name in enumerate(STAT_FIELDS)}

#: Aurora's packet size for its reward's throughput term (PCC-RL ``BYTES_PER_PACKET``).
AURORA_PACKET_BYTES = 1500

#: Every observation feature: name -> (low, high) bounds of its value.
FEATURES: dict[str, tuple[float, float]] = {
    "send_ratio": (0.0, 1000.0),
    "latency_ratio": (0.0, 10000.0),
    "latency_gradient": (-1e3, 1e3),
    "send_rate_mbps": (0.0, 1e6),
    "delivery_rate_mbps": (0.0, 1e6),
    "rtt_ms": (0.0, 1e6),
    "min_rtt_ms": (0.0, 1e6),
    "loss_rate": (0.0, 1.0),
    "mark_rate": (0.0, 1.0),
    "cwnd_pkts": (0.0, 1e7),
}

#: Aurora's observation (PCC-RL's default ``--input-features``).
AURORA_FEATURES = ("latency_gradient", "latency_ratio", "send_ratio")


def interval_dict(row: list[float]) -> dict[str, float]:
    """One ``Stepper.stats()`` row as ``{field: value}``."""
    return dict(zip(STAT_FIELDS, row, strict=False))


def derived(
    stats: Mapping[str, float], min_rtt_ns: float, min_mean_rtt_ns: float
) -> dict[str, float]:
    """The observation features of one interval (``min_rtt_ns``: the smallest RTT sample
    the flow has seen so far, ``min_mean_rtt_ns`` the smallest interval mean; 0 if none)."""
    send = stats["send_rate_bps"]
    delivered = stats["delivery_rate_bps"]
    n = stats["rtt_samples"]
    mean_rtt = stats["rtt_mean_ns"] if n > 0 else stats["srtt_ns"]
    lost, acked = stats["bytes_lost"], stats["bytes_acked"]
    packets_sent = stats["bytes_sent"] / (stats["mss_bytes"] + 52.0)
    send_ratio = send / delivered if delivered > 0 and send < 1000.0 * delivered else 1.0
    return {
        "send_ratio": send_ratio,
        "latency_ratio": (mean_rtt / min_mean_rtt_ns if min_mean_rtt_ns > 0 and n > 0 else 1.0),
        "latency_gradient": stats["rtt_slope"],
        "send_rate_mbps": send / 1e6,
        "delivery_rate_mbps": delivered / 1e6,
        "rtt_ms": mean_rtt / 1e6,
        "min_rtt_ms": min_rtt_ns / 1e6,
        "loss_rate": lost / (lost + acked) if lost + acked > 0 else 0.0,
        "mark_rate": min(stats["packets_marked"] / packets_sent, 1.0) if packets_sent else 0.0,
        "cwnd_pkts": stats["cwnd_pkts"],
    }


def aurora_reward(stats: Mapping[str, float], features: Mapping[str, float]) -> float:
    """Aurora's reward (PCC-RL ``network_sim.py``, ``Network.run_for_dur``):
    ``(10 x throughput - 1000 x latency - 2000 x loss) x 0.001`` with throughput in
    1500-byte packets per second, latency the interval's mean RTT in seconds and loss the
    loss ratio."""
    throughput_pps = stats["delivery_rate_bps"] / (8.0 * AURORA_PACKET_BYTES)
    latency_s = features["rtt_ms"] / 1e3
    return (10.0 * throughput_pps - 1e3 * latency_s - 2e3 * features["loss_rate"]) * 1e-3


#: A reward function: ``reward(stats, features) -> float`` of one interval.
RewardFn = Callable[[Mapping[str, float], Mapping[str, float]], float]


def check_features(names: Any) -> tuple[str, ...]:
    names = tuple(names)
    unknown = [n for n in names if n not in FEATURES]
    if unknown or not names:
        raise ValueError(
            f"observation: unknown feature(s) {unknown} (known: {', '.join(FEATURES)})"
            if unknown
            else "observation: name at least one feature"
        )
    return names
