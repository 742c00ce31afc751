"""Link keys by key path (issues 30 and 31): `--set` and sweeps vary a link's loss, jitter
and rate on the dumbbell and on every link of a general network (by index or by the
link's name); unknown paths and bad link input are one line naming the key path (exit 2,
nothing written)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ccsim.scenario import KeyPath, SweepError, apply_overrides, parse_override, resolve_names
from helpers import assert_run_refused, run_cli

#: A 2 MB transfer whose buffer holds all of it: without jitter nothing is retransmitted.
DUMBBELL = """\
duration = "6s"
measure = { start = "0s" }
[bottleneck]
rate = "10Mbps"
queue = { kind = "droptail", limit = "10MB" }
[[flows]]
cc = "newreno"
rtt = "40ms"
size = "2MB"
sack = false
"""

NETWORK = """\
duration = "4s"
[network]
[[network.links]]
name = "ab"
from = "a"
to = "b"
rate = "10Mbps"
delay = "5ms"
both_ways = true
[[network.links]]
from = "b"
to = "c"
rate = "20Mbps"
delay = "5ms"
both_ways = true
[[flows]]
from = "a"
to = "c"
rtt = "40ms"
"""


def _run(tmp_path: Path, text: str, *sets: str, name: str = "out") -> dict:
    path = tmp_path / "s.toml"
    path.write_text(text)
    args: list[str] = []
    for s in sets:
        args += ["--set", s]
    out = tmp_path / name
    result = run_cli("run", path, "-o", out, "--no-plots", "--quiet", *args)
    assert result.returncode == 0, result.stderr
    return json.loads((out / "summary.json").read_text())


def test_set_jitter_reorders_and_reorder_false_keeps_order(tmp_path: Path) -> None:
    plain = _run(tmp_path, DUMBBELL, name="plain")["flows"][0]
    jitter = 'bottleneck.jitter={ dist = { uniform = ["0ms", "5ms"] } }'
    jittered = _run(tmp_path, DUMBBELL, jitter, name="jittered")["flows"][0]
    ordered = _run(tmp_path, DUMBBELL, jitter, "bottleneck.jitter.reorder=false", name="ordered")
    ordered_flow = ordered["flows"][0]
    # Nothing is dropped, so a retransmission is a reordering's spurious one.
    assert plain["retransmits"] == 0
    assert jittered["retransmits"] > 10, jittered
    assert ordered_flow["retransmits"] == 0
    # The extra delay is there all the same.
    assert ordered_flow["fct_s"] > plain["fct_s"]
    # On the ACKs' link: order kept, the ACKs come later, nothing is retransmitted.
    acks = 'bottleneck.reverse_jitter={ dist = { uniform = ["0ms", "5ms"] }, reorder = false }'
    late_acks = _run(tmp_path, DUMBBELL, acks, name="acks")["flows"][0]
    assert late_acks["retransmits"] == 0
    assert late_acks["fct_s"] > plain["fct_s"]
    assert ordered["overrides"] == {
        "bottleneck.jitter": {"dist": {"uniform": ["0ms", "5ms"]}},
        "bottleneck.jitter.reorder": False,
    }


def test_set_network_link_by_index_and_by_name(tmp_path: Path) -> None:
    base = _run(tmp_path, NETWORK, name="base")
    by_index = _run(tmp_path, NETWORK, "network.links[1].rate=5Mbps", name="index")
    by_name = _run(tmp_path, NETWORK, "network.links.b-c.rate=5Mbps", name="name")
    assert base["flows"][0]["goodput_mbps"] > 6
    assert by_index["flows"][0]["goodput_mbps"] < 5
    strip = ("wall_s", "overrides")
    assert {k: v for k, v in by_index.items() if k not in strip} == {
        k: v for k, v in by_name.items() if k not in strip
    }
    lossy = _run(tmp_path, NETWORK, "network.links.ab.loss=0.02", name="lossy")
    ab = next(q for q in lossy["links"] if q["name"] == "ab")
    assert ab["losses"] > 0 and ab["drops"] == 0
    jittered = _run(
        tmp_path,
        NETWORK,
        'network.links[0].jitter={ dist = { uniform = ["0ms", "10ms"] } }',
        "network.links[0].jitter.reorder=false",
        name="jittered",
    )
    assert jittered["flows"][0]["goodput_mbps"] > 0


def test_a_file_path_value_passes_through_unchanged() -> None:
    """A trace file key (`bottleneck.trace`, issue 31) takes a path: `--set` reads text
    that is not TOML as a string, and sets it wherever the path leads."""
    key, value = parse_override("bottleneck.trace=traces/cell-up.trace")
    assert (key, value) == ("bottleneck.trace", "traces/cell-up.trace")
    tree = apply_overrides(
        {"bottleneck": {"rate": "10Mbps"}, "network": {"links": [{"name": "ab"}]}},
        {key: value, "network.links.ab.trace": "/tmp/x.trace"},
    )
    assert tree["bottleneck"]["trace"] == "traces/cell-up.trace"
    assert tree["network"]["links"][0]["trace"] == "/tmp/x.trace"


def test_names_resolve_to_the_index_the_core_writes() -> None:
    tree = {"network": {"links": [{"from": "a", "to": "b"}, {"name": "x", "from": "b"}]}}
    assert resolve_names(tree, KeyPath.parse("network.links.a-b.rate")).text == (
        "network.links[0].rate"
    )
    assert resolve_names(tree, KeyPath.parse("network.links.x")).text == "network.links[1]"
    unknown = KeyPath.parse("network.links.zz.rate")
    assert resolve_names(tree, unknown) == unknown
    flows = {"flows": [{"name": "bulk", "rtt": "20ms"}, {"name": "bulk", "rtt": "9ms"}]}
    with pytest.raises(SweepError, match=r"2 entries of flows are named 'bulk'; use an index"):
        apply_overrides(flows, {"flows.bulk.rtt": "1ms"})
    with pytest.raises(SweepError, match=r"its entries have no names: use an index"):
        apply_overrides({"flows": [{"rtt": "1ms"}]}, {"flows.bulk.rtt": "1ms"})


BAD_DUMBBELL = [
    ("bottleneck.jiter=1", "bottleneck.jiter: unknown key"),
    (
        'bottleneck.jitter={ dist = { uniform = ["-1ms", "5ms"] } }',
        'bottleneck.jitter.dist.uniform[0]: expected a duration like "50ms", got "-1ms"',
    ),
    (
        'bottleneck.jitter={ dist = { normal = ["-2ms", "1ms"] } }',
        "bottleneck.jitter.dist.normal[0]: expected a duration",
    ),
    (
        'bottleneck.jitter={ dist = { normal = ["0ms", "5ms"] } }',
        "bottleneck.jitter.dist.normal: expected a positive mean",
    ),
    (
        'bottleneck.jitter={ dist = { uniform = ["5ms", "1ms"] } }',
        "bottleneck.jitter.dist.uniform: empty range",
    ),
    (
        'bottleneck.jitter={ dist = { cdf = [["5ms", 0.5], ["1ms", 1.0]] } }',
        "bottleneck.jitter.dist.cdf[1]: a CDF must not decrease",
    ),
    (
        'bottleneck.reverse_jitter={ dist = { exponential = "0ms" } }',
        "bottleneck.reverse_jitter.dist.exponential: expected a positive mean",
    ),
    (
        'bottleneck.jitter={ dist = "1ms", reorder = false, reorder_probability = 0.1 }',
        "bottleneck.jitter.reorder_probability: reorders packets, which reorder = false",
    ),
    (
        'bottleneck.jitter={ dist = "1ms", reorder_probability = 1.5 }',
        "bottleneck.jitter.reorder_probability: expected a probability between 0 and 1",
    ),
    (
        'bottleneck.jitter={ uniform = ["0ms", "5ms"] }',
        "bottleneck.jitter.uniform: unknown key (expected one of: dist, reorder",
    ),
    ('bottleneck.jitter="5ms"', 'bottleneck.jitter: expected a table, got "5ms"'),
    ("bottleneck.jitter.reorder=false", "bottleneck.jitter.dist: missing required key"),
    ('bottleneck.delay="-5ms"', "bottleneck.delay: expected a duration"),
    ('bottleneck.rate="-1Mbps"', "bottleneck.rate: expected a positive rate"),
]

BAD_NETWORK = [
    ("network.links[2].rate=5Mbps", "network.links has 2 entries in the base scenario"),
    ("network.links.xy.rate=5Mbps", "no entry of network.links is named 'xy'"),
    ("network.links.ab-reverse.rate=5Mbps", "a both_ways link's reverse takes the settings"),
    ("network.links.ab.rat=5Mbps", "network.links[0].rat: unknown key"),
    ('network.links[0].rate="-5Mbps"', "network.links[0].rate: expected a positive rate"),
    ('network.links.ab.delay="-1ms"', "network.links[0].delay: expected a duration"),
    ("network.links.b-c.loss=2", "network.links[1].loss: expected a loss probability"),
    (
        'network.links[0].jitter={ dist = { uniform = ["-1ms", "1ms"] } }',
        "network.links[0].jitter.dist.uniform[0]: expected a duration",
    ),
]


@pytest.mark.parametrize(
    ("text", "override", "message"),
    [(DUMBBELL, *b) for b in BAD_DUMBBELL] + [(NETWORK, *b) for b in BAD_NETWORK],
    ids=[b[0] for b in BAD_DUMBBELL + BAD_NETWORK],
)
def test_bad_link_input_is_one_line_with_the_key_path(
    text: str, override: str, message: str, tmp_path: Path
) -> None:
    assert_run_refused(tmp_path, text, message, "--set", override)


def _sweep(tmp_path: Path, grid: str) -> Path:
    sweep = tmp_path / "sweep.toml"
    base = "\n".join(
        line.replace("[network", "[base.network").replace("[[flows", "[[base.flows")
        for line in NETWORK.splitlines()
    )
    sweep.write_text(f"repetitions = 1\n[base]\n{base}\n[grid]\n{grid}\n")
    return sweep


def test_sweep_over_network_link_keys(tmp_path: Path) -> None:
    sweep = _sweep(
        tmp_path,
        'rate = { path = "network.links.b-c.rate", values = ["5Mbps", "20Mbps"] }\n'
        '"network.links[0].jitter.reorder" = [true, false]\n'
        '[set]\n"network.links[0].jitter.dist" = { uniform = ["0ms", "4ms"] }\n',
    )
    result = run_cli("sweep", sweep, "-o", tmp_path / "store", "--quiet")
    assert result.returncode == 0, result.stderr
    rows = pq.read_table(tmp_path / "store" / "results.parquet").to_pylist()
    assert len(rows) == 4
    assert all(r["status"] == "ok" for r in rows), rows
    goodput = {
        (r["rate"], r["network.links[0].jitter.reorder"]): r["flow_goodput_mbps"][0] for r in rows
    }
    assert max(goodput["5Mbps", True], goodput["5Mbps", False]) < 5, goodput
    assert min(goodput["20Mbps", True], goodput["20Mbps", False]) > 6, goodput


@pytest.mark.parametrize(
    ("axis", "message"),
    [
        ('"network.links.ab.rat" = [1]', "no such key path network.links.ab.rat"),
        ('"network.links.zz.rate" = ["1Mbps"]', "no entry of network.links is named 'zz'"),
        (
            '"network.links.ab.jitter.dist.bogus" = [1]',
            "no such key path network.links.ab.jitter.dist.bogus",
        ),
    ],
)
def test_sweep_over_an_unknown_link_path_is_one_line(
    axis: str, message: str, tmp_path: Path
) -> None:
    sweep = _sweep(tmp_path, axis)
    store = tmp_path / "store"
    result = run_cli("sweep", sweep, "-o", store, "--quiet")
    assert result.returncode == 2, result
    assert len(result.stderr_lines) == 1, result.stderr
    assert message in result.stderr_lines[0], result.stderr
    assert not store.exists()
