"""Bad input: one line on stderr, exit status 2, output directory untouched.

These go through the real core (scenario parsing and validation in Rust)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ccsim
from helpers import EXAMPLES, run_cli, snapshot

VALID = """\
duration = "10s"
seed = 3
{measure}
{extra_top}

[bottleneck]
rate = "{rate}"
queue = {queue}

[[flows]]
cc = "{cc}"
rtt = "20ms"

[[flows]]
cc = "newreno"
rtt = "{rtt1}"
{extra_flow_key}
"""

DEFAULTS = {
    "rate": "10Mbps",
    "queue": '{ kind = "droptail", limit = "1bdp" }',
    "cc": "newreno",
    "rtt1": "50ms",
    "extra_flow_key": "",
    "measure": "",
    "extra_top": "",
}


def scenario_text(**changes: str) -> str:
    return VALID.format(**{**DEFAULTS, **changes})


# (id, changes to the valid scenario, substrings the one error line must contain)
BAD = [
    ("missing-unit", {"rtt1": "50"}, ['flows[1].rtt: expected a duration like "50ms", got "50"']),
    ("unknown-top-key", {"extra_top": 'colour = "blue"'}, ["colour"]),
    ("unknown-flow-key", {"extra_flow_key": 'rttt = "5ms"'}, ["flows[1]", "rttt"]),
    ("zero-rate", {"rate": "0Mbps"}, ["bottleneck.rate"]),
    ("negative-rate", {"rate": "-5Mbps"}, ["bottleneck.rate"]),
    ("unknown-cc", {"cc": "nosuchcc"}, ["flows[0].cc", "nosuchcc"]),
    ("unknown-queue", {"queue": '{ kind = "nosuchqueue" }'}, ["bottleneck.queue", "nosuchqueue"]),
    (
        "window-outside-run",
        {"measure": 'measure = { start = "5s", end = "20s" }'},
        ["measure"],
    ),
]


@pytest.fixture(params=BAD, ids=[case[0] for case in BAD])
def bad_case(request, tmp_path: Path) -> tuple[Path, list[str]]:
    _, changes, expected = request.param
    path = tmp_path / "bad.toml"
    path.write_text(scenario_text(**changes))
    return path, expected


def assert_one_error_line(result, expected: list[str]) -> str:
    assert result.returncode == 2, result
    assert result.stdout == ""
    lines = result.stderr_lines
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert line.startswith("error: ")
    for part in expected:
        assert part in line, line
    return line


def test_valid_scenario_validates(tmp_path: Path) -> None:
    path = tmp_path / "ok.toml"
    path.write_text(scenario_text())
    result = run_cli("validate", path)
    assert result.returncode == 0, result.stderr
    ccsim.validate(path)


def test_bad_input_leaves_absent_output_dir_absent(bad_case, tmp_path: Path) -> None:
    path, expected = bad_case
    out = tmp_path / "out"
    result = run_cli("run", path, "-o", out)
    assert_one_error_line(result, expected)
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.toml"]  # no staging leftovers


def test_bad_input_leaves_existing_output_dir_unchanged(bad_case, tmp_path: Path) -> None:
    path, expected = bad_case
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "summary.json").write_text('{"from": "an earlier run"}')
    before = snapshot(out)
    result = run_cli("run", path, "-o", out)
    assert_one_error_line(result, expected)
    assert snapshot(out) == before


def test_validate_command_reports_the_same_line(bad_case) -> None:
    path, expected = bad_case
    run_line = assert_one_error_line(run_cli("run", path, "-o", path.parent / "o"), expected)
    validate_line = assert_one_error_line(run_cli("validate", path), expected)
    assert validate_line == run_line


def test_python_api_raises_scenario_error_with_same_text(bad_case) -> None:
    path, expected = bad_case
    cli_line = assert_one_error_line(run_cli("validate", path), expected)
    with pytest.raises(ccsim.ScenarioError) as from_path:
        ccsim.run(path)
    assert f"error: {from_path.value}" == cli_line
    with pytest.raises(ccsim.ScenarioError) as from_text:
        ccsim.validate(path.read_text())
    assert str(from_text.value) == str(from_path.value)
    assert isinstance(from_path.value, ValueError)


def test_dict_scenario_reports_the_same_path_as_toml() -> None:
    scenario = {
        "duration": "10s",
        "bottleneck": {"rate": "10Mbps"},
        "flows": [{"cc": "newreno", "rtt": "20ms"}, {"cc": "newreno", "rtt": "50"}],
    }
    with pytest.raises(ccsim.ScenarioError, match=r"flows\[1\]\.rtt: expected a duration like"):
        ccsim.validate(scenario)


def test_missing_scenario_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run_cli("run", tmp_path / "nosuch.toml", "-o", out)
    assert_one_error_line(result, ["nosuch.toml"])
    assert not out.exists()
    assert_one_error_line(run_cli("validate", tmp_path / "nosuch.toml"), ["nosuch.toml"])


def test_output_path_that_is_a_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.write_text("not a directory")
    result = run_cli("run", EXAMPLES / "single_newreno.toml", "-o", out)
    assert_one_error_line(result, [str(out)])
    assert out.read_text() == "not a directory"
