"""Randomised per-flow values: repetitions with different seeds differ, the same seed
repeats byte for byte, the drawn values are reported, and bad distributions are one
error line with nothing written.

Runs go through the real core; every scenario is small (a few seconds in all)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ccsim
from helpers import run_cli

TWO_FLOWS: dict[str, Any] = {
    "duration": "20s",
    "bottleneck": {"rate": "10Mbps", "queue": {"kind": "droptail", "limit": "1bdp"}},
    "flows": [
        {
            "cc": "newreno",
            "count": 2,
            "rtt": "40ms",
            "start": {"uniform": ["0s", "5s"]},
        }
    ],
}


def with_seed(seed: int) -> dict[str, Any]:
    return {**copy.deepcopy(TWO_FLOWS), "seed": seed}


def column(result: ccsim.RunResult, table: str, name: str) -> np.ndarray:
    return result.tables[table].column(name).to_numpy(zero_copy_only=False)


# ----- (a) repetitions differ ------------------------------------------------------


def test_ten_seeds_give_ten_different_runs() -> None:
    starts: list[tuple[float, ...]] = []
    goodputs: list[tuple[float, ...]] = []
    for seed in range(1, 11):
        result = ccsim.run(with_seed(seed))
        start = column(result, "flows", "start_s")
        assert start.shape == (2,)
        assert np.all((start >= 0.0) & (start <= 5.0)), start
        starts.append(tuple(start))
        goodputs.append(tuple(column(result, "flows", "goodput_mbps")))
        # The summary carries the same draws.
        assert [f["start_s"] for f in result.summary["flows"]] == list(start)
    assert len(set(starts)) == 10, starts
    assert len(set(goodputs)) == 10, goodputs
    # Two flows of one group draw two values, not one for both.
    assert all(a != b for a, b in starts)


def test_fixed_values_do_not_depend_on_the_seed() -> None:
    fixed = copy.deepcopy(TWO_FLOWS)
    fixed["flows"][0]["start"] = "1s"
    a = ccsim.run({**fixed, "seed": 1})
    b = ccsim.run({**fixed, "seed": 2})
    assert list(column(a, "flows", "start_s")) == [1.0, 1.0]
    assert list(column(a, "flows", "start_s")) == list(column(b, "flows", "start_s"))


# ----- (b) the same seed repeats -----------------------------------------------------


def parquet_bytes(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.glob("*.parquet"))}


def test_same_seed_gives_byte_identical_parquet(tmp_path: Path) -> None:
    scenario = with_seed(7)
    scenario["flows"].append(
        {
            "rtt": {"normal": ["30ms", "10ms"]},
            "size": {"exponential": "200KB"},
            "arrivals": {"poisson": "1/s", "start": "2s"},
        }
    )
    scenario["udp"] = [
        {
            "rate": {"uniform": ["0.5Mbps", "1Mbps"]},
            "rtt": "50ms",
            "start": {"uniform": ["0s", "5s"]},
        }
    ]
    scenario["trace"] = {"queue_events": True}
    first = ccsim.run(scenario).write(tmp_path / "first")
    second = ccsim.run(copy.deepcopy(scenario)).write(tmp_path / "second")
    a, b = parquet_bytes(first), parquet_bytes(second)
    assert set(a) == {f"{name}.parquet" for name in ccsim.output.KNOWN_TABLES}
    assert a.keys() == b.keys()
    for name in a:
        assert a[name] == b[name], f"{name} differs between two runs of seed 7"
    # And a different seed changes the drawn starts.
    other = ccsim.run({**scenario, "seed": 8})
    assert list(column(other, "flows", "start_s")) != list(
        ccsim.run(scenario).tables["flows"].column("start_s").to_pylist()
    )


# ----- (c) the draws are reported, in range ----------------------------------------------


def test_drawn_values_are_in_the_flows_table_and_in_range() -> None:
    scenario = {
        "duration": "10s",
        "seed": 11,
        "bottleneck": {"rate": "20Mbps"},
        "flows": [
            {
                "count": 6,
                "rtt": {"uniform": ["20ms", "80ms"]},
                "start": {"uniform": ["1s", "3s"]},
                "size": {"uniform": ["10KB", "50KB"]},
            },
            {
                "count": 4,
                "rtt": {"choice": ["10ms", "100ms"]},
                "size": {"cdf": [["5KB", 0.25], ["20KB", 1.0]]},
            },
        ],
        "udp": [{"count": 3, "rate": "1Mbps", "rtt": {"normal": ["50ms", "5ms"]}}],
    }
    result = ccsim.run(scenario)
    group = column(result, "flows", "group")
    protocol = column(result, "flows", "protocol")
    start = column(result, "flows", "start_s")
    rtt = column(result, "flows", "base_rtt_ms")
    size = column(result, "flows", "size_bytes")
    g0 = (protocol == "tcp") & (group == 0)
    g1 = (protocol == "tcp") & (group == 1)
    udp = protocol == "udp"
    assert (g0.sum(), g1.sum(), udp.sum()) == (6, 4, 3)
    assert np.all((start[g0] >= 1.0) & (start[g0] <= 3.0))
    assert np.all((rtt[g0] >= 20.0) & (rtt[g0] <= 80.0))
    assert np.all((size[g0] >= 10_000) & (size[g0] <= 50_000))
    assert len(set(rtt[g0])) == 6 and len(set(size[g0])) == 6
    assert set(rtt[g1]) <= {10.0, 100.0}
    assert np.all((size[g1] >= 5_000) & (size[g1] <= 20_000))
    assert np.all(start[g1] == 0.0)  # not given: 0 s for every flow
    assert np.all(rtt[udp] > 0.0) and len(set(rtt[udp])) == 3
    assert np.all(size[udp] == 0)
    # Every finite transfer is a row of `transfers`, with the same size.
    transfers = result.tables["transfers"]
    by_flow = dict(
        zip(
            transfers.column("flow_id").to_pylist(),
            transfers.column("size_bytes").to_pylist(),
            strict=True,
        )
    )
    tcp_ids = column(result, "flows", "flow_id")[~udp]
    assert {int(i): int(size[i]) for i in tcp_ids} == by_flow


def test_after_previous_starts_increase_across_groups() -> None:
    scenario = {
        "duration": "60s",
        "seed": 5,
        "bottleneck": {"rate": "10Mbps"},
        "flows": [
            {"count": 3, "rtt": "20ms", "start": {"after_previous": {"uniform": ["1s", "2s"]}}},
            {"count": 2, "rtt": "40ms", "start": {"after_previous": "3s"}},
        ],
        "udp": [
            {
                "count": 2,
                "rate": "1Mbps",
                "rtt": "30ms",
                "start": {"after_previous": {"exponential": "1s"}},
            }
        ],
    }
    result = ccsim.run(scenario)
    start = column(result, "flows", "start_s")
    assert start[0] == 0.0  # the very first flow starts at 0 s
    gaps = np.diff(start)
    assert np.all(gaps > 0.0), start
    assert np.all((gaps[:2] >= 1.0) & (gaps[:2] <= 2.0))  # within the first group
    np.testing.assert_allclose(gaps[2:4], 3.0)  # the second group follows the first's last
    assert start[5] > start[4]  # UDP follows the TCP groups


# ----- (d) bad input -------------------------------------------------------------------

BASE_TOML = """\
duration = "20s"

