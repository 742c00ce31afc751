"""``python bench/compare_linux.py [--quick] [--runs R] [--random N] [--only REGEX]
[--rerender] [--resim]``: run the cases (resuming from bench/linux/runs.json) and write
bench/LINUX.md."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from ccsim_linux import report, runner, scenarios

BENCH = Path(__file__).resolve().parents[2]


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="compare_linux")
    p.add_argument("--runs", type=int, default=3, help="paired runs per case (default 3)")
    p.add_argument("--random", type=int, default=30, help="random draws (default 30)")
    p.add_argument("--only", help="regex on case names")
    p.add_argument("--store", default=str(BENCH / "linux" / "runs.json"))
    p.add_argument("--out", default=str(BENCH / "LINUX.md"))
    p.add_argument("--rerender", action="store_true", help="only re-render from the store")
    p.add_argument(
        "--resim",
        action="store_true",
        help="first re-simulate the ccsim side of the stored pairs (after a change to ccsim)",
    )
    args = p.parse_args(argv)
    cases = scenarios.matrix() + scenarios.random_draws(args.random)
    if args.only:
        cases = [c for c in cases if re.search(args.only, c.name)]
    store = Path(args.store)
    started = report.now_utc()
    load0 = os.getloadavg()[0]
    if args.resim:
        runner.resimulate(cases, store, log=lambda m: print(m, flush=True))
    if not args.rerender:
        from ccsim.emulate.checks import Refusal, check_environment

        try:
            check_environment()
        except Refusal as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        runner.run_cases(cases, args.runs, store, log=lambda m: print(m, flush=True))
    import json

    data = json.loads(store.read_text()) if store.exists() else {}
    load = (
        f"load average {load0:.2f} at the start, {os.getloadavg()[0]:.2f} at the end "
        f"({os.cpu_count()} cores, shared)"
    )
    command = "python bench/compare_linux.py" + (" " + " ".join(argv) if argv else "")
    Path(args.out).write_text(report.render(data, cases, command, started, load))
    print(f"wrote {args.out}")
    return 0
