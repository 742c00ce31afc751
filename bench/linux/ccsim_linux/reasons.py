"""Why a metric missed. Two parts: what the statistics say (``kind``: a difference the
interval excludes from the band, or an interval too wide to decide with this many pairs),
and a source-level cause where one has been traced (``CAUSES``), else "not yet
explained"."""

from __future__ import annotations

import math
from typing import Any

NOT_YET = "not yet explained"

#: Traced causes: (predicate on the case and metric, the cause). Each cites the kernel
#: source or sysctl behind it and the evidence (see bench/LINUX.md's notes).
CAUSES: list[tuple[Any, str]] = [
    (
        lambda case, metric: (
            case.name == "cubic-droptail-5M-200ms" and metric == "drop probability"
        ),
        "traced (note 1): a window-edge effect of a timing difference, not of loss size: the "
        "same loss episodes, of the same sizes, fall at 4.0-4.4 s in ccsim (inside the window "
        "from 4 s) and at 3.6-4.0 s in Linux (before it)",
    ),
    (
        lambda case, metric: (
            case.name == "random-26" and metric in ("sojourn p50", "drop probability")
        ),
        "traced to the slow-start exit before the window, not to RACK-TLP's per-episode "
        "behaviour: inside 4-12 s ccsim with and without RACK-TLP handles each loss the same "
        "way (one cwnd reduction per episode, 24 -> 12 by PRR over ~30 ms, the loss marked "
        "21.8 ms after the drop in both; no spurious retransmit: retransmits = drops). "
        "What differs is PIE's drop probability left over from the slow-start overshoot "
        "(cwnd 662, 415 packets queued): with RACK lost retransmissions are found and resent "
        "(tcp_rack_detect_loss) and each recovery ends at cwnd = "
        "ssthresh far above the 19-packet pipe (tcp_end_cwnd_reduction) and its line-rate "
        "burst meets PIE at p ~ 1, so 8 halvings before 4 s instead of 3-4 and about twice the "
        "drops (868-1104 vs 495-545, seeds 1-6); PIE's p at 4 s is 0.63-0.84 vs 0.12-0.24 "
        "and decays to ~0 only by 8 s, so from 4 to 8 s PIE drops at 2-3 packets of queue: "
        "15-19 drops vs 11-12 and sojourn p50 4.5-6.1 ms vs 9.0-12.0 ms. The stored Linux runs "
        "keep only window totals, so whether Linux's slow-start exit leaves PIE lower (and "
        "which side departs in that episode) is not yet explained at source level",
    ),
]


def kind(row: dict[str, Any]) -> str:
    d, hw, tol, n = row["d"], row["hw"], row["tol"], row["n"]
    if math.isinf(d):
        return "one side has none at all (relative difference undefined)"
    if hw is None:
        return "one pair, no interval"
    if hw > 3 * tol:
        return (
            f"undecided: the 95% interval (±{hw:.3g}) is wider than three target bands with "
            f"{n} pairs (the runs' own spread)"
        )
    return "a difference: the interval lies outside the target band"


def reason_for(
    case: Any, metric: str, row: dict[str, Any], entry: dict[str, Any] | None = None
) -> str:
    cause = next((c for pred, c in CAUSES if pred(case, metric)), NOT_YET)
    over = [r for r in (entry or {}).get("runs", []) if not r["timing"]["within_tolerance"]]
    if over:
        worst = max(r["timing"]["p99_us"] for r in over)
        cause = (
            f"the emulator's timing error exceeded its tolerance in {len(over)} run(s) "
            f"(p99 up to {worst:.0f} µs; the machine was loaded), so this case's Linux side "
            f"is not trustworthy; {cause}"
        )
    return f"{kind(row)}; {cause}"
