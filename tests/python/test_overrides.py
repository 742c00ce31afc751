"""``ccsim run --set``, ``ccsim sweep --dry-run``, ``--format`` and the command line's
messages for bad input: one line naming the key, exit status 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ccsim
from ccsim import cli
from ccsim.scenario import SweepError, apply_overrides, parse_override
from helpers import EXAMPLES

SCENARIO = """duration = "4s"
measure = { start = "1s" }
[bottleneck]
rate = "5Mbps"
[[flows]]
cc = { kind = "cdg", g = 2.0 }
rtt = "20ms"
[[flows]]
rtt = "40ms"
"""


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO)
    return path


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("flows[0].cc.g=6", ("flows[0].cc.g", 6)),
        ("seed = 3", ("seed", 3)),
        ("flows[0].rtt=50ms", ("flows[0].rtt", "50ms")),
        ('flows[0].rtt="50 ms"', ("flows[0].rtt", "50 ms")),
        ("flows[1].ecn=true", ("flows[1].ecn", True)),
        (
            'flows[1].cc={ kind = "cubic", beta = 0.8 }',
            ("flows[1].cc", {"kind": "cubic", "beta": 0.8}),
        ),
        ("bottleneck.queue=codel", ("bottleneck.queue", "codel")),
    ],
)
def test_parse_override(text: str, expected: tuple[str, object]) -> None:
    assert parse_override(text) == expected


@pytest.mark.parametrize("text", ["seed", "=3", "flows[0]cc=1", "flows[0].rtt="])
def test_parse_override_refuses(text: str) -> None:
    with pytest.raises(SweepError):
        parse_override(text)


def test_apply_overrides_like_a_sweep_set() -> None:
    base = {"flows": [{"cc": "cdg", "rtt": "20ms"}]}
    out = apply_overrides(base, {"flows[0].cc.g": 6, "bottleneck.queue.limit": "2bdp"})
    assert out["flows"][0]["cc"] == {"kind": "cdg", "g": 6}
    assert out["bottleneck"]["queue"] == {"kind": "droptail", "limit": "2bdp"}
    assert base == {"flows": [{"cc": "cdg", "rtt": "20ms"}]}  # not changed


def test_run_set_is_applied_and_recorded(scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["run", str(scenario), "-o", str(out), "--quiet", "--no-plots"]
    assert cli.main([*args, "--set", "flows[0].cc.g=6", "--set", "seed=3"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["overrides"] == {"flows[0].cc.g": 6, "seed": 3}
    assert summary["seed"] == 3
    assert summary["scenario"]["flows"][0]["cc"] == {"kind": "cdg", "g": 6}
    # the same run from Python, and the recorded scenario repeats it
    direct = ccsim.run(scenario, overrides={"flows[0].cc.g": 6, "seed": 3})
    again = ccsim.run(summary["scenario"])
    assert direct.summary["flows"] == summary["flows"] == again.summary["flows"]


@pytest.mark.parametrize(
    ("option", "names"),
    [
        ("flows[2].rtt=5ms", "flows[2].rtt"),  # no third group
        ("flows[0].cc.gg=5", "flows[0].cc.gg"),  # no such parameter
        ("flows[0].rttt=5ms", "flows[0].rttt"),  # no such key
        ("flows[0].cc.g=abc", "flows[0].cc.g"),  # a bad value
        ("flows[0]cc=1", "flows[0]cc"),  # not a key path
        ("duration", "KEY=VALUE"),  # no value
    ],
)
def test_bad_set_exits_2_with_one_line_and_writes_nothing(
    scenario: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, names: str
) -> None:
    out = tmp_path / "out"
    assert cli.main(["run", str(scenario), "-o", str(out), "--set", option]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and names in err
    assert not out.exists()


def test_unknown_format_exits_2_and_writes_nothing(
    scenario: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert cli.main(["run", str(scenario), "-o", str(out), "--format", "png,jpg"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'jpg'" in err and "--format" in err
    assert not out.exists()
    assert cli.main(["plot", str(tmp_path), "--format", "gif"]) == 2


def test_formats_chosen(scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert cli.main(["run", str(scenario), "-o", str(out), "--quiet", "--format", "svg"]) == 0
    figures = sorted(p.name for p in out.iterdir() if p.suffix in (".png", ".pdf", ".svg"))
    assert figures == ["queue_delay.svg", "sojourn_cdf.svg", "throughput.svg"]


def test_validate_names_the_file_of_a_syntax_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "broken.toml"
    path.write_text('duration = "5s\n')
    assert cli.main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: ") and "line 1" in err and "<toml>" not in err


def test_validate_on_a_sweep_file_says_use_sweep(capsys: pytest.CaptureFixture[str]) -> None:
    path = EXAMPLES / "sweeps" / "newreno_buffer.toml"
    assert cli.main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a sweep file" in err and "ccsim sweep" in err


def test_validate_with_set(scenario: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["validate", str(scenario), "--set", "flows[1].cc=cubic"]) == 0
    assert cli.main(["validate", str(scenario), "--set", "flows[1].cc=nosuch"]) == 2
    assert "flows[1].cc" in capsys.readouterr().err


def test_sweep_dry_run_lists_runs_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sweep-out"
    path = EXAMPLES / "sweeps" / "newreno_buffer.toml"
    assert cli.main(["sweep", str(path), "-o", str(out), "--dry-run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split("\t") == ["run", "buffer_bdp", "beta", "repetition", "seed", "estimate"]
    rows = [line.split("\t") for line in lines[1:-1]]
    assert [r[0] for r in rows] == [str(i) for i in range(20)]
    assert lines[-1].startswith("20 runs; estimated ") and "nothing was run" in lines[-1]
    assert not out.exists()


def test_sweep_dry_run_refuses_bad_key_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        f'base = "{EXAMPLES / "single_newreno.toml"}"\n[grid]\n"flows[0].rttt" = ["1ms"]\n'
    )
    assert cli.main(["sweep", str(path), "--dry-run"]) == 2
    assert "flows[0].rttt" in capsys.readouterr().err


def test_sweep_needs_output_unless_dry_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["sweep", str(EXAMPLES / "sweeps" / "newreno_buffer.toml")]) == 2
    assert "-o DIR" in capsys.readouterr().err


def test_warning_when_no_tcp_flow_is_active_in_the_window(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "short.toml"
    path.write_text(
        'duration = "10s"\n[bottleneck]\nrate = "10Mbps"\n'
        '[[flows]]\ncount = 3\nrtt = "20ms"\nsize = "1MB"\n'
    )
    assert cli.main(["run", str(path), "-o", str(tmp_path / "out"), "--quiet", "--no-plots"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("warning: no TCP flow was active")
    assert "(5-10 s)" in err[0] and "finished at" in err[0]


def test_no_warning_for_an_active_run(
    scenario: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o"
    assert cli.main(["run", str(scenario), "-o", str(out), "--quiet", "--no-plots"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("50ms", True),
        ("50 ms", True),  # spaces between number and unit are allowed
        ("10 Mbps", True),
        ("50MS", False),  # units are case-sensitive: m is milli, M mega
        ("10mbps", False),
        ("10MBPS", False),
    ],
)
def test_unit_rule(value: str, ok: bool) -> None:
    key = (
        "flows[0].rtt"
        if value.lower().endswith("s") and "bps" not in value.lower()
        else "bottleneck.rate"
    )
    doc = {"duration": "2s", "bottleneck": {"rate": "10Mbps"}, "flows": [{"rtt": "20ms"}]}
    if ok:
        ccsim.validate(doc, overrides={key: value})
    else:
        with pytest.raises(ccsim.ScenarioError, match=key.replace("[", r"\[").replace("]", r"\]")):
            ccsim.validate(doc, overrides={key: value})
