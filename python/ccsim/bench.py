"""``ccsim bench``: the standard speed benchmarks, reported against their targets."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from ccsim import api


@dataclass(frozen=True)
class Benchmark:
    name: str
    description: str
    scenario: dict[str, Any]
    #: Wall-clock seconds of simulation (summary.wall_s) the core should stay under.
    target_wall_s: float


@dataclass(frozen=True)
class BenchResult:
    benchmark: Benchmark
    simulated_s: float
    wall_s: float
    events: int
    bottleneck_packets: int

    @property
    def events_per_s(self) -> float:
        return self.events / self.wall_s if self.wall_s > 0 else float("inf")

    @property
    def packets_per_s(self) -> float:
        return self.bottleneck_packets / self.wall_s if self.wall_s > 0 else float("inf")

    @property
    def speedup(self) -> float:
        """Simulated seconds per wall-clock second."""
        return self.simulated_s / self.wall_s if self.wall_s > 0 else float("inf")

    @property
    def passed(self) -> bool:
        return self.wall_s <= self.benchmark.target_wall_s


def _dumbbell(flows: int, rate: str, rtt: str, duration_s: float) -> dict[str, Any]:
    return {
        "duration": f"{duration_s:g}s",
        "seed": 1,
        "bottleneck": {"rate": rate, "queue": {"kind": "droptail", "limit": "1bdp"}},
        "flows": [{"count": flows, "cc": "newreno", "rtt": rtt}],
    }


#: (name, description, flows, bottleneck rate, RTT, simulated seconds, wall target seconds)
STANDARD = (
    ("single", "1 x NewReno, 10Mbps, 100ms", 1, "10Mbps", "100ms", 300.0, 0.15),
    ("ten", "10 x NewReno, 1Gbps, 20ms", 10, "1Gbps", "20ms", 10.0, 0.35),
    ("thousand", "1000 x NewReno, 10Gbps, 20ms", 1000, "10Gbps", "20ms", 2.0, 0.6),
)

#: ``--quick`` simulates this fraction of each duration, against the same fraction of target.
QUICK_SCALE = 0.1


def benchmarks(quick: bool = False) -> list[Benchmark]:
    """The standard scenarios (DropTail of 1 BDP at the bottleneck), as dicts."""
    scale = QUICK_SCALE if quick else 1.0
    return [
        Benchmark(name, desc, _dumbbell(n, rate, rtt, secs * scale), target * scale)
        for name, desc, n, rate, rtt, secs, target in STANDARD
    ]


def run_benchmark(bench: Benchmark) -> BenchResult:
    summary = api.run(bench.scenario).summary
    return BenchResult(
        benchmark=bench,
        simulated_s=float(summary["duration_s"]),
        wall_s=float(summary["wall_s"]),
        events=int(summary["events"]),
        bottleneck_packets=int(summary["bottleneck_packets"]),
    )


def report_table(results: list[BenchResult]) -> Table:
    table = Table(title="ccsim benchmarks (wall = simulation only)", title_justify="left")
    table.add_column("scenario")
    for header in ("sim s", "wall s", "events/s", "bneck pkts/s", "sim s / wall s", "target s"):
        table.add_column(header, justify="right")
    table.add_column("result")
    for r in results:
        table.add_row(
            f"{r.benchmark.name}: {r.benchmark.description}",
            f"{r.simulated_s:g}",
            f"{r.wall_s:.3f}",
            f"{r.events_per_s:,.0f}",
            f"{r.packets_per_s:,.0f}",
            f"{r.speedup:,.1f}",
            f"{r.benchmark.target_wall_s:g}",
            "[green]pass[/green]" if r.passed else "[red]miss[/red]",
        )
    return table


def run_all(console: Console, quick: bool = False) -> list[BenchResult]:
    """Run every benchmark, print the report table and return the results (no assertions)."""
    results = []
    if quick:
        console.print(f"quick mode: durations and targets scaled by {QUICK_SCALE:g}")
    for bench in benchmarks(quick):
        with console.status(f"{bench.name}: {bench.description}"):
            results.append(run_benchmark(bench))
    console.print(report_table(results))
    return results


def as_records(results: list[BenchResult]) -> list[dict[str, Any]]:
    """Plain dicts for ``--json`` (to track speed over time)."""
    return [
        {
            "name": r.benchmark.name,
            "description": r.benchmark.description,
            "simulated_s": r.simulated_s,
            "wall_s": r.wall_s,
            "events": r.events,
            "bottleneck_packets": r.bottleneck_packets,
            "events_per_s": r.events_per_s,
            "bottleneck_packets_per_s": r.packets_per_s,
            "simulated_s_per_wall_s": r.speedup,
            "target_wall_s": r.benchmark.target_wall_s,
            "passed": r.passed,
        }
        for r in results
    ]


# --------------------------------------------------------------------------- networks

#: Link transmissions per wall second per core the leaf-spine row should reach (issue 30;
#: a run is one thread, so per run is per core).
LEAF_SPINE_TARGET_TX_PER_S = 3e6


@dataclass(frozen=True)
class NetworkBench:
    name: str
    description: str
    simulated_s: float
    wall_s: float
    #: Packets that left any link (network and access links, both directions).
    link_transmissions: int
    #: Transmissions per wall second the row should reach (None: no target).
    target_tx_per_s: float | None
    #: CPU seconds of the whole ``ccsim.run`` call (build and tables included): on a
    #: loaded machine wall time also counts the time other processes held the core.
    cpu_s: float = 0.0

    @property
    def tx_per_s(self) -> float:
        return self.link_transmissions / self.wall_s if self.wall_s > 0 else float("inf")

    @property
    def tx_per_cpu_s(self) -> float:
        return self.link_transmissions / self.cpu_s if self.cpu_s > 0 else float("inf")

    @property
    def passed(self) -> bool | None:
        return None if self.target_tx_per_s is None else self.tx_per_s >= self.target_tx_per_s


def parking_lot_scenario(duration_s: float) -> dict[str, Any]:
    """Issue 30's parking lot: 3 DropTail hops at 10, 20 and 15 Mbit/s, 5 ms each, one long
    CUBIC flow across all and two cross flows per hop (as examples/parking_lot.toml, with
    DropTail: the configuration ns-3's harness also builds)."""
    hops = [
        {"rate": rate, "delay": "5ms", "queue": {"kind": "droptail", "limit": "1bdp"}}
        for rate in ("10Mbps", "20Mbps", "15Mbps")
    ]
    flows = [{"from": "r0", "to": "r3", "cc": "cubic", "rtt": "40ms"}]
    flows += [
        {"count": 2, "from": f"r{i}", "to": f"r{i + 1}", "cc": "cubic", "rtt": "30ms"}
        for i in range(3)
    ]
    return {
        "duration": f"{duration_s:g}s",
        "seed": 1,
        "network": {"kind": "parking_lot", "hops": hops},
        "flows": flows,
    }


def leaf_spine_scenario(duration_s: float) -> dict[str, Any]:
    """Issue 30's fabric: 4 spines, 8 leaves, 16 hosts per leaf (128 hosts), 10 Gbit/s hosts,
    40 Gbit/s fabric, 1 us per link, DCTCP over step-marking RED (K = 65 packets) at every
    port; a random permutation of long flows (each host sends to one other, seeded), ECMP
    over the spines."""
    import random

    hosts = list(range(128))
    targets = hosts[:]
    random.Random(1).shuffle(targets)
    # A host sending to itself swaps its target with the next host's.
    for k in hosts:
        if targets[k] == k:
            j = (k + 1) % len(hosts)
            targets[k], targets[j] = targets[j], targets[k]
    flows = [
        {"from": f"host{k}", "to": f"host{t}", "cc": "dctcp", "ecn": True, "rtt": "100us"}
        for k, t in zip(hosts, targets, strict=True)
    ]
    return {
        "duration": f"{duration_s:g}s",
        "seed": 1,
        "network": {
            "kind": "leaf_spine",
            "spines": 4,
            "leaves": 8,
            "hosts_per_leaf": 16,
            "host_link": {"rate": "10Gbps", "delay": "1us"},
            "fabric_link": {"rate": "40Gbps", "delay": "1us"},
            "queue": {"kind": "red", "mode": "step", "threshold": "65p", "limit": "300p"},
        },
        "flows": flows,
    }


#: (name, description, scenario maker, simulated seconds, target transmissions/s)
NETWORKS = (
    (
        "parking_lot",
        "3 DropTail hops 10/20/15 Mbps, 1 long + 6 cross CUBIC",
        parking_lot_scenario,
        60.0,
        None,
    ),
    (
        "leaf_spine",
        "128 hosts, 4x8 leaf-spine 10/40 Gbps, 128 DCTCP permutation",
        leaf_spine_scenario,
        0.05,
        LEAF_SPINE_TARGET_TX_PER_S,
    ),
)


def run_network_bench(console: Console, quick: bool = False) -> list[NetworkBench]:
    """The parking-lot and leaf-spine rows: packets sent over any link per wall second of
    simulation (summary.wall_s), as issue 30 asks; print their table."""
    scale = QUICK_SCALE if quick else 1.0
    results = []
    for name, desc, make, secs, target in NETWORKS:
        with console.status(f"{name}: {desc}"):
            cpu0 = time.process_time()
            result = api.run(make(secs * scale))
            cpu_s = time.process_time() - cpu0
        departures = result.tables["queues"].column("departures").to_numpy()
        results.append(
            NetworkBench(
                name=name,
                description=desc,
                simulated_s=float(result.summary["duration_s"]),
                wall_s=float(result.summary["wall_s"]),
                link_transmissions=int(departures.sum()),
                target_tx_per_s=target,
                cpu_s=cpu_s,
            )
        )
    console.print(network_report_table(results))
    return results


def network_report_table(results: list[NetworkBench]) -> Table:
    table = Table(title="network benchmarks (wall = simulation only)", title_justify="left")
    table.add_column("scenario")
    for header in ("sim s", "wall s", "link tx", "link tx/s", "tx/cpu s", "target tx/s"):
        table.add_column(header, justify="right")
    table.add_column("result")
    for r in results:
        verdict = {None: "-", True: "[green]pass[/green]", False: "[red]miss[/red]"}[r.passed]
        table.add_row(
            f"{r.name}: {r.description}",
            f"{r.simulated_s:g}",
            f"{r.wall_s:.3f}",
            f"{r.link_transmissions:,}",
            f"{r.tx_per_s:,.0f}",
            f"{r.tx_per_cpu_s:,.0f}",
            "-" if r.target_tx_per_s is None else f"{r.target_tx_per_s:,.0f}",
            verdict,
        )
    return table


def network_records(results: list[NetworkBench]) -> list[dict[str, Any]]:
    """Plain dicts for ``--json``."""
    return [
        {
            "name": r.name,
            "description": r.description,
            "simulated_s": r.simulated_s,
            "wall_s": r.wall_s,
            "link_transmissions": r.link_transmissions,
            "link_tx_per_s": r.tx_per_s,
            "cpu_s": r.cpu_s,
            "link_tx_per_cpu_s": r.tx_per_cpu_s,
            "target_link_tx_per_s": r.target_tx_per_s,
            "passed": r.passed,
        }
        for r in results
    ]


# --------------------------------------------------------------------------- sweeps

#: Per-run cost of a sweep beyond the simulation itself, one local worker (ms).
SWEEP_OVERHEAD_TARGET_MS = 0.5
#: Wall-clock speed-up of a sweep from 1 to 2 local workers.
SWEEP_SPEEDUP_TARGET = 1.8


@dataclass(frozen=True)
class SweepBench:
    name: str
    description: str
    runs: int
    jobs: tuple[int, ...]
    #: Wall-clock seconds of the whole ``ccsim.sweep`` call, per entry of ``jobs``.
    wall_s: tuple[float, ...]
    #: Sum of the runs' simulation wall_s, per entry of ``jobs``.
    sim_wall_s: tuple[float, ...]
    value: float
    unit: str
    target: float
    passed: bool | None
    #: The same speed-up for bare ``ccsim.run`` calls on 1 and 2 threads (no sweep): what
    #: this machine allows at that moment (None for the overhead benchmark).
    reference: float | None = None
    #: Overhead benchmark: wall-clock seconds of the same runs as direct calls of the core,
    #: one after the other (what the sweep is compared against).
    direct_wall_s: float | None = None


def _sweep_spec(duration_s: float, rtt: str, runs: int) -> dict[str, Any]:
    return {
        "base": _dumbbell(1, "10Mbps", rtt, duration_s),
        "repetitions": runs,
    }


def _tiny_sweep_spec(runs: int) -> dict[str, Any]:
    """``runs`` scenarios so short (10 ms at 1 Mbit/s, a few dozen events) that a sweep of
    them is almost all overhead; a grid axis (not only repetitions) so that each run's
    scenario differs, with the default series kept."""
    base = {
        "duration": "10ms",
        "seed": 1,
        "bottleneck": {"rate": "1Mbps", "queue": {"kind": "droptail", "limit": "1bdp"}},
        "flows": [{"count": 1, "cc": "newreno", "rtt": "20ms"}],
    }
    return {
        "base": base,
        "repetitions": 10,
        "grid": {"flows[0].rtt": [f"{10 + i}ms" for i in range(max(1, runs // 10))]},
    }


def _time_sweep(spec: dict[str, Any], jobs: int) -> tuple[float, float]:
    import tempfile
    import time
    from pathlib import Path

    from ccsim.sweeps.runner import sweep

    with tempfile.TemporaryDirectory(prefix="ccsim-bench-") as tmp:
        start = time.perf_counter()
        report = sweep(spec, Path(tmp) / "sweep", jobs=jobs)
        wall = time.perf_counter() - start
    return wall, report.sim_wall_s


def _time_direct(spec: dict[str, Any]) -> float:
    """Wall-clock seconds of the sweep's scenarios run by the core one after the other,
    each parsed from its JSON text as the sweep does (the texts are made beforehand)."""
    import time

    from ccsim import _core
    from ccsim.sweeps.spec import load_sweep

    texts = [run.scenario_json for run in load_sweep(spec).runs]
    start = time.perf_counter()
    for text in texts:
        _core.run(text, "json")
    return time.perf_counter() - start


def _time_bare(spec: dict[str, Any], jobs: int) -> float:
    """Wall-clock seconds of the sweep's scenarios as plain ``api.run`` calls on threads."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    from ccsim.sweeps.spec import load_sweep

    scenarios = [run.scenario for run in load_sweep(spec).runs]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        start = time.perf_counter()
        list(pool.map(api.run, scenarios))
        return time.perf_counter() - start


def sweep_overhead(runs: int) -> SweepBench:
    """The sweep's cost per run beyond simulating: a whole ``ccsim.sweep`` of ``runs`` tiny
    scenarios on one local worker (expanding the sweep, the fingerprint, running, writing
    rows and the default series to a temporary directory, results.parquet) minus the same
    simulations as direct calls of the core, over ``runs``."""
    spec = _tiny_sweep_spec(runs)
    wall, sim = _time_sweep(spec, 1)
    direct = _time_direct(spec)
    n = len(spec["grid"]["flows[0].rtt"]) * spec["repetitions"]
    overhead_ms = (wall - direct) / n * 1e3
    return SweepBench(
        "sweep-overhead",
        f"{n} x (1 NewReno, 1Mbps, 10ms), 1 worker, minus the runs alone",
        n,
        (1,),
        (wall,),
        (sim,),
        overhead_ms,
        "ms/run",
        SWEEP_OVERHEAD_TARGET_MS,
        overhead_ms <= SWEEP_OVERHEAD_TARGET_MS,
        direct_wall_s=direct,
    )


#: Seconds to parse, validate and build a scenario of 10^5 flows (linear in flows).
BUILD_TARGET_S = 2.0


def build_time(flows: int = 100_000) -> SweepBench:
    """Wall time to read, validate and build a scenario of ``flows`` flows with random
    RTTs (``ccsim.validate`` builds the network without running it): the build was
    quadratic in flows once (197 s for 10^5), it is linear now."""
    scenario = {
        "duration": "1s",
        "bottleneck": {"rate": "10Gbps"},
        "flows": [{"count": flows, "rtt": {"uniform": ["10ms", "100ms"]}}],
    }
    start = time.perf_counter()
    api.validate(scenario)
    wall = time.perf_counter() - start
    return SweepBench(
        "build",
        f"read, validate and build {flows} flows with random RTTs",
        1,
        (1,),
        (wall,),
        (0.0,),
        wall,
        "s",
        BUILD_TARGET_S,
        wall <= BUILD_TARGET_S,
    )


def run_sweep_bench(console: Console, quick: bool = False) -> list[SweepBench]:
    """Sweep overhead (tiny runs, 1 worker: (sweep wall - the same runs direct) / runs)
    and the speed-up of a sweep from 1 to 2 local workers; prints a table."""
    import os

    n = 1000 if quick else 5000
    with console.status(f"sweep overhead: {n} runs of 10 ms simulated, 1 worker"):
        results = [sweep_overhead(n)]
    # runs long enough (the "single" benchmark, ~0.1 s each) that the speed-up measures
    # the parallel execution rather than the per-run overhead, measured above
    m = 8 if quick else 24
    spec = _sweep_spec(300.0, "100ms", m)
    walls, sims = [], []
    for jobs in (1, 2):
        with console.status(f"sweep speed-up: {m} runs of 300 s simulated, {jobs} worker(s)"):
            wall, sim = _time_sweep(spec, jobs)
        walls.append(wall)
        sims.append(sim)
    speedup = walls[0] / walls[1] if walls[1] > 0 else float("inf")
    with console.status("the same runs as bare ccsim.run calls on 1 and 2 threads"):
        bare = [_time_bare(spec, jobs) for jobs in (1, 2)]
    reference = bare[0] / bare[1] if bare[1] > 0 else float("inf")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    results.append(
        SweepBench(
            "sweep-speedup",
            f"{m} x (1 NewReno, 10Mbps, 100ms, 300s), 1 -> 2 workers ({cores} cores)",
            m,
            (1, 2),
            tuple(walls),
            tuple(sims),
            speedup,
            "x",
            SWEEP_SPEEDUP_TARGET,
            speedup >= SWEEP_SPEEDUP_TARGET if (cores or 1) >= 2 else None,
            reference,
        )
    )
    with console.status("build: 100000 flows"):
        results.append(build_time())
    console.print(sweep_report_table(results))
    return results


def sweep_report_table(results: list[SweepBench]) -> Table:
    table = Table(title="ccsim sweep benchmarks (wall = whole sweep)", title_justify="left")
    table.add_column("benchmark")
    headers = ("runs", "workers", "wall s", "sim wall s", "direct s", "value", "bare runs")
    for header in (*headers, "target"):
        table.add_column(header, justify="right")
    table.add_column("result")
    for r in results:
        verdict = {True: "[green]pass[/green]", False: "[red]miss[/red]", None: "n/a (1 core)"}
        table.add_row(
            f"{r.name}: {r.description}",
            str(r.runs),
            " / ".join(map(str, r.jobs)),
            " / ".join(f"{w:.3f}" for w in r.wall_s),
            " / ".join(f"{w:.3f}" for w in r.sim_wall_s),
            "" if r.direct_wall_s is None else f"{r.direct_wall_s:.3f}",
            f"{r.value:.3f} {r.unit}" if r.unit == "ms/run" else f"{r.value:.2f} {r.unit}",
            "" if r.reference is None else f"{r.reference:.2f} x",
            f"{'>=' if r.unit == 'x' else '<='} {r.target:g}",
            verdict[r.passed],
        )
    return table


def sweep_records(results: list[SweepBench]) -> list[dict[str, Any]]:
    """Plain dicts for ``--json``; the overhead record also has ``overhead_ms_per_run``."""
    records = []
    for r in results:
        record: dict[str, Any] = {
            "name": r.name,
            "description": r.description,
            "runs": r.runs,
            "jobs": list(r.jobs),
            "wall_s": list(r.wall_s),
            "simulation_wall_s": list(r.sim_wall_s),
            "value": r.value,
            "unit": r.unit,
            "target": r.target,
            "passed": r.passed,
            "bare_run_speedup": r.reference,
        }
        if r.direct_wall_s is not None:
            record["direct_wall_s"] = r.direct_wall_s
            record["overhead_ms_per_run"] = r.value
        records.append(record)
    return records


# --------------------------------------------------------------------------- the CLI loop

#: Wall-clock targets (s) of ``ccsim run`` on the bundled demo, as a user runs it: the
#: whole command, interpreter start to exit (issue 32).
RUN_TARGETS_S = {"run-with-plots": 1.5, "run-without-plots": 0.5}


@dataclass(frozen=True)
class LoopResult:
    name: str
    description: str
    #: Wall-clock seconds of each ``ccsim run`` subprocess, and of its simulation.
    wall_s: tuple[float, ...]
    sim_wall_s: float
    target_s: float
    #: CPU seconds (user + system, the command and its children) of each run: what the
    #: command costs whatever else the machine is doing at the time.
    cpu_s: tuple[float, ...] = ()

    @property
    def median_s(self) -> float:
        return statistics.median(self.wall_s)

    @property
    def passed(self) -> bool:
        return self.median_s <= self.target_s


def _demo_path() -> Path:
    from importlib import resources

    return Path(str(resources.files("ccsim").joinpath("scenarios", "demo.toml")))


def time_cli_run(
    extra: list[str], repeat: int
) -> tuple[tuple[float, ...], float, tuple[float, ...]]:
    """Wall-clock seconds of ``ccsim run DEMO -o TMP EXTRA`` in a fresh interpreter (what
    a user waits for, the report printed to a pipe), ``repeat`` times; the simulation's
    wall_s; the CPU seconds of each run."""
    import json
    import resource

    walls, cpus = [], []
    sim = 0.0
    with tempfile.TemporaryDirectory(prefix="ccsim-bench-") as tmp:
        for i in range(repeat):
            out = Path(tmp) / f"run{i}"
            command = [sys.executable, "-m", "ccsim", "run", str(_demo_path()), "-o", str(out)]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(
                [*command, *extra],
                check=True,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,  # the report is printed, as for a user
                stderr=subprocess.DEVNULL,
            )
            walls.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            sim = float(json.loads((out / "summary.json").read_text())["wall_s"])
    return tuple(walls), sim, tuple(cpus)


def run_loop_bench(console: Console, quick: bool = False) -> list[LoopResult]:
    """``ccsim run`` of the demo with and without plots, against :data:`RUN_TARGETS_S`
    (not scaled by ``--quick``, which runs each once instead of three times)."""
    repeat = 1 if quick else 3
    cases = (
        ("run-with-plots", "ccsim run demo.toml (PNG plots)", []),
        ("run-without-plots", "ccsim run demo.toml --no-plots", ["--no-plots"]),
    )
    results = []
    for name, description, extra in cases:
        with console.status(description):
            walls, sim, cpus = time_cli_run(extra, repeat)
        results.append(LoopResult(name, description, walls, sim, RUN_TARGETS_S[name], cpus))
    console.print(loop_report_table(results))
    return results


def _load() -> str:
    try:
        one, _, _ = os.getloadavg()
    except OSError:
        return "load unknown"
    return f"load {one:.1f} on {os.cpu_count()} cores"


def loop_report_table(results: list[LoopResult]) -> Table:
    table = Table(
        title=f"ccsim run, whole command in a subprocess (median; {_load()})",
        title_justify="left",
    )
    table.add_column("command")
    for header in ("wall s", "CPU s", "of which simulation s", "runs", "target s"):
        table.add_column(header, justify="right")
    table.add_column("result")
    for r in results:
        table.add_row(
            f"{r.name}: {r.description}",
            f"{r.median_s:.2f}",
            f"{statistics.median(r.cpu_s):.2f}" if r.cpu_s else "-",
            f"{r.sim_wall_s:.3f}",
            str(len(r.wall_s)),
            f"{r.target_s:g}",
            "[green]pass[/green]" if r.passed else "[red]miss[/red]",
        )
    return table


def loop_records(results: list[LoopResult]) -> list[dict[str, Any]]:
    return [
        {
            "name": r.name,
            "description": r.description,
            "wall_s": r.median_s,
            "wall_s_each": list(r.wall_s),
            "cpu_s_each": list(r.cpu_s),
            "sim_wall_s": r.sim_wall_s,
            "target_wall_s": r.target_s,
            "passed": r.passed,
            "load": _load(),
        }
        for r in results
    ]
