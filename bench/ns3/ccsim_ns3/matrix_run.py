"""The fixed matrix run: every row of matrix.toml in ccsim and ns-3 on one CPU, then
bench/RESULTS.md."""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from .matrix import MATRIX
from .metrics import compare_metrics, speed_ratio
from .model import group_info
from .report import Row, write_markdown
from .runner import (
    Ns3Build,
    build_ns3_program,
    ccsim_metrics,
    find_ns3,
    find_source,
    machine_header,
    ns3_notes,
    pinned_cpu,
    run_ccsim,
    run_ns3,
)


def run(
    quick: bool = False,
    only: str | None = None,
    output: Path | None = None,
    work: Path | None = None,
    log: Callable[[str], None] = print,
    command: str = "python bench/compare.py",
    cpu: int | None = None,
) -> list[Row]:
    source = find_source()
    bench_dir = source.parent.parent
    output = output or bench_dir / "RESULTS.md"
    build = find_ns3()
    with contextlib.ExitStack() as stack:
        if work is None:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ccsim-ns3-")))
        pinned = stack.enter_context(pinned_cpu(cpu))
        return _run(quick, only, output, work, build, source, log, command, pinned)


def _run(
    quick: bool,
    only: str | None,
    output: Path,
    work: Path,
    build: Ns3Build,
    source: Path,
    log: Callable[[str], None],
    command: str,
    pinned: int | None = None,
) -> list[Row]:
    exe = work / "dumbbell"
    t0 = time.monotonic()
    build_ns3_program(build, source, exe)
    log(f"compiled {source.name} against ns-3 {build.version} in {time.monotonic() - t0:.0f} s")
    load0 = os.getloadavg()
    rows: list[Row] = []
    for sc in MATRIX:
        if only and not re.search(only, sc.name):
            continue
        t1 = time.monotonic()
        # ccsim runs on both sides of ns-3's run, on the same CPU (see `pinned_cpu`), so
        # that both simulators' times come from the same stretch of this machine's
        # (varying) speed.
        result, walls = run_ccsim(sc, quick)
        ns = run_ns3(sc, quick, exe, work)
        walls += run_ccsim(sc, quick, like=result)[1]
        cc = ccsim_metrics(sc, result, walls)
        _, names = group_info(sc)
        checks = compare_metrics(cc, ns, names)
        ratio = speed_ratio(cc, ns)
        row = Row(sc, checks, cc, ns, ratio, ns3_notes(sc, ns, cc))
        rows.append(row)
        bad = [c.metric for c in checks if c.ok is False]
        log(
            f"{sc.name}: ns-3/ccsim {ratio:.0f}x (ccsim {cc['wall_s']:.3f} s, ns-3 "
            f"{ns['wall_s']:.2f} s), {'ok' if not bad else 'outside: ' + ', '.join(bad)} "
            f"[{time.monotonic() - t1:.0f} s]"
        )
    load1 = os.getloadavg()
    header = machine_header(build, quick, command)
    header["load"] = (
        f"load average {load0[0]:.2f} at the start, {load1[0]:.2f} at the end "
        f"({os.cpu_count()} cores; other processes may share the machine)"
        + (f"; both simulators pinned to CPU {pinned}" if pinned is not None else "")
    )
    write_markdown(rows, header, output)
    log(f"wrote {output}")
    return rows
