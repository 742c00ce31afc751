"""``ccsim compare ns3 --random N``: randomised differential testing against ns-3.

Instead of the hand-picked matrix of :mod:`ccsim.compare`, :func:`draw` samples N
dumbbell scenarios (seeded, deterministic) from the space both simulators support, and
:func:`run` runs each in ccsim and ns-3 with the matrix's machinery (same translation,
same metric code, same targets), then writes ``bench/DIFFERENTIAL.md`` with the
distribution of every metric's difference, plots of the differences against each
parameter, the fraction of scenarios within every target, the worst rows with their
causes (each cause written once, in ``compare.CAUSES``) and the speed ratio per scenario.

The generator and the report writer need neither ns-3 nor a run: the unit tests call
them on synthetic data.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import itertools
import json
import math
import os
import queue
import random
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ccsim import compare as C
from ccsim.compare import FlowGroup, Queue, Scenario, UdpSource

# ---------------------------------------------------------------------------------------
# The space
# ---------------------------------------------------------------------------------------

AQMS = ("droptail", "pie", "codel", "red_step", "fq_codel")
RATE_MBPS = (1.0, 1000.0)  # log-uniform
RTT_MS = (5.0, 300.0)  # log-uniform
MAX_FLOWS = 50  # TCP flows, log-uniform 1..50
DROPTAIL_BDP = (0.25, 2.0)  # DropTail limit, uniform, in BDPs of the first group's RTT
MIN_QUEUE_PACKETS = 4  # below 1 BDP of 4 packets a "0.25 BDP" queue would not hold one
P_MIXED_CC = 0.3  # a second (or third) flow group with another CC
P_MIXED_RTT = 0.5  # given several groups: their RTTs differ
P_ECN = 0.5  # ECN on (for the AQMs that can mark)
P_SHAPER = 0.15  # a token bucket in front of the AQM
P_UDP = 0.25  # one Poisson UDP background source
SHAPER_FRACTION = (0.2, 0.8)  # sustained rate / link rate
SHAPER_BURST_BYTES = (10_000, 1_000_000)  # log-uniform
UDP_FRACTION = (0.05, 0.3)  # UDP rate / (shaped) bottleneck rate

# Simulated time: long enough for many round trips, bounded in bottleneck packets so
# that ns-3 (10-40 k packets per second of wall time on this machine) finishes.
DURATION_S = 30.0  # nominal
MAX_DURATION_S = 60.0  # low rates get longer runs (more packets for the probabilities)
MIN_PACKETS = 150_000  # low rates: run until about this many packets (up to 60 s)
MAX_PACKETS = 300_000  # cap: above ~120 Mbps the run is shortened to this many packets
START_SPREAD_S = 1.0
# An ns-3 run that takes longer is stopped and listed as not run: ns-3's SACK scoreboard
# scans make runs with thousands of packets in flight per flow very slow.
NS3_TIMEOUT_S = 600.0
# Each side's metrics are pooled over this many paired runs: the default run and the
# perturbed runs k = 0 .. REPLICATES - 2 (``_shifts``: every flow's start moved by
# U[0, 100 ms] and its RTT by U[0, 0.5 ms], the same draws in both simulators). One run
# of each is one sample path of a chaotic system: on r1-52 the 34 ms flow's share spans
# 0.10-0.21 in either simulator across such draws, against a 5 % target. Unless a
# count is asked for (``--replicates``), a scenario gets as many paired runs as fit in
# REPLICATE_PACKETS bottleneck packets, between REPLICATES and MAX_REPLICATES: cheap
# (low-rate) scenarios, whose few flows make the most chaotic shares and the fewest
# drops and marks, get the most runs; the 300 k-packet ones keep 3.
REPLICATES = 3
MAX_REPLICATES = 10
REPLICATE_PACKETS = 900_000


def _log_uniform(u: float, lo: float, hi: float) -> float:
    return lo * (hi / lo) ** u


def _sig(x: float, digits: int = 2) -> float:
    """``x`` rounded to ``digits`` significant figures (readable scenario parameters)."""
    if x == 0:
        return 0.0
    return round(x, digits - 1 - math.floor(math.log10(abs(x))))


def bottleneck_pps(sc: Scenario) -> float:
    """Full-size packets per second the bottleneck (the shaper, if any) moves."""
    return (sc.queue.shaper_mbps or sc.rate_mbps) * 1e6 / 8 / C.WIRE_PACKET_BYTES


def replicates_for(sc: Scenario, fixed: int | None = None) -> int:
    """Paired runs per side for ``sc``: ``fixed`` if given, else as many as fit in
    ``REPLICATE_PACKETS`` bottleneck packets, between REPLICATES and MAX_REPLICATES."""
    if fixed is not None:
        return fixed
    fit = int(REPLICATE_PACKETS // max(1.0, bottleneck_pps(sc) * sc.duration_s))
    return max(REPLICATES, min(MAX_REPLICATES, fit))


def duration_for(pkts_per_s: float) -> float:
    """Simulated seconds for a bottleneck that moves ``pkts_per_s``: 30 s nominal, up to
    60 s for slow links (about MIN_PACKETS), and at most MAX_PACKETS packets."""
    d = max(DURATION_S, MIN_PACKETS / pkts_per_s)
    d = min(d, MAX_DURATION_S, MAX_PACKETS / pkts_per_s)
    return max(1.0, math.floor(d * 10) / 10)


def splitmix64(x: int) -> int:
    m = (1 << 64) - 1
    x = (x + 0x9E3779B97F4A7C15) & m
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & m
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & m
    return x ^ (x >> 31)


def fq_bucket(flow: int, seed: int, flows: int = C.FQ_FLOWS) -> int:
    """ccsim's FQ-CoDel bucket of flow id ``flow`` (``FqCodel::bucket``)."""
    return ((splitmix64(flow ^ seed) >> 32) * flows) >> 32


def fq_hash_seed(n_flows: int, flows: int = C.FQ_FLOWS) -> int:
    """The smallest hash seed that puts ccsim's flow ids 0..n-1 in distinct buckets."""
    for seed in range(1_000_000):
        if len({fq_bucket(i, seed, flows) for i in range(n_flows)}) == n_flows:
            return seed
    raise ValueError(f"no collision-free seed for {n_flows} flows")  # pragma: no cover


def _split(rng: random.Random, n: int, k: int) -> list[int]:
    """``n`` flows into ``k`` groups of at least one."""
    cuts = sorted(rng.sample(range(1, n), k - 1)) if k > 1 else []
    edges = [0, *cuts, n]
    return [b - a for a, b in itertools.pairwise(edges)]


@dataclass(frozen=True)
class Drawn:
    """A drawn scenario and the parameters the report plots differences against."""

    scenario: Scenario
    params: dict