[bottleneck]
rate = "10Mbps"

[[flows]]
rtt = "20ms"
{flow}
"""

# (id, lines added to the [[flows]] group (replacing a key given twice), key path)
BAD = [
    ("unknown-distribution", 'start = { gaussian = ["1s", "2s"] }', "flows[0].start"),
    ("uniform-low-above-high", 'start = { uniform = ["5s", "1s"] }', "flows[0].start.uniform"),
    (
        "cdf-not-monotone",
        'size = { cdf = [["10KB", 0.5], ["1KB", 0.7], ["1MB", 1.0]] }',
        "flows[0].size.cdf[1]",
    ),
    ("cdf-last-p-not-1", 'size = { cdf = [["1KB", 0.5], ["1MB", 0.9]] }', "flows[0].size.cdf"),
    ("poisson-zero", 'arrivals = { poisson = "0/s" }', "flows[0].arrivals.poisson"),
    ("count-with-arrivals", 'count = 3\narrivals = { poisson = "2/s" }', "flows[0].count"),
    ("repeat-without-size", "repeat = { times = 3 }", "flows[0].repeat"),
    ("distribution-for-stop", 'stop = { uniform = ["1s", "2s"] }', "flows[0].stop"),
    ("drawn-start-past-end", 'count = 5\nstart = { uniform = ["10s", "40s"] }', "flows[0].start"),
    (
        "after-previous-for-size",
        'size = { after_previous = "1KB" }',
        "flows[0].size.after_previous",
    ),
]


@pytest.mark.parametrize(
    ("flow", "path"), [case[1:] for case in BAD], ids=[case[0] for case in BAD]
)
def test_bad_values_are_one_line_and_nothing_is_written(
    tmp_path: Path, flow: str, path: str
) -> None:
    scenario = tmp_path / "bad.toml"
    scenario.write_text(BASE_TOML.format(flow=flow))
    out = tmp_path / "out"
    result = run_cli("run", scenario, "-o", out)
    assert result.returncode == 2, result
    assert result.stdout == ""
    assert len(result.stderr_lines) == 1, result.stderr
    line = result.stderr_lines[0]
    assert line.startswith(f"error: {path}:"), line
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.toml"]
    # The Python API reports the same line.
    with pytest.raises(ccsim.ScenarioError) as err:
        ccsim.validate(scenario)
    assert f"error: {err.value}" == line
