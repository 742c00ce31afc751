"""The fixed validation matrix, read from matrix.toml (one ``[[scenario]]`` a row), and
the parking lots, read from parking_lot.toml alike."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from .model import FlowGroup, Hop, Queue, Scenario, UdpSource

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MATRIX_FILE = Path(__file__).with_name("matrix.toml")
PARKING_LOT_FILE = Path(__file__).with_name("parking_lot.toml")


def _row(
    raw: dict[str, Any], source: str = MATRIX_FILE.name
) -> tuple[Scenario, tuple[tuple[str, ...], str]]:
    """One ``[[scenario]]`` table: the Scenario, and its causes with their note."""
    row = dict(raw)
    name = row.get("name", "?")
    causes = tuple(row.pop("causes", ()))
    row.pop("ns3_probes", None)  # parking_lot.py's counterfactual ns-3 runs
    note = row.pop("cause_note", "")
    try:
        if "hops" in row:
            # a parking lot: `rate_mbps` and `queue` are its first hop's (model.Scenario)
            row["hops"] = tuple(
                Hop(h["rate_mbps"], h["delay_ms"], Queue(**h["queue"])) for h in row["hops"]
            )
            row["rate_mbps"] = row["hops"][0].rate_mbps
            row["queue"] = row["hops"][0].queue
        else:
            row["queue"] = Queue(**row["queue"])
        row["flows"] = tuple(FlowGroup(**g) for g in row["flows"])
        row["udp"] = tuple(UdpSource(**u) for u in row.get("udp", ()))
        for key in ("measure", "quick_measure"):
            row[key] = tuple(row[key])
        return Scenario(**row), (causes, note)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{source}: scenario {name}: {exc}") from exc


def load_matrix(
    path: Path = MATRIX_FILE,
) -> tuple[list[Scenario], dict[str, tuple[tuple[str, ...], str]]]:
    """The matrix's scenarios in file order, and the causes (ids of bench/CAUSES.md) and
    note of each row that has them, by scenario name."""
    doc = tomllib.loads(path.read_text())
    scenarios: list[Scenario] = []
    explanations: dict[str, tuple[tuple[str, ...], str]] = {}
    for raw in doc["scenario"]:
        sc, (causes, note) = _row(raw, path.name)
        scenarios.append(sc)
        if causes or note:
            explanations[sc.name] = (causes, note)
    names = [sc.name for sc in scenarios]
    if len(set(names)) != len(names):
        raise ValueError(f"{path.name}: scenario names repeat")
    return scenarios, explanations


MATRIX, EXPLANATIONS = load_matrix()
PARKING_LOTS, PARKING_LOT_EXPLANATIONS = load_matrix(PARKING_LOT_FILE)
