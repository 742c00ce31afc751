"""Source-level reasons for the misses the comparison finds, keyed by what they explain.
A miss with no entry here is reported as "not yet explained"."""

from __future__ import annotations

from typing import Any

NOT_YET = "not yet explained"


def reason_for(case: Any, metric: str, row: dict[str, Any]) -> str:
    ccs = {g.cc for g in case.groups}
    if metric == "drop probability" and "bbr" in ccs and case.queue == "droptail":
        return NOT_YET
    return NOT_YET