def draw_one(rng: random.Random, name: str, seed: int) -> Drawn:
    u = rng.random
    rate = _sig(_log_uniform(u(), *RATE_MBPS))
    aqm = AQMS[int(u() * len(AQMS))]
    ecn = aqm != "droptail" and u() < P_ECN
    n = max(1, min(MAX_FLOWS, round(_log_uniform(u(), 1, MAX_FLOWS))))
    k = 1
    if n > 1:
        x = u()
        k = 1 if x < 0.5 else (2 if x < 0.85 else 3)
        k = min(k, n)
    mixed_rtt = k > 1 and u() < P_MIXED_RTT
    mixed_cc = k > 1 and u() < P_MIXED_CC
    ccs = ["newreno", "cubic"] + (["dctcp"] if aqm == "red_step" and ecn else [])
    base_rtt = _sig(_log_uniform(u(), *RTT_MS))
    first_cc = ccs[int(u() * len(ccs))]
    counts = _split(rng, n, k)
    groups = []
    for gi, count in enumerate(counts):
        rtt = base_rtt if gi == 0 or not mixed_rtt else _sig(_log_uniform(u(), *RTT_MS))
        cc = first_cc if gi == 0 or not mixed_cc else ccs[int(u() * len(ccs))]
        g = FlowGroup(cc, rtt, count=count, ecn=ecn or cc == "dctcp")
        same = [i for i, h in enumerate(groups) if (h.cc, h.rtt_ms, h.ecn) == (cc, rtt, g.ecn)]
        if same:  # identical flows form one group
            h = groups[same[0]]
            groups[same[0]] = FlowGroup(cc, rtt, count=h.count + count, ecn=h.ecn)
        else:
            groups.append(g)
    shaper = u() < P_SHAPER
    lo, hi = SHAPER_FRACTION
    shaper_mbps = _sig(rate * (lo + u() * (hi - lo)))
    burst = int(_sig(_log_uniform(u(), *SHAPER_BURST_BYTES)))
    if not shaper:
        shaper_mbps, burst = 0.0, 0
    eff = shaper_mbps or rate
    has_udp = u() < P_UDP
    udp_mbps = _sig(eff * (UDP_FRACTION[0] + u() * (UDP_FRACTION[1] - UDP_FRACTION[0])))
    udp = (UdpSource(udp_mbps, base_rtt),) if has_udp else ()
    bdp_pkts = eff * 1e6 * base_rtt / 1e3 / 8 / C.WIRE_PACKET_BYTES
    f = DROPTAIL_BDP[0] + u() * (DROPTAIL_BDP[1] - DROPTAIL_BDP[0])
    kfrac = 0.1 + 0.4 * u()
    if aqm == "droptail":
        q = Queue("droptail", f"{max(MIN_QUEUE_PACKETS, round(f * bdp_pkts))}p")
        aqm_label = f"DropTail {f:.2f} BDP ({q.limit})"
    elif aqm == "pie":
        q = Queue("pie", "1000p", ecn=ecn)
        aqm_label = "PIE"
    elif aqm == "codel":
        q = Queue("codel", "1000p", ecn=ecn, target_ms=5, interval_ms=100)
        aqm_label = "CoDel"
    elif aqm == "red_step":
        kp = int(max(5, min(5000, round(kfrac * bdp_pkts))))
        q = Queue("red_step", f"{max(1000, 2 * kp)}p", ecn=ecn, threshold_p=kp)
        aqm_label = f"RED step K={kp}p"
    else:
        n_all = n + len(udp)
        q = Queue(
            "fq_codel",
            "10240p",
            ecn=ecn,
            target_ms=5,
            interval_ms=100,
            hash_seed=fq_hash_seed(n_all),
        )
        aqm_label = "FQ-CoDel"
    if shaper:
        q = Queue(
            q.kind,
            q.limit,
            ecn=q.ecn,
            target_ms=q.target_ms,
            interval_ms=q.interval_ms,
            threshold_p=q.threshold_p,
            shaper_mbps=shaper_mbps,
            shaper_burst_bytes=burst,
            hash_seed=q.hash_seed,
        )
    pps = eff * 1e6 / 8 / C.WIRE_PACKET_BYTES
    duration = duration_for(pps)
    m0 = float(round(duration / 3, 1))
    flows_txt = " + ".join(
        f"{g.count} {g.cc}{'+ECN' if g.ecn else ''} {g.rtt_ms:g} ms" for g in groups
    )
    title = (
        f"{flows_txt} over {aqm_label}{'+ECN' if ecn else ''}, {rate:g} Mbps"
        + (f", shaper {shaper_mbps:g} Mbps / {burst} B" if shaper else "")
        + (f", Poisson UDP {udp_mbps:g} Mbps" if has_udp else "")
    )
    sc = Scenario(
        name=name,
        title=title,
        rate_mbps=rate,
        queue=q,
        flows=tuple(groups),
        duration_s=duration,
        measure=(m0, duration),
        quick_duration_s=duration,
        quick_measure=(m0, duration),
        start_spread_s=START_SPREAD_S,
        seed=seed,
        udp=udp,
        ns3_prr=2,
        ns3_linux_rto=True,
        ns3_linux_recovery_exit=True,
        ns3_linux_reno_cnt=True,
        ns3_linux_ce_quickack=True,
        ns3_device_pull=True,
        ns3_linux_fqcodel_backlog=True,
        ns3_linux_pie_accu=True,
        ns3_linux_ece_latch=True,
    )
    cc_label = "+".join(sorted({g.cc for g in groups}))
    params = {
        "rate_mbps": rate,
        "rtt_ms": max(g.rtt_ms for g in groups),
        "flows": n,
        "aqm": aqm,
        "cc": cc_label,
        "ecn": ecn,
        "mixed_rtt": len({g.rtt_ms for g in groups}) > 1,
        "shaper": shaper,
        "udp": has_udp,
        "duration_s": duration,
        "bdp_packets": bdp_pkts,
    }
    return Drawn(sc, params)


def draw(n: int = 60, seed: int = 1) -> list[Drawn]:
    """N scenarios from the space, the same ones for the same (n, seed): scenario i
    depends on ``seed`` and i only (drawing 5 gives the first 5 of 60)."""
    out = []
    for i in range(n):
        rng = random.Random(f"ccsim-differential-{seed}-{i}")
        out.append(draw_one(rng, f"r{seed}-{i:02d}", seed=1 + i))
    return out


def validate(sc: Scenario) -> list[str]:
    """Why ``sc`` is outside the space both simulators support ([] when it is inside)."""
    bad = []
    q = sc.queue
    if q.kind not in AQMS:
        bad.append(f"queue {q.kind}")
    if not RATE_MBPS[0] <= sc.rate_mbps <= RATE_MBPS[1]:
        bad.append(f"rate {sc.rate_mbps}")
    if not 1 <= sc.n_flows() <= MAX_FLOWS:
        bad.append(f"{sc.n_flows()} flows")
    for g in sc.flows:
        if g.cc not in C.NS3_CC:
            bad.append(f"cc {g.cc}")
        if g.cc == "dctcp" and not (g.ecn and q.ecn and q.kind == "red_step"):
            bad.append("DCTCP without ECN step marking")
        if not RTT_MS[0] <= g.rtt_ms <= RTT_MS[1]:
            bad.append(f"rtt {g.rtt_ms}")
        if g.ecn and not q.ecn:
            bad.append("ECN flow over a non-ECN queue")
    if q.kind == "droptail" and q.ecn:
        bad.append("ECN DropTail")
    if q.kind == "fq_codel":
        ids = sc.n_flows() + len(sc.udp)
        if len({fq_bucket(i, q.hash_seed) for i in range(ids)}) != ids:
            bad.append("FQ-CoDel hash collision")
    if q.shaper_mbps and not 0 < q.shaper_mbps < sc.rate_mbps:
        bad.append("shaper not below the link rate")
    pps = bottleneck_pps(sc)
    if pps * sc.duration_s > MAX_PACKETS * 1.01:
        bad.append("over the packet cap")
    return bad


# ---------------------------------------------------------------------------------------
# Per-scenario numbers
# ---------------------------------------------------------------------------------------

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
_METRIC_KEYS = {
    "utilisation": "utilisation",
    "sojourn p50": "sojourn_p50_ms",
    "sojourn p90": "sojourn_p90_ms",
    "drop probability": "drop_probability",
    "mark probability": "mark_probability",
}


