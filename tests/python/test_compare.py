"""The ns-3 comparison without ns-3: the metrics computed from raw counts, the agreement
checks, the Markdown writer, and the scenario translation for both simulators, on
synthetic data. Nothing here compiles or runs ns-3."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

import ccsim
from ccsim_ns3 import agreement, causes, cli, matrix, metrics, model, report, runner, translate
from ccsim_ns3.metrics import RawRun


def raw(**kw) -> RawRun:
    base = dict(
        window_s=10.0,
        rate_bps=10e6,
        flow_bytes=[6_250_000.0, 5_000_000.0],
        flow_groups=[0, 1],
        departed_bytes=12_000_000.0,
        arrivals=8000,
        drops=80,
        marks=0,
        sojourn_ms=np.array([1.0, 2.0, 3.0, 4.0]),
        sojourn_weight=np.array([0.25, 0.25, 0.25, 0.25]),
        wall_s=0.5,
        events=1_000_000,
        bottleneck_packets=8000,
    )
    base.update(kw)
    return RawRun(**base)


def test_metrics_from_raw_counts():
    m = metrics.metrics(raw())
    assert m["flow_goodput_mbps"] == pytest.approx([5.0, 4.0])
    assert m["goodput_mbps"] == pytest.approx(9.0)
    assert m["utilisation"] == pytest.approx(0.96)
    assert m["group_share"] == pytest.approx([5 / 9, 4 / 9])
    assert m["jain"] == pytest.approx(81 / (2 * 41))
    assert m["sojourn_mean_ms"] == pytest.approx(2.5)
    assert m["sojourn_p50_ms"] == 2.0
    assert m["sojourn_p90_ms"] == 4.0
    assert m["drop_probability"] == pytest.approx(0.01)
    assert m["mark_probability"] == 0.0
    assert m["events_per_s"] == pytest.approx(2e6)
    assert m["packets_per_s"] == pytest.approx(16000)


def test_quantiles_follow_hdr_rule_and_both_inputs_agree():
    # The same distribution given as raw samples (ns-3) and as a CDF (ccsim's table).
    samples = np.array([5, 1, 3, 3, 2, 2, 2, 4, 1, 2]) * 1_000_000  # ns
    v1, w1 = metrics.distribution_from_samples(samples)
    values = [1.0, 2.0, 3.0, 4.0, 5.0]
    cdf = np.cumsum([2, 4, 2, 1, 1]) / 10
    v2, w2 = metrics.distribution_from_cdf(values, cdf)
    np.testing.assert_allclose(v1, v2)
    np.testing.assert_allclose(w1, w2)
    # smallest value whose cumulative probability reaches q
    assert metrics.quantile(v1, w1, 0.2) == 1.0
    assert metrics.quantile(v1, w1, 0.21) == 2.0
    assert metrics.quantile(v1, w1, 0.6) == 2.0
    assert metrics.quantile(v1, w1, 0.99) == 5.0
    assert math.isnan(metrics.quantile(np.zeros(0), np.zeros(0), 0.5))


def test_agreement_checks_apply_the_issue_targets():
    a = metrics.metrics(raw())
    # utilisation -1.5 pp, shares within 5%, p50 +0.5 ms (< 2 ms), drops +10%
    b = metrics.metrics(
        raw(
            departed_bytes=11_812_500.0,
            flow_bytes=[6_100_000.0, 5_000_000.0],
            sojourn_ms=np.array([1.5, 2.5, 3.5, 4.5]),
            drops=88,
        )
    )
    checks = {c.metric: c for c in metrics.compare_metrics(a, b, ["cubic", "dctcp"])}
    assert checks["utilisation"].ok is True
    assert checks["utilisation"].diff == "-1.50 pp"
    assert checks["goodput share cubic"].ok is True
    assert checks["sojourn p50"].ok is True
    assert checks["drop probability"].ok is True
    assert checks["sojourn mean"].ok is None  # reported, no target
    assert "mark probability" not in checks  # both zero: nothing to compare

    c = metrics.metrics(
        raw(
            departed_bytes=11_000_000.0,  # -8 pp
            flow_bytes=[4_000_000.0, 6_000_000.0],  # shares swap
            sojourn_ms=np.array([10.0, 20.0, 30.0, 40.0]),  # p50 20 vs 2 ms
            drops=200,
        )
    )
    checks = {c.metric: c for c in metrics.compare_metrics(a, c, ["cubic", "dctcp"])}
    assert not checks["utilisation"].ok
    assert not checks["goodput share cubic"].ok
    assert not checks["sojourn p50"].ok
    assert not checks["drop probability"].ok


def test_sojourn_tolerance_is_15_percent_or_2_ms():
    a = metrics.metrics(raw(sojourn_ms=np.array([40.0]), sojourn_weight=np.array([1.0])))
    ok = metrics.metrics(raw(sojourn_ms=np.array([45.9]), sojourn_weight=np.array([1.0])))
    bad = metrics.metrics(raw(sojourn_ms=np.array([46.1]), sojourn_weight=np.array([1.0])))
    assert {c.metric: c.ok for c in metrics.compare_metrics(a, ok, ["x"])}["sojourn p50"]
    assert not {c.metric: c.ok for c in metrics.compare_metrics(a, bad, ["x"])}["sojourn p50"]
    small = metrics.metrics(raw(sojourn_ms=np.array([1.0]), sojourn_weight=np.array([1.0])))
    near = metrics.metrics(raw(sojourn_ms=np.array([2.9]), sojourn_weight=np.array([1.0])))
    assert {c.metric: c.ok for c in metrics.compare_metrics(small, near, ["x"])}["sojourn p50"]


def _row(name: str, ok: bool, ratio: float, scale: bool = False) -> report.Row:
    sc = next(s for s in matrix.MATRIX if s.name == name)
    a = metrics.metrics(raw())
    b = metrics.metrics(raw(drops=80 if ok else 200, wall_s=0.5 * ratio))
    a["_duration_s"] = 60.0
    checks = metrics.compare_metrics(a, b, ["newreno"])
    return report.Row(sc, checks, a, b, metrics.speed_ratio(a, b), ["a note"])


def test_markdown_has_header_both_values_differences_and_explanations(tmp_path: Path):
    rows = [
        _row("reno-droptail-1bdp", ok=False, ratio=150),
        _row("reno-pie-1", ok=True, ratio=90),
    ]
    header = {"date": "2030-01-01 00:00 UTC", "machine": "test box", "ccsim": "9.9", "ns-3": "3.44"}
    out = tmp_path / "RESULTS.md"
    text = report.write_markdown(rows, header, out)
    assert out.read_text() == text
    assert "- **machine**: test box" in text
    assert "- **ns-3**: 3.44" in text
    assert "| scenario | metric | ccsim | ns-3 | ns-3 - ccsim | |" in text
    assert "| **reno-droptail-1bdp** | utilisation | 96.00% | 96.00% | +0.00 pp | ✅ |" in text
    assert "| drop probability | 1.000% (80) | 2.500% (200) | +150% | ❌ |" in text
    # speed: both wall times and the ratio against the target
    assert "| reno-droptail-1bdp | 60 s | 0.500 s | 75.00 s | 150\u00d7 | ≥ 100\u00d7 ✅ |" in text
    assert "| reno-pie-1 | 60 s | 0.500 s | 45.00 s | 90\u00d7 | ≥ 100\u00d7 ❌ |" in text
    assert "Below the speed target: reno-pie-1." in text
    # the failing row links to its cause (written once, in CAUSES.md), the passing one
    # has no entry
    assert "- **reno-droptail-1bdp** (drop probability): [ns3-rto](CAUSES.md#ns3-rto)" in text
    assert causes.CAUSES["ns3-rto"].text not in text
    assert "- **reno-pie-1** (" not in text
    assert "  - a note" in text
    for line in report.UNMATCHED:
        assert line in text


def test_every_scenario_translates_to_both_simulators(tmp_path: Path):
    names = set()
    for sc in matrix.MATRIX:
        names.add(sc.name)
        for quick in (False, True):
            scenario = translate.ccsim_scenario(sc, quick)
            ccsim.validate(scenario)  # a valid ccsim scenario
            assert len(scenario["flows"]) == sc.n_flows()
            cfg = translate.ns3_config(sc, quick, tmp_path / "o.json", tmp_path / "o.bin")
            flows = [line.split() for line in cfg.splitlines() if line.startswith("flow ")]
            assert len(flows) == sc.n_flows()
            # ccsim starts each flow one base RTT after ns-3 opens its connection
            for f, (g, start) in zip(scenario["flows"], model.flow_list(sc), strict=True):
                assert f["start"] == f"{start + g.rtt_ms / 1000:.9f}s"
            qdisc, _ = translate.ns3_queue_attrs(sc.queue)
            assert f"qdisc {qdisc}" in cfg
            assert f"qattr MaxSize {sc.queue.limit}" in cfg
            buf = int(next(x for x in cfg.splitlines() if x.startswith("buf_bytes")).split()[1])
            assert buf > 131072  # above ns-3's default socket buffer
    # the matrix of issue 5
    assert {"reno-droptail-1bdp", "reno-droptail-0.25bdp", "reno-pie-1", "reno-pie-5"} <= names
    assert {"reno-pie-15", "cubic-dctcp-red-step", "cubic-pie-50"} <= names
    assert {f"cubic-codel-ecn-{r}ms" for r in (20, 80, 160, 300)} <= names
    assert any(s.scale and s.n_flows() >= 200 and s.rate_mbps >= 1000 for s in matrix.MATRIX)


def test_pie_is_configured_as_linux_in_ns3():
    q = next(s for s in matrix.MATRIX if s.queue.kind == "pie").queue
    qdisc, attrs = translate.ns3_queue_attrs(q)
    a = dict(attrs)
    assert qdisc == "ns3::PieQueueDisc"
    assert a["UseDerandomization"] == "true"
    assert a["MaxBurstAllowance"] == "150ms"
    assert a["QueueDelayReference"] == "15ms"
    assert a["MaxSize"] == q.limit


def test_ns3_build_flags_from_the_wheels_cmake_config(tmp_path: Path, monkeypatch):
    # A fake wheel layout: the compile definitions come from ns3Targets.cmake.
    root = tmp_path / "ns3"
    cm = root / "lib64" / "cmake" / "ns3"
    cm.mkdir(parents=True)
    (root / "include").mkdir()
    (root / "lib64" / "libns3.44-core.so").write_text("")
    (cm / "ns3Targets.cmake").write_text(
        "add_library(ns3::core SHARED IMPORTED)\n"
        "set_target_properties(ns3::core PROPERTIES\n"
        '  INTERFACE_COMPILE_DEFINITIONS "PROJECT_SOURCE_PATH=\\"/x\\";NS3_BUILD_PROFILE_RELEASE;'
        'NS3_LOG_ENABLE"\n)\n'
    )

    class Dist:
        version = "3.44.post0"
        files = ("ns3/lib64/cmake/ns3/ns3Targets.cmake",)

        def locate_file(self, f):
            return tmp_path / str(f)

    import importlib.metadata as md

    monkeypatch.setattr(md, "distribution", lambda name: Dist())
    b = runner.find_ns3()
    assert b.root == root
    assert "NS3_BUILD_PROFILE_RELEASE" in b.defines
    assert 'PROJECT_SOURCE_PATH="/x"' in b.defines
    assert "-lns3.44-core" in b.libs and "-lns3.44-traffic-control" in b.libs


def test_missing_ns3_is_bad_input(monkeypatch, capsys):
    import importlib.metadata as md

    def missing(name):
        raise md.PackageNotFoundError(name)

    monkeypatch.setattr(md, "distribution", missing)
    assert cli.main(["--quick"]) == 2
    assert "pip install '.[ns3]'" in capsys.readouterr().err


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity here")
def test_both_simulators_are_pinned_to_one_cpu_and_released_after():
    allowed = os.sched_getaffinity(0)
    with runner.pinned_cpu(None) as cpu:
        assert cpu == max(allowed)
        assert os.sched_getaffinity(0) == {cpu}
    assert os.sched_getaffinity(0) == allowed
    with pytest.raises(runner.Ns3Unavailable, match="--cpu 100000"), runner.pinned_cpu(100000):
        pass
    assert os.sched_getaffinity(0) == allowed


# ---------------------------------------------------------------------------------------
# The agreement rule (ccsim_ns3.agreement), on hand-computed examples
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "df, t95, t99",
    # two-sided critical values of Student's t, from printed tables (e.g. Abramowitz &
    # Stegun table 26.10; NIST/SEMATECH e-Handbook 1.3.6.7.2)
    [
        (1, 12.706, 63.657),
        (2, 4.303, 9.925),
        (3, 3.182, 5.841),
        (4, 2.776, 4.604),
        (9, 2.262, 3.250),
        (10, 2.228, 3.169),
        (30, 2.042, 2.750),
        (100, 1.984, 2.626),
    ],
)
def test_t_quantile_matches_the_printed_tables(df, t95, t99):
    assert agreement.t_quantile(0.95, df) == pytest.approx(t95, abs=5e-4)
    assert agreement.t_quantile(0.99, df) == pytest.approx(t99, abs=5e-4)
    # and P(|T| <= t) is the probability it inverts (df 1 is Cauchy: 2 atan(t) / pi)
    assert agreement.t_two_sided_probability(1.0, 1) == pytest.approx(0.5)
    assert agreement.t_two_sided_probability(agreement.t_quantile(0.95, df), df) == (
        pytest.approx(0.95, abs=1e-10)
    )
    with pytest.raises(ValueError, match="whole number"):
        agreement.t_two_sided_probability(1.0, 2.5)


def test_paired_interval_is_students_t_by_hand():
    # pairs' differences 1, 2, 3, 6: mean 3, squared deviations 4 + 1 + 0 + 9 = 14,
    # s = sqrt(14 / 3), half-width t(0.975, 3) s / sqrt(4) = 3.18245 * 2.16025 / 2
    d = agreement.mean_difference([10.0, 10.0, 10.0, 10.0], [11.0, 12.0, 13.0, 16.0])
    assert d.n == 4 and d.diff == pytest.approx(3.0)
    assert d.half_width == pytest.approx(3.182446 * math.sqrt(14 / 3) / 2, rel=1e-6)
    assert d.half_width == pytest.approx(3.4374, abs=1e-4)
    assert (d.low, d.high) == pytest.approx((3 - 3.4374, 3 + 3.4374), abs=1e-4)
    # in another unit (a fraction as %)
    assert agreement.mean_difference([0.1, 0.2], [0.2, 0.4], scale=100).diff == pytest.approx(15)
    # one pair: no interval
    one = agreement.mean_difference([1.0], [3.0])
    assert one.half_width is None and one.low is None and one.diff == 2.0
    # zero variance: width 0
    flat = agreement.mean_difference([1.0, 2.0, 3.0], [1.5, 2.5, 3.5])
    assert flat.diff == pytest.approx(0.5) and flat.half_width == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="as many runs"):
        agreement.mean_difference([1.0, 2.0], [1.0])


def test_relative_interval_is_the_delta_method_by_hand():
    # mean shares 0.5 (ccsim) and 0.53 (ns-3): R = 0.06. Each pair's influence on R is
    # (ns_i - 1.06 cc_i) / 0.5 = 0.032, -0.020, -0.012 (mean 0); s^2 = (0.032^2 + 0.02^2 +
    # 0.012^2) / 2 = 0.000784, s = 0.028; half-width t(0.975, 2) s / sqrt(3) = 4.302653 *
    # 0.028 / 1.732051 = 0.069556
    d = agreement.relative_difference([0.40, 0.50, 0.60], [0.44, 0.52, 0.63])
    assert d.diff == pytest.approx(0.06)
    assert d.half_width == pytest.approx(4.302653 * 0.028 / math.sqrt(3), rel=1e-6)
    # ratios of sums: drops 10 + 30 of 1000 + 2000 arrivals (ccsim), 12 + 30 (ns-3):
    # P = 40/3000 and 42/3000, R = 0.05; influences on log P, (x_i - P a_i) / (P mean(a)):
    # ccsim (10 - 13.333) / 20 = -1/6 and +1/6, ns-3 (12 - 14) / 21 = -2/21 and +2/21;
    # R's: 1.05 (2/21 - 1/6) (sign alternating) = -+0.075; s = 0.075 sqrt(2),
    # half-width t(0.975, 1) s / sqrt(2) = 12.706205 * 0.075
    p = agreement.relative_difference([10, 30], [12, 30], [1000, 2000], [1000, 2000])
    assert p.diff == pytest.approx(0.05)
    assert p.half_width == pytest.approx(12.706205 * 0.075, rel=1e-6)
    # with equal denominators it is the paired t interval of the per-run relative
    # differences (here 0.2 and 0.4)
    q = agreement.relative_difference([10, 10], [12, 14], [1000, 1000], [1000, 1000])
    plain = agreement.mean_difference([0.0, 0.0], [0.2, 0.4])
    assert (q.diff, q.half_width) == pytest.approx((plain.diff, plain.half_width))
    # no drops on the reference side: infinite; none on the other: -100 %, width 0
    assert math.isinf(agreement.relative_difference([0, 0], [1, 2], [9, 9], [9, 9]).diff)
    zero = agreement.relative_difference([3, 5], [0, 0], [90, 99], [90, 99])
    assert (zero.diff, zero.half_width) == (-1.0, 0.0)
    both = agreement.relative_difference([0, 0], [0, 0], [9, 9], [9, 9])
    assert (both.diff, both.half_width) == (0.0, 0.0)


@pytest.mark.parametrize(
    "diff, half_width, verdict",
    [
        # tolerance 2 (utilisation, pp): the band is [-2, 2], three bands are 12 wide
        (1.5, 10.0, agreement.WITHIN),  # within the target, however wide the interval
        (-2.0, None, agreement.WITHIN),  # on the edge
        (2.5, 1.0, agreement.OVERLAP),  # outside; [1.5, 3.5] overlaps, 2 <= 12 wide
        (-5.0, 3.0, agreement.OVERLAP),  # outside; [-8, -2] touches the band, 6 wide
        (2.5, 6.0, agreement.OVERLAP),  # [-3.5, 8.5]: exactly three bands wide
        (2.5, 6.5, agreement.OUTSIDE),  # overlaps, but 13 > 12 wide
        (5.0, 2.0, agreement.OUTSIDE),  # [3, 7] does not reach the band
        (2.5, None, agreement.OUTSIDE),  # one pair: the target alone
        (2.5, 0.0, agreement.OUTSIDE),  # zero variance: the target alone
        (math.nan, 1.0, agreement.OUTSIDE),
        (math.inf, math.inf, agreement.OUTSIDE),
    ],
)
def test_agreement_rule(diff, half_width, verdict):
    assert agreement.verdict(diff, 2.0, half_width) == verdict
    assert agreement.agrees(diff, 2.0, half_width) == (verdict != agreement.OUTSIDE)


def _run(util=0.95, drops=10, arrivals=1000, p50=10.0, p90=20.0, shares=(0.5, 0.5)):
    return {
        "utilisation": util,
        "group_share": list(shares),
        "sojourn_p50_ms": p50,
        "sojourn_p90_ms": p90,
        "drops": drops,
        "marks": 0,
        "arrivals": arrivals,
    }


def test_differences_apply_the_rule_to_paired_runs_by_hand():
    cc = [_run(util=0.95) for _ in range(4)]

    def util(ns_pp):
        ns = [_run(util=0.95 + x / 100) for x in ns_pp]
        return metrics.differences(cc, ns)["utilisation"]

    # within the target: +1 pp in every pair (zero variance)
    u = util([1, 1, 1, 1])
    assert u["verdict"] == agreement.WITHIN and u["half_width"] == pytest.approx(0, abs=1e-9)
    # outside (+3 pp) but the interval 3 -+ 3.437 overlaps [-2, 2] and is 3.437 <= 6 wide
    u = util([1, 2, 3, 6])
    assert u["diff"] == pytest.approx(3.0) and u["half_width"] == pytest.approx(3.4374, abs=1e-4)
    assert u["verdict"] == agreement.OVERLAP and u["tolerance"] == 2.0 and u["n"] == 4
    # +4 pp, differences 1, 2, 3, 10: s = sqrt(50 / 3), half-width 3.18245 * 4.0825 / 2 =
    # 6.496 > 3 x 2: overlapping but too wide
    u = util([1, 2, 3, 10])
    assert u["half_width"] == pytest.approx(3.182446 * math.sqrt(50 / 3) / 2, rel=1e-5)
    assert u["verdict"] == agreement.OUTSIDE
    # +5.75 pp, differences 5, 5.5, 6, 6.5: half-width 3.18245 * sqrt(1.25 / 3) / 2 = 1.027,
    # [4.72, 6.78] does not reach 2
    u = util([5, 5.5, 6, 6.5])
    assert u["half_width"] == pytest.approx(1.0271, abs=1e-4)
    assert u["verdict"] == agreement.OUTSIDE
    # one pair: the target alone
    one = metrics.differences(cc[:1], [_run(util=0.98)])["utilisation"]
    assert one["half_width"] is None and one["verdict"] == agreement.OUTSIDE
    # the drop probability from summed counts: 40 and 42 drops of 3000 arrivals, +5 %
    d = metrics.differences(
        [_run(drops=10, arrivals=1000), _run(drops=30, arrivals=2000)],
        [_run(drops=12, arrivals=1000), _run(drops=30, arrivals=2000)],
    )["drop probability"]
    assert d["diff"] == pytest.approx(5.0) and d["half_width"] == pytest.approx(95.2965, abs=1e-3)
    assert d["verdict"] == agreement.WITHIN and d["tolerance"] == 20.0
    # the sojourn band is 15 % of ccsim's mean quantile or 2 ms: 20 ms -> 3 ms
    p90 = metrics.differences(cc, [_run(p90=23.5 + x) for x in (-1, 0, 0, 1)])["sojourn p90"]
    assert p90["tolerance"] == pytest.approx(3.0) and p90["verdict"] == agreement.OVERLAP


def test_agreement_module_knows_nothing_of_ns3():
    """The rule is for any paired comparison (bench/LINUX.md too): its module imports the
    standard library and numpy only, nothing of the harness."""
    import ast

    tree = ast.parse(Path(agreement.__file__).read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, "a relative import"
            imported.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            imported.update(a.name.split(".")[0] for a in node.names)
    assert imported <= {"__future__", "math", "collections", "dataclasses", "numpy"}


def test_relative_interval_covers_at_about_its_level():
    """Coverage of the delta-method interval where the truth is known: two sides with
    the same expected share, each run's share 20 % apart at random (the few-flow spread of
    the differential), 5 pairs; and drop counts (Poisson, run-to-run rates log-normal with
    a 20 % spread shared in part by the pair) over unequal arrivals."""
    rng = np.random.default_rng(7)
    k = 1000
    covered = 0
    for _ in range(k):
        cc, ns = (np.clip(0.4 * (1 + rng.normal(0, 0.2, 5)), 0.01, 0.99) for _ in range(2))
        d = agreement.relative_difference(cc, ns)
        covered += abs(d.diff) <= d.half_width
    assert 0.92 <= covered / k <= 0.975
    covered = 0
    for _ in range(k):
        arrivals = rng.integers(5_000, 50_000, 5)
        shared = np.exp(rng.normal(0, 0.1, 5))
        cc, ns = (
            rng.poisson(0.01 * shared * np.exp(rng.normal(0, 0.2, 5)) * arrivals) for _ in range(2)
        )
        d = agreement.relative_difference(cc, ns, arrivals, arrivals)
        covered += abs(d.diff) <= d.half_width
    assert 0.89 <= covered / k <= 0.975
