"""The harness's command line: the fixed matrix, or --random N scenarios."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from . import differential, parking_lot
from .matrix_run import run
from .report import Row
from .runner import BENCH_DIR, Ns3Unavailable


def _at_least_one(text: str) -> int:
    """argparse type: a whole number of at least 1 (a count of scenarios or runs)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    p = parser or argparse.ArgumentParser(
        prog="python bench/compare.py",
        description="Run the ccsim vs ns-3 validation matrix (bench/RESULTS.md), or N random "
        "scenarios (--random N: bench/DIFFERENTIAL.md). Needs pip install '.[ns3]' and g++.",
    )
    p.add_argument("--quick", action="store_true", help="shortened runs (under 5 minutes)")
    p.add_argument("--only", metavar="REGEX", help="run only the scenarios matching REGEX")
    p.add_argument("-o", "--output", metavar="FILE", help="Markdown file (bench/RESULTS.md)")
    p.add_argument("--work", metavar="DIR", help="keep the ns-3 build and raw outputs here")
    p.add_argument(
        "--cpu",
        type=int,
        metavar="N",
        help="run both simulators on CPU N (default: the highest-numbered allowed CPU)",
    )
    p.add_argument(
        "--random",
        type=_at_least_one,
        nargs="?",
        const=60,
        metavar="N",
        help="randomised differential testing: N scenarios drawn from the space both "
        "simulators support (default 60) -> bench/DIFFERENTIAL.md",
    )
    p.add_argument(
        "--parking-lot",
        action="store_true",
        help="the two-hop parking lots of issue 30 (parking_lot.toml) over paired runs "
        "(--replicates, default 8) -> the 'Parking lot' section of bench/RESULTS.md, "
        "keeping the rest of the file; with --rerender WORK/parking_lot_results.pickle, "
        "that section again from a finished run's --work directory",
    )
    p.add_argument("--seed", type=int, default=1, help="seed of the random draw (default 1)")
    p.add_argument(
        "--replicates",
        type=_at_least_one,
        default=None,
        metavar="R",
        help="with --random: compare each side's mean over R paired runs (the default run "
        "and R-1 with the flows' starts and RTTs shifted alike in both; default: 3 to 10, "
        "as many as fit in 900 k bottleneck packets)",
    )
    p.add_argument(
        "--budget-min",
        type=float,
        metavar="MIN",
        help="with --random: start no new scenario after MIN minutes (the report states "
        "how many ran)",
    )
    p.add_argument(
        "--rerender",
        metavar="RUNS_JSON",
        help="rewrite the --random report (-o, default bench/DIFFERENTIAL.md) from stored "
        "runs (bench/differential/runs.json) with the current cause rules",
    )
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
    return p


def run_args(args: argparse.Namespace, command: str) -> list[Row]:
    """Run the matrix as a command line parsed by ``build_parser`` asks (``command``: how
    the user invoked it, for the header of RESULTS.md)."""
    if getattr(args, "parking_lot", False) and getattr(args, "rerender", None):
        output = Path(args.output) if args.output else BENCH_DIR / "RESULTS.md"
        parking_lot.rerender(Path(args.rerender), output)
        return []
    if getattr(args, "rerender", None):
        output = Path(args.output) if args.output else BENCH_DIR / "DIFFERENTIAL.md"
        probes = "all" if args.reprobe else "missing"
        differential.rerender(Path(args.rerender), output, probes, args.ns3)
        return []
    if getattr(args, "parking_lot", False):
        parking_lot.run(
            quick=args.quick,
            only=args.only,
            output=Path(args.output) if args.output else None,
            work=Path(args.work) if args.work else None,
            command=f"{command} --parking-lot" + (" --quick" if args.quick else ""),
            cpu=args.cpu,
            replicates=args.replicates or parking_lot.REPLICATES,
        )
        return []
    if getattr(args, "random", None):
        differential.run(
            n=args.random,
            seed=args.seed,
            output=Path(args.output) if args.output else None,
            work=Path(args.work) if args.work else None,
            command=f"{command} --random {args.random} --seed {args.seed}"
            + (f" --replicates {args.replicates}" if args.replicates is not None else ""),
            cpu=args.cpu,
            budget_s=args.budget_min * 60 if args.budget_min else None,
            only=args.only,
            replicates=args.replicates,
        )
        return []
    return run(
        quick=args.quick,
        only=args.only,
        output=Path(args.output) if args.output else None,
        work=Path(args.work) if args.work else None,
        command=command + (" --quick" if args.quick else ""),
        cpu=args.cpu,
    )


def main(argv: Sequence[str] | None = None, command: str = "python bench/compare.py") -> int:
    args = build_parser().parse_args(argv)
    try:
        run_args(args, command)
    except Ns3Unavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