def differences(cc: dict, ns: dict) -> dict[str, dict]:
    """Each target metric's ns-3 - ccsim difference, in its unit, with the normalised
    difference (difference / tolerance: |x| <= 1 is within target). Metrics that do not
    apply (one group, no drops) are absent."""
    out: dict[str, dict] = {}
    du = (ns["utilisation"] - cc["utilisation"]) * 100
    out["utilisation"] = {"diff": du, "norm": du / 2.0}
    if len(cc["group_share"]) > 1:
        worst = 0.0
        for a, b in zip(cc["group_share"], ns["group_share"], strict=True):
            r = C._rel(a, b)
            if not math.isfinite(r) or abs(r) > abs(worst):
                worst = r
        out["goodput share"] = {"diff": worst * 100, "norm": worst / 0.05}
    for label in ("sojourn p50", "sojourn p90"):
        x, y = cc[_METRIC_KEYS[label]], ns[_METRIC_KEYS[label]]
        d = y - x
        out[label] = {"diff": d, "norm": d / max(0.15 * abs(x), 2.0)}
    for label in ("drop probability", "mark probability"):
        x, y = cc[_METRIC_KEYS[label]], ns[_METRIC_KEYS[label]]
        if x == 0 and y == 0:
            continue
        r = C._rel(x, y)
        out[label] = {"diff": r * 100, "norm": r / 0.20}
    for v in out.values():
        if not math.isfinite(v["diff"]):
            v["diff"] = math.copysign(1e9, v["diff"]) if not math.isnan(v["diff"]) else 1e9
            v["norm"] = math.copysign(1e9, v["norm"]) if not math.isnan(v["norm"]) else 1e9
    return out


@dataclass
class Result:
    """One random scenario's outcome, as stored in ``bench/differential/runs.json``."""

    name: str
    title: str
    params: dict
    diffs: dict
    failed: list[str]  # metrics outside their target (compare.compare_metrics)
    checks: list[dict]
    ratio: float
    ccsim_wall_s: float
    ns3_wall_s: float
    bottleneck_packets: int
    notes: list[str] = field(default_factory=list)
    causes: list[str] = field(default_factory=list)
    values: dict = field(default_factory=dict)  # both sides' headline numbers
    unexplained: list[str] = field(default_factory=list)  # misses no cause accounts for
    # ccsim runs that test the row's explanations (see ``probe``): {"counterfactual":
    # {name: {"causes": [...], "outside": [...]}}, "perturbed": {"runs": K, "within": [...]}}
    probes: dict = field(default_factory=dict)
    # the headline values of each paired run ({"ccsim": [...], "ns3": [...]}, the default
    # run first) and the metrics outside the targets on the default runs alone
    replicates: dict = field(default_factory=dict)
    single_failed: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed

    def worst(self) -> float:
        return max((abs(v["norm"]) for v in self.diffs.values()), default=0.0)


def _target_metric(check_name: str) -> str:
    return "goodput share" if check_name.startswith("goodput share") else check_name


_HEADLINE = (
    "utilisation",
    "group_share",
    "sojourn_p50_ms",
    "sojourn_p90_ms",
    "drops",
    "marks",
    "arrivals",
    "jain",
    "drop_probability",
    "mark_probability",
)


def _headline(m: dict) -> dict:
    return {k: m.get(k) for k in _HEADLINE} | {
        k: m["_extra"].get(k) for k in ("retransmits", "timeouts") if "_extra" in m
    }


def pool(runs: Sequence[dict]) -> dict:
    """One simulator's metrics over its paired runs of a scenario: the means of
    utilisation, group shares and sojourn quantiles; drop and mark probabilities from
    the summed counts; retransmissions and timeouts summed; wall time and everything
    else from the first (the default) run."""
    if len(runs) == 1:
        return runs[0]
    out = dict(runs[0])
    for key in (
        "utilisation",
        "goodput_mbps",
        "jain",
        "sojourn_mean_ms",
        "sojourn_p50_ms",
        "sojourn_p90_ms",
        "sojourn_p99_ms",
    ):
        out[key] = float(np.mean([m[key] for m in runs]))
    out["group_share"] = [
        float(np.mean(xs)) for xs in zip(*(m["group_share"] for m in runs), strict=True)
    ]
    for key in ("drops", "marks", "arrivals"):
        out[key] = sum(m[key] for m in runs)
    n = out["arrivals"]
    out["drop_probability"] = out["drops"] / n if n else 0.0
    out["mark_probability"] = out["marks"] / n if n else 0.0
    extra = dict(runs[0]["_extra"])
    for key in ("retransmits", "timeouts"):
        extra[key] = sum(m["_extra"][key] for m in runs)
    out["_extra"] = extra
    return out


def _failed(checks: Sequence[C.Check]) -> list[str]:
    """The target metrics outside their targets in ``checks`` (compare_metrics)."""
    return sorted({_target_metric(c.metric) for c in checks if c.ok is False})


def make_result(
    d: Drawn,
    cc: dict,
    ns: dict,
    notes: Sequence[str] = (),
    runs: tuple[Sequence[dict], Sequence[dict]] | None = None,
) -> Result:
    """The row of ``d`` from each side's (pooled) metrics; ``runs``: each side's paired
    runs behind them, the default first."""
    _, names = C._group_info(d.scenario)
    checks = C.compare_metrics(cc, ns, names)
    failed = _failed(checks)
    r = Result(
        name=d.scenario.name,
        title=d.scenario.title,
        params=dict(d.params),
        diffs=differences(cc, ns),
        failed=failed,
        checks=[asdict(c) for c in checks],
        ratio=C.speed_ratio(cc, ns),
        ccsim_wall_s=cc["wall_s"],
        ns3_wall_s=ns["wall_s"],
        bottleneck_packets=int(ns.get("bottleneck_packets", 0)),
        notes=list(notes),
        values={side: _headline(m) for side, m in (("ccsim", cc), ("ns3", ns))},
    )
    if runs is not None:
        sides = zip(("ccsim", "ns3"), runs, strict=True)
        r.replicates = {side: [_headline(m) for m in rs] for side, rs in sides}
        r.single_failed = _failed(C.compare_metrics(runs[0][0], runs[1][0], names))
    else:
        r.single_failed = list(failed)
    r.causes = classify(d.scenario, r)
    r.unexplained = uncovered(d.scenario, r)
    return r


# ---------------------------------------------------------------------------------------
# Causes of rows outside the targets: rules mapping a row to entries of compare.CAUSES
# ---------------------------------------------------------------------------------------


def classify(sc: Scenario, r: Result) -> list[str]:
    """The causes (keys of ``compare.CAUSES``) whose signature ``r`` shows, by the rules
    in ``CAUSE_RULES``; each covers some of the metrics outside (see ``uncovered``)."""
    if r.ok:
        return []
    return [key for key, rule in CAUSE_RULES if rule(sc, r) & set(r.failed)]


def uncovered(sc: Scenario, r: Result) -> list[str]:
    """The metrics outside the targets that none of the row's causes accounts for."""
    covered: set[str] = set()
    for _, rule in CAUSE_RULES:
        covered |= rule(sc, r)
    return [m for m in r.failed if m not in covered]


def _count_noise(r: Result, metric: str) -> bool:
    """The two counts behind ``metric`` are within twice their Poisson deviation."""
    key = "drops" if metric == "drop probability" else "marks"
    a, b = r.values["ccsim"][key], r.values["ns3"][key]
    return abs(a - b) < 2 * math.sqrt(a + b)


ALL = frozenset(m for m, _ in METRICS)
DELAY_SIGNALS = frozenset(
    {"sojourn p50", "sojourn p90", "drop probability", "mark probability", "utilisation"}
)
NONE: frozenset[str] = frozenset()


def _rule_timeouts(sc: Scenario, r: Result) -> frozenset[str]:
    # counts summed over the paired runs: at least twice ccsim's, plus five per run
    runs = max(1, len(r.replicates.get("ns3", ())))
    a, b = r.values["ccsim"]["timeouts"], r.values["ns3"]["timeouts"]
    return ALL if b >= 2 * a + 5 * runs else NONE


def _removed(cf: dict, failed: Sequence[str]) -> set[str]:
    """The misses a counterfactual run no longer has (none if it adds a miss)."""
    if not set(cf["outside"]) <= set(failed):
        return set()
    return set(failed) - set(cf["outside"])


