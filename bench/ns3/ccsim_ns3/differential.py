"""Randomised differential testing against ns-3: the drawn scenarios run in both
simulators, pooled, compared, classified by cause and probed."""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .agreement import OUTSIDE, WITHIN
from .differential_report import utc_now_text, write_markdown
from .draws import (
    DURATION_S,
    MAX_PACKETS,
    Drawn,
    bottleneck_pps,
    draw,
    replicates_for,
)
from .metrics import METRICS, compare_metrics, differences, speed_ratio
from .model import Scenario, group_info
from .probes import probe, probe_ns3
from .runner import (
    ParallelNs3Runs,
    build_ns3_program,
    ccsim_metrics,
    find_ns3,
    find_source,
    machine_header,
    ns3_notes,
    pinned_cpu,
    run_ccsim_variant,
)


@dataclass
class Result:
    """One random scenario's outcome, as stored in ``bench/differential/runs.json``."""

    name: str
    title: str
    params: dict
    # per metric, ns-3 - ccsim over the paired runs with its 95 % interval and verdict
    # (metrics.differences)
    diffs: dict
    failed: list[str]  # metrics that disagree: verdict OUTSIDE (agreement.verdict)
    checks: list[dict]  # the pooled values against the targets alone (compare_metrics)
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
    # run first) and the metrics that disagree on the default runs alone (one pair: the
    # targets alone)
    replicates: dict = field(default_factory=dict)
    single_failed: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed

    def worst(self) -> float:
        return max((abs(v["norm"]) for v in self.diffs.values()), default=0.0)


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


def score(r: Result) -> None:
    """Set ``r``'s differences and the metrics that disagree, from its paired runs
    (``r.replicates``; without them its pooled ``values``, one pair), and those that
    disagree on the default runs alone, under ``agreement.verdict``."""
    cc_runs = r.replicates.get("ccsim") or [r.values["ccsim"]]
    ns_runs = r.replicates.get("ns3") or [r.values["ns3"]]
    r.diffs = differences(cc_runs, ns_runs)
    r.failed = _disagreeing(r.diffs)
    r.single_failed = _disagreeing(differences(cc_runs[:1], ns_runs[:1]))


def _disagreeing(diffs: dict[str, dict]) -> list[str]:
    return sorted(m for m, v in diffs.items() if v["verdict"] == OUTSIDE)


def make_result(
    d: Drawn,
    cc: dict,
    ns: dict,
    notes: Sequence[str] = (),
    runs: tuple[Sequence[dict], Sequence[dict]] | None = None,
) -> Result:
    """The row of ``d`` from each side's (pooled) metrics; ``runs``: each side's paired
    runs behind them, the default first."""
    _, names = group_info(d.scenario)
    r = Result(
        name=d.scenario.name,
        title=d.scenario.title,
        params=dict(d.params),
        diffs={},
        failed=[],
        checks=[asdict(c) for c in compare_metrics(cc, ns, names)],
        ratio=speed_ratio(cc, ns),
        ccsim_wall_s=cc["wall_s"],
        ns3_wall_s=ns["wall_s"],
        bottleneck_packets=int(ns.get("bottleneck_packets", 0)),
        notes=list(notes),
        values={side: _headline(m) for side, m in (("ccsim", cc), ("ns3", ns))},
    )
    if runs is not None:
        sides = zip(("ccsim", "ns3"), runs, strict=True)
        r.replicates = {side: [_headline(m) for m in rs] for side, rs in sides}
    score(r)
    r.causes = classify(d.scenario, r)
    r.unexplained = uncovered(d.scenario, r)
    return r


# ---------------------------------------------------------------------------------------
# Causes of rows outside the targets: rules mapping a row to causes of bench/CAUSES.md
# ---------------------------------------------------------------------------------------


def classify(sc: Scenario, r: Result) -> list[str]:
    """The causes (ids of bench/CAUSES.md) whose signature ``r`` shows, by the rules in
    ``CAUSE_RULES``; each covers some of the metrics outside (see ``uncovered``)."""
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


