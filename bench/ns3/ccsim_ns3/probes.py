"""Probes of a row outside the targets: ccsim run with an ns-3 behaviour it can copy
(counterfactuals), and both simulators rerun with the flows' starts and RTTs shifted
(run-to-run spread)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .agreement import OUTSIDE
from .draws import NS3_TIMEOUT_S, PERTURBED_NS3_RUNS, PERTURBED_RUNS, perturbed_ns3_config
from .metrics import METRIC_KEYS, differences
from .model import Scenario
from .runner import run_ccsim_variant, run_ns3
from .translate import ns3_fqcodel_total

if TYPE_CHECKING:
    from .differential import Result

# ---------------------------------------------------------------------------------------
# Probes: ccsim runs that test a row's explanations
# ---------------------------------------------------------------------------------------


def _fq_codel_flow_backlog(s: dict) -> None:
    s["bottleneck"]["queue"]["backlog_check"] = "flow"


# (cause, applies to the scenario, change to ccsim's scenario): ns-3 behaviours that
# depart from Linux and that ccsim can be told to copy. A row's miss that disappears when
# ccsim copies ns-3 is explained by that departure, at source level, for that row.
# (ns-3's recovery exit, ns3-recovery-exit, and its delayed ACK of a CE segment,
# ns3-ce-delayed-ack, are corrected in the harness instead: `recovery_exit_linux 1`,
# `ce_quickack_linux 1`; ccsim's `recovery_exit = "ns3"` and `ce_quickack = false` remain
# for other comparisons.)
COUNTERFACTUALS: list[tuple[str, Callable[[Scenario], bool], Callable[[dict], None]]] = [
    (
        "ns3-fqcodel-flow-backlog",
        # not where the harness gives ns-3 Linux's test (with ECN: ns3_fqcodel_total)
        lambda sc: sc.queue.kind == "fq_codel" and not ns3_fqcodel_total(sc),
        _fq_codel_flow_backlog,
    ),
]


def _outside(cc: dict, ns: dict) -> list[str]:
    """The metrics of one ccsim run outside the targets against ns-3's (pooled) figures:
    one pair, so the targets alone (``agreement.verdict`` without an interval)."""
    return sorted(m for m, d in differences([cc], [ns]).items() if d["verdict"] == OUTSIDE)


def probe_ns3(
    sc: Scenario,
    r: Result,
    cc: dict,
    ns: dict,
    exe: Path,
    work: Path,
    ns_runs: Sequence[dict] | None = None,
) -> dict:
    """ns-3's own run-to-run spread for the row's misses: ``PERTURBED_NS3_RUNS`` ns-3
    reruns perturbed as ccsim's (the paired replicates ``ns_runs``, default run first,
    among them); the misses whose ccsim value lies within the range of ns-3's runs."""
    runs = list(ns_runs or [ns])
    for k in range(len(runs) - 1, PERTURBED_NS3_RUNS):
        runs.append(
            run_ns3(
                sc,
                False,
                exe,
                work,
                timeout_s=NS3_TIMEOUT_S,
                patch_config=perturbed_ns3_config(sc, k),
            )
        )
    return {
        "runs": len(runs) - 1,
        "within": [m for m in r.failed if _within_spread(m, runs, cc)],
    }


def _within_spread(metric: str, runs: Sequence[dict], ns: dict) -> bool:
    """ns-3's value of ``metric`` lies within the range of ccsim's ``runs``."""
    key = METRIC_KEYS.get(metric)
    if key is not None:
        xs = [m[key] for m in runs]
        return min(xs) <= ns[key] <= max(xs)
    shares = [m["group_share"] for m in runs]
    return all(
        min(s[i] for s in shares) <= x <= max(s[i] for s in shares)
        for i, x in enumerate(ns["group_share"])
    )


def probe(
    sc: Scenario, r: Result, cc: dict, ns: dict, cc_runs: Sequence[dict] | None = None
) -> dict:
    """For a row outside the targets: (1) ccsim run with each ns-3 behaviour of
    ``COUNTERFACTUALS`` that applies, and with all of them together, and the metrics
    still outside each; (2) ``PERTURBED_RUNS`` reruns with perturbed starts (the paired
    replicates ``cc_runs``, default run first, among them), and the missed metrics whose
    ns-3 value lies within the range of ccsim's runs (the default run included). ``cc``
    and ``ns`` are the two sides' (pooled) metrics."""
    if r.ok:
        return {}
    out: dict = {"counterfactual": {}}
    apply = [(cause, patch) for cause, applies, patch in COUNTERFACTUALS if applies(sc)]
    combos = [[x] for x in apply] + ([apply] if len(apply) > 1 else [])
    for combo in combos:

        def patch_all(s: dict, combo=combo) -> None:
            for _, patch in combo:
                patch(s)

        m = run_ccsim_variant(sc, patch_all)
        causes = [c for c, _ in combo]
        out["counterfactual"]["+".join(causes)] = {
            "causes": causes,
            "outside": _outside(m, ns),
        }
    runs = list(cc_runs or [cc])
    runs += [run_ccsim_variant(sc, None, k) for k in range(len(runs) - 1, PERTURBED_RUNS)]
    out["perturbed"] = {
        "runs": len(runs) - 1,
        "within": [m for m in r.failed if _within_spread(m, runs, ns)],
    }
    return out