def _counterfactual_rule(cause: str) -> Callable[[Scenario, Result], frozenset[str]]:
    """The misses that ccsim, run with ``cause``'s ns-3 behaviour, no longer has, provided
    that run has no miss of its own (see ``probe``); run together with the other ns-3
    behaviours that apply, what none of them removes alone is credited to each."""

    def rule(sc: Scenario, r: Result) -> frozenset[str]:
        cfs = list(r.probes.get("counterfactual", {}).values())
        covered: set[str] = set()
        for cf in cfs:
            if cause not in cf["causes"]:
                continue
            gone = _removed(cf, r.failed)
            if len(cf["causes"]) > 1:
                for single in cfs:
                    if len(single["causes"]) == 1 and single["causes"][0] in cf["causes"]:
                        gone -= _removed(single, r.failed)
            covered |= gone
        return frozenset(covered)

    return rule


def _rule_run_to_run(sc: Scenario, r: Result) -> frozenset[str]:
    return frozenset(r.probes.get("perturbed", {}).get("within", ())) | frozenset(
        r.probes.get("perturbed_ns3", {}).get("within", ())
    )


def _rule_device_slot(sc: Scenario, r: Result) -> frozenset[str]:
    if sc.ns3_device_pull:  # corrected in the harness
        return NONE
    rate = sc.queue.shaper_mbps or sc.rate_mbps
    if sc.queue.kind in ("pie", "codel", "fq_codel") and rate <= 5:
        return DELAY_SIGNALS
    return NONE


def _rule_few_events(sc: Scenario, r: Result) -> frozenset[str]:
    return frozenset(
        m for m in ("drop probability", "mark probability") if m in r.diffs and _count_noise(r, m)
    )


def _rule_short_run(sc: Scenario, r: Result) -> frozenset[str]:
    pps = bottleneck_pps(sc)
    return ALL if sc.duration_s < DURATION_S and pps * sc.duration_s >= MAX_PACKETS * 0.95 else NONE


# (cause key, rule): each rule is the signature its cause was traced with (see
# compare.CAUSES) and returns the metrics the cause moves; a row gets every cause whose
# signature it shows for one of its misses, and counts as explained when they cover all.
CAUSE_RULES: list[tuple[str, Callable[[Scenario, Result], frozenset[str]]]] = [
    ("ns3-timeouts", _rule_timeouts),
    ("ns3-fqcodel-flow-backlog", _counterfactual_rule("ns3-fqcodel-flow-backlog")),
    ("ns3-device-slot", _rule_device_slot),
    ("few-events", _rule_few_events),
    ("short-run", _rule_short_run),
    ("run-to-run", _rule_run_to_run),
]
CAUSE_RULES_BY_KEY = dict(CAUSE_RULES)


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
        # not where the harness gives ns-3 Linux's test (with ECN: C.ns3_fqcodel_total)
        lambda sc: sc.queue.kind == "fq_codel" and not C.ns3_fqcodel_total(sc),
        _fq_codel_flow_backlog,
    ),
]
# Run-to-run spread: reruns with every flow's start moved by U[0, 100 ms], its RTT by
# U[0, 0.5 ms], and another seed (UDP arrivals, hashing) -- conditions no experiment
# controls to that precision. Shifts of the starts alone by U[0, 1 ms] were absorbed:
# on r1-52 every ns-3 event locks to the bottleneck's transmission slots, so 6 such
# ns-3 reruns gave one trajectory, shifted (share 0.135 each time), where starts moved
# by up to 100 ms and RTTs by up to 0.5 ms give 0.101-0.208 (ccsim 0.103-0.187).
PERTURBED_RUNS = 8
PERTURB_START_S = 0.1
PERTURB_RTT_S = 0.5e-3
# ns-3 is rerun the same way, fewer times, for the misses no other probe explains.
PERTURBED_NS3_RUNS = 6


def _outside(cc: dict, ns: dict) -> list[str]:
    return sorted(m for m, d in differences(cc, ns).items() if abs(d["norm"]) > 1.0)


def _shifts(sc: Scenario, k: int) -> list[tuple[float, float]]:
    """Perturbed rerun ``k``'s (start, RTT) shift of each flow, in seconds: one generator
    for both simulators, so their k-th reruns are perturbed alike."""
    rng = random.Random(f"{sc.name}:{k}")
    return [
        (rng.uniform(0.0, PERTURB_START_S), rng.uniform(0.0, PERTURB_RTT_S))
        for _ in range(sc.n_flows())
    ]


def _ccsim_run(sc: Scenario, patch: Callable[[dict], None] | None = None, k: int = -1) -> dict:
    import ccsim

    s = C.ccsim_scenario(sc, False)
    if patch is not None:
        patch(s)
    if k >= 0:
        s["seed"] = int(s["seed"]) + 1 + k
        for f, (start_shift, rtt_shift) in zip(s["flows"], _shifts(sc, k), strict=True):
            start = float(str(f["start"]).rstrip("s"))
            f["start"] = f"{start + start_shift:.9f}s"
            rtt_ms = float(str(f["rtt"]).removesuffix("ms"))
            f["rtt"] = f"{rtt_ms + rtt_shift * 1e3:.6f}ms"
    res = ccsim.run(s)
    return C.ccsim_metrics(sc, res, [res.summary["wall_s"]])


def _perturbed_ns3_config(sc: Scenario, k: int) -> Callable[[str], str]:
    """Rewrite dumbbell.cc's configuration as ``_ccsim_run`` perturbs ccsim's scenario:
    the same shifts of the flows' starts and RTTs (``_shifts``) and another seed."""

    def patch(text: str) -> str:
        shifts = iter(_shifts(sc, k))
        out = []
        for line in text.splitlines():
            if line.startswith("seed "):
                line = f"seed {int(line.split()[1]) + 1 + k}"
            elif line.startswith("flow "):
                parts = line.split()  # flow <cc> <rtt_ns> <ecn> <start_ns>
                start_shift, rtt_shift = next(shifts)
                parts[-1] = str(int(parts[-1]) + round(start_shift * 1e9))
                parts[2] = str(int(parts[2]) + round(rtt_shift * 1e9))
                line = " ".join(parts)
            out.append(line)
        return "\n".join(out) + "\n"

    return patch


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
            C.run_ns3(
                sc,
                False,
                exe,
                work,
                timeout_s=NS3_TIMEOUT_S,
                patch_config=_perturbed_ns3_config(sc, k),
            )
        )
    return {
        "runs": len(runs) - 1,
        "within": [m for m in r.failed if _within_spread(m, runs, cc)],
    }


def _within_spread(metric: str, runs: Sequence[dict], ns: dict) -> bool:
    """ns-3's value of ``metric`` lies within the range of ccsim's ``runs``."""
    key = _METRIC_KEYS.get(metric)
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

        m = _ccsim_run(sc, patch_all)
        causes = [c for c, _ in combo]
        out["counterfactual"]["+".join(causes)] = {
            "causes": causes,
            "outside": _outside(m, ns),
        }
    runs = list(cc_runs or [cc])
    runs += [_ccsim_run(sc, None, k) for k in range(len(runs) - 1, PERTURBED_RUNS)]
    out["perturbed"] = {
        "runs": len(runs) - 1,
        "within": [m for m in r.failed if _within_spread(m, runs, ns)],
    }
    return out


