"""The fixed validation matrix, read from matrix.toml (one ``[[scenario]]`` a row)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from .model import FlowGroup, Queue, Scenario, UdpSource

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MATRIX_FILE = Path(__file__).with_name("matrix.toml")


def _row(raw: dict[str, Any]) -> tuple[Scenario, tuple[tuple[str, ...], str]]:
    """One ``[[scenario]]`` table: the Scenario, and its causes with their note."""
    row = dict(raw)
    name = row.get("name", "?")
    causes = tuple(row.pop("causes", ()))
    note = row.pop("cause_note", "")
    try:
        row["queue"] = Queue(**row["queue"])
        row["flows"] = tuple(FlowGroup(**g) for g in row["flows"])
        row["udp"] = tuple(UdpSource(**u) for u in row.get("udp", ()))
        for key in ("measure", "quick_measure"):
            row[key] = tuple(row[key])
        return Scenario(**row), (causes, note)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{MATRIX_FILE.name}: scenario {name}: {exc}") from exc


def load_matrix(
    path: Path = MATRIX_FILE,
) -> tuple[list[Scenario], dict[str, tuple[tuple[str, ...], str]]]:
    """The matrix's scenarios in file order, and the causes (ids of bench/CAUSES.md) and
    note of each row that has them, by scenario name."""
    doc = tomllib.loads(path.read_text())
    scenarios: list[Scenario] = []
    explanations: dict[str, tuple[tuple[str, ...], str]] = {}
    for raw in doc["scenario"]:
        sc, (causes, note) = _row(raw)
        scenarios.append(sc)
        if causes or note:
            explanations[sc.name] = (causes, note)
    names = [sc.name for sc in scenarios]
    if len(set(names)) != len(names):
        raise ValueError(f"{path.name}: scenario names repeat")
    return scenarios, explanations


MATRIX, EXPLANATIONS = load_matrix()
