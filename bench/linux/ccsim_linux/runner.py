"""Run each case's paired runs: run ``i`` simulated by ccsim and emulated with the
kernel's TCP (``ccsim.emulate``), the same scenario text (seed, jittered starts) on
both sides. Results go to a JSON file after every pair, so a long campaign resumes."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from ccsim_linux.scenarios import Case


def metrics(summary: dict[str, Any], case: Case) -> dict[str, Any]:
    """What the comparison reads from a run's summary (same keys on both sides)."""
    b = summary["bottleneck"]
    flows = [f for f in summary["flows"] if f["protocol"] == "tcp"]
    groups = case.group_of_flow()
    by_group = [0.0] * len(case.groups)
    for f, g in zip(flows, groups, strict=True):
        by_group[g] += f["goodput_mbps"]
    return {
        "utilisation_pct": 100 * b["utilisation"],
        "goodput_mbps": sum(f["goodput_mbps"] for f in flows),
        "group_goodput_mbps": by_group,
        "jain": summary.get("jain_index"),
        "sojourn_p50_ms": b["sojourn_p50_ms"],
        "sojourn_p90_ms": b["sojourn_p90_ms"],
        "drops": b["drops"],
        "marks": b["marks"],
        "arrivals": b["arrivals"],
        "retransmits": sum(f["retransmits"] for f in flows),
    }


def _source(case: Case, run: int) -> Any:
    from ccsim import api

    return api.ScenarioSource(text=case.toml(run), fmt="toml", label=f"{case.name}#{run}")


def _simulate(case: Case, source: Any) -> tuple[dict[str, Any], float, float]:
    """ccsim's side of a pair: its metrics, its wall-clock seconds and the simulated
    duration."""
    from ccsim import api

    t = time.perf_counter()
    sim = api.simulate(source)
    return metrics(sim.summary, case), time.perf_counter() - t, sim.summary["duration_s"]


def run_pair(case: Case, run: int) -> dict[str, Any]:
    from ccsim.emulate import emulate

    source = _source(case, run)
    sim, sim_wall, duration_s = _simulate(case, source)
    emu = emulate(source, warn=lambda m: None)
    return {
        "run": run,
        "sim": sim,
        "linux": metrics(emu.summary, case),
        "sim_wall_s": sim_wall,
        "duration_s": duration_s,
        "timing": {k: v for k, v in emu.summary["emulation"].items()},
    }


def resimulate(cases: list[Case], store: Path, log=print) -> None:
    """Re-simulate the ccsim side of every stored pair with the current ccsim, keeping the
    Linux side: the emulated side runs the kernel's TCP over ccsim's bottleneck, so a change
    to ccsim's TCP (RACK-TLP, say) moves only the simulated side."""
    data: dict[str, Any] = json.loads(store.read_text()) if store.exists() else {}
    for case in cases:
        for pair in data.get(case.name, {}).get("runs", []):
            pair["sim"], pair["sim_wall_s"], _ = _simulate(case, _source(case, pair["run"]))
        log(f"{case.name}: re-simulated")
    store.write_text(json.dumps(data, indent=1) + "\n")


def run_cases(cases: list[Case], runs: int, store: Path, log=print) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(store.read_text()) if store.exists() else {}
    meta = data.setdefault("_meta", {})
    meta.setdefault("started", time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    load0 = os.getloadavg()[0]
    for case in cases:
        entry = data.setdefault(case.name, {"describe": case.describe(), "runs": []})
        done = {r["run"] for r in entry["runs"]}
        for run in range(runs):
            if run in done:
                continue
            t = time.perf_counter()
            try:
                pair = run_pair(case, run)
            except Exception as exc:  # a failed emulation is recorded, not fatal
                log(f"{case.name}#{run}: failed: {exc}")
                entry.setdefault("failures", []).append(f"run {run}: {exc}")
                continue
            entry["runs"].append(pair)
            store.write_text(json.dumps(data, indent=1) + "\n")
            tm = pair["timing"]
            log(
                f"{case.name}#{run}: {time.perf_counter() - t:.1f} s; util sim "
                f"{pair['sim']['utilisation_pct']:.1f} linux "
                f"{pair['linux']['utilisation_pct']:.1f}; "
                f"timing p99 {tm['p99_us']:.0f} us"
            )
    meta["ended"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    meta["load"] = (
        f"load average {load0:.2f} at the start, {os.getloadavg()[0]:.2f} at the end "
        f"({os.cpu_count()} cores, shared; the emulator runs under SCHED_FIFO)"
    )
    store.write_text(json.dumps(data, indent=1) + "\n")
    return data
