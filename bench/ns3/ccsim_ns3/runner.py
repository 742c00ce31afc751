"""Compile bench/ns3/dumbbell.cc against the ns3 wheel, run scenarios in ns-3 and in
ccsim (one CPU, or one ns-3 program per CPU at once), and read their raw results."""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import platform
import queue
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .draws import NS3_TIMEOUT_S, Drawn, perturbed_ns3_config, shifts
from .metrics import ccsim_raw, metrics, ns3_raw
from .model import Scenario, group_info
from .translate import ccsim_scenario, ns3_config, ns3_queue_attrs

#: bench/ns3 (dumbbell.cc) and bench (RESULTS.md, DIFFERENTIAL.md, CAUSES.md): this
#: package lives in bench/ns3/ccsim_ns3 of a ccsim checkout.
NS3_DIR = Path(__file__).resolve().parent.parent
BENCH_DIR = NS3_DIR.parent


class Ns3Unavailable(RuntimeError):
    """The ns3 wheel, or a C++ compiler, is missing."""


@dataclass
class Ns3Build:
    root: Path  # the wheel's ns3/ directory (include/, lib64/)
    version: str
    defines: list[str]
    libs: list[str]
    compiler: str


NS3_MODULES = (
    "core",
    "network",
    "internet",
    "traffic-control",
    "point-to-point",
    "applications",
    "stats",
    "bridge",
    "mobility",
)


def find_ns3() -> Ns3Build:
    """Locate the ns3 wheel's headers, libraries and CMake package config."""
    import importlib.metadata as md

    try:
        dist = md.distribution("ns3")
    except md.PackageNotFoundError as exc:
        raise Ns3Unavailable("the ns3 package is not installed: pip install '.[ns3]'") from exc
    cmake_dir = None
    for f in dist.files or []:
        if str(f).endswith("cmake/ns3/ns3Targets.cmake"):
            cmake_dir = Path(str(dist.locate_file(f))).parent
            break
    if cmake_dir is None:
        raise Ns3Unavailable("the ns3 package has no CMake package config (ns3Targets.cmake)")
    root = cmake_dir.parents[2]  # .../ns3/lib64/cmake/ns3 -> .../ns3
    targets = (cmake_dir / "ns3Targets.cmake").read_text()
    m = re.search(
        r"add_library\(ns3::core SHARED IMPORTED\).*?"
        r'INTERFACE_COMPILE_DEFINITIONS "((?:[^"\\]|\\.)*)"',
        targets,
        re.S,
    )
    if not m:
        raise Ns3Unavailable(f"no compile definitions for ns3::core in {cmake_dir}")
    defines = [d.replace('\\"', '"') for d in m.group(1).split(";") if d]
    mv = re.search(r"libns3\.(\d+(?:\.\d+)?)-core\.so", "\n".join(os.listdir(root / "lib64")))
    if not mv:
        raise Ns3Unavailable(f"no libns3.*-core.so in {root / 'lib64'}")
    libver = mv.group(1)
    libs = [f"-lns3.{libver}-{m}" for m in NS3_MODULES]
    compiler = shutil.which(os.environ.get("CXX", "g++")) or shutil.which("c++")
    if not compiler:
        raise Ns3Unavailable("no C++ compiler (g++) found")
    return Ns3Build(root, dist.version, defines, libs, compiler)


def build_ns3_program(build: Ns3Build, source: Path, out: Path) -> Path:
    """Compile ``source`` against the wheel (skipped when ``out`` was built from the same
    source with the same command)."""
    lib = build.root / "lib64"
    cmd = [
        build.compiler,
        "-std=c++20",
        "-O2",
        *(f"-D{d}" for d in build.defines),
        f"-I{build.root / 'include'}",
        str(source),
        "-o",
        str(out),
        f"-L{lib}",
        # Keep every ns-3 library even if no symbol of it is referenced, or TypeIds
        # registered by static constructors (ns3::TcpSocket...) are missing at run time.
        "-Wl,--no-as-needed",
        *build.libs,
        "-Wl,--allow-shlib-undefined",
        f"-Wl,-rpath,{lib}",
    ]
    stamp = out.with_suffix(".build")
    key = json.dumps({"cmd": cmd, "source": source.read_text()})
    if out.exists() and stamp.exists() and stamp.read_text() == key:
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"compiling {source} failed:\n{proc.stderr[-4000:]}")
    stamp.write_text(key)
    return out


