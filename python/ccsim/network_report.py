"""What ``ccsim validate`` prints of a ``[network]``: its nodes and links, the flows each
link carries, and the congestion candidates (links saturated in the max-min fair
allocation of the flows; see ``ccsim_core::sim::NetworkReport``)."""

from __future__ import annotations

import json
from typing import Any

from ccsim import _core
from ccsim.api import ScenarioSource

#: Links carrying flows printed beyond the candidates before "and N more".
MORE_LINKS = 12


def network_report(source: ScenarioSource) -> dict[str, Any] | None:
    """The report as a dict, or None for a dumbbell."""
    text = _core.network_report(source.text, source.fmt)
    return None if text is None else json.loads(text)


def _rate(bps: float) -> str:
    for unit, scale in (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if bps >= scale:
            return f"{bps / scale:.4g} {unit}"
    return f"{bps:.4g} bit/s"


def _delay(ns: int) -> str:
    if ns >= 1_000_000:
        return f"{ns / 1e6:.4g} ms"
    return f"{ns / 1e3:.4g} us"


def _groups(names: list[str]) -> str:
    shown = ", ".join(names[:4])
    return shown + (f", +{len(names) - 4} groups" if len(names) > 4 else "")


def _line(link: dict[str, Any], width: int) -> str:
    share = link.get("fair_share_bps")
    fair = f", fair share {_rate(share)}" if share is not None else ""
    return (
        f"  {link['name']:<{width}} {_rate(link['rate_bps']):>11} {_delay(link['delay_ns']):>8}"
        f"  {link['queue']:<9} {link['flows']:>5} flows ({_groups(link['groups'])}){fair}"
    )


def describe_network(report: dict[str, Any]) -> str:
    """Lines for people: a summary, every congestion candidate, then the busiest other
    links (most flows first), and how many links carry no data."""
    links = report["links"]
    head = f"network: {len(report['nodes'])} nodes, {len(links)} links, {report['flows']} flows"
    over = report.get("oversubscription")
    if over is not None:
        head += f"; leaf oversubscription {over:.3g}:1"
    lines = [head]
    width = max(len(link["name"]) for link in links)
    candidates = [link for link in links if link["candidate"]]
    lines.append(
        f"congestion candidates ({len(candidates)}: full when every flow takes its "
        "max-min fair share):"
    )
    lines += [_line(link, width) for link in candidates] or ["  none"]
    busy = sorted(
        (link for link in links if link["flows"] and not link["candidate"]),
        key=lambda link: -link["flows"],
    )
    if busy:
        lines.append("other links carrying data:")
        lines += [_line(link, width) for link in busy[:MORE_LINKS]]
        if len(busy) > MORE_LINKS:
            lines.append(f"  and {len(busy) - MORE_LINKS} more")
    idle = sum(1 for link in links if not link["flows"])
    if idle:
        acks = sum(1 for link in links if not link["flows"] and link["ack_flows"])
        lines.append(f"{idle} links carry no data ({acks} of them carry ACKs)")
    return "\n".join(lines)
