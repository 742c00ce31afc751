"""Every compared figure, computed the same way for both simulators from the raw counts
each reports, and the agreement checks against the targets of issue 5."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from . import agreement


@dataclass
class RawRun:
    """What one simulator reports about one run, before any summarising."""

    window_s: float
    rate_bps: float
    flow_bytes: list[float]  # application bytes delivered in order inside the window
    flow_groups: list[int]  # index of each flow's group
    departed_bytes: float  # bytes that left the bottleneck queue inside the window
    arrivals: int
    drops: int
    marks: int
    sojourn_ms: np.ndarray  # sojourn-time distribution: values (ms, ascending) ...
    sojourn_weight: np.ndarray  # ... and their probability mass
    wall_s: float
    events: int
    bottleneck_packets: int
    extra: dict = field(default_factory=dict)


def distribution_from_samples(samples_ns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    values, counts = np.unique(np.asarray(samples_ns, dtype=np.int64), return_counts=True)
    if counts.sum() == 0:
        return np.zeros(0), np.zeros(0)
    return values / 1e6, counts / counts.sum()


def distribution_from_cdf(values_ms: Sequence[float], cdf: Sequence[float]):
    v = np.asarray(values_ms, dtype=float)
    c = np.asarray(cdf, dtype=float)
    if len(v) == 0:
        return np.zeros(0), np.zeros(0)
    w = np.diff(np.concatenate([[0.0], c]))
    return v, w / w.sum()


def quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    """Smallest value whose cumulative probability reaches ``q`` (HdrHistogram's rule)."""
    if len(values) == 0:
        return math.nan
    cum = np.cumsum(weights)
    i = int(np.searchsorted(cum, q * cum[-1] * (1 - 1e-12), side="left"))
    return float(values[min(i, len(values) - 1)])


def jain(xs: Sequence[float]) -> float:
    x = np.asarray(xs, dtype=float)
    s2 = float((x * x).sum())
    return 1.0 if len(x) == 0 or s2 == 0 else float(x.sum() ** 2 / (len(x) * s2))


def metrics(raw: RawRun) -> dict:
    """Every compared figure, computed the same way for both simulators."""
    goodput = [b * 8 / raw.window_s / 1e6 for b in raw.flow_bytes]
    total = sum(goodput)
    n_groups = max(raw.flow_groups) + 1 if raw.flow_groups else 0
    group_goodput = [0.0] * n_groups
    for g, x in zip(raw.flow_groups, goodput, strict=True):
        group_goodput[g] += x
    v, w = raw.sojourn_ms, raw.sojourn_weight
    mean = float((v * w).sum() / w.sum()) if len(v) else math.nan
    return {
        "utilisation": raw.departed_bytes * 8 / (raw.rate_bps * raw.window_s),
        "goodput_mbps": total,
        "flow_goodput_mbps": goodput,
        "group_share": [x / total if total > 0 else math.nan for x in group_goodput],
        "jain": jain(goodput),
        "sojourn_mean_ms": mean,
        "sojourn_p50_ms": quantile(v, w, 0.5),
        "sojourn_p90_ms": quantile(v, w, 0.9),
        "sojourn_p99_ms": quantile(v, w, 0.99),
        "drop_probability": raw.drops / raw.arrivals if raw.arrivals else 0.0,
        "mark_probability": raw.marks / raw.arrivals if raw.arrivals else 0.0,
        "drops": raw.drops,
        "marks": raw.marks,
        "arrivals": raw.arrivals,
        "wall_s": raw.wall_s,
        "events": raw.events,
        "bottleneck_packets": raw.bottleneck_packets,
        "events_per_s": raw.events / raw.wall_s if raw.wall_s > 0 else math.nan,
        "packets_per_s": raw.bottleneck_packets / raw.wall_s if raw.wall_s > 0 else math.nan,
    }


def ccsim_raw(summary: dict, cdf_ms: Sequence[float], cdf: Sequence[float], groups) -> RawRun:
    """RawRun from a ccsim summary and its ``sojourn_cdf`` table."""
    window = summary["measure_end_s"] - summary["measure_start_s"]
    b = summary["bottleneck"]
    rate = summary["_rate_bps"]
    v, w = distribution_from_cdf(cdf_ms, cdf)
    tcp = [f for f in summary["flows"] if f["protocol"] == "tcp"]
    return RawRun(
        window_s=window,
        rate_bps=rate,
        flow_bytes=[f["goodput_mbps"] * 1e6 * window / 8 for f in tcp],
        flow_groups=list(groups),
        departed_bytes=b["utilisation"] * rate * window / 8,
        arrivals=b["arrivals"],
        drops=b["drops"],
        marks=b["marks"],
        sojourn_ms=v,
        sojourn_weight=w,
        wall_s=summary["wall_s"],
        events=summary["events"],
        bottleneck_packets=summary["bottleneck_packets"],
        extra={
            "retransmits": sum(f["retransmits"] for f in tcp),
            "timeouts": sum(f["timeouts"] for f in tcp),
        },
    )


def ns3_raw(out: dict, samples_ns: np.ndarray, window_s: float, rate_bps: float, groups):
    w = out["window"]
    v, p = distribution_from_samples(samples_ns)
    flows = out["flows"]
    return RawRun(
        window_s=window_s,
        rate_bps=rate_bps,
        flow_bytes=[f["rx_end"] - f["rx_start"] for f in flows],
        flow_groups=list(groups),
        departed_bytes=w["sent_bytes"],
        arrivals=w["received"],
        drops=w["dropped"],
        marks=w["marked"],
        sojourn_ms=v,
        sojourn_weight=p,
        wall_s=out["wall_s"],
        events=out["events"],
        bottleneck_packets=out["bottleneck_packets"],
        extra={
            "retransmits": sum(f["retransmissions"] for f in flows),
            "timeouts": sum(f["timeouts"] for f in flows),
            "checks": out["checks"],
            "ecn": [f["ecn_negotiated"] for f in flows],
            "ecn_requested": [f["ecn_requested"] for f in flows],
            "cc": sorted({f["cc"] for f in flows}),
        },
    )


# ---------------------------------------------------------------------------------------
# Agreement
# ---------------------------------------------------------------------------------------


# The targets of issue 5, as tolerances: utilisation in percentage points, goodput share
# and drop/mark probabilities relative to ccsim's value, sojourn quantiles in ms (15 % of
# ccsim's value or 2 ms, whichever is larger).
UTILISATION_PP = 2.0
SHARE_RELATIVE = 0.05
PROBABILITY_RELATIVE = 0.20


def sojourn_tolerance_ms(ccsim_ms: float) -> float:
    return max(0.15 * abs(ccsim_ms), 2.0)


@dataclass
class Check:
    metric: str
    ccsim: str
    ns3: str
    diff: str
    ok: bool | None  # None: reported, no target


def relative_difference(a: float, b: float) -> float:
    """Relative difference of ns-3 to ccsim (0 when both are 0)."""
    if a == b:
        return 0.0
    if a == 0:
        return math.inf
    return (b - a) / abs(a)


def compare_metrics(a: dict, b: dict, group_names: Sequence[str]) -> list[Check]:
    """ccsim (``a``) against ns-3 (``b``), one run each, against the targets of issue 5
    (``agreement.verdict`` without an interval: the matrix of RESULTS.md)."""
    out: list[Check] = []
    du = (b["utilisation"] - a["utilisation"]) * 100
    out.append(
        Check(
            "utilisation",
            f"{a['utilisation'] * 100:.2f}%",
            f"{b['utilisation'] * 100:.2f}%",
            f"{du:+.2f} pp",
            agreement.agrees(du, UTILISATION_PP),
        )
    )
    if len(group_names) > 1:
        for name, sa, sb in zip(group_names, a["group_share"], b["group_share"], strict=True):
            r = relative_difference(sa, sb)
            out.append(
                Check(
                    f"goodput share {name}",
                    f"{sa * 100:.1f}%",
                    f"{sb * 100:.1f}%",
                    f"{r * 100:+.1f}%",
                    agreement.agrees(r, SHARE_RELATIVE),
                )
            )
    out.append(
        Check(
            "goodput (sum)",
            f"{a['goodput_mbps']:.3f} Mbps",
            f"{b['goodput_mbps']:.3f} Mbps",
            f"{relative_difference(a['goodput_mbps'], b['goodput_mbps']) * 100:+.1f}%",
            None,
        )
    )
    n = len(a["flow_goodput_mbps"])
    if n > 1:
        out.append(
            Check(
                "Jain index",
                f"{a['jain']:.3f}",
                f"{b['jain']:.3f}",
                f"{b['jain'] - a['jain']:+.3f}",
                None,
            )
        )
    for key, label, target in (
        ("sojourn_mean_ms", "sojourn mean", False),
        ("sojourn_p50_ms", "sojourn p50", True),
        ("sojourn_p90_ms", "sojourn p90", True),
        ("sojourn_p99_ms", "sojourn p99", False),
    ):
        x, y = a[key], b[key]
        d = y - x
        ok = agreement.agrees(d, sojourn_tolerance_ms(x)) if target else None
        out.append(Check(label, f"{x:.2f} ms", f"{y:.2f} ms", f"{d:+.2f} ms", ok))
    for key, count, label in (
        ("drop_probability", "drops", "drop probability"),
        ("mark_probability", "marks", "mark probability"),
    ):
        x, y = a[key], b[key]
        if x == 0 and y == 0:
            continue
        r = relative_difference(x, y)
        out.append(
            Check(
                label,
                f"{x * 100:.3f}% ({a[count]})",
                f"{y * 100:.3f}% ({b[count]})",
                f"{r * 100:+.0f}%" if math.isfinite(r) else "n/a",
                agreement.agrees(r, PROBABILITY_RELATIVE),
            )
        )
    return out


def speed_ratio(a: dict, b: dict) -> float:
    return b["wall_s"] / a["wall_s"] if a["wall_s"] > 0 else math.nan


# Metric, unit of its difference, and the tolerance the difference is divided by for
# the plots (so that +-1 is the edge of the target band).
METRICS = (
    ("utilisation", "pp"),
    ("goodput share", "% rel."),
    ("sojourn p50", "ms"),
    ("sojourn p90", "ms"),
    ("drop probability", "% rel."),
    ("mark probability", "% rel."),
)
# The metric dict's key of each per-scenario metric (goodput share is per group).
METRIC_KEYS = {
    "utilisation": "utilisation",
    "sojourn p50": "sojourn_p50_ms",
    "sojourn p90": "sojourn_p90_ms",
    "drop probability": "drop_probability",
    "mark probability": "mark_probability",
}


def _entry(d: agreement.PairedDifference, tolerance: float) -> dict:
    """One metric's stored difference: the paired mean ``diff`` (ns-3 - ccsim) and the
    ``half_width`` of its 95 % interval (None with one pair) in the metric's unit, the
    ``tolerance`` in that unit, ``norm`` = diff / tolerance (|norm| <= 1: within target),
    the pairs ``n`` and the ``verdict`` of ``agreement.verdict``."""
    return {
        "diff": d.diff,
        "norm": d.diff / tolerance,
        "half_width": d.half_width,
        "tolerance": tolerance,
        "n": d.n,
        "verdict": agreement.verdict(d.diff, tolerance, d.half_width),
    }


def differences(cc_runs: Sequence[dict] | dict, ns_runs: Sequence[dict] | dict) -> dict[str, dict]:
    """Each target metric's ns-3 - ccsim difference over paired runs (run i of ccsim
    with run i of ns-3; a dict a side, e.g. pooled, is one pair), in its unit, with its 95 %
    interval and verdict under ``agreement.verdict`` (see ``_entry``). Per metric:

    - utilisation: ``mean_difference`` of the per-run utilisations, in pp;
    - goodput share, per group (only with two or more groups): ``relative_difference``
      of the mean shares, in %; the metric's entry is its worst group's (worst verdict,
      then largest |norm|);
    - sojourn p50 and p90: ``mean_difference`` of the per-run quantiles, in ms, the
      tolerance from ccsim's mean quantile;
    - drop and mark probability: ``relative_difference`` of the summed counts over the
      summed arrivals (the probabilities the report shows), in %; absent where neither
      side dropped (marked).

    Infinite differences (ccsim 0, ns-3 not) are stored as +-1e9."""
    if isinstance(cc_runs, dict):
        cc_runs = [cc_runs]
    if isinstance(ns_runs, dict):
        ns_runs = [ns_runs]
    n = len(cc_runs)
    if n != len(ns_runs) or n == 0:
        raise ValueError(f"need as many runs on each side (>= 1), got {n} and {len(ns_runs)}")
    out: dict[str, dict] = {}
    util = agreement.mean_difference(
        [m["utilisation"] for m in cc_runs], [m["utilisation"] for m in ns_runs], scale=100.0
    )
    out["utilisation"] = _entry(util, UTILISATION_PP)
    groups = len(cc_runs[0]["group_share"])
    if groups > 1:
        entries = [
            _entry(
                agreement.relative_difference(
                    [m["group_share"][g] for m in cc_runs], [m["group_share"][g] for m in ns_runs]
                ).scaled(100.0),
                SHARE_RELATIVE * 100,
            )
            for g in range(groups)
        ]
        out["goodput share"] = max(
            entries,
            key=lambda e: (
                agreement.VERDICTS.index(e["verdict"]),
                abs(e["norm"]) if not math.isnan(e["norm"]) else math.inf,
            ),
        )
    for label in ("sojourn p50", "sojourn p90"):
        key = METRIC_KEYS[label]
        xs, ys = [m[key] for m in cc_runs], [m[key] for m in ns_runs]
        out[label] = _entry(
            agreement.mean_difference(xs, ys), sojourn_tolerance_ms(float(np.mean(xs)))
        )
    for label, count in (("drop probability", "drops"), ("mark probability", "marks")):
        xs, ys = [m[count] for m in cc_runs], [m[count] for m in ns_runs]
        if sum(xs) == 0 and sum(ys) == 0:
            continue
        d = agreement.relative_difference(
            xs, ys, [m["arrivals"] for m in cc_runs], [m["arrivals"] for m in ns_runs]
        )
        out[label] = _entry(d.scaled(100.0), PROBABILITY_RELATIVE * 100)
    for v in out.values():
        for key in ("diff", "norm", "half_width"):
            x = v[key]
            if x is not None and not math.isfinite(x):
                v[key] = math.copysign(1e9, x) if not math.isnan(x) else 1e9
    return out