CCSIM_REPEATS = 3
"""ccsim runs on each side of the ns-3 run; the median of all of them is reported."""


def run_ccsim(
    sc: Scenario, quick: bool, repeats: int = CCSIM_REPEATS, like: Any = None
) -> tuple[Any, list[float]]:
    """Run ccsim ``repeats`` times and return the result with every run's simulation
    wall time (ccsim is deterministic: the runs, and ``like``, an earlier run's result,
    must all give identical results)."""
    import ccsim

    scenario = ccsim_scenario(sc, quick)
    walls = []
    result = like
    for _ in range(max(1, repeats)):
        r = ccsim.run(scenario)
        walls.append(r.summary["wall_s"])
        if result is not None:
            a = {k: v for k, v in result.summary.items() if k != "wall_s"}
            b = {k: v for k, v in r.summary.items() if k != "wall_s"}
            if a != b:  # pragma: no cover - ccsim is deterministic
                raise RuntimeError(f"{sc.name}: ccsim runs differ")
        result = r
    assert result is not None
    return result, walls


def ccsim_metrics(sc: Scenario, result: Any, walls: Sequence[float]) -> dict:
    """The metrics of a ccsim result, with the median of ``walls`` as its wall time, so
    that a run disturbed by another process does not decide the speed ratio."""
    summary = dict(result.summary)
    summary["wall_s"] = float(np.median(walls))
    summary["_rate_bps"] = sc.rate_mbps * 1e6
    cdf_tab = result.tables["sojourn_cdf"]
    groups, _ = group_info(sc)
    raw = ccsim_raw(
        summary,
        cdf_tab.column("sojourn_ms").to_pylist(),
        cdf_tab.column("cdf").to_pylist(),
        groups,
    )
    m = metrics(raw)
    m["_duration_s"] = summary["duration_s"]
    m["_extra"] = raw.extra
    return m


