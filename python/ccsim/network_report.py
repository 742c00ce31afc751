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
#: Node names printed before "+N more".
MORE_NODES = 24


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
    ends = f"{link['from']}->{link['to']}"
    what = f"{link['flows']:>5} flows ({_groups(link['groups'])}){fair}"
    if not link["flows"]:
        what = f"{link['ack_flows']:>5} flows' ACKs" if link["ack_flows"] else "    no traffic"
    return (
        f"  {link['name']:<{width}} {ends:<{width}} {_rate(link['rate_bps']):>11}"
        f" {_delay(link['delay_ns']):>8}  {link['queue']:<9} {what}"
    )


def _nodes(names: list[str]) -> str:
    shown = ", ".join(names[:MORE_NODES])
    return (
        "nodes: "
        + shown
        + (f", +{len(names) - MORE_NODES} more" if len(names) > MORE_NODES else "")
    )


def describe_network(report: dict[str, Any], all_links: bool = False) -> str:
    """Lines for people: a summary, the nodes, every congestion candidate, then the
    busiest other links (most flows first), and how many links carry no data (with
    ``all_links``: every link, those carrying only ACKs or nothing included). Each link
    line gives its name, its ends (from->to), rate, delay, queue and what it carries."""
    links = report["links"]
    head = f"network: {len(report['nodes'])} nodes, {len(links)} links, {report['flows']} flows"
    over = report.get("oversubscription")
    if over is not None:
        head += f"; leaf oversubscription {over:.3g}:1"
    lines = [head, _nodes(report["nodes"])]
    width = max(max(len(link["name"]), len(link["from"]) + len(link["to"]) + 2) for link in links)
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
    shown = busy if all_links else busy[:MORE_LINKS]
    if busy:
        lines.append("other links carrying data:")
        lines += [_line(link, width) for link in shown]
        if len(busy) > len(shown):
            lines.append(f"  and {len(busy) - len(shown)} more (--all-links lists every link)")
    idle = [link for link in links if not link["flows"]]
    if idle and all_links:
        lines.append("links carrying no data:")
        lines += [_line(link, width) for link in idle]
    elif idle:
        acks = sum(1 for link in idle if link["ack_flows"])
        lines.append(
            f"{len(idle)} links carry no data ({acks} of them carry ACKs; --all-links lists them)"
        )
    return "\n".join(lines)