def _explain(
    sc: Scenario,
    r: Result,
    cc: dict,
    ns: dict,
    exe: Path | None,
    work: Path | None,
    ns_runs: Sequence[dict] | None = None,
) -> bool:
    """Set ``r``'s causes and unexplained misses from the cause rules; where misses stay
    unexplained and ns-3 is at hand (``exe``, ``work``), add ns-3's perturbed reruns
    (``probe_ns3``, reusing the paired replicates ``ns_runs``) and classify again. True
    if ns-3 was rerun."""
    r.causes = classify(sc, r)
    r.unexplained = uncovered(sc, r)
    if exe is None or work is None or not r.unexplained:
        return False
    r.probes["perturbed_ns3"] = probe_ns3(sc, r, cc, ns, exe, work, ns_runs)
    r.causes = classify(sc, r)
    r.unexplained = uncovered(sc, r)
    return True


def _side_metrics(values: dict) -> dict:
    """A side's metrics as ``differences`` wants them, from a stored row's values (rows
    stored before the probabilities were kept get them from the counts)."""
    m = dict(values)
    n = m.get("arrivals") or 0
    m.setdefault("drop_probability", m["drops"] / n if n else 0.0)
    m.setdefault("mark_probability", m["marks"] / n if n else 0.0)
    return m


# ---------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------


class _Ns3Runs:
    """Phase 1 of ``run``: every scenario's ns-3 runs, one worker thread per CPU, each
    pinned to its CPU (the ns-3 programs it starts inherit the affinity). A scenario's
    default run comes first, with ccsim's timed runs right after it on the same CPU, so
    its speed ratio compares the two simulators on one core (the cores' speeds differ,
    see ``compare.pinned_cpu``); once it has succeeded its ``reps[i] - 1`` perturbed
    runs are queued ahead of later scenarios' default runs. No new scenario starts after
    ``budget_s``; a scenario whose runs did not all finish is reported as not run."""

    def __init__(
        self,
        drawn: Sequence[Drawn],
        exe: Path,
        work: Path,
        reps: Sequence[int],
        cpus: Sequence[int | None],
        log: Callable[[str], None],
        budget_s: float | None,
    ) -> None:
        self.drawn, self.exe, self.work, self.reps = drawn, exe, work, list(reps)
        self.log, self.budget_s = log, budget_s
        self.jobs: queue.PriorityQueue = queue.PriorityQueue()
        self.cond = threading.Condition()
        self.outstanding = len(drawn)
        self.done = 0
        self.ns3: dict[int, dict[int, dict]] = {i: {} for i in range(len(drawn))}
        self.timed: dict[int, tuple[Any, list[float]]] = {}
        self.errors: dict[int, str] = {}
        self.skipped: set[int] = set()
        self.stopped = False
        for i in range(len(drawn)):
            self.jobs.put(((i, 1), -1))  # default runs, in scenario order
        self.start = time.monotonic()
        self.threads = [threading.Thread(target=self._worker, args=(c,)) for c in cpus]

    def run(self) -> None:
        """Run every job; an interrupt (Ctrl-C) stops the workers from starting more
        (the running ns-3 programs share the terminal's process group and get it too)."""
        try:
            for t in self.threads:
                t.daemon = True
                t.start()
            for t in self.threads:
                while t.is_alive():
                    t.join(0.1)  # the signal may wake another thread: poll
        except BaseException:
            with self.cond:
                self.stopped = True
                self.cond.notify_all()
            raise

    def _worker(self, cpu: int | None) -> None:
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})  # this thread (Linux: pid 0 is the caller)
        while True:
            with self.cond:
                while self.jobs.empty() and self.outstanding > 0 and not self.stopped:
                    self.cond.wait()
                if self.outstanding == 0 or self.stopped:
                    self.cond.notify_all()
                    return
                (i, _), k = self.jobs.get()
                late = self.budget_s is not None and time.monotonic() - self.start > self.budget_s
            outcome: Any = "skipped" if k < 0 and late else self._one(i, k)
            with self.cond:
                self._record(i, k, outcome)
                self.outstanding -= 1
                self.cond.notify_all()

    def _one(self, i: int, k: int) -> Any:
        sc = self.drawn[i].scenario
        t0 = time.monotonic()
        try:
            ns = C.run_ns3(
                sc,
                False,
                self.exe,
                self.work,
                timeout_s=NS3_TIMEOUT_S,
                patch_config=_perturbed_ns3_config(sc, k) if k >= 0 else None,
                tag=f".{k}" if k >= 0 else "",
            )
        except RuntimeError as exc:  # reported, not fatal: the draw goes on
            return exc
        timed = None
        if k < 0:
            result, walls = C.run_ccsim(sc, False)
            walls += C.run_ccsim(sc, False, like=result)[1]
            timed = (result, walls)
        return ns, timed, time.monotonic() - t0

    def _record(self, i: int, k: int, outcome: Any) -> None:
        sc = self.drawn[i].scenario
        what = "default run" if k < 0 else f"paired run {k + 2}"
        if outcome == "skipped":
            self.skipped.add(i)
            return
        if isinstance(outcome, Exception):
            self.errors.setdefault(i, f"{sc.name} ({sc.title}): {str(outcome).splitlines()[0]}")
            self.log(f"{sc.name} {what}: ns-3 failed: {str(outcome).splitlines()[0]}")
            return
        ns, timed, wall = outcome
        self.ns3[i][k] = ns
        self.done += 1
        if timed is not None:
            self.timed[i] = timed
            for j in range(self.reps[i] - 1):
                self.jobs.put(((i, 0), j))
                self.outstanding += 1
        total = sum(self.reps)
        self.log(
            f"[ns-3 {self.done}/{total}] {sc.name} {what}: {wall:.1f} s "
            f"({(time.monotonic() - self.start) / 60:.1f} min)"
        )

    def complete(self, i: int) -> bool:
        return i in self.timed and len(self.ns3[i]) == self.reps[i] and i not in self.errors