def run_ns3_program(
    sc: Scenario,
    quick: bool,
    exe: Path,
    work: Path,
    timeout_s: float | None = None,
    patch_config: Callable[[str], str] | None = None,
    tag: str = "",
) -> tuple[dict, Path]:
    """Run ``sc`` in ns-3 (dumbbell.cc): its JSON output and the path of its sojourn
    samples (a parking lot's hop i: that path with suffix .i); RuntimeError if it fails or
    takes longer than ``timeout_s``. ``patch_config`` may rewrite dumbbell.cc's
    configuration text first; ``tag`` keeps the files of runs of one scenario made at the
    same time apart."""
    work.mkdir(parents=True, exist_ok=True)
    cfg = work / f"{sc.name}{tag}.cfg"
    oj = work / f"{sc.name}{tag}.json"
    os_ = work / f"{sc.name}{tag}.sojourn"
    text = ns3_config(sc, quick, oj, os_)
    cfg.write_text(patch_config(text) if patch_config else text)
    try:
        proc = subprocess.run(
            [str(exe), str(cfg)], capture_output=True, text=True, timeout=timeout_s
        )
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"ns-3 run {sc.name} stopped after {timeout_s:.0f} s") from exc
    if proc.returncode != 0:
        raise RuntimeError(f"ns-3 run {sc.name} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(oj.read_text()), os_


def run_ns3(
    sc: Scenario,
    quick: bool,
    exe: Path,
    work: Path,
    timeout_s: float | None = None,
    patch_config: Callable[[str], str] | None = None,
    tag: str = "",
) -> dict:
    """Run the dumbbell ``sc`` in ns-3 (``run_ns3_program``) and compute its metrics."""
    out, os_ = run_ns3_program(sc, quick, exe, work, timeout_s, patch_config, tag)
    samples = np.fromfile(os_, dtype=np.int64)
    _, m0, m1 = sc.timing(quick)
    groups, _ = group_info(sc)
    raw = ns3_raw(out, samples, m1 - m0, sc.rate_mbps * 1e6, groups)
    m = metrics(raw)
    m["_extra"] = raw.extra
    return m


def ns3_notes(sc: Scenario, ns: dict, cc: dict) -> list[str]:
    """What ns-3 actually did, and the retransmission/timeout counts of both."""
    ex = ns["_extra"]
    ch = ex["checks"]
    notes = []
    problems = []
    want = ns3_queue_attrs(sc.queue)[0]
    root, child = ch["root_qdisc"], ch.get("child_qdisc", "")
    if sc.queue.shaper_mbps:
        if root != "ns3::TbfQueueDisc" or child != want:
            problems.append(f"queue discs {root} / {child} (wanted ns3::TbfQueueDisc / {want})")
    elif root != want:
        problems.append(f"root queue disc {root} (wanted {want})")
    if ch["other_qdiscs"]:
        problems.append(f"{ch['other_qdiscs']} other devices have a queue disc")
    if ch["device_queue_max"] != "1p":
        problems.append(f"device queue {ch['device_queue_max']}")
    if ch["device_queue_drops"] or ch["access_device_drops"]:
        problems.append(
            f"device-queue drops: bottleneck {ch['device_queue_drops']}, "
            f"elsewhere {ch['access_device_drops']}"
        )
    if ch["sojourn_mismatch"]:
        problems.append(f"{ch['sojourn_mismatch']} sojourn samples could not be matched")
    bad_ecn = sum(r != n for r, n in zip(ex["ecn_requested"], ex["ecn"], strict=True))
    if bad_ecn:
        problems.append(f"ECN negotiation differs from the request on {bad_ecn} flow(s)")
    n_ecn = sum(ex["ecn"])
    notes.append(
        f"ns-3 checked: root queue disc `{root}`"
        + (f" with child `{child}`" if child else "")
        + ", device queue "
        f"{ch['device_queue_max']}, {ch['device_queue_drops']} device drops, no other queue "
        f"disc: {'yes' if not ch['other_qdiscs'] else 'NO'}, ECN negotiated on {n_ecn} of "
        f"{len(ex['ecn'])} flow(s), congestion control {', '.join(ex['cc'])}"
        + (f"; PROBLEMS: {'; '.join(problems)}" if problems else "")
    )
    notes.append(
        f"whole run: retransmitted packets ccsim {cc['_extra']['retransmits']} / ns-3 "
        f"{ex['retransmits']}; retransmission timeouts ccsim {cc['_extra']['timeouts']} / "
        f"ns-3 {ex['timeouts']}"
    )
    return notes


def machine_header(build: Ns3Build | None, quick: bool, command: str) -> dict:
    import ccsim
    from ccsim import _core

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    h = {
        "command": command,
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{cpu}, {os.cpu_count()} cores{mem}, {platform.system()} {platform.release()}",
        "ccsim": f"{ccsim.__version__}, profile-guided optimisation {_core.build_info()['pgo']}",
        "python": platform.python_version(),
        "mode": "quick (shortened runs)" if quick else "full",
    }
    if build is not None:
        h["ns-3"] = f"{build.version} (PyPI wheel `ns3`, C++ program `bench/ns3/dumbbell.cc`)"
        try:
            v = subprocess.run([build.compiler, "--version"], capture_output=True, text=True)
            h["compiler"] = v.stdout.splitlines()[0]
        except (OSError, IndexError):
            pass
    return h


def find_source(explicit: str | None = None) -> Path:
    """``bench/ns3/dumbbell.cc``, beside this package (or the file given)."""
    if explicit:
        return Path(explicit)
    p = NS3_DIR / "dumbbell.cc"
    if p.exists():
        return p
    raise Ns3Unavailable(f"{p} not found: the harness runs from a checkout of ccsim")


@contextlib.contextmanager
def pinned_cpu(cpu: int | None) -> Iterator[int | None]:
    """Run the matrix on one CPU: the ccsim runs in this process and the ns-3 programs it
    starts, which inherit the affinity. On a shared virtual machine the cores' speeds
    differ and change over minutes (ccsim's wall time on one scenario was 1.4x apart on
    this machine's two cores at the same moment), so two simulators timed on different
    cores would compare the cores. ``cpu`` None: the highest-numbered allowed CPU (the
    first is the likelier to serve interrupts). Yields the CPU, or None where the
    platform cannot pin."""
    if not hasattr(os, "sched_setaffinity"):
        yield None
        return
    allowed = os.sched_getaffinity(0)
    chosen = max(allowed) if cpu is None else cpu
    if chosen not in allowed:
        cpus = ", ".join(map(str, sorted(allowed)))
        raise Ns3Unavailable(f"--cpu {chosen}: not one of this process's CPUs ({cpus})")
    os.sched_setaffinity(0, {chosen})
    try:
        yield chosen
    finally:
        os.sched_setaffinity(0, allowed)


def perturbed_ccsim_scenario(
    sc: Scenario, quick: bool = False, patch: Callable[[dict], None] | None = None, k: int = -1
) -> dict:
    """ccsim's scenario dict of ``sc``, changed by ``patch`` (a counterfactual) and, for
    ``k`` >= 0, perturbed as paired run ``k`` (``draws.shifts``, another seed)."""
    s = ccsim_scenario(sc, quick)
    if patch is not None:
        patch(s)
    if k >= 0:
        s["seed"] = int(s["seed"]) + 1 + k
        for f, (start_shift, rtt_shift) in zip(s["flows"], shifts(sc, k), strict=True):
            start = float(str(f["start"]).rstrip("s"))
            f["start"] = f"{start + start_shift:.9f}s"
            rtt_ms = float(str(f["rtt"]).removesuffix("ms"))
            f["rtt"] = f"{rtt_ms + rtt_shift * 1e3:.6f}ms"
    return s


def run_ccsim_variant(
    sc: Scenario, patch: Callable[[dict], None] | None = None, k: int = -1
) -> dict:
    """The metrics of one ccsim run of ``sc``, changed by ``patch`` (a counterfactual) and,
    for ``k`` >= 0, perturbed as paired run ``k`` (``draws.shifts``, another seed)."""
    import ccsim

    res = ccsim.run(perturbed_ccsim_scenario(sc, False, patch, k))
    return ccsim_metrics(sc, res, [res.summary["wall_s"]])


class ParallelNs3Runs:
    """Phase 1 of ``run``: every scenario's ns-3 runs, one worker thread per CPU, each
    pinned to its CPU (the ns-3 programs it starts inherit the affinity). A scenario's
    default run comes first, with ccsim's timed runs right after it on the same CPU, so
    its speed ratio compares the two simulators on one core (the cores' speeds differ,
    see ``pinned_cpu``); once it has succeeded its ``reps[i] - 1`` perturbed
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
            ns = run_ns3(
                sc,
                False,
                self.exe,
                self.work,
                timeout_s=NS3_TIMEOUT_S,
                patch_config=perturbed_ns3_config(sc, k) if k >= 0 else None,
                tag=f".{k}" if k >= 0 else "",
            )
        except RuntimeError as exc:  # reported, not fatal: the draw goes on
            return exc
        timed = None
        if k < 0:
            result, walls = run_ccsim(sc, False)
            walls += run_ccsim(sc, False, like=result)[1]
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
