"""What ``ccsim emulate`` refuses, each as one line (exit 2): an environment that cannot
emulate, and scenario features with no kernel counterpart."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

#: ccsim's congestion controls by the Linux module that implements the same algorithm.
KERNEL_NAME = {
    "newreno": "reno",
    "reno": "reno",
    "cubic": "cubic",
    "bbr": "bbr",
    "dctcp": "dctcp",
    "cdg": "cdg",
    "vegas": "vegas",
}

#: Linux's defaults the simulated TCP also defaults to (`include/net/tcp.h`).
KERNEL_INITIAL_WINDOW, KERNEL_MIN_RTO_MS, KERNEL_MSS = 10, 200.0, 1448


#: The namespaces' TCP settings when no TCP flow asks for any (a UDP-only scenario).
DEFAULT_SETTINGS = {
    "ecn": False,
    "sack": True,
    "mss": KERNEL_MSS,
    "initial_window": KERNEL_INITIAL_WINDOW,
}


class Refusal(Exception):
    """The emulation cannot run here or cannot play this scenario (one line)."""


def cap_net_admin() -> bool:
    """CAP_NET_ADMIN (bit 12) in the effective set (root has it unless dropped)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> 12 & 1)
    except OSError:
        pass
    return os.geteuid() == 0


def kernel_ccs() -> list[str]:
    try:
        text = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text()
    except OSError:
        return []
    return text.split()


def check_environment() -> None:
    if not cap_net_admin():
        raise Refusal("ccsim emulate needs root (CAP_NET_ADMIN) to create network namespaces")
    if not os.path.exists("/dev/net/tun"):
        raise Refusal("ccsim emulate needs /dev/net/tun (the tun module), which is missing")
    if shutil.which("ip") is None:
        raise Refusal("ccsim emulate needs the `ip` command (iproute2)")


def _uniform(plan: list[dict[str, Any]], key: str, what: str) -> Any:
    values = {f[key] for f in plan}
    if len(values) > 1:
        raise Refusal(
            f"flows[*].{key}: the flows differ in {what} ({sorted(values)}), which the "
            "kernel sets per namespace; emulate needs one value for all"
        )
    return values.pop()


def check_plan(
    plan: list[dict[str, Any]],
    available: list[str],
    udp_plan: list[dict[str, Any]] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """Refuse what the kernel cannot play (``udp_plan``: the UDP sources it plays, if
    any); return the settings the namespaces need and warnings for what the kernel plays
    differently."""
    udp_plan = udp_plan or []
    warnings: list[str] = []
    if not plan and not udp_plan:
        raise Refusal("flows: the scenario has no TCP flow or UDP source for the kernel to play")
    for u in udp_plan:
        if u["ppv"]:
            raise Refusal(f"udp[{u['group']}].ppv: packet-value marking has no kernel counterpart")
    if not plan:
        return dict(DEFAULT_SETTINGS), warnings
    for f in plan:
        g = f["group"]
        name = KERNEL_NAME.get(f["cc"])
        if name is None:
            raise Refusal(
                f"flows[{g}].cc: {f['cc']!r} is ccsim's only (no Linux module); the kernel "
                f"offers: {' '.join(available)}"
            )
        if name not in available:
            raise Refusal(
                f"flows[{g}].cc: the kernel has no {name!r} (available: {' '.join(available)})"
            )
        f["kernel_cc"] = name
        for key, what in (("deadline", "a deadline controller"), ("ppv", "packet-value marking")):
            if f[key]:
                raise Refusal(f"flows[{g}].{key}: {what} has no kernel counterpart")
        if f["changes"]:
            raise Refusal(
                f"flows[{g}].changes: the kernel's {name} cannot be retuned while it runs"
            )
        if len(f["sizes_bytes"]) > 1:
            raise Refusal(f"flows[{g}].repeat: repeated transfers are not emulated yet")
        if f["cc_params"]:
            warnings.append(
                f"warning: flows[{g}].cc.{','.join(f['cc_params'])} ignored: the kernel's "
                f"{name} has its module's fixed parameters"
            )
        if not f["delayed_ack"]:
            warnings.append(
                f"warning: flows[{g}].delayed_ack = false ignored: the kernel always delays ACKs"
            )
    settings = {
        "ecn": _uniform(plan, "ecn", "ECN"),
        "sack": _uniform(plan, "sack", "SACK"),
        "mss": _uniform(plan, "mss", "MSS"),
        "initial_window": _uniform(plan, "initial_window", "initial window"),
    }
    groups = sorted({f["group"] for f in plan if f["pacing"] and f["kernel_cc"] != "bbr"})
    if groups:
        warnings.append(
            f"note: flows{groups} pace through the kernel's internal pacing (SO_MAX_PACING_RATE)"
        )
    return settings, warnings
