"""Short readable texts for figures, without matplotlib: a value (a queue table) as a
label, and a scenario's key parameters as a caption."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any


def short_text(value: Any) -> str:
    """A value as a short label: ``{"kind": "droptail", "limit": "1bdp"}`` as
    ``droptail, limit 1bdp``; never raw JSON."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        if not isinstance(parsed, (dict, list)):
            return value
        value = parsed
    if isinstance(value, dict):
        parts = [short_text(value["kind"])] if "kind" in value else []
        parts += [f"{k} {short_text(v)}" for k, v in value.items() if k != "kind"]
        return ", ".join(parts)
    if isinstance(value, list):
        return "/".join(short_text(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _without(scenario: Any, path: str) -> Any:
    """A copy of ``scenario`` without the value at the key path ``path`` (a swept key)."""
    if not path:
        return None
    m = re.match(r"^([^.\[]+)(?:\[(\d+)\])?\.?(.*)$", path)
    if m is None or not isinstance(scenario, Mapping) or m.group(1) not in scenario:
        return scenario
    key, index, rest = m.group(1), m.group(2), m.group(3)
    out = dict(scenario)
    value = out[key]
    if index is not None:
        if isinstance(value, list) and int(index) < len(value):
            value = list(value)
            value[int(index)] = _without(value[int(index)], rest) if rest else None
        out[key] = value
    elif rest:
        out[key] = _without(value, rest)
    else:
        del out[key]
    return out


def scenario_caption(scenario: Mapping[str, Any] | None, swept: Sequence[str] = ()) -> str:
    """The key parameters of a scenario, for a figure's caption: ``bottleneck 10Mbps,
    droptail, limit 1bdp; RTT 40ms, 100ms; newreno x2, UDP x1``. The key paths in ``swept``
    (a sweep's axes) are left out: the figure's x axis or legend shows them."""
    for path in swept:
        scenario = _without(scenario, path)
    if not isinstance(scenario, Mapping):
        return ""
    parts = []
    bottleneck = scenario.get("bottleneck")
    if isinstance(bottleneck, Mapping):
        head = f"bottleneck {short_text(bottleneck.get('rate', '?'))}"
        if "queue" in bottleneck:
            head += f", {short_text(bottleneck['queue'])}"
        parts.append(head)
    rtts: list[str] = []
    flows: list[str] = []
    for key in ("flows", "udp"):
        groups = scenario.get(key)
        for group in groups if isinstance(groups, list) else []:
            if not isinstance(group, Mapping):
                continue
            rtt = short_text(group["rtt"]) if "rtt" in group else None
            if rtt is not None and rtt not in rtts:
                rtts.append(rtt)
            count = group.get("count", 1)
            if key == "flows":
                cc = group.get("cc", "newreno")
                name = cc if isinstance(cc, str) else str(cc.get("kind", "tcp"))
            else:
                name = "UDP"
            flows.append(f"{name} x{count}" if count != 1 else name)
    if rtts:
        parts.append(f"RTT {', '.join(rtts)}")
    if flows:
        parts.append(", ".join(flows))
    return "; ".join(parts)
