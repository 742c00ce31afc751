"""The known causes of differences between ccsim and ns-3, read from bench/CAUSES.md.

CAUSES.md is written by hand, one cause a section::

    <a id="ns3-rto"></a>

    ## ns3-rto: one-line title

    *verdict.* The source-level explanation ...

The reports link rows to ``CAUSES.md#id`` and name a cause's title and verdict; the
matrix (matrix.toml) and the differential rules refer to causes by id, and a test checks
that every id they use is defined here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

CAUSES_FILE = Path(__file__).resolve().parents[2] / "CAUSES.md"

_SECTION = re.compile(
    r'^<a id="(?P<id>[^"]+)"></a>\n\n## (?P=id): (?P<title>[^\n]+)\n\n'
    r"\*(?P<verdict>.+?)\.\* (?P<text>.*?)\n*(?=^<a id=|\Z)",
    re.M | re.S,
)


@dataclass(frozen=True)
class Cause:
    title: str  # one line
    text: str  # the source-level explanation
    verdict: str  # "ns-3 differs", "open: ccsim", "phase", ...


def read_causes(path: Path = CAUSES_FILE) -> dict[str, Cause]:
    """Every cause of ``path``, by id, in file order."""
    text = path.read_text()
    causes: dict[str, Cause] = {}
    for m in _SECTION.finditer(text):
        if m["id"] in causes:
            raise ValueError(f"{path.name}: cause {m['id']} appears twice")
        causes[m["id"]] = Cause(m["title"], m["text"], m["verdict"])
    if len(re.findall(r'^<a id="', text, re.M)) != len(causes):
        raise ValueError(f"{path.name}: a section is not <a id>, ## id: title, *verdict.*")
    return causes


CAUSES: dict[str, Cause] = read_causes()


def cause_links(keys: Sequence[str], page: str = "CAUSES.md") -> str:
    return ", ".join(f"[{k}]({page}#{k})" for k in keys)
