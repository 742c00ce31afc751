"""Random loss on a link (issue 31): bad input is one line naming the key path (exit 2,
nothing written); `--set` and sweeps vary it; losses are counted apart from drops."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from helpers import assert_run_refused, run_cli

SCENARIO = """\
duration = "6s"
[bottleneck]
rate = "10Mbps"
loss = 0.01
# ample: the link's losses keep CUBIC's window far below it, so every missing packet is a
# loss, not a drop (with 1 BDP, slow start under RACK-TLP overflowed it before the first loss)
queue = { kind = "droptail", limit = "10bdp" }
[[flows]]
cc = "cubic"
rtt = "40ms"
"""

BAD = [
    ("bottleneck.loss=1.5", "bottleneck.loss: expected a loss probability between 0 and 1"),
    ("bottleneck.loss=-0.1", "bottleneck.loss: expected a loss probability between 0 and 1"),
    ('bottleneck.loss="lots"', "bottleneck.loss: expected a loss probability like 0.01"),
    (
        'bottleneck.loss={kind="gilbert_elliott",p=0.1,r=0}',
        "bottleneck.loss.r: must be > 0",
    ),
    (
        'bottleneck.loss={kind="gilbert_elliott",mean_loss=0.6,mean_burst=1}',
        "bottleneck.loss.mean_loss: 0.6 cannot be reached",
    ),
    ('bottleneck.loss={kind="bursty"}', "bottleneck.loss.kind: expected"),
    ('bottleneck.loss={kind="bernoulli",q=0.1}', "bottleneck.loss.q: unknown key"),
    (
        'bottleneck.reverse_loss={kind="gemodel",p=0.01,loss_bad=2}',
        "bottleneck.reverse_loss.loss_bad: expected a probability between 0 and 1",
    ),
]


@pytest.mark.parametrize(("override", "message"), BAD, ids=[b[0] for b in BAD])
def test_bad_loss_is_one_line_with_the_key_path(
    override: str, message: str, tmp_path: Path
) -> None:
    assert_run_refused(tmp_path, SCENARIO, message, "--set", override)


def test_set_varies_loss_and_losses_are_apart_from_drops(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO)
    out = tmp_path / "out"
    form = 'bottleneck.loss={kind="gilbert_elliott",mean_loss=0.02,mean_burst=3}'
    result = run_cli("run", path, "-o", out, "--no-plots", "--quiet", "--set", form)
    assert result.returncode == 0, result.stderr
    queues = pq.read_table(out / "queues.parquet").to_pylist()
    bottleneck = next(q for q in queues if q["queue"] == "bottleneck")
    assert bottleneck["losses"] > 0 and bottleneck["drops"] == 0
    (packets,) = pq.read_table(out / "flow_packets.parquet").to_pylist()
    assert packets["lost"] > 0
    assert packets["sent"] == (
        packets["arrived"] + packets["dropped"] + packets["lost"] + packets["in_network"]
    )
    assert "losses" in pq.read_table(out / "queue_series.parquet").column_names


def test_sweep_over_loss(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(
        """\
repetitions = 1
[base]
duration = "6s"
[base.bottleneck]
rate = "20Mbps"
[[base.flows]]
cc = "newreno"
rtt = "40ms"
[grid]
loss = { path = "bottleneck.loss", values = [0.0, 0.005, 0.02] }
"""
    )
    result = run_cli("sweep", sweep, "-o", tmp_path / "store", "--quiet")
    assert result.returncode == 0, result.stderr
    rows = pq.read_table(tmp_path / "store" / "results.parquet").to_pylist()
    by_loss = {r["loss"]: r["utilisation"] for r in rows}
    # More random loss, less of the link used by a loss-based flow.
    assert by_loss[0.0] > by_loss[0.005] > by_loss[0.02]
