"""bench/DIFFERENTIAL.md and its plots."""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .agreement import CONFIDENCE, MAX_WIDTH_IN_BANDS, OUTSIDE, OVERLAP, WITHIN
from .causes import CAUSES
from .draws import (
    DROPTAIL_BDP,
    DURATION_S,
    MAX_DURATION_S,
    MAX_FLOWS,
    MAX_PACKETS,
    MIN_PACKETS,
    MIN_QUEUE_PACKETS,
    P_ECN,
    P_MIXED_CC,
    P_MIXED_RTT,
    P_SHAPER,
    P_UDP,
    PERTURB_RTT_S,
    PERTURB_START_S,
    PERTURBED_NS3_RUNS,
    PERTURBED_RUNS,
    RATE_MBPS,
    REPLICATE_PACKETS,
    RTT_MS,
    SHAPER_BURST_BYTES,
    SHAPER_FRACTION,
    UDP_FRACTION,
    duration_for,
)
from .metrics import METRICS
from .probes import COUNTERFACTUALS

if TYPE_CHECKING:
    from .differential import Result


def _q(xs: Sequence[float], q: float) -> float:
    import numpy as np

    return float(np.quantile(np.asarray(xs, dtype=float), q)) if len(xs) else math.nan


def _fmt(x: float, unit: str) -> str:
    if not math.isfinite(x) or abs(x) >= 1e8:
        return "∞" if x > 0 else "-∞"
    if unit == "pp" or unit == "ms":
        return f"{x:+.2f}"
    # relative differences in %: one decimal where it decides against a 5 % target
    return f"{x:+.1f}" if abs(x) < 100 else f"{x:+.0f}"


def _interval(v: dict, unit: str) -> str:
    """A stored difference's 95 % interval, ``[low, high]`` in its unit (empty with one
    pair, or for a row stored before intervals were kept)."""
    hw = v.get("half_width")
    if hw is None:
        return ""
    if hw >= 1e8 or abs(v["diff"]) >= 1e8:
        return " [n/a]"
    return f" [{_fmt(v['diff'] - hw, unit)}, {_fmt(v['diff'] + hw, unit)}]"


def _verdict(v: dict) -> str:
    """A stored difference's verdict (rows stored before verdicts were kept: the target)."""
    return v.get("verdict", WITHIN if abs(v["norm"]) <= 1 else OUTSIDE)


def _within_all(r: Result) -> bool:
    """Every metric of ``r`` within its target by the paired means alone."""
    return all(_verdict(v) == WITHIN for v in r.diffs.values())


def _value(v: dict, unit: str, suffix: str = "") -> str:
    """A difference with its interval beside it (and ``suffix``, e.g. its unit), marked
    by its verdict: bold and ❌ outside, † agreeing by its interval only."""
    s = _fmt(v["diff"], unit) + _interval(v, unit) + suffix
    verdict = _verdict(v)
    if verdict == OUTSIDE:
        return f"**{s}** ❌"
    return s + " †" if verdict == OVERLAP else s


def rule_text() -> str:
    """The agreement rule (agreement.verdict), as the reports state it."""
    bands = f"{MAX_WIDTH_IN_BANDS:g}"
    return (
        f"**Agreement rule** (`agreement.verdict`, the same for any paired comparison): a "
        "metric agrees when its difference (the paired mean, ns-3 - ccsim) is within its "
        f"target, or when the {CONFIDENCE:.0%} confidence interval of that paired mean "
        "difference overlaps the target band while being no wider than "
        f"{bands} times that band (half-width at most {bands} tolerances); otherwise it "
        "disagrees, so a wide interval never rescues a miss. The interval is Student's, "
        "d ± t(0.975, n - 1) · s / √n over the n paired runs (run i of ccsim against run "
        "i of ns-3: same starts, RTT shifts and seed). Absolute metrics (utilisation in "
        "pp, sojourn p50 and p90 in ms) take the per-pair differences; relative ones "
        "(each group's goodput share, drop and mark probability) keep the relative "
        "difference of the pooled figures (mean shares; summed drops or marks over summed "
        "arrivals) and take each pair's linearised influence on it (the delta method of "
        "the ratio estimator), because per-run ratios are biased when a side's run-to-run "
        "spread is large and infinite for a run without drops. One pair: no interval, the "
        "target alone; zero variance: an interval of width 0, the target alone. In the "
        "tables each difference has its interval beside it, `[low, high]`; † marks a "
        "metric that agrees by its interval only, ❌ one that disagrees."
    )


