"""NewReno under Bernoulli link loss against Mathis et al. (CCR 1997) and Padhye et al.
("Modeling TCP throughput: a simple model and its empirical validation", SIGCOMM 1998,
Eq. (30), with timeouts), from 0.1 % to 10 % loss. Mathis ignores timeouts, so it
overestimates above ~2 %; Padhye's full model accounts for them. Not a test (the Mathis
check at 0.1-2 % is `crates/ccsim-core/tests/link_loss_mathis.rs`); prints a table:

    python bench/mathis_padhye.py
"""

from __future__ import annotations

import math

import ccsim

MSS_BYTES = 1448
B = 1  # segments per ACK: delayed_ack = false
MIN_RTO_S = 0.2  # ccsim's default min_rto


def mathis_mbps(p: float, rtt_s: float) -> float:
    return MSS_BYTES * 8 / rtt_s * math.sqrt(3 / (2 * B * p)) / 1e6


def padhye_mbps(p: float, rtt_s: float) -> float:
    # T0: the retransmission timeout, about min_rto plus the RTT (Linux's srtt + rttvar
    # term with the minimum), for a flow whose RTT barely varies.
    t0 = MIN_RTO_S + rtt_s
    denom = rtt_s * math.sqrt(2 * B * p / 3) + t0 * min(1.0, 3 * math.sqrt(3 * B * p / 8)) * p * (
        1 + 32 * p * p
    )
    return MSS_BYTES * 8 / denom / 1e6


def measure(p: float, rtt_ms: int, duration_s: int) -> float:
    scenario = {
        "duration": f"{duration_s}s",
        "measure": {"start": "10s"},
        "bottleneck": {
            "rate": "1Gbps",
            "queue": {"kind": "droptail", "limit": "50MB"},
            "loss": p,
        },
        "flows": [{"cc": "newreno", "rtt": f"{rtt_ms}ms", "delayed_ack": False}],
    }
    return ccsim.run(scenario).summary["flows"][0]["goodput_mbps"]


def main() -> None:
    head = ("p", "RTT", "goodput", "Mathis", "ratio", "Padhye", "ratio")
    print(" ".join(f"{h:>8}" for h in head))
    for rtt_ms in (20, 60):
        for p in (0.001, 0.005, 0.01, 0.02, 0.05, 0.1):
            g = measure(p, rtt_ms, 400 if rtt_ms == 20 else 800)
            m, pd = mathis_mbps(p, rtt_ms / 1e3), padhye_mbps(p, rtt_ms / 1e3)
            row = (f"{p}", f"{rtt_ms}ms", *(f"{x:.3f}" for x in (g, m, g / m, pd, g / pd)))
            print(" ".join(f"{c:>8}" for c in row))


if __name__ == "__main__":
    main()