def run(
    n: int = 60,
    seed: int = 1,
    output: Path | None = None,
    work: Path | None = None,
    log: Callable[[str], None] = print,
    command: str = "ccsim compare ns3 --random",
    cpu: int | None = None,
    budget_s: float | None = None,
    only: str | None = None,
    replicates: int | None = None,
) -> list[Result]:
    """Draw ``n`` scenarios, run each ``replicates`` times (paired) in both simulators
    (None: ``replicates_for`` each scenario),
    compare the pooled metrics, probe the rows outside the targets and write the report.
    ns-3 runs on every allowed CPU at once, one program per CPU (``cpu``: only on that
    one)."""
    if replicates is not None and replicates < 1:
        raise ValueError(f"--replicates: must be at least 1, got {replicates}")
    source = C.find_source()
    bench_dir = source.parent.parent
    output = output or bench_dir / "DIFFERENTIAL.md"
    build = C.find_ns3()
    drawn = draw(n, seed)
    if only:
        import re

        drawn = [d for d in drawn if re.search(only, d.scenario.name)]
    if cpu is not None:
        with C.pinned_cpu(cpu):  # checks that the CPU is allowed
            pass
        cpus: list[int | None] = [cpu]
    elif hasattr(os, "sched_getaffinity"):
        cpus = sorted(os.sched_getaffinity(0), reverse=True)
    else:  # pragma: no cover - platforms without affinity
        cpus = [None] * (os.cpu_count() or 1)
    with contextlib.ExitStack() as stack:
        if work is None:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ccsim-diff-")))
        exe = work / "dumbbell"
        t0 = time.monotonic()
        C.build_ns3_program(build, source, exe)
        log(f"compiled {source.name} against ns-3 {build.version} in {time.monotonic() - t0:.0f} s")
        load0 = os.getloadavg()
        start = time.monotonic()
        reps = [replicates_for(d.scenario, replicates) for d in drawn]
        phase1 = _Ns3Runs(drawn, exe, work, reps, cpus, log, budget_s)
        log(
            f"{len(drawn)} scenarios, {sum(reps)} paired runs "
            f"({min(reps, default=0)}-{max(reps, default=0)} each) in ns-3 on CPU "
            f"{', '.join(str(c) for c in cpus)}"
        )
        phase1.run()
        if phase1.skipped:
            log(f"time budget spent: {len(drawn) - len(phase1.skipped)} of {len(drawn)} started")
        results: list[Result] = []
        runs_json = output.parent / "differential" / "runs.json"
        for i, d in enumerate(drawn):
            if not phase1.complete(i):
                continue
            sc = d.scenario
            t1 = time.monotonic()
            result, walls = phase1.timed[i]
            cc_runs = [C.ccsim_metrics(sc, result, walls)]
            cc_runs += [_ccsim_run(sc, None, k) for k in range(reps[i] - 1)]
            ns_runs = [phase1.ns3[i][k] for k in range(-1, reps[i] - 1)]
            cc, ns = pool(cc_runs), pool(ns_runs)
            r = make_result(d, cc, ns, C.ns3_notes(sc, ns, cc), (cc_runs, ns_runs))
            r.probes = probe(sc, r, cc, ns, cc_runs)
            _explain(sc, r, cc, ns, exe, work, ns_runs)
            results.append(r)
            log(
                f"[{i + 1}/{len(drawn)}] {sc.name}: {sc.title}: "
                f"{'ok' if r.ok else 'outside: ' + ', '.join(r.failed)}; ns-3/ccsim "
                f"{r.ratio:.0f}x (ns-3 {r.ns3_wall_s:.1f} s) [probes {time.monotonic() - t1:.0f} s]"
            )
            save_results(results, runs_json, {"n": n, "seed": seed})
        load1 = os.getloadavg()
        header = C.machine_header(build, False, command)
        header["load"] = (
            f"load average {load0[0]:.2f} at the start, {load1[0]:.2f} at the end "
            f"({os.cpu_count()} cores; other processes share the machine); "
            + (
                f"one ns-3 program on each of CPUs {', '.join(str(c) for c in cpus)} at "
                "once, each worker pinned to its CPU; a scenario's speed ratio compares its "
                "default ns-3 run with ccsim's timed runs on the same CPU, made right after it"
                if len(cpus) > 1
                else f"both simulators pinned to CPU {cpus[0]}"
            )
        )
        minutes = (time.monotonic() - start) / 60
        header["elapsed"] = f"{minutes:.1f} min for {len(results)} scenarios"
        header["requested"] = n
        header["seed"] = seed
        header["replicates"] = max(reps, default=1)
        header["replicates_min"] = min(reps, default=1)
        header["errors"] = [phase1.errors[i] for i in sorted(phase1.errors)]
        save_results(results, runs_json, {"n": n, "seed": seed, "header": header})
        write_markdown(results, header, output)
        C.write_causes(output.parent / "CAUSES.md")
        log(f"wrote {output}")
        return results


