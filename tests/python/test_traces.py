"""Mahimahi link traces (``ccsim.traces``, ``ccsim trace``; issue 31).

The format and its looping are checked against Mahimahi's own rules, worked by hand from
``src/frontend/link_queue.cc`` (``rationalize``, ``use_a_delivery_opportunity``: the base
time moves on by the last timestamp at each wrap) and ``traces/README`` (a file holding
``1`` is a 12 Mbit/s link; Pantheon ships exactly that as ``12mbps.trace``). The
cellular generator is checked against its model's stationary figures, computed here from
its parameters, over runs long enough that a 10 % error in a parameter would fail.
"""

from __future__ import annotations

import math
import re
import shlex
from pathlib import Path

import numpy as np
import pytest

import ccsim
from ccsim import traces
from ccsim.cli import main
from ccsim.traces import CellularModel, Trace, TraceError, parse_trace, read_trace
from helpers import EXAMPLES, REPO, run_cli

DOCS = REPO / "docs" / "traces.md"


def _trace(text: str) -> Trace:
    return Trace("t", parse_trace(text, "t"))


# --------------------------------------------------------------------------- the format


def test_one_opportunity_per_ms_is_12_mbps():
    trace = _trace("1\n")  # Mahimahi traces/README's fixed-rate example
    assert trace.period_ms == 1 and trace.opportunities == 1
    assert trace.mean_rate_bps == 12e6
    # mm-link: the first opportunity at base + 1 ms, then one every ms
    assert trace.per_ms(5).tolist() == [0, 1, 1, 1, 1, 1]


def test_loop_shifts_by_the_last_timestamp():
    # schedule [2, 2, 5]: opportunities at 2, 2, 5, then 7, 7, 10, then 12, 12, 15 ...
    counts = _trace("2\n2\n5\n").per_ms(15)
    expected = np.zeros(16, dtype=int)
    expected[[2, 7, 12]] = 2
    expected[[5, 10, 15]] = 1
    assert counts.tolist() == expected.tolist()
    # a 0 shares its millisecond with the previous cycle's last line: [0, 1] delivers
    # once at 0, then twice in every millisecond
    assert _trace("0\n1").per_ms(3).tolist() == [1, 2, 2, 2]


def test_capacity_is_binned_over_the_looped_trace():
    trace = _trace("1\n")
    start, rate = traces.capacity_mbps(trace, 0.35, 0.1)
    assert start.tolist() == pytest.approx([0.0, 0.1, 0.2, 0.3])
    # a bin (a, a + 100 ms] holds the opportunities at a + 1 ... a + 100 ms: 100, and 50
    # in the last, 50 ms long
    assert rate.tolist() == pytest.approx([12.0, 12.0, 12.0, 12.0])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "t: no timestamps"),
        ("1\n\n2\n", "t: line 2: empty line"),
        ("1\n2\n\n", "t: line 3: empty line"),
        ("1\nabc\n", 't: line 2: expected a whole number of milliseconds, got "abc"'),
        ("1\n# comment\n", "t: line 2: expected a whole number"),  # mm-link has no comments
        ("1\n2\r\n", "t: line 2: expected a whole number"),
        ("-1\n2\n", "t: line 1: expected a whole number"),
        ("+1\n2\n", "t: line 1: expected a whole number"),
        ("1.5\n", "t: line 1: expected a whole number"),
        ("1\n5\n3\n", "t: line 3: timestamps must never decrease (3 after 5)"),
        ("0\n0\n", "t: the last timestamp must be positive"),
    ],
)
def test_bad_trace_text_is_one_line_naming_the_line(text: str, message: str):
    with pytest.raises(TraceError) as err:
        parse_trace(text, "t")
    assert message in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    "text", ["", "1\n\n2\n", "1\nabc\n", "1\n2\r\n", "+1\n", "1\n5\n3\n", "0\n0\n", "1\n\xff\n"]
)
def test_the_tools_and_the_link_refuse_a_file_with_the_same_words(tmp_path: Path, text: str):
    """One parser: `ccsim trace show` and a run with the file as `bottleneck.trace` give
    the same reason (the run's line prefixed with its key path)."""
    path = tmp_path / "bad.trace"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(TraceError) as err:
        read_trace(path)
    with pytest.raises(ccsim.ScenarioError) as run_err:
        ccsim.validate(
            {
                "duration": "1s",
                "bottleneck": {"rate": "10Mbps", "trace": str(path)},
                "flows": [{"cc": "cubic", "rtt": "20ms"}],
            }
        )
    assert str(run_err.value).endswith(str(err.value)), (run_err.value, err.value)


