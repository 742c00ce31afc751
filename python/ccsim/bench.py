"""``ccsim bench``: the standard speed benchmarks, reported against their targets."""

from __future__ import annotations

from dataclasses import dataclass
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