def save_results(results: Sequence[Result], path: Path, meta: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {**meta, "results": [asdict(r) for r in results]}
    path.write_text(json.dumps(data, indent=1, default=float) + "\n")


def load_results(path: Path) -> tuple[list[Result], dict]:
    data = json.loads(path.read_text())
    rs = [Result(**r) for r in data.pop("results")]
    return rs, data


def rerender(
    runs_json: Path, output: Path, probes: str = "missing", ns3: bool = False
) -> list[Result]:
    """Re-classify the stored results with the current cause rules and rewrite the
    report. With ``probes`` "all" (or "missing") the rows' ccsim probes are run again
    (where absent); with ``ns3`` also ns-3's perturbed reruns of the rows whose misses
    no other probe explains (dumbbell.cc is compiled for them)."""

    results, meta = load_results(runs_json)
    by_name = {d.scenario.name: d for d in draw(meta["n"], meta["seed"])}
    with contextlib.ExitStack() as stack:
        exe = work = None
        if ns3:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ccsim-diff-")))
            exe = work / "dumbbell"
            C.build_ns3_program(C.find_ns3(), C.find_source(), exe)
        for r in results:
            sc = by_name[r.name].scenario
            cc, ns = (_side_metrics(r.values[side]) for side in ("ccsim", "ns3"))
            if not r.ok and (probes == "all" or (probes == "missing" and not r.probes)):
                r.probes = probe(sc, r, cc, ns)
                meta.setdefault("header", {})["probed"] = (
                    f"probes (counterfactual and perturbed ccsim runs) made again by "
                    f"--rerender on {_date()}, against the stored ns-3 results"
                )
            if _explain(sc, r, cc, ns, exe, work):
                meta.setdefault("header", {})["probed_ns3"] = (
                    f"ns-3's perturbed reruns made by --rerender --ns3 on {_date()}"
                )
    save_results(results, runs_json, meta)
    write_markdown(results, meta.get("header", {}), output)
    C.write_causes(output.parent / "CAUSES.md")
    return results


# ---------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------


def _q(xs: Sequence[float], q: float) -> float:
    import numpy as np

    return float(np.quantile(np.asarray(xs, dtype=float), q)) if len(xs) else math.nan


def _fmt(x: float, unit: str) -> str:
    if not math.isfinite(x) or abs(x) >= 1e8:
        return "∞" if x > 0 else "-∞"
    if unit == "pp" or unit == "ms":
        return f"{x:+.2f}"
    return f"{x:+.0f}"


PLOT_PARAMS = (
    ("rate_mbps", "bottleneck rate (Mbps)", "log"),
    ("rtt_ms", "largest base RTT (ms)", "log"),
    ("flows", "TCP flows", "log"),
    ("aqm", "queue", "cat"),
    ("cc", "congestion control", "cat"),
    ("ecn", "ECN", "cat"),
    ("shaper", "token-bucket shaper", "cat"),
    ("udp", "Poisson UDP", "cat"),
)


def write_plots(results: Sequence[Result], outdir: Path) -> list[tuple[str, str]]:
    """One PNG per metric: its normalised difference (ns-3 - ccsim over the tolerance;
    the band +-1 is within target) against each parameter. Returns (metric, file)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    outdir.mkdir(parents=True, exist_ok=True)
    files = []
    for metric, _unit in METRICS:
        rows = [r for r in results if metric in r.diffs]
        fig, axes = plt.subplots(2, 4, figsize=(14, 6), sharey=True)
        for ax, (key, label, kind) in zip(axes.flat, PLOT_PARAMS, strict=True):
            ys = [max(-5.0, min(5.0, r.diffs[metric]["norm"])) for r in rows]
            colours = ["tab:blue" if metric not in r.failed else "tab:red" for r in rows]
            if kind == "log":
                xs = [float(r.params[key]) for r in rows]
                ax.set_xscale("log")
            else:
                cats = sorted({str(r.params[key]) for r in results})
                xs = [
                    cats.index(str(r.params[key])) + 0.1 * ((i % 5) - 2) for i, r in enumerate(rows)
                ]
                ax.set_xticks(range(len(cats)))
                ax.set_xticklabels(cats, rotation=20, fontsize=8)
            ax.axhspan(-1, 1, color="0.9", zorder=0)
            ax.axhline(0, color="0.5", lw=0.8)
            ax.scatter(xs, ys, c=colours, s=18)
            ax.set_xlabel(label)
        for ax in axes[:, 0]:
            ax.set_ylabel("(ns-3 - ccsim) / tolerance")
        fig.suptitle(
            f"{metric}: ns-3 - ccsim in units of its tolerance ({len(rows)} scenarios; grey "
            "band = within target, red = outside, clipped at ±5)"
        )
        fig.tight_layout()
        fname = metric.replace(" ", "_") + ".png"
        fig.savefig(outdir / fname, dpi=80)
        plt.close(fig)
        files.append((metric, fname))
    return files


def write_markdown(
    results: Sequence[Result], header: dict, path: Path | None = None, plots: bool = True
) -> str:
    n = len(results)
    n_ok = sum(r.ok for r in results)
    pct = 100.0 * n_ok / n if n else math.nan
    L: list[str] = []
    L.append("# ccsim vs ns-3: randomised differential testing")
    L.append("")
    L.append(
        f"Generated by `{header.get('command', 'ccsim compare ns3 --random')}` — do not edit "
        "(re-rendered from `differential/runs.json` by `python -m ccsim.differential "
        "--rerender` when only the causes change)."
    )
    L.append("")
    for k in ("date", "machine", "load", "ccsim", "ns-3", "compiler", "python", "elapsed"):
        if k in header:
            L.append(f"- **{k}**: {header[k]}")
    req = header.get("requested", n)
    L.append(
        f"- **scenarios**: {n} run of {req} requested (seed {header.get('seed', 1)})"
        + ("" if n >= req else f"; the remaining {req - n} did not fit the time available")
    )
    for e in header.get("errors", []):
        L.append(f"- **not run** (ns-3 failed): {e}")
    L.append("")
    L.append(f"**{pct:.0f} % of the random scenarios are within every target** ({n_ok} of {n}).")
    L.append("")
    reps = header.get("replicates", 1)
    if reps > 1:
        single_ok = sum(not r.single_failed for r in results)
        lo = header.get("replicates_min", reps)
        count = (
            f"{reps}"
            if lo == reps
            else f"between {lo} and {reps} (as many as fit in "
            f"{REPLICATE_PACKETS / 1000:.0f} k bottleneck packets: the column runs below)"
        )
        L.append(
            f"Each side's figures are its mean over {count} paired runs of the scenario: the "
            f"default run and the others with every flow's start moved by U[0, "
            f"{PERTURB_START_S * 1e3:g} ms] and its RTT by U[0, {PERTURB_RTT_S * 1e3:g} ms] "
            "and another seed, the same draws in both simulators (drop and mark "
            "probabilities from the summed counts). The targets are unchanged. On the "
            f"default runs alone, one run each: {100.0 * single_ok / n:.0f} % within "
            f"every target ({single_ok} of {n})."
        )
        L.append("")
    explained = [r for r in results if not r.ok and not r.unexplained]
    partly = [r for r in results if not r.ok and r.unexplained and r.causes]
    unexplained = [r for r in results if not r.ok and not r.causes]
    L.append(
        f"Outside: {n - n_ok} scenarios: {len(explained)} with every miss accounted for by "
        f"a named cause below, {len(partly)} partly, {len(unexplained)} not yet explained."
    )
    L.append("")
    L.append("## The space")
    L.append("")
    L.append(
        "Each scenario is drawn independently (Python's `random.Random` seeded with the "
        "seed and the scenario's index, so the first k of N are the same for any N): "
        f"bottleneck rate log-uniform {RATE_MBPS[0]:g}-{RATE_MBPS[1]:g} Mbps; queue "
        "uniformly one of DropTail (limit uniform "
        f"{DROPTAIL_BDP[0]}-{DROPTAIL_BDP[1]} BDP of the first group's RTT, at least "
        f"{MIN_QUEUE_PACKETS} packets), PIE (Linux defaults, 1000p), CoDel (5 ms / 100 ms, "
        "1000p), RED step marking (K uniform 0.1-0.5 BDP, at least 5 packets) and FQ-CoDel "
        "(Linux defaults: 1024 queues, 10240p, quantum 1500 B; both simulators give every "
        "flow its own queue: ccsim with a hash seed chosen collision-free, ns-3 with its "
        f"set-associative hash); ECN on with probability {P_ECN} for the marking queues "
        f"(flows and queue alike); 1-{MAX_FLOWS} TCP flows (log-uniform) in 1-3 groups, "
        f"whose RTTs (log-uniform {RTT_MS[0]:g}-{RTT_MS[1]:g} ms) differ with probability "
        f"{P_MIXED_RTT} and whose CC differs with probability {P_MIXED_CC}; CC NewReno "
        "(ns-3 `TcpLinuxReno`) or CUBIC, and DCTCP where the queue does ECN step marking "
        f"(DCTCP is built for it); a token-bucket shaper with probability {P_SHAPER} "
        f"(sustained {SHAPER_FRACTION[0]}-{SHAPER_FRACTION[1]} of the link rate, bucket "
        f"{SHAPER_BURST_BYTES[0] // 1000} kB-{SHAPER_BURST_BYTES[1] // 1000} kB log-uniform); "
        f"one Poisson UDP source with probability {P_UDP} "
        f"({UDP_FRACTION[0]:.0%}-{UDP_FRACTION[1]:.0%} of the (shaped) rate, 1500 B "
        "packets, not ECN-capable). Everything else is the matrix's dumbbell (see "
        "[RESULTS.md](RESULTS.md#configuration))."
    )
    L.append("")
    L.append(
        f"**Bounded simulated time.** ns-3 moves 10-40 k bottleneck packets per second "
        "of wall time on this machine, so each run's length is set by its bottleneck packet "
        f"rate: {DURATION_S:g} s nominal, longer (up to {MAX_DURATION_S:g} s, about "
        f"{MIN_PACKETS // 1000} k packets) on slow links, and capped at "
        f"{MAX_PACKETS // 1000} k bottleneck packets on fast ones (above about "
        f"{MAX_PACKETS * 12000 / DURATION_S / 1e6:.0f} Mbps: 1 Gbps runs for "
        f"{duration_for(1e9 / 12000):g} s). Metrics are measured over the last two thirds. "
        "Flows start spread over the first second."
    )
    L.append("")
    L.append(
        "Targets (as the matrix's): utilisation within 2 percentage points; goodput share "
        "of each flow group within 5 % relative; sojourn p50 and p90 within 15 % or 2 ms, "
        "whichever is larger; drop and mark probability within 20 % relative."
    )
    L.append("")
    L.append(
        "**ns-3 corrected where it departs from Linux** (dumbbell.cc, each a cause in "
        "[CAUSES.md](CAUSES.md)): Linux's RTO (`ns3-rto`), PRR in 64 bits counting "
        "Linux's DeliveredData (`ns3-prr-overflow`, `ns3-prr-dupack`), CoDel's `<=` "
        "minimum-backlog test (`ns3-codel-minbytes`), Linux's cwnd growth on the ACK "
        "that ends recovery (`ns3-recovery-exit`), Reno's growth counter cleared at "
        "each reduction (`ns3-reno-cwnd-cnt`), the receiver's quick ACKs on a CE "
        "mark and a CWR segment (`ns3-ce-delayed-ack`), its ECE echo ended by any CWR "
        "segment (`ns3-ece-latch`), a bottleneck device that takes a packet only when "
        "the wire frees (`ns3-device-slot`), PIE's accumulated probability cleared on a "
        "coin-toss mark (`ns3-pie-accu-prob`) and, with ECN, FQ-CoDel's minimum-backlog "
        "test on the whole qdisc (`ns3-fqcodel-flow-backlog`)."
    )
    L.append("")
    names = ", ".join(f"`{c}`" for c, _, _ in COUNTERFACTUALS)
    L.append(
        "**Probes of each row outside the targets** (ccsim runs only): (1) "
        f"counterfactuals: ccsim run again with an ns-3 behaviour it can copy ({names}), "
        "each alone and all together; a miss that such a run no longer has, when it has "
        "no new one, is explained by that behaviour for that row. (2) run-to-run: "
        f"{PERTURBED_RUNS} reruns with every flow's start moved by U[0, "
        f"{PERTURB_START_S * 1e3:g} ms], its RTT by U[0, {PERTURB_RTT_S * 1e3:g} ms] and "
        "another seed; a miss whose ns-3 value lies "
        "within the range of ccsim's runs is not evidence of a model difference "
        f"([run-to-run](CAUSES.md#run-to-run)); for the misses neither explains, ns-3 is "
        f"rerun {PERTURBED_NS3_RUNS} times perturbed the same way, and a miss whose ccsim "
        "value lies within ns-3's range counts the same."
    )
    L.append("")
    for key in ("probed", "probed_ns3"):
        if header.get(key):
            L.append(f"({header[key]}.)")
            L.append("")
    L.append("## Differences per metric")
    L.append("")
    L.append(
        "ns-3 - ccsim over the scenarios where the metric applies (goodput share: the "
        "group with the largest relative difference, only with two or more groups; drop "
        "and mark probability: only where either simulator dropped or marked)."
    )
    L.append("")
    L.append("| metric | unit | scenarios | within target | median | p10 | p90 | min | max |")
    L.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for metric, unit in METRICS:
        xs = [r.diffs[metric]["diff"] for r in results if metric in r.diffs]
        inside = sum(1 for r in results if metric in r.diffs and metric not in r.failed)
        if not xs:
            L.append(f"| {metric} | {unit} | 0 | | | | | | |")
            continue
        L.append(
            f"| {metric} | {unit} | {len(xs)} | {inside} ({100 * inside / len(xs):.0f} %) "
            f"| {_fmt(_q(xs, 0.5), unit)} | {_fmt(_q(xs, 0.1), unit)} | {_fmt(_q(xs, 0.9), unit)} "
            f"| {_fmt(min(xs), unit)} | {_fmt(max(xs), unit)} |"
        )
    L.append("")
    if plots and path is not None and results:
        files = write_plots(results, path.parent / "differential")
        L.append(
            "Plots: each metric's difference in units of its tolerance against every "
            "drawn parameter (a systematic gap shows as a cloud off zero in one column):"
        )
        L.append("")
        for metric, fname in files:
            L.append(f"- {metric}: ![{metric}](differential/{fname})")
        L.append("")
    L.append("## Speed")
    L.append("")
    ratios = [r.ratio for r in results if math.isfinite(r.ratio)]
    if ratios:
        L.append(
            f"ns-3 / ccsim simulation wall time, per scenario, same run, both on one CPU: "
            f"**minimum {min(ratios):.0f}\u00d7, median {_q(ratios, 0.5):.0f}\u00d7**, maximum "
            f"{max(ratios):.0f}\u00d7 (the default run of each: ccsim's wall time is the "
            "median of its 6 identical runs"
            + (
                ", made right after ns-3's on the same CPU). "
                if header.get("replicates", 1) > 1
                else " around ns-3's one). "
            )
            + "Per-scenario values are in the table at the end."
        )
        L.append("")
    L.append("## Worst rows")
    L.append("")
    worst = sorted(results, key=lambda r: -r.worst())[:10]
    L.append("| scenario | worst metric | ns-3 - ccsim | / tolerance | outside | causes |")
    L.append("| --- | --- | ---: | ---: | --- | --- |")
    for r in worst:
        if not r.diffs:
            continue
        m, v = max(r.diffs.items(), key=lambda kv: abs(kv[1]["norm"]))
        unit = dict(METRICS)[m]
        L.append(
            f"| {r.name} | {m} | {_fmt(v['diff'], unit)} {unit} | {v['norm']:+.1f} "
            f"| {', '.join(r.failed) or '—'} | {_cause_links(r.causes) if not r.ok else ''} |"
        )
    L.append("")
    L.append("## Scenarios outside the targets")
    L.append("")
    bad = [r for r in results if not r.ok]
    if not bad:
        L.append("None.")
    for r in bad:
        why = _cause_links(r.causes) if r.causes else ""
        if r.unexplained:
            why += ("; " if why else "") + "not yet explained: " + ", ".join(r.unexplained)
        L.append(
            f"- **{r.name}** ({', '.join(r.failed)}): {r.title}. Cause: {why}." + _probe_note(r)
        )
    L.append("")
    used = sorted({c for r in bad for c in r.causes}, key=list(C.CAUSES).index)
    if used:
        L.append(
            "The causes are written once, in [CAUSES.md](CAUSES.md) (also used by "
            "[RESULTS.md](RESULTS.md)); the rows above link to them. In brief:"
        )
        L.append("")
        for c in used:
            count = sum(c in r.causes for r in bad)
            L.append(
                f"- [{c}](CAUSES.md#{c}) ({count} scenarios; {C.CAUSES[c].verdict}): "
                f"{C.CAUSES[c].title}"
            )
        L.append("")
    L.append("## All scenarios")
    L.append("")
    L.append(
        "| scenario | parameters | sim. time | runs | util. Δ pp | p50 Δ ms | p90 Δ ms | "
        "drop Δ % | mark Δ % | share Δ % | ccsim wall | ns-3 wall | ns-3 / ccsim | |"
    )
    L.append("| --- | --- |" + " ---: |" * 11 + " :---: |")
    for r in results:
        cells = []
        for metric, unit in (
            ("utilisation", "pp"),
            ("sojourn p50", "ms"),
            ("sojourn p90", "ms"),
            ("drop probability", "%"),
            ("mark probability", "%"),
            ("goodput share", "%"),
        ):
            if metric not in r.diffs:
                cells.append("")
                continue
            s = _fmt(r.diffs[metric]["diff"], unit)
            cells.append(f"**{s}** ❌" if metric in r.failed else s)
        L.append(
            f"| {r.name} | {r.title} | {r.params['duration_s']:g} s "
            f"| {len(r.replicates.get('ns3', ())) or 1} | {' | '.join(cells)} "
            f"| {r.ccsim_wall_s:.3f} s | {r.ns3_wall_s:.1f} s | {r.ratio:.0f}\u00d7 "
            f"| {'✅' if r.ok else '❌'} |"
        )
    L.append("")
    text = "\n".join(L)
    if path is not None:
        path.write_text(text)
    return text


def _probe_note(r: Result) -> str:
    """What the row's probes showed, in a sentence (empty without probes)."""
    parts = []
    for name, cf in r.probes.get("counterfactual", {}).items():
        gone = [m for m in r.failed if m not in cf["outside"]]
        new = [m for m in cf["outside"] if m not in r.failed]
        if gone or new:
            s = f"with {name.replace('+', ' + ')}: " + (
                f"{', '.join(gone)} within" if gone else "nothing within"
            )
            if new:
                s += f", but {', '.join(new)} outside"
            parts.append(s)
    within = r.probes.get("perturbed", {}).get("within", [])
    if within:
        parts.append(f"ns-3 within ccsim's run-to-run range: {', '.join(within)}")
    within_ns3 = r.probes.get("perturbed_ns3", {}).get("within", [])
    if within_ns3:
        parts.append(f"ccsim within ns-3's run-to-run range: {', '.join(within_ns3)}")
    return f" Probes: {'; '.join(parts)}." if parts else ""


def _cause_links(causes: Sequence[str]) -> str:
    return ", ".join(f"[{c}](CAUSES.md#{c})" for c in causes) or "not yet explained"


def _date() -> str:  # pragma: no cover - used by the header only
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def main(argv: Sequence[str] | None = None) -> int:  # pragma: no cover - needs runs
    import argparse

    p = argparse.ArgumentParser(prog="python -m ccsim.differential")
    p.add_argument("--rerender", metavar="RUNS_JSON", help="rewrite the report from stored runs")
    p.add_argument("-o", "--output", default="bench/DIFFERENTIAL.md")
    p.add_argument(
        "--reprobe",
        action="store_true",
        help="with --rerender: run every row's ccsim probes again (after a new counterfactual)",
    )
    p.add_argument(
        "--ns3",
        action="store_true",
        help="with --rerender: rerun ns-3, perturbed, for the misses no other probe explains",
    )
    a = p.parse_args(argv)
    if a.rerender:
        rerender(Path(a.rerender), Path(a.output), "all" if a.reprobe else "missing", a.ns3)
        return 0
    p.error("nothing to do (use ccsim compare ns3 --random N)")
    return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