def test_missing_and_binary_files(tmp_path: Path):
    with pytest.raises(TraceError, match=r"nope: cannot read: No such file"):
        read_trace(tmp_path / "nope")
    (tmp_path / "bin").write_bytes(b"1\n2\n\xff\n")
    with pytest.raises(TraceError, match=r"bin: line 3: expected a whole number"):
        read_trace(tmp_path / "bin")


def test_outages_include_the_gap_across_the_loop():
    # opportunities at 300 and 1000 (the period): gaps of 700 ms (300 -> 1000) and of
    # 300 ms across the end (1000 -> the next cycle's 1300)
    found = traces.outages(_trace("300\n1000\n"), 200)
    assert [(o.start_ms, o.length_ms) for o in found] == [(0, 300), (300, 700)]


# --------------------------------------------------------------------------- generators


def test_constant_12_mbps_is_mahimahis_one_line_file():
    assert traces.format_trace(traces.constant(12e6)) == "1\n"


def test_constant_rate_is_exact_over_its_shortest_period():
    stamps = traces.constant(10e6)  # 5/6 of an opportunity per ms: 5 in 6 ms
    assert stamps == [2, 3, 4, 5, 6]
    trace = Trace("c", np.array(stamps))
    assert trace.mean_rate_bps == pytest.approx(10e6, rel=1e-12)
    # with a duration: the rate rounded to whole opportunities, spread evenly
    stamps = traces.constant(1.2e6, 1000)
    assert len(stamps) == 100 and stamps[-1] == 1000
    assert set(np.diff(stamps).tolist()) == {10}


def test_square_wave_counts_per_half_period():
    stamps = np.array(traces.square([24e6, 6e6], 2000))
    assert stamps[-1] == 2000
    assert ((stamps >= 1) & (stamps <= 1000)).sum() == 2000  # 24 Mbit/s for 1 s
    assert ((stamps > 1000) & (stamps <= 2000)).sum() == 500  # 6 Mbit/s for 1 s
    _, rate = traces.capacity_mbps(Trace("s", stamps), 4.0, 0.5)
    assert rate.tolist() == pytest.approx([24, 24, 6, 6, 24, 24, 6, 6])
    on_off = np.array(traces.square([0, 12e6], 1000))  # an outage first
    assert on_off[0] == 501 and len(on_off) == 500


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: traces.constant(0), "--rate: expected a positive rate"),
        (lambda: traces.constant(1000, 1000), "gives no delivery opportunity"),
        (lambda: traces.constant(1e12, 100_000), "more than 20,000,000"),
        (lambda: traces.square([12e6, 0], 1000), "cannot end in an outage"),
        (lambda: traces.square([12e6, 6e6], 999), "--period: expected an even number"),
        (lambda: traces.square([12e6], 1000), "--rates: expected two rates"),
        (lambda: traces.cellular(CellularModel(rate_cv=-1), 1000, 1), "--rate-cv"),
        (lambda: traces.cellular(CellularModel(outage_mean_s=0), 1000, 1), "--outage-mean"),
    ],
)
def test_generator_refusals(call, message: str):
    with pytest.raises(TraceError, match=re.escape(message)):
        call()


def test_cellular_is_seeded():
    model = CellularModel()
    assert traces.cellular(model, 3000, 7) == traces.cellular(model, 3000, 7)
    assert traces.cellular(model, 3000, 7) != traces.cellular(model, 3000, 8)


def _runs(flags: np.ndarray, value: bool) -> np.ndarray:
    """Lengths of the runs of ``value`` that start and end inside ``flags``."""
    edges = np.flatnonzero(np.diff(flags.astype(np.int8))) + 1
    bounds = np.concatenate([[0], edges, [len(flags)]])
    lengths = np.diff(bounds)
    kinds = flags[bounds[:-1]]
    inner = lengths[1:-1][kinds[1:-1] == value]
    return inner


def test_cellular_fading_and_outages_follow_the_model():
    # A short correlation time and short outages, so that 600 s hold many independent
    # samples: the sampling error is a few tenths of the 10 % a wrong parameter gives.
    model = CellularModel(
        rate_bps=10e6, rate_cv=0.6, correlation_s=0.02, outage_every_s=0.4, outage_mean_s=0.1
    )
    rates, ups = traces.cellular_path(model, 600_000, 3)
    factor = np.asarray(rates) / model.rate_bps
    log = np.log(factor)
    s = math.sqrt(math.log(1 + 0.6**2))  # ln(1 + cv²) is the variance of a log-normal's log
    assert log.std() == pytest.approx(s, rel=0.03)
    assert factor.mean() == pytest.approx(1.0, rel=0.03)  # E[exp(X - s²/2)] = 1
    assert factor.std() == pytest.approx(0.6, rel=0.05)
    lag = 20  # one correlation time, in ms: the autocorrelation of X is e^-1 there
    assert np.corrcoef(log[:-lag], log[lag:])[0, 1] == pytest.approx(math.exp(-1), abs=0.02)
    up = np.asarray(ups)
    assert _runs(up, False).mean() == pytest.approx(100, rel=0.04)  # mean outage, ms
    assert _runs(up, True).mean() == pytest.approx(400, rel=0.04)  # mean time up, ms
    assert up.mean() == pytest.approx(0.8, abs=0.01)


