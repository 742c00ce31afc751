"""Errors that named the wrong thing (issue 33, item 8): each now names the key and the
real problem, in one line; and a killed run's staging directory is removed by the next
write beside it (item 9)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ccsim
from ccsim import output
from helpers import run_cli

BASE = """duration = "1s"
[bottleneck]
rate = "10Mbps"
[[flows]]
rtt = "10ms"
cc = { kind = "newreno", beta = 0.5 }
"""


def _dict(**flow) -> dict:
    return {"duration": "1s", "bottleneck": {"rate": "10Mbps"}, "flows": [{"rtt": "10ms", **flow}]}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("nan", "flows[0].cc.beta: expected a finite number, got nan"),
        ("inf", "flows[0].cc.beta: expected a finite number, got inf"),
        ("1e400", "--set flows[0].cc.beta: 1e400 is beyond the largest number"),
    ],
)
def test_a_non_finite_set_value_names_its_key_not_the_file(tmp_path: Path, value, expected):
    path = tmp_path / "s.toml"
    path.write_text(BASE)
    done = run_cli("validate", path, "--set", f"flows[0].cc.beta={value}")
    assert done.returncode == 2, done.stderr
    assert len(done.stderr_lines) == 1, done.stderr
    assert done.stderr_lines[0].startswith(f"error: {expected}"), done.stderr


def test_nan_in_a_python_dict_names_its_key():
    with pytest.raises(ccsim.ScenarioError, match=r"^flows\[0\]\.cc\.beta: expected a finite"):
        ccsim.run(_dict(cc={"kind": "newreno", "beta": float("nan")}))


def test_numpy_scalars_are_numbers():
    result = ccsim.run(_dict(count=np.int64(2), cc={"kind": "newreno", "beta": np.float32(0.5)}))
    assert len(result.summary["flows"]) == 2


@pytest.mark.parametrize("form", ["dict", "toml"])
def test_an_unknown_key_with_a_nan_value_is_an_unknown_key(form: str):
    nan_dict = {**_dict(), "bogus": float("nan")}
    scenario = nan_dict if form == "dict" else "bogus = nan\n" + BASE
    with pytest.raises(ccsim.ScenarioError, match=r"^bogus: unknown key"):
        ccsim.run(scenario)


def test_a_nan_at_a_known_key_of_a_toml_file_still_names_it():
    with pytest.raises(ccsim.ScenarioError, match=r"^flows\[0\]\.cc\.beta: expected a finite"):
        ccsim.run(BASE.replace("beta = 0.5", "beta = nan"))


def test_a_killed_runs_stage_is_removed_by_a_write_beside_it(tmp_path: Path):
    """The README says a staging directory left by a killed run is removed by the next
    write beside it; it was removed only by a write to the same name."""
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead_pid = int(gone.stdout)
    stale = tmp_path / f"{output.stage_prefix(tmp_path / 'first')}{dead_pid}-abcd"
    stale.mkdir()
    (stale / "flows.parquet").write_bytes(b"half")
    live = tmp_path / f"{output.stage_prefix(tmp_path / 'third')}{os.getpid()}-abcd"
    live.mkdir()
    with output.staged_dir(tmp_path / "second") as stage:
        (stage / "summary.json").write_text("{}")
    assert not stale.exists()
    assert live.exists()  # a live process's stage stays
    assert (tmp_path / "second" / "summary.json").exists()
