"""Sweep files: syntax, expansion, key paths, derived seeds (no simulation needed)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ccsim.scenario import KeyPath, SweepError, set_path
from ccsim.sweeps.spec import derive_seed, load_sweep

BASE = {
    "duration": "2s",
    "seed": 5,
    "bottleneck": {"rate": "10Mbps", "queue": {"kind": "droptail", "limit": "1bdp"}},
    "flows": [{"cc": "newreno", "rtt": "20ms"}, {"rtt": "40ms"}],
}


def test_key_path_parse_and_set_copies_only_the_path():
    path = KeyPath.parse("flows[0].cc.beta")
    assert path.steps == ("flows", 0, "cc", "beta")
    assert path.text == "flows[0].cc.beta"
    out = set_path(BASE, path, 0.7)
    # a cc given by name becomes a table with that kind
    assert out["flows"][0]["cc"] == {"kind": "newreno", "beta": 0.7}
    assert BASE["flows"][0]["cc"] == "newreno"  # the base is untouched
    assert out["flows"][1] is BASE["flows"][1]  # untouched parts are shared
    # a missing algorithm table starts from the schema's default kind
    assert set_path(BASE, KeyPath.parse("flows[1].cc.beta"), 0.6)["flows"][1]["cc"] == {
        "kind": "newreno",
        "beta": 0.6,
    }


def test_expansion_order_ids_and_seeds():
    sweep = load_sweep(
        {
            "base": BASE,
            "repetitions": 2,
            "grid": {"flows[0].rtt": ["10ms", "20ms"]},
            "zip": [{"flows[1].rtt": ["30ms", "60ms", "90ms"], "flows[1].start": [0, 1, 2]}],
        }
    )
    assert len(sweep.runs) == 2 * 3 * 2
    assert [r.run for r in sweep.runs] == list(range(12))
    first, second, third = sweep.runs[:3]
    assert first.axis_values == ("10ms", "30ms", 0) and first.repetition == 0
    assert second.axis_values == ("10ms", "30ms", 0) and second.repetition == 1
    assert third.axis_values == ("10ms", "60ms", 1)
    assert sweep.runs[6].axis_values[0] == "20ms"  # the first axis varies slowest
    # repetition 0 keeps the scenario's seed; others are derived from it
    assert first.seed == 5 and first.scenario["seed"] == 5
    assert second.seed == derive_seed(5, 1) == second.scenario["seed"]
    assert third.seed == 5


def test_derived_seed_formula():
    expected = int.from_bytes(hashlib.sha256(b"5:3").digest()[:8], "big") & ((1 << 63) - 1)
    assert derive_seed(5, 3) == expected
    assert derive_seed(5, 0) == 5
    assert len({derive_seed(1, r) for r in range(1000)}) == 1000


def test_named_axis_with_range_and_format():
    sweep = load_sweep(
        {
            "base": BASE,
            "grid": {
                "buffer": {
                    "path": "bottleneck.queue.limit",
                    "from": 0.1,
                    "to": 0.5,
                    "step": 0.1,
                    "format": "{}bdp",
                },
                "g": {"path": "flows[0].cc.beta", "from": 0.5, "to": 0.9, "count": 3},
            },
        }
    )
    buffer, g = sweep.axes
    assert buffer.name == "buffer" and buffer.values == (0.1, 0.2, 0.3, 0.4, 0.5)
    assert buffer.scenario_values[2] == "0.3bdp"
    assert g.values == (0.5, 0.7, 0.9)
    assert sweep.runs[-1].scenario["bottleneck"]["queue"]["limit"] == "0.5bdp"


def test_fingerprint_changes_with_the_run_list():
    a = load_sweep({"base": BASE, "grid": {"flows[0].rtt": ["10ms", "20ms"]}})
    b = load_sweep({"base": BASE, "grid": {"flows[0].rtt": ["10ms", "20ms"]}})
    c = load_sweep({"base": BASE, "grid": {"flows[0].rtt": ["10ms", "30ms"]}})
    assert a.fingerprint() == b.fingerprint() != c.fingerprint()


def test_base_path_is_relative_to_the_sweep_file(tmp_path: Path, monkeypatch):
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "sweeps").mkdir()
    (tmp_path / "scenarios" / "b.toml").write_text(
        'duration = "2s"\n[bottleneck]\nrate = "10Mbps"\n[[flows]]\nrtt = "20ms"\n'
    )
    sweep_file = tmp_path / "sweeps" / "s.toml"
    sweep_file.write_text(
        'base = "../scenarios/b.toml"\n[set]\nduration = "3s"\n'
        '[grid]\n"flows[0].rtt" = ["5ms", "10ms"]\n'
    )
    monkeypatch.chdir(tmp_path / "sweeps")
    sweep = load_sweep(Path("s.toml"))
    assert [r.scenario["flows"][0]["rtt"] for r in sweep.runs] == ["5ms", "10ms"]
    assert sweep.runs[0].scenario["duration"] == "3s"


BAD = [
    ("unknown-key", {"grid": {"flows[0].rttt": ["1ms"]}}, "no such key path flows[0].rttt"),
    ("unknown-top", {"grid": {"colour": ["red"]}}, "no such key path colour"),
    ("unknown-param", {"grid": {"flows[0].cc.bta": [0.5]}}, "unknown parameter"),
    ("into-a-value", {"grid": {"flows[0].rtt.x": [1]}}, "no such key path flows[0].rtt.x"),
    ("index-too-big", {"grid": {"flows[2].rtt": ["1ms"]}}, "no [2]"),
    ("not-an-array", {"grid": {"bottleneck[0].rate": ["1Mbps"]}}, "not an array"),
    ("empty-axis", {"grid": {"flows[0].rtt": []}}, "empty axis"),
    (
        "zip-lengths",
        {"zip": [{"flows[0].rtt": ["1ms", "2ms"], "flows[1].rtt": ["1ms"]}]},
        "equal lengths",
    ),
    ("bad-path", {"grid": {"flows[0]..rtt": ["1ms"]}}, "not a key path"),
    ("twice", {"grid": {"flows[0].rtt": ["1ms"]}, "zip": [{"flows[0].rtt": ["2ms"]}]}, "two"),
    ("reserved", {"grid": {"seed": [1, 2]}}, "clash"),
    ("sweep-key", {"grids": {}}, "grids: unknown key"),
    ("repetitions", {"repetitions": 0}, "repetitions"),
    ("series", {"series": ["nope"]}, "series"),
    ("set-unknown", {"set": {"flows[0].rttt": "1ms"}}, "no such key path flows[0].rttt"),
]


@pytest.mark.parametrize(("changes", "message"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_sweeps_are_refused(changes, message):
    with pytest.raises(SweepError) as info:
        load_sweep({"base": BASE, **changes})
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_a_bad_combination_is_not_a_key_path_error():
    # The first combination is valid, so every key path exists: "nosuch" only makes
    # its own runs fail (at run time), and beta = 1.5 likewise.
    sweep = load_sweep(
        {
            "base": BASE,
            "zip": [{"flows[0].cc.kind": ["newreno", "nosuch"], "flows[0].cc.beta": [0.5, 1.5]}],
        }
    )
    assert len(sweep.runs) == 2
