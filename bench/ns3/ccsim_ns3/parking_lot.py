"""The parking lots of issue 30 side by side: every configuration of parking_lot.toml in
ccsim (``[network] kind = "parking_lot"``) and in ns-3 (dumbbell.cc's RunParkingLot), over
paired runs, judged by the rule and targets of the dumbbell matrix (``agreement``,
``metrics``), written as the "Parking lot" section of bench/RESULTS.md.

Compared per configuration: each flow group's share of the summed goodput (the long
flow's share is the multi-bottleneck bias), and per hop the utilisation, sojourn p50 and
p90 and the drop (mark) probability. The default run and ``replicates - 1`` perturbed
ones (``draws.shifts``: the flows' starts and RTTs moved alike in both simulators, and
another seed) make the pairs; ccsim's wall time is the median of its timed runs on both
sides of ns-3's default run, on the same CPU (``runner.pinned_cpu``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import pickle
import re
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import agreement
from .causes import CAUSES, cause_links
from .draws import perturbed_ns3_config
from .matrix import PARKING_LOT_EXPLANATIONS, PARKING_LOT_FILE, PARKING_LOTS, tomllib
from .metrics import (
    SHARE_RELATIVE,
    _entry,
    differences,
    distribution_from_samples,
    jain,
    quantile,
)
from .model import Scenario, group_info, hop_span
from .report import BEGIN, END, splice_section
from .runner import (
    CCSIM_REPEATS,
    Ns3Build,
    build_ns3_program,
    find_ns3,
    find_source,
    machine_header,
    perturbed_ccsim_scenario,
    pinned_cpu,
    run_ns3_program,
)
from .translate import ns3_queue_attrs


def load_probes(path: Path = PARKING_LOT_FILE) -> dict[str, dict[str, dict]]:
    """Each configuration's counterfactual ns-3 runs (``ns3_probes``: a name and the
    Scenario fields of ns-3's corrections it turns on, e.g. ``{ device-slot = {
    ns3_device_pull = true } }``), by configuration name."""
    doc = tomllib.loads(path.read_text())
    return {row["name"]: row.get("ns3_probes", {}) for row in doc["scenario"]}


#: the finished runs, in the work directory (``--work``), for ``rerender``
RESULTS_PICKLE = "parking_lot_results.pickle"

#: paired runs per configuration (the default run and REPLICATES - 1 perturbed ones)
REPLICATES = 8


# ---------------------------------------------------------------------------------------
# Metrics, the same for both simulators
# ---------------------------------------------------------------------------------------


def _flow_part(flow_bytes: Sequence[float], groups: Sequence[int], window_s: float) -> dict:
    goodput = [b * 8 / window_s / 1e6 for b in flow_bytes]
    total = sum(goodput)
    n_groups = max(groups) + 1
    group_goodput = [0.0] * n_groups
    for g, x in zip(groups, goodput, strict=True):
        group_goodput[g] += x
    return {
        "goodput_mbps": total,
        "flow_goodput_mbps": goodput,
        "group_goodput_mbps": group_goodput,
        "group_share": [x / total if total > 0 else math.nan for x in group_goodput],
        "jain": jain(goodput),
    }


SOJOURN_KEYS = ("sojourn_mean_ms", "sojourn_p50_ms", "sojourn_p90_ms", "sojourn_p99_ms")


def _hop(utilisation: float, arrivals: int, drops: int, marks: int, q: dict) -> dict:
    """One hop's figures; ``q``: its sojourn mean and p50, p90, p99 in ms. The keys are
    those ``metrics.differences`` reads (no goodput shares: they are the run's)."""
    return {
        "utilisation": utilisation,
        "arrivals": arrivals,
        "drops": drops,
        "marks": marks,
        "drop_probability": drops / arrivals if arrivals else 0.0,
        "mark_probability": marks / arrivals if arrivals else 0.0,
        "group_share": [],
        **q,
    }


def ccsim_network_metrics(sc: Scenario, summary: dict) -> dict:
    """A ccsim parking-lot run's figures: its summary's flows and, per hop, its ``links``
    entry (``hop<i>``; sojourn quantiles from the same histogram as ``sojourn_cdf``)."""
    window = summary["measure_end_s"] - summary["measure_start_s"]
    groups, _ = group_info(sc)
    tcp = [f for f in summary["flows"] if f["protocol"] == "tcp"]
    links = {link["name"]: link for link in summary["links"]}
    hops = []
    for i, _ in enumerate(sc.hops, start=1):
        link = links[f"hop{i}"]
        hops.append(
            _hop(
                link["utilisation"],
                link["arrivals"],
                link["drops"],
                link["marks"],
                {k: link[k] for k in SOJOURN_KEYS},
            )
        )
    return {
        **_flow_part([f["goodput_mbps"] * 1e6 * window / 8 for f in tcp], groups, window),
        "hops": hops,
        "wall_s": summary["wall_s"],
        "events": summary["events"],
        "retransmits": sum(f["retransmits"] for f in tcp),
        "timeouts": sum(f["timeouts"] for f in tcp),
    }


def ns3_network_metrics(sc: Scenario, quick: bool, out: dict, sojourn_base: Path) -> dict:
    """An ns-3 parking-lot run's figures from RunParkingLot's JSON and per-hop sojourn
    samples (``sojourn_base``.i), with the quantile rule of ccsim's histogram."""
    _, m0, m1 = sc.timing(quick)
    window = m1 - m0
    groups, _ = group_info(sc)
    flows = out["flows"]
    hops = []
    for i, (h, ho) in enumerate(zip(sc.hops, out["hops"], strict=True), start=1):
        samples = np.fromfile(f"{sojourn_base}.{i}", dtype=np.int64)
        v, w = distribution_from_samples(samples)
        w_ = ho["window"]
        hops.append(
            _hop(
                w_["sent_bytes"] * 8 / (h.rate_mbps * 1e6 * window),
                w_["received"],
                w_["dropped"],
                w_["marked"],
                {
                    "sojourn_mean_ms": float((v * w).sum() / w.sum()) if len(v) else math.nan,
                    "sojourn_p50_ms": quantile(v, w, 0.5),
                    "sojourn_p90_ms": quantile(v, w, 0.9),
                    "sojourn_p99_ms": quantile(v, w, 0.99),
                },
            )
        )
    return {
        **_flow_part([f["rx_end"] - f["rx_start"] for f in flows], groups, window),
        "hops": hops,
        "wall_s": out["wall_s"],
        "events": out["events"],
        "retransmits": sum(f["retransmissions"] for f in flows),
        "timeouts": sum(f["timeouts"] for f in flows),
        "_out": out,
    }


def ns3_problems(sc: Scenario, out: dict) -> list[str]:
    """What ns-3 did that it was not asked to (empty: as configured)."""
    problems = []
    for i, (h, ho) in enumerate(zip(sc.hops, out["hops"], strict=True), start=1):
        want = ns3_queue_attrs(h.queue)[0]
        if ho["root_qdisc"] != want:
            problems.append(f"hop{i}: root queue disc {ho['root_qdisc']} (wanted {want})")
        if ho["device_queue_max"] != "1p" or ho["device_queue_drops"]:
            problems.append(
                f"hop{i}: device queue {ho['device_queue_max']}, {ho['device_queue_drops']} drops"
            )
        if ho["sojourn_mismatch"]:
            problems.append(f"hop{i}: {ho['sojourn_mismatch']} sojourn samples unmatched")
    ch = out["checks"]
    if ch["other_qdiscs"] or ch["access_device_drops"]:
        problems.append(
            f"{ch['other_qdiscs']} other queue discs, {ch['access_device_drops']} drops elsewhere"
        )
    return problems


# ---------------------------------------------------------------------------------------
# Agreement over paired runs
# ---------------------------------------------------------------------------------------


@dataclass
class Line:
    """One compared figure: both sides' means over the pairs, and the paired
    difference's entry (``metrics._entry``; None: reported without a target)."""

    metric: str
    ccsim: str
    ns3: str
    entry: dict | None
    diff: str = ""


def _share_entry(cc: Sequence[dict], ns: Sequence[dict], g: int) -> dict:
    d = agreement.relative_difference(
        [m["group_share"][g] for m in cc], [m["group_share"][g] for m in ns]
    ).scaled(100.0)
    return _entry(d, SHARE_RELATIVE * 100)


def _mean(runs: Sequence[dict], key: str, i: int | None = None) -> float:
    """The mean over the runs of ``m[key]`` (``m[key][i]`` for a per-group list)."""
    return float(np.mean([m[key] if i is None else m[key][i] for m in runs]))


def _probability(runs: Sequence[dict], count: str) -> tuple[float, int]:
    """The summed ``count`` over the summed arrivals (as ``metrics.differences``), and the
    summed count."""
    n = sum(m[count] for m in runs)
    return n / max(1, sum(m["arrivals"] for m in runs)), n


def compare(sc: Scenario, cc: Sequence[dict], ns: Sequence[dict]) -> list[Line]:
    """Every compared figure of ``sc`` over the paired runs ``cc[i]``, ``ns[i]``."""
    _, names = group_info(sc)
    lines: list[Line] = []
    for g in range(len(names)):
        lines.append(
            Line(
                f"goodput share {_group_label(sc, g)}",
                f"{_mean(cc, 'group_share', g) * 100:.1f}% "
                f"({_mean(cc, 'group_goodput_mbps', g):.2f} Mbps)",
                f"{_mean(ns, 'group_share', g) * 100:.1f}% "
                f"({_mean(ns, 'group_goodput_mbps', g):.2f} Mbps)",
                _share_entry(cc, ns, g),
            )
        )
    total_cc, total_ns = _mean(cc, "goodput_mbps"), _mean(ns, "goodput_mbps")
    lines.append(
        Line(
            "goodput (sum)",
            f"{total_cc:.3f} Mbps",
            f"{total_ns:.3f} Mbps",
            None,
            f"{(total_ns / total_cc - 1) * 100:+.1f}%",
        )
    )
    for i in range(len(sc.hops)):
        hc = [m["hops"][i] for m in cc]
        hn = [m["hops"][i] for m in ns]
        d = differences(hc, hn)
        h = f"hop{i + 1}"
        lines.append(
            Line(
                f"{h} utilisation",
                f"{_mean(hc, 'utilisation') * 100:.2f}%",
                f"{_mean(hn, 'utilisation') * 100:.2f}%",
                d["utilisation"],
            )
        )
        for key, label in (("sojourn_p50_ms", "sojourn p50"), ("sojourn_p90_ms", "sojourn p90")):
            lines.append(
                Line(
                    f"{h} {label}", f"{_mean(hc, key):.2f} ms", f"{_mean(hn, key):.2f} ms", d[label]
                )
            )
        for count, label in (("drops", "drop probability"), ("marks", "mark probability")):
            if label in d:
                (pc, nc), (pn, nn) = _probability(hc, count), _probability(hn, count)
                lines.append(
                    Line(
                        f"{h} {label}",
                        f"{pc * 100:.3f}% ({nc})",
                        f"{pn * 100:.3f}% ({nn})",
                        d[label],
                    )
                )
    return lines


def _group_label(sc: Scenario, g: int) -> str:
    grp = sc.flows[g]
    first, last = hop_span(sc, grp)
    n = f"{grp.count}x " if grp.count > 1 else ""
    where = "long" if (first, last) == (1, len(sc.hops)) else f"hop{first} cross"
    if first != last and where != "long":
        where = f"hops {first}-{last}"
    return f"{where} ({n}{grp.rtt_ms:g} ms)"


# ---------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------


@dataclass
class Result:
    scenario: Scenario
    lines: list[Line]
    cc: list[dict]
    ns: list[dict]
    ccsim_wall_s: float  # median of the timed runs of the default scenario
    ns3_wall_s: float  # ns-3's default run
    problems: list[str]
    # each counterfactual ns-3 (name, its corrections) against the same ccsim runs
    probes: list[tuple[str, dict, list[Line]]] = dataclasses.field(default_factory=list)

    @property
    def ratio(self) -> float:
        return self.ns3_wall_s / self.ccsim_wall_s if self.ccsim_wall_s > 0 else math.nan


def run_one(
    sc: Scenario,
    quick: bool,
    exe: Path,
    work: Path,
    replicates: int,
    log: Callable[[str], None] = print,
) -> Result:
    import ccsim

    cc: list[dict] = []
    ns: list[dict] = []
    walls: list[float] = []
    problems: list[str] = []
    ns3_wall = math.nan
    for k in range(-1, replicates - 1):
        scenario = perturbed_ccsim_scenario(sc, quick, k=k)
        repeats = CCSIM_REPEATS if k < 0 else 1
        results = [ccsim.run(scenario) for _ in range(repeats)]
        out, sojourn = run_ns3_program(
            sc,
            quick,
            exe,
            work,
            patch_config=perturbed_ns3_config(sc, k) if k >= 0 else None,
            tag=f".{k}" if k >= 0 else "",
        )
        if k < 0:
            results += [ccsim.run(scenario) for _ in range(repeats)]
            walls = [r.summary["wall_s"] for r in results]
            ns3_wall = out["wall_s"]
        cc.append(ccsim_network_metrics(sc, results[0].summary))
        ns.append(ns3_network_metrics(sc, quick, out, sojourn))
        problems += [p for p in ns3_problems(sc, out) if p not in problems]
        log(
            f"  {sc.name} run {k + 2}/{replicates}: ns-3 {out['wall_s']:.2f} s, long-flow share "
            f"ccsim {cc[-1]['group_share'][0]:.3f} ns-3 {ns[-1]['group_share'][0]:.3f}"
        )
    ccsim_wall = float(np.median(walls))
    result = Result(sc, compare(sc, cc, ns), cc, ns, ccsim_wall, ns3_wall, problems)
    if any(ln.entry and ln.entry["verdict"] == agreement.OUTSIDE for ln in result.lines):
        for name, fields in load_probes().get(sc.name, {}).items():
            result.probes.append((name, fields, probe(sc, quick, exe, work, cc, fields, log)))
    return result


def probe(
    sc: Scenario,
    quick: bool,
    exe: Path,
    work: Path,
    cc: Sequence[dict],
    fields: dict,
    log: Callable[[str], None] = print,
) -> list[Line]:
    """ns-3 rerun with the corrections ``fields`` (Scenario's ``ns3_*``) turned on, over
    the same perturbations, compared with the same ccsim runs ``cc``: a miss that this
    closes is explained by what the corrections change."""
    corrected = dataclasses.replace(sc, **fields)
    ns = []
    for k in range(-1, len(cc) - 1):
        out, sojourn = run_ns3_program(
            corrected,
            quick,
            exe,
            work,
            patch_config=perturbed_ns3_config(sc, k) if k >= 0 else None,
            tag=f".probe{k}",
        )
        ns.append(ns3_network_metrics(sc, quick, out, sojourn))
    log(f"  {sc.name} probe {fields}: {len(ns)} ns-3 runs")
    return compare(sc, cc, ns)


def run(
    quick: bool = False,
    only: str | None = None,
    output: Path | None = None,
    work: Path | None = None,
    log: Callable[[str], None] = print,
    command: str = "python bench/compare.py --parking-lot",
    cpu: int | None = None,
    replicates: int = REPLICATES,
) -> list[Result]:
    source = find_source()
    output = output or source.parent.parent / "RESULTS.md"
    build = find_ns3()
    with contextlib.ExitStack() as stack:
        if work is None:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ccsim-ns3-pl-")))
        pinned = stack.enter_context(pinned_cpu(cpu))
        return _run(quick, only, output, work, build, source, log, command, pinned, replicates)


def _run(
    quick: bool,
    only: str | None,
    output: Path,
    work: Path,
    build: Ns3Build,
    source: Path,
    log: Callable[[str], None],
    command: str,
    pinned: int | None,
    replicates: int,
) -> list[Result]:
    exe = work / "dumbbell"
    build_ns3_program(build, source, exe)
    load0 = os.getloadavg()
    results = []
    for sc in PARKING_LOTS:
        if only and not re.search(only, sc.name):
            continue
        t0 = time.monotonic()
        r = run_one(sc, quick, exe, work, replicates, log)
        results.append(r)
        bad = [ln.metric for ln in r.lines if ln.entry and ln.entry["verdict"] == agreement.OUTSIDE]
        log(
            f"{sc.name}: ns-3/ccsim {r.ratio:.0f}x, "
            f"{'ok' if not bad else 'outside: ' + ', '.join(bad)} [{time.monotonic() - t0:.0f} s]"
        )
    load1 = os.getloadavg()
    header = machine_header(build, quick, command)
    header["load"] = (
        f"load average {load0[0]:.2f} at the start, {load1[0]:.2f} at the end "
        f"({os.cpu_count()} cores, shared)"
        + (f"; both simulators pinned to CPU {pinned}" if pinned is not None else "")
    )
    header["replicates"] = str(replicates)
    # kept so that the section can be written again with new explanations (rerender)
    (work / RESULTS_PICKLE).write_bytes(pickle.dumps((results, header)))
    write_section(results, header, output)
    log(f"wrote the parking-lot section of {output}")
    return results


def rerender(stored: Path, output: Path) -> None:
    """Write the section again from the runs ``run`` kept (``stored``, RESULTS_PICKLE in
    its work directory), with parking_lot.toml's explanations as they are now."""
    results, header = pickle.loads(stored.read_bytes())
    write_section(results, header, output)


# ---------------------------------------------------------------------------------------
# The RESULTS.md section
# ---------------------------------------------------------------------------------------

_MARK = {agreement.WITHIN: "✅", agreement.OVERLAP: "✅ (CI)", agreement.OUTSIDE: "❌"}


def _diff_text(e: dict, metric: str) -> str:
    unit = " pp" if "utilisation" in metric else (" ms" if "sojourn" in metric else "%")
    hw = e["half_width"]
    d = e["diff"]
    if abs(d) >= 1e8:
        return "n/a"
    digits = 2 if unit != "%" else 1
    ci = f" ± {hw:.{digits}f}" if hw is not None else ""
    return f"{d:+.{digits}f}{ci}{unit}"


def section_markdown(results: Sequence[Result], header: dict) -> str:
    L = [BEGIN, "", "## Parking lot (issue 30)", ""]
    L.append(
        f"Generated by `{header.get('command', 'python bench/compare.py --parking-lot')}` "
        "— do not edit (the rest of this file is the dumbbell matrix's; each run keeps the "
        "other's section)."
    )
    L.append("")
    for k in ("date", "machine", "load", "ccsim", "ns-3", "mode", "replicates"):
        if k in header:
            L.append(f"- **{k}**: {header[k]}")
    L.append("")
    L.append(
        'Two hops in a chain (ccsim `[network] kind = "parking_lot"`; ns-3 '
        "`bench/ns3/dumbbell.cc`'s `RunParkingLot`, the same TCP settings, access links, "
        "one-packet device queues and checks as the dumbbell, each hop's queue disc on its "
        "forward device, its ACK direction at the same rate and delay with an ample FIFO): "
        "hop 1 at 10 Mbit/s, hop 2 at 15 Mbit/s, 5 ms each; a long flow across both (base "
        "RTT 60 ms), one cross flow on hop 1 (20 ms), two on hop 2 (40 ms), the RTTs made "
        "by the senders' access links. Max-min fair: 5 Mbit/s each. Same targets and rule "
        "as above, over paired runs: the default run and perturbed ones (every flow's start "
        "moved by U[0, 100 ms] and RTT by U[0, 0.5 ms], alike in both, another seed); "
        "figures are means over the pairs, differences the paired mean (ns-3 - ccsim) "
        "± the half-width of its 95 % interval. ✅ within target, ✅ (CI) the interval "
        "overlaps the target band and is at most 3 bands wide, ❌ outside. Goodput shares "
        "are each group's share of the summed goodput (the long flow's is the "
        "multi-bottleneck bias), compared relatively (5 %). Speed: simulation wall time of "
        "the default run (ccsim: median of its timed runs on both sides of ns-3's, same "
        "CPU), target ≥ 100\u00d7."
    )
    L.append("")
    L.append("| scenario | metric | ccsim | ns-3 | ns-3 - ccsim (95 % CI) | | ns-3 / ccsim wall |")
    L.append("| --- | --- | ---: | ---: | ---: | :---: | ---: |")
    for r in results:
        first = True
        for ln in r.lines:
            name, speed = "", ""
            if first:
                name = f"**{r.scenario.name}**"
                ok = "✅" if r.ratio >= 100 else "❌"
                walls = f"{r.ccsim_wall_s * 1e3:.1f} ms / {r.ns3_wall_s:.2f} s"
                speed = f"{r.ratio:.0f}\u00d7 {ok} ({walls})"
                first = False
            if ln.entry is None:
                diff, mark = ln.diff, "·"
            else:
                diff, mark = _diff_text(ln.entry, ln.metric), _MARK[ln.entry["verdict"]]
            L.append(
                f"| {name} | {ln.metric} | {ln.ccsim} | {ln.ns3} | {diff} | {mark} | {speed} |"
            )
    L.append("")
    L.append("### Parking-lot rows outside the targets")
    L.append("")
    any_miss = False
    for r in results:
        bad = [ln.metric for ln in r.lines if ln.entry and ln.entry["verdict"] == agreement.OUTSIDE]
        if not bad:
            continue
        any_miss = True
        ids, note = PARKING_LOT_EXPLANATIONS.get(r.scenario.name, ((), ""))
        links = cause_links([i for i in ids if i in CAUSES])
        why = ". ".join(x for x in (links, note) if x) or "not yet explained"
        L.append(f"- **{r.scenario.name}** ({', '.join(bad)}): {why}")
        for name, fields, lines in r.probes:
            by_metric = {ln.metric: ln for ln in lines}
            shown = []
            for metric in bad:
                e = by_metric[metric].entry
                assert e is not None
                shown.append(f"{metric} {_diff_text(e, metric)} {_MARK[e['verdict']]}")
            new_bad = [
                ln.metric
                for ln in lines
                if ln.entry and ln.entry["verdict"] == agreement.OUTSIDE and ln.metric not in bad
            ]
            flags = ", ".join(f"{k} = {str(v).lower()}" for k, v in fields.items())
            L.append(
                f"  - probe *{name}* (ns-3 with {flags}, same ccsim runs): {'; '.join(shown)}"
                + (f"; now outside: {', '.join(new_bad)}" if new_bad else "")
            )
    if not any_miss:
        L.append("None.")
    L.append("")
    L.append("### Parking-lot configurations")
    L.append("")
    for r in results:
        sc = r.scenario
        cc_rtx = sum(m["retransmits"] for m in r.cc)
        ns_rtx = sum(m["retransmits"] for m in r.ns)
        cc_to = sum(m["timeouts"] for m in r.cc)
        ns_to = sum(m["timeouts"] for m in r.ns)
        duration, m0, m1 = sc.timing(header.get("mode", "").startswith("quick"))
        L.append(
            f"- **{sc.name}**: {sc.title}; {duration:g} s, measured {m0:g}-{m1:g} s, "
            f"{len(r.cc)} paired runs."
        )
        checked = "; PROBLEMS: " + "; ".join(r.problems) if r.problems else ""
        out = r.ns[0]["_out"]
        L.append(
            "  - ns-3 checked: root queue discs "
            + ", ".join(f"hop{i + 1} `{h['root_qdisc']}`" for i, h in enumerate(out["hops"]))
            + f", device queues {', '.join(h['device_queue_max'] for h in out['hops'])}, no other "
            f"queue disc: {'yes' if not out['checks']['other_qdiscs'] else 'NO'}, congestion "
            f"control {', '.join(sorted({f['cc'] for f in out['flows']}))}{checked}"
        )
        L.append(
            f"  - whole runs, summed over the pairs: retransmitted packets ccsim {cc_rtx} / "
            f"ns-3 {ns_rtx}; retransmission timeouts ccsim {cc_to} / ns-3 {ns_to}"
        )
    L.append("")
    L.append(END)
    return "\n".join(L) + "\n"


def write_section(results: Sequence[Result], header: dict, path: Path) -> str:
    """Put the section into ``path`` (RESULTS.md): in place of an earlier one, else at
    the end; the rest of the file is left as it was."""
    section = section_markdown(results, header)
    text = path.read_text() if path.exists() else ""
    path.write_text(splice_section(text, section))
    return section
