"""A sweep over a loss model keeps the losses in its result rows (issue 31: losses
counted apart from drops everywhere, sweeps able to vary loss); sweeps without one keep
their columns."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from helpers import run_cli

SWEEP = """[base]
duration = "3s"
[base.bottleneck]
rate = "10Mbps"
[[base.flows]]
cc = "cubic"
rtt = "20ms"
count = 2

[grid]
"{key}" = {values}
"""


def _results(tmp_path: Path, key: str, values: str) -> dict:
    spec = tmp_path / "sweep.toml"
    spec.write_text(SWEEP.format(key=key, values=values))
    result = run_cli("sweep", spec, "-o", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    return pq.read_table(tmp_path / "out" / "results.parquet").to_pydict()


def test_a_loss_sweep_has_loss_columns_that_add_up(tmp_path: Path) -> None:
    rows = _results(tmp_path, "bottleneck.loss", "[0.0, 0.02]")
    assert rows["losses"][0] == 0 and rows["losses"][1] > 0
    for losses, per_flow in zip(rows["losses"], rows["flow_losses"], strict=True):
        assert sum(per_flow) == losses  # the dumbbell's data packets lost on its wire


def test_a_sweep_without_a_loss_model_keeps_its_columns(tmp_path: Path) -> None:
    rows = _results(tmp_path, "bottleneck.rate", '["5Mbps", "10Mbps"]')
    assert "losses" not in rows and "flow_losses" not in rows