def test_cellular_trace_mean_rate_and_outages():
    # end to end, from the file's timestamps: at 48 Mbit/s ± 30 % (4 opportunities per
    # ms) no gap of 20 ms happens but in an outage, and an outage of L ms leaves a gap of
    # L + 1 ms; outages are exponential, so those of 19 ms or more (a fraction e^-0.19,
    # of 600 in 300 s) last 19 + 100 ms on average (memoryless)
    model = CellularModel(
        rate_bps=48e6, rate_cv=0.3, correlation_s=0.05, outage_every_s=0.4, outage_mean_s=0.1
    )
    trace = Trace("c", np.array(traces.cellular(model, 300_000, 6)))
    # the rate while up times the fraction up: 48 Mbit/s times 0.8
    assert trace.mean_rate_bps == pytest.approx(48e6 * 0.8, rel=0.03)
    found = traces.outages(trace, 20)
    assert len(found) == pytest.approx(600 * math.exp(-0.19), rel=0.12)
    assert np.mean([o.length_ms for o in found]) == pytest.approx(120, rel=0.1)


def test_poisson_sampler_mean_and_variance():
    import random

    rng = random.Random(1)
    for mean in (0.3, 5.0, 70.0):  # 70: drawn in chunks of at most 30
        draws = np.array([traces.poisson(rng, mean) for _ in range(20_000)])
        assert draws.mean() == pytest.approx(mean, rel=0.03)
        assert draws.var() == pytest.approx(mean, rel=0.06)


# --------------------------------------------------------------------------- the command


def _cli(capsys, *args: str) -> tuple[int, str, list[str]]:
    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse's own errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err.splitlines()