def _removed(cf: dict, r: Result) -> set[str]:
    """The misses a counterfactual run no longer has (none if it adds a miss: a metric
    outside its target there that the row has within, a counterfactual being one run
    judged by the target alone)."""
    beyond = {m for m, v in r.diffs.items() if v.get("verdict") != WITHIN}
    if not set(cf["outside"]) <= beyond | set(r.failed):
        return set()
    return set(r.failed) - set(cf["outside"])


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
            gone = _removed(cf, r)
            if len(cf["causes"]) > 1:
                for single in cfs:
                    if len(single["causes"]) == 1 and single["causes"][0] in cf["causes"]:
                        gone -= _removed(single, r)
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
# bench/CAUSES.md) and returns the metrics the cause moves; a row gets every cause whose
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


def run(
    n: int = 60,
    seed: int = 1,
    output: Path | None = None,
    work: Path | None = None,
    log: Callable[[str], None] = print,
    command: str = "python bench/compare.py --random",
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
    source = find_source()
    bench_dir = source.parent.parent
    output = output or bench_dir / "DIFFERENTIAL.md"
    build = find_ns3()
    drawn = draw(n, seed)
    if only:
        import re

        drawn = [d for d in drawn if re.search(only, d.scenario.name)]
    if cpu is not None:
        with pinned_cpu(cpu):  # checks that the CPU is allowed
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
        build_ns3_program(build, source, exe)
        log(f"compiled {source.name} against ns-3 {build.version} in {time.monotonic() - t0:.0f} s")
        load0 = os.getloadavg()
        start = time.monotonic()
        reps = [replicates_for(d.scenario, replicates) for d in drawn]
        phase1 = ParallelNs3Runs(drawn, exe, work, reps, cpus, log, budget_s)
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
            cc_runs = [ccsim_metrics(sc, result, walls)]
            cc_runs += [run_ccsim_variant(sc, None, k) for k in range(reps[i] - 1)]
            ns_runs = [phase1.ns3[i][k] for k in range(-1, reps[i] - 1)]
            cc, ns = pool(cc_runs), pool(ns_runs)
            r = make_result(d, cc, ns, ns3_notes(sc, ns, cc), (cc_runs, ns_runs))
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
        header = machine_header(build, False, command)
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
    """Score the stored results again (their paired runs, under ``agreement.verdict``),
    re-classify them with the current cause rules and rewrite the report. With
    ``probes`` "all" (or "missing") the rows' ccsim probes are run again (where absent);
    with ``ns3`` also ns-3's perturbed reruns of the rows whose misses no other probe
    explains (dumbbell.cc is compiled for them)."""

    results, meta = load_results(runs_json)
    by_name = {d.scenario.name: d for d in draw(meta["n"], meta["seed"])}
    with contextlib.ExitStack() as stack:
        exe = work = None
        if ns3:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ccsim-diff-")))
            exe = work / "dumbbell"
            build_ns3_program(find_ns3(), find_source(), exe)
        for r in results:
            sc = by_name[r.name].scenario
            score(r)  # under the current rule, from the stored paired runs
            cc, ns = (_side_metrics(r.values[side]) for side in ("ccsim", "ns3"))
            if not r.ok and (probes == "all" or (probes == "missing" and not r.probes)):
                r.probes = probe(sc, r, cc, ns)
                meta.setdefault("header", {})["probed"] = (
                    f"probes (counterfactual and perturbed ccsim runs) made again by "
                    f"--rerender on {utc_now_text()}, against the stored ns-3 results"
                )
            if _explain(sc, r, cc, ns, exe, work):
                meta.setdefault("header", {})["probed_ns3"] = (
                    f"ns-3's perturbed reruns made by --rerender --ns3 on {utc_now_text()}"
                )
    save_results(results, runs_json, meta)
    write_markdown(results, meta.get("header", {}), output)
    return results
