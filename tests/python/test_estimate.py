"""The cost estimate `ccsim validate` prints and `ccsim run` acts on (issue 17 item 4)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import ccsim
from ccsim import estimate as est
from ccsim.api import load_scenario

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("name", "saturated"),
    [("demo.toml", True), ("single_newreno.toml", True), ("http_pie2013_docsis.toml", False)],
)
def test_estimate_bounds_the_real_run(name: str, saturated: bool) -> None:
    """An upper bound on the events the run executes; within 4x when the bottleneck is
    busy the whole run (the estimate assumes it is: the web workload idles 7x more)."""
    source = load_scenario(REPO / "examples" / name)
    cost = est.estimate(source)
    events = ccsim.run(REPO / "examples" / name).summary["events"]
    assert events <= cost["events"], (events, cost["events"])
    if saturated:
        assert cost["events"] <= 4 * events, (events, cost["events"])
    assert cost["memory_bytes"] > 0 and cost["series_rows"] > 0


def test_validate_prints_the_estimate() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ccsim", "validate", str(REPO / "examples" / "demo.toml")],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = done.stdout.splitlines()
    assert lines[0].startswith("ok: ")
    assert lines[1].startswith("estimate: about ") and "of memory" in lines[1]


def test_run_refuses_what_does_not_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    cost = {"events": 1e9, "wall_s": 125.0, "memory_bytes": 30e9, "series_rows": 9e7, "flows": 300}
    monkeypatch.setattr(est, "available_memory_bytes", lambda: 20_000_000_000)
    line = est.too_big(cost, "big.toml")
    assert line is not None and "\n" not in line
    assert line.startswith("big.toml: flows: this run needs about 30 GB of memory (300 flows")
    assert "more than the 20 GB it may use" in line
    monkeypatch.setattr(est, "available_memory_bytes", lambda: 40_000_000_000)
    assert est.too_big(cost, "big.toml") is None
    monkeypatch.setattr(est, "available_memory_bytes", lambda: None)
    assert est.too_big(cost, "big.toml") is None


def test_long_runs_are_announced() -> None:
    assert est.long_run_warning({"events": 7e9, "wall_s": 900.0}) == (
        "warning: this run may take up to 15 min (about 7 billion events); Ctrl-C stops it"
    )
    assert est.long_run_warning({"events": 1e6, "wall_s": 0.1}) is None