_COLOURS = {WITHIN: "tab:blue", OVERLAP: "tab:orange", OUTSIDE: "tab:red"}

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
    the band +-1 is within target) with its 95 % interval against each parameter,
    coloured by verdict. Returns (metric, file)."""
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
            colours = [_COLOURS[_verdict(r.diffs[metric])] for r in rows]
            # the interval in tolerances, clipped to the plot like the points
            lo, hi = [], []
            for r, y in zip(rows, ys, strict=True):
                v = r.diffs[metric]
                h = v["half_width"] / v["tolerance"] if v.get("half_width") is not None else 0.0
                lo.append(y - max(-5.0, min(5.0, v["norm"] - h)))
                hi.append(max(-5.0, min(5.0, v["norm"] + h)) - y)
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
            ax.errorbar(xs, ys, yerr=[lo, hi], fmt="none", ecolor="0.6", elinewidth=0.8)
            ax.scatter(xs, ys, c=colours, s=18, zorder=3)
            ax.set_xlabel(label)
        for ax in axes[:, 0]:
            ax.set_ylabel("(ns-3 - ccsim) / tolerance")
        fig.suptitle(
            f"{metric}: ns-3 - ccsim in units of its tolerance with its 95 % interval "
            f"({len(rows)} scenarios, clipped at ±5)\ngrey band = within target; blue "
            "within, orange agreeing by the interval, red disagreeing"
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
        f"Generated by `{header.get('command', 'python bench/compare.py --random')}` — do "
        "not edit (re-rendered from `differential/runs.json` by `python bench/compare.py "
        "--rerender bench/differential/runs.json` when only the causes or the agreement rule "
        "change)."
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
    n_within = sum(_within_all(r) for r in results)
    L.append(
        f"**{pct:.0f} % of the random scenarios agree on every metric** ({n_ok} of {n}) "
        "under the agreement rule below (target, or a narrow enough 95 % interval "
        f"overlapping it); by their paired means alone {100.0 * n_within / n:.0f} % are "
        f"within every target ({n_within} of {n})."
    )
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
            f"default runs alone, one run each (no interval: the targets alone): "
            f"{100.0 * single_ok / n:.0f} % within every target ({single_ok} of {n})."
        )
        L.append("")
    explained = [r for r in results if not r.ok and not r.unexplained]
    partly = [r for r in results if not r.ok and r.unexplained and r.causes]
    unexplained = [r for r in results if not r.ok and not r.causes]
    L.append(
        f"Disagreeing: {n - n_ok} scenarios: {len(explained)} with every miss accounted for by "
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
    L.append(rule_text())
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
        "**Probes of each row that disagrees** (ccsim runs only): (1) "
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
        "group with the worst verdict, then the largest relative difference, only with two "
        "or more groups; drop and mark probability: only where either simulator dropped or "
        "marked). *Agree*: under the rule (within target, or by the interval); the "
        "quantiles are of the paired mean differences; *half-width*: the median "
        "half-width of their 95 % intervals, in units of the tolerance."
    )
    L.append("")
    L.append(
        "| metric | unit | scenarios | agree | within target | half-width / tol. "
        "| median | p10 | p90 | min | max |"
    )
    L.append("| --- | --- |" + " ---: |" * 9)
    for metric, unit in METRICS:
        vs = [r.diffs[metric] for r in results if metric in r.diffs]
        xs = [v["diff"] for v in vs]
        if not xs:
            L.append(f"| {metric} | {unit} | 0 | | | | | | | | |")
            continue
        agree = sum(1 for r in results if metric in r.diffs and metric not in r.failed)
        inside = sum(1 for v in vs if _verdict(v) == WITHIN)
        hws = [
            min(v["half_width"] / v["tolerance"], 1e9)
            for v in vs
            if v.get("half_width") is not None and v.get("tolerance")
        ]
        L.append(
            f"| {metric} | {unit} | {len(xs)} | {agree} ({100 * agree / len(xs):.0f} %) "
            f"| {inside} ({100 * inside / len(xs):.0f} %) "
            f"| {f'{_q(hws, 0.5):.2f}' if hws else ''} "
            f"| {_fmt(_q(xs, 0.5), unit)} | {_fmt(_q(xs, 0.1), unit)} | {_fmt(_q(xs, 0.9), unit)} "
            f"| {_fmt(min(xs), unit)} | {_fmt(max(xs), unit)} |"
        )
    L.append("")
    if plots and path is not None and results:
        files = write_plots(results, path.parent / "differential")
        L.append(
            "Plots: each metric's difference in units of its tolerance, with its 95 % "
            "interval, against every drawn parameter (a systematic gap shows as a cloud off "
            "zero in one column):"
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
    L.append(
        "| scenario | worst metric | ns-3 - ccsim [95 % interval] | / tolerance | disagreeing "
        "| causes |"
    )
    L.append("| --- | --- | ---: | ---: | --- | --- |")
    for r in worst:
        if not r.diffs:
            continue
        m, v = max(r.diffs.items(), key=lambda kv: abs(kv[1]["norm"]))
        unit = dict(METRICS)[m]
        L.append(
            f"| {r.name} | {m} | {_value(v, unit, ' ' + unit)} | {v['norm']:+.1f} "
            f"| {', '.join(r.failed) or '—'} | {_cause_links(r.causes) if not r.ok else ''} |"
        )
    L.append("")
    L.append("## Scenarios that disagree")
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
    used = sorted({c for r in bad for c in r.causes}, key=list(CAUSES).index)
    if used:
        L.append(
            "The causes are written once, in [CAUSES.md](CAUSES.md) (also used by "
            "[RESULTS.md](RESULTS.md)); the rows above link to them. In brief:"
        )
        L.append("")
        for c in used:
            count = sum(c in r.causes for r in bad)
            L.append(
                f"- [{c}](CAUSES.md#{c}) ({count} scenarios; {CAUSES[c].verdict}): "
                f"{CAUSES[c].title}"
            )
        L.append("")
    L.append("## All scenarios")
    L.append("")
    L.append(
        "Each difference is ns-3 - ccsim over the paired runs with its 95 % interval "
        "beside it; † agrees by its interval only, ❌ disagrees."
    )
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
            cells.append(_value(r.diffs[metric], unit))
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


def utc_now_text() -> str:  # pragma: no cover - used by the header only
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
