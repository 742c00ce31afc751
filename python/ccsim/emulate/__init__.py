"""``ccsim emulate``: a scenario's network run in real time by ccsim's engine, its TCP
flows played by the kernel's own sockets.

The senders live in one network namespace and the receivers in another, each reaching the
emulator through a TUN device (:mod:`ccsim.emulate.netns`); the emulator (the Rust core's
``emulate`` module) runs the scenario's links, queue disciplines, shapers and reverse path
at wall-clock time between them. The traffic programs (:mod:`ccsim.emulate.traffic`) set
each flow's congestion control per socket and sample ``TCP_INFO``.

The scenario's UDP sources are played by kernel UDP sockets in the senders' namespace
too (``udp="kernel"``, the default), or stay simulated inside the emulator
(``udp="simulated"``).

The result has the tables of a simulated run: the queue's tables come from the emulated
queue itself; per-flow goodput from the receivers (TCP and kernel UDP); cwnd, ssthresh,
srtt and retransmissions from the kernel (``TCP_INFO`` every stats interval); drops and
marks per flow from the emulated network. With ``[trace] pcap`` the capture holds the
kernel's packets' real headers, captured where a simulated run captures (the start of
transmission on each named link), in the same pcapng layout.

``summary["emulation"]`` holds the emulator's timing error (release lateness
p50/p99/max) and whether it stayed within the scenario's tolerance (:data:`TOLERANCE` of
one MTU's serialisation time at the bottleneck).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ccsim.emulate.checks import Refusal, check_environment, check_plan, kernel_ccs
from ccsim.emulate.netns import RECEIVER_IP, RECEIVER_NET, EmulationError, Namespaces, ip

__all__ = ["TOLERANCE", "EmulationError", "Refusal", "emulate"]

#: The timing error (p99 release lateness) tolerated, as a fraction of one 1500-byte
#: packet's serialisation time at the bottleneck: beyond it the emulated queue's
#: departures are visibly out of step with the rate it models.
TOLERANCE = 0.5
BASE_PORT = 5201
#: How the scenario's UDP sources are played: by kernel sockets, or simulated inside the
#: emulator as before the kernel could play them.
UDP_MODES = ("kernel", "simulated")
#: Time given the traffic programs to start before simulated time zero.
STARTUP_S = 1.0


def _sysctls(settings: dict[str, Any]) -> dict[str, str]:
    big = "4096 131072 33554432"  # room for a 50 Mbit/s x 200 ms BDP and its queue
    return {
        "net.ipv4.tcp_ecn": "1" if settings["ecn"] else "0",
        "net.ipv4.tcp_sack": "1" if settings["sack"] else "0",
        "net.ipv4.tcp_rmem": big,
        "net.ipv4.tcp_wmem": big,
        # Each run starts from nothing, as a simulated one does.
        "net.ipv4.tcp_no_metrics_save": "1",
    }


def _traffic_config(
    plan: list[dict[str, Any]],
    udp_plan: list[dict[str, Any]],
    t0: float,
    summary_hint: dict[str, Any],
) -> dict[str, Any]:
    return {
        "udp": udp_plan,
        "udp_base_port": BASE_PORT + len(plan),
        "t0": t0,
        "duration_s": summary_hint["duration_s"],
        "interval_s": summary_hint["interval_s"],
        "receiver_ip": RECEIVER_IP,
        "base_port": BASE_PORT,
        "flows": [
            {
                "cc": f["kernel_cc"],
                "start_s": f["start_s"],
                "stop_s": f["stop_s"],
                "size_bytes": f["sizes_bytes"][0] if f["sizes_bytes"] else None,
                "pacing": f["pacing"],
            }
            for f in plan
        ],
    }


def _tail(path: Path) -> str:
    try:
        lines = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1] if lines else ""


def emulate(
    source: Any,
    progress: Callable[[float], None] | None = None,
    warn: Callable[[str], None] | None = None,
    udp: str = "kernel",
) -> Any:
    """Emulate an already-loaded scenario (:class:`ccsim.api.ScenarioSource`); returns a
    :class:`ccsim.results.RunResult` whose summary has an ``emulation`` section. ``udp``
    is one of :data:`UDP_MODES`.

    Raises :class:`Refusal` (one line) when it cannot run here or cannot play the
    scenario, :class:`ccsim.ScenarioError` for a bad scenario, :class:`EmulationError`
    when the set-up or a traffic program fails. Nothing is left behind in any case."""
    from ccsim import _core
    from ccsim.results import RunResult

    if udp not in UDP_MODES:
        raise ValueError(f"udp: {udp!r} is not one of {UDP_MODES}")
    check_environment()
    plan = _core.emulation_plan(source.text, source.fmt)
    udp_plan = _core.emulation_udp_plan(source.text, source.fmt) if udp == "kernel" else []
    settings, warnings = check_plan(plan, kernel_ccs(), udp_plan)
    for w in warnings:
        (warn or (lambda m: print(m, file=sys.stderr)))(w)
    dims = _durations(source)
    ns = Namespaces()
    work = Path(tempfile.mkdtemp(prefix=f"ccsim-emulate-{ns.tag}-"))
    script = str(Path(__file__).with_name("traffic.py"))
    state: dict[str, Any] = {}

    def ready() -> float:
        ns.wire(_sysctls(settings))
        mtu = settings["mss"] + 52
        for dev, name in ((ns.sender_tun, ns.sender), (ns.receiver_tun, ns.receiver)):
            ip("-n", name, "link", "set", dev, "mtu", str(mtu))
        if settings["initial_window"] != 10:
            ip(
                "-n",
                ns.sender,
                "route",
                "replace",
                f"{RECEIVER_NET}.0/24",
                "dev",
                ns.sender_tun,
                "initcwnd",
                str(settings["initial_window"]),
            )
        t0 = time.monotonic() + STARTUP_S
        cfg = _traffic_config(plan, udp_plan, t0, dims)
        (work / "traffic.json").write_text(json.dumps(cfg))
        state["recv"] = ns.spawn(
            ns.receiver,
            [sys.executable, script, "recv", str(work / "traffic.json"), str(work / "recv.json")],
            str(work / "recv.log"),
        )
        state["send"] = ns.spawn(
            ns.sender,
            [sys.executable, script, "send", str(work / "traffic.json"), str(work / "send.json")],
            str(work / "send.log"),
        )
        state["t0"] = t0
        return t0

    def on_progress(fraction: float) -> None:
        for role in ("recv", "send"):
            proc = state.get(role)
            if proc is not None and proc.poll() not in (None, 0):
                raise EmulationError(
                    f"the {role} traffic program exited with status {proc.returncode}: "
                    f"{_tail(work / (role + '.log'))}"
                )
        if progress is not None:
            progress(fraction)

    try:
        summary_json, raw, timing, pcap = _core.emulate(
            source.text,
            source.fmt,
            ns.sender_tun,
            ns.receiver_tun,
            BASE_PORT,
            ready,
            on_progress,
            BASE_PORT + len(plan) if udp == "kernel" else None,
        )
        kernel = _collect(state, work, dims["duration_s"])
    finally:
        ns.close()
        _cleanup(work)
    result = RunResult.from_core(summary_json, raw, pcap)
    from ccsim.emulate.merge import merge_kernel

    merge_kernel(result, plan, kernel, dims["interval_s"], udp_plan)
    timing["udp"] = udp
    timing["udp_sources"] = result.summary.pop("emulation_udp", [])
    serialisation_us = 1500 * 8 / timing["bottleneck_rate_bps"] * 1e6
    timing["serialisation_us"] = serialisation_us
    timing["tolerance_us"] = TOLERANCE * serialisation_us
    timing["within_tolerance"] = timing["p99_us"] <= TOLERANCE * serialisation_us
    timing["kernel"] = " ".join(Path("/proc/sys/kernel/osrelease").read_text().split())
    result.summary["emulation"] = timing
    result.summary["overrides"] = dict(source.overrides)
    result.summary["scenario"] = source.document()
    return result


def _durations(source: Any) -> dict[str, float]:
    from ccsim import _core

    doc = source.document() or {}
    duration_ns = _core.duration_ns(str(doc.get("duration", "10s")), "duration")
    interval = doc.get("stats_interval", "100ms")
    return {
        "duration_s": duration_ns / 1e9,
        "interval_s": _core.duration_ns(str(interval), "stats_interval") / 1e9,
    }


def _collect(state: dict[str, Any], work: Path, duration_s: float) -> dict[str, Any]:
    """Wait for the traffic programs to write their results (they stop at the end)."""
    out: dict[str, Any] = {}
    deadline = time.monotonic() + 5.0
    for role in ("recv", "send"):
        proc = state[role]
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except Exception:
            proc.kill()
        path = work / f"{role}.json"
        if not path.exists():
            raise EmulationError(
                f"the {role} traffic program wrote no results: {_tail(work / (role + '.log'))}"
            )
        out[role] = json.loads(path.read_text())
    errors = [e for e in out["send"]["errors"] if e]
    if errors:
        raise EmulationError(f"a sender failed: {errors[0]}")
    return out


def _cleanup(work: Path) -> None:
    import shutil

    shutil.rmtree(work, ignore_errors=True)