def test_command_writes_and_shows(tmp_path: Path, capsys):
    path = tmp_path / "sq.trace"
    code, out, _ = _cli(
        capsys, "trace", "square", "--rates", "24Mbps,6Mbps", "--period", "2s", "-o", str(path)
    )
    assert code == 0 and "mean 15.000 Mbit/s" in out
    assert path.stat().st_mode & 0o777 != 0o600  # not mkstemp's mode
    code, out, _ = _cli(capsys, "trace", "show", str(path))
    assert code == 0
    assert "period 2000 ms" in out and "mean rate 15.000 Mbit/s" in out
    assert "min 6.00" in out and "max 24.00" in out and "outages" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["trace"], "the following arguments are required: KIND"),
        (["trace", "bogus"], "invalid choice: 'bogus'"),
        (["trace", "constant", "-o", "F"], "the following arguments are required: --rate"),
        (["trace", "constant", "--rate", "12mbit", "-o", "F"], "--rate: expected a rate like"),
        (["trace", "constant", "--rate=-5Mbps", "-o", "F"], "--rate: expected a rate ≥ 0"),
        (["trace", "constant", "--rate", "0Mbps", "-o", "F"], "--rate: expected a positive"),
        (["trace", "constant", "--rate", "12Mbps", "--duration", "1.5ms", "-o", "F"], "whole"),
        (["trace", "square", "--rates", "12Mbps,0Mbps", "--period", "2s", "-o", "F"], "outage"),
        (["trace", "cellular", "--duration", "5s", "--rate-cv", "x", "-o", "F"], "--rate-cv"),
        (["trace", "cellular", "--duration", "abc", "-o", "F"], "--duration: expected a durat"),
        (["trace", "constant", "--rate", "12Mbps", "-o", "nodir/F"], "is not a directory"),
        (["trace", "constant", "--rate", "12Mbps", "-o", "."], "not a directory"),
        (["trace", "show", "missing"], "missing: cannot read"),
        (["trace", "show", "empty"], "empty: no timestamps"),
    ],
)
def test_bad_arguments_one_line_exit_2_nothing_written(
    args: list[str], message: str, tmp_path: Path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").write_text("")
    code, _, err = _cli(capsys, *args)
    assert code == 2
    assert len(err) == 1 and err[0].startswith("error: "), err
    assert message in err[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty"]


# --------------------------------------------------------------------------- examples


def _documented_commands() -> list[list[str]]:
    """The ``ccsim trace KIND ... -o traces/NAME`` commands of docs/traces.md (which
    test_readme.py runs too, comparing one file with the shipped one)."""
    lines = [line.strip() for line in DOCS.read_text().splitlines()]
    return [
        shlex.split(line)[1:]
        for line in lines
        if line.startswith("ccsim trace ") and " -o traces/" in line
    ]


def test_example_traces_are_what_the_documented_commands_write(tmp_path: Path, capsys):
    commands = _documented_commands()
    shipped = sorted(p.name for p in (EXAMPLES / "traces").iterdir())
    assert sorted(Path(c[-1]).name for c in commands) == shipped
    for command in commands:
        target = tmp_path / Path(command[-1]).name
        code, _, err = _cli(capsys, *command[:-1], str(target))
        assert code == 0, err
        assert target.read_bytes() == (EXAMPLES / "traces" / target.name).read_bytes()


def test_example_traces_read_back():
    constant = read_trace(EXAMPLES / "traces" / "constant-12mbps.trace")
    assert constant.mean_rate_bps == 12e6
    square = read_trace(EXAMPLES / "traces" / "square-24-6mbps.trace")
    assert square.mean_rate_bps == 15e6
    cellular = read_trace(EXAMPLES / "traces" / "cellular-outages.trace")
    assert len(traces.outages(cellular, 200)) >= 2


# --------------------------------------------------------------------------- plots


def test_run_plots_draw_a_trace_driven_capacity(tmp_path: Path):
    from ccsim.plots.run import capacity

    summary = {
        "duration_s": 8.05,
        "scenario_dir": str(EXAMPLES),
        "scenario": {"bottleneck": {"trace": "traces/square-24-6mbps.trace"}},
    }
    t, rate = capacity(None, summary)
    # 100 ms bins over 8.05 s, plus the closing point at the end: 2 s at 24 Mbit/s, 2 s
    # at 6, looped; the last bin is 50 ms long
    assert len(t) == 82 and t[-1] == 8.05
    assert t[:3].tolist() == pytest.approx([0.0, 0.1, 0.2])
    expected = ([24.0] * 20 + [6.0] * 20) * 2 + [24.0, 24.0]
    assert rate.tolist() == pytest.approx(expected)
    # a trace that cannot be read now: no line from the scenario (estimated from the
    # queue's departures when there are any, here none)
    summary["scenario"]["bottleneck"]["trace"] = str(tmp_path / "moved.trace")
    t, rate = capacity(None, summary)
    assert len(t) == 0


# ------------------------------------------------------------------ rate steps (issue 31)


def test_rate_steps_follow_the_trace_bins_and_drive_a_link(tmp_path: Path) -> None:
    """`ccsim trace rates` turns a trace into rate/rate_changes steps whose rates are the
    trace's opportunities per bin x 12,000 bit (Mahimahi's 1500-byte opportunities), zero
    in an outage; the shipped cellular example (driven by the trace itself) runs with
    utilisation at most 1."""
    import tomllib

    trace_file = REPO / "examples" / "traces" / "cellular-outages.trace"
    result = run_cli("trace", "rates", trace_file, "--duration", "20s")
    assert result.returncode == 0, result.stderr
    table = tomllib.loads(result.stdout)
    trace = traces.read_trace(trace_file)
    starts, mbps = traces.capacity_mbps(trace, 20.0, 0.1)
    # Expand the merged steps back to one rate per 100 ms bin and compare with the
    # opportunity counts of the trace itself.
    steps = [(0.0, float(table["rate"].removesuffix("bps")))] + [
        (int(c["at"].removesuffix("ms")) / 1000, float(c["rate"].removesuffix("bps")))
        for c in table["rate_changes"]
    ]
    per_bin = [next(r for t, r in reversed(steps) if t <= s + 1e-9) for s in starts]
    counts = trace.per_ms(20_000)
    for i, start in enumerate(starts[:50]):
        a = round(float(start) * 1000)
        opportunities = counts[a + 1 : a + 101].sum() + (counts[0] if a == 0 else 0)
        assert per_bin[i] == opportunities * 12_000 / 0.1
    assert min(per_bin) == 0.0  # the outages
    assert per_bin == [round(m * 1e6) for m in mbps]
    run = ccsim.run(REPO / "examples" / "cellular.toml")
    assert run.summary["bottleneck"]["utilisation"] <= 1.0
    assert {f["algorithm"] for f in run.summary["flows"]} == {"cubic", "bbr", "prague"}


def test_rate_steps_refuse_a_bin_longer_than_the_run() -> None:
    result = run_cli(
        "trace",
        "rates",
        REPO / "examples/traces/cellular-outages.trace",
        "--duration",
        "50ms",
        "--bin",
        "100ms",
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "--bin" in result.stderr
