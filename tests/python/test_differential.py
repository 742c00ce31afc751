"""Randomised differential testing without ns-3: the scenario generator (seeded,
deterministic, only combinations both simulators support), the translation of drawn
scenarios to both simulators, and the report writer on synthetic results. The one test
that runs ns-3 skips when the ns3 wheel is absent."""

from __future__ import annotations

import math
import random
import subprocess
import sys

import pytest

import ccsim
from ccsim_ns3 import (
    agreement,
    causes,
    cli,
    differential,
    differential_report,
    draws,
    matrix,
    metrics,
    model,
    probes,
    runner,
    translate,
)
from helpers import REPO, CliResult


def run_harness(*args: object) -> CliResult:
    """``python bench/compare.py ARGS``, the harness's command line, as a user runs it."""
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "compare.py"), *map(str, args)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=600,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


def test_draw_is_deterministic_and_prefix_stable():
    a = draws.draw(12, seed=5)
    b = draws.draw(12, seed=5)
    assert [d.scenario for d in a] == [d.scenario for d in b]
    # scenario i depends on (seed, i) only: the first 4 of 12 are the 4 of a draw of 4
    assert [d.scenario for d in draws.draw(4, seed=5)] == [d.scenario for d in a[:4]]
    assert [d.scenario for d in draws.draw(12, seed=6)] != [d.scenario for d in a]


def test_draw_stays_in_the_supported_space():
    drawn = draws.draw(200, seed=1)
    for d in drawn:
        assert draws.validate(d.scenario) == [], (d.scenario.name, draws.validate(d.scenario))
    kinds = {d.params["aqm"] for d in drawn}
    assert kinds == set(draws.AQMS)
    assert any(d.params["shaper"] for d in drawn)
    assert any(d.params["udp"] for d in drawn)
    assert any(d.params["mixed_rtt"] for d in drawn)
    assert any("dctcp" in d.params["cc"] for d in drawn)
    assert any(d.params["ecn"] for d in drawn) and not all(d.params["ecn"] for d in drawn)
    for d in drawn:
        sc = d.scenario
        # DCTCP only with ECN step marking; ECN flows only over an ECN queue
        for g in sc.flows:
            if g.cc == "dctcp":
                assert g.ecn and sc.queue.ecn and sc.queue.kind == "red_step"
        # groups are distinct (identical flows form one group)
        keys = [(g.cc, g.rtt_ms, g.ecn) for g in sc.flows]
        assert len(keys) == len(set(keys))
        # bounded run length
        pps = (sc.queue.shaper_mbps or sc.rate_mbps) * 1e6 / 8 / model.WIRE_PACKET_BYTES
        assert pps * sc.duration_s <= draws.MAX_PACKETS * 1.001
        assert sc.duration_s <= draws.MAX_DURATION_S
        assert sc.measure[0] < sc.measure[1] == sc.duration_s


def test_validate_rejects_unsupported_combinations():
    sc = draws.draw(1, seed=3)[0].scenario
    from dataclasses import replace

    bad = replace(
        sc,
        flows=(model.FlowGroup("dctcp", 20, count=2, ecn=True),),
        queue=model.Queue("pie", "1000p"),
    )
    assert "DCTCP without ECN step marking" in draws.validate(bad)
    bad = replace(sc, flows=(model.FlowGroup("vegas", 20),))
    assert any("cc vegas" in x for x in draws.validate(bad))
    bad = replace(sc, queue=model.Queue("droptail", "10p", ecn=True))
    assert "ECN DropTail" in draws.validate(bad)


def test_fq_hash_seed_is_collision_free_in_ccsim():
    for n in (1, 2, 17, 51):
        seed = draws.fq_hash_seed(n)
        assert len({draws.fq_bucket(i, seed) for i in range(n)}) == n
    # the Python replica of ccsim's SplitMix64 (engine/rng.rs) on a known value
    assert draws.splitmix64(0) == 0xE220A8397B1DCDAF


def test_duration_rule():
    assert draws.duration_for(1e6 / 12000) == draws.MAX_DURATION_S  # 1 Mbps: as long as allowed
    assert draws.duration_for(20e6 / 12000) == draws.MAX_DURATION_S  # 20 Mbps: 60 s, 100 k packets
    assert draws.duration_for(100e6 / 12000) == draws.DURATION_S  # 100 Mbps: nominal
    d = draws.duration_for(1e9 / 12000)  # 1 Gbps: capped in packets
    assert d * 1e9 / 12000 <= draws.MAX_PACKETS


def test_drawn_scenarios_translate_and_run_in_ccsim():
    for d in draws.draw(60, seed=1):
        sc = d.scenario
        cfg = translate.ns3_config(sc, False, "/tmp/x.json", "/tmp/x.sojourn")  # type: ignore[arg-type]
        assert cfg.count("\nflow ") == sc.n_flows()
        assert cfg.count("\nudp ") == len(sc.udp)
        assert "default ns3::CoDelQueueDisc::MinBytes 1501" in cfg
        corrections = ["prr64 2", "rto_linux 1", "recovery_exit_linux 1", "reno_cnt_linux 1"]
        corrections += ["ce_quickack_linux 1", "device_pull 1"]
        assert "\n".join(corrections) + "\n" in cfg
        # the device pulls, so ns-3's DropTail and RED get ccsim's limits as they are
        if sc.queue.kind == "droptail":
            assert f"qattr MaxSize {sc.queue.limit}\n" in cfg
        if sc.queue.kind == "red_step":
            assert f"qattr MinTh {sc.queue.threshold_p}\n" in cfg
        # Linux's qdisc-wide backlog test in ns-3's FQ-CoDel where it marks (with ECN)
        total = "fqcodel_total_min_bytes 1501\n" in cfg
        assert total == (sc.queue.kind == "fq_codel" and sc.queue.ecn)
        # Linux's clearing of PIE's accumulated probability on a coin-toss mark
        assert ("pie_accu_linux 1\n" in cfg) == (sc.queue.kind == "pie")
        assert "ece_latch_linux 1\n" in cfg  # Linux's ECE latch on the receivers
    # a short run of the slowest-link drawn scenario with UDP and a shaper, if any
    d = next(d for d in draws.draw(60, seed=1) if d.params["udp"])
    scen = translate.ccsim_scenario(d.scenario, False)
    scen["duration"] = "2s"
    scen["measure"] = {"start": "1s", "end": "2s"}
    r = ccsim.run(scen)
    assert any(f["protocol"] == "udp" for f in r.summary["flows"])


def _cc(util=0.95, p50=10.0, p90=20.0, drop=0.01, mark=0.0, shares=(0.5, 0.5), wall=0.01):
    return {
        "utilisation": util,
        "group_share": list(shares),
        "goodput_mbps": 9.0,
        "flow_goodput_mbps": [4.5, 4.5],
        "jain": 1.0,
        "sojourn_mean_ms": p50,
        "sojourn_p50_ms": p50,
        "sojourn_p90_ms": p90,
        "sojourn_p99_ms": p90,
        "drop_probability": drop,
        "mark_probability": mark,
        "drops": int(drop * 1000),
        "marks": int(mark * 1000),
        "arrivals": 1000,
        "wall_s": wall,
        "events": 1,
        "bottleneck_packets": 1000,
        "_extra": {"retransmits": 1, "timeouts": 0},
    }


def test_differences_and_targets():
    d = draws.Drawn(draws.draw(1, seed=2)[0].scenario, draws.draw(1, seed=2)[0].params)
    ok = differential.make_result(d, _cc(), _cc(wall=1.0))
    assert ok.ok and ok.ratio == pytest.approx(100)
    assert ok.diffs["utilisation"]["diff"] == 0
    bad = differential.make_result(d, _cc(), _cc(util=0.90, p90=30.0, drop=0.02, wall=1.0))
    assert {"utilisation", "sojourn p90", "drop probability"} <= set(bad.failed)
    assert bad.diffs["utilisation"]["diff"] == pytest.approx(-5.0)
    assert bad.diffs["utilisation"]["norm"] == pytest.approx(-2.5)
    assert bad.diffs["drop probability"]["diff"] == pytest.approx(100.0)
    assert "mark probability" not in bad.diffs  # neither marked
    inf = metrics.differences([_cc(drop=0.0)], [_cc(drop=0.01)])
    assert math.isfinite(inf["drop probability"]["norm"])


def test_report_states_the_fraction_and_links_causes(tmp_path):
    drawn = draws.draw(4, seed=3)
    results = []
    for i, d in enumerate(drawn):
        ns = _cc(wall=1.0) if i % 2 == 0 else _cc(util=0.85, wall=2.0)
        results.append(differential.make_result(d, _cc(), ns))
    results[1].causes = ["ns3-rto"]
    header = {"date": "today", "machine": "m", "ccsim": "x", "ns-3": "3.44", "requested": 60}
    text = differential_report.write_markdown(results, header, tmp_path / "DIFFERENTIAL.md")
    assert "50 % of the random scenarios agree on every metric" in text
    assert "4 run of 60 requested" in text
    assert "minimum 100\u00d7, median 150\u00d7" in text
    assert "[ns3-rto](CAUSES.md#ns3-rto)" in text
    assert "not yet explained" in text  # results[3] has no cause
    assert (tmp_path / "differential" / "utilisation.png").exists()
    # bench/CAUSES.md (hand-written) defines each cause once, with an anchor
    causes_md = causes.CAUSES_FILE.read_text()
    for key in causes.CAUSES:
        assert causes_md.count(f'<a id="{key}"></a>') == 1
    # every cause a matrix row or a rule refers to exists
    for keys, _ in matrix.EXPLANATIONS.values():
        assert set(keys) <= set(causes.CAUSES)
    assert {k for k, _ in differential.CAUSE_RULES} <= set(causes.CAUSES)


def test_cli_parses_random():
    p = cli.build_parser()
    a = p.parse_args(["--random"])
    assert a.random == 60 and a.seed == 1 and a.replicates is None  # per scenario
    a = p.parse_args(["--random", "5", "--seed", "9", "--replicates", "1"])
    assert a.random == 5 and a.seed == 9 and a.replicates == 1


def test_replicates_fit_a_packet_budget():
    # Paired runs per scenario: as many as fit in 900 k bottleneck packets, 3 to 10; a
    # count asked for is used as it is.
    by_pkts = {}
    for d in draws.draw(60, 1):
        sc = d.scenario
        pps = (sc.queue.shaper_mbps or sc.rate_mbps) * 1e6 / 8 / model.WIRE_PACKET_BYTES
        by_pkts[sc.name] = (
            pps * sc.duration_s,
            draws.replicates_for(sc),
            draws.replicates_for(sc, 1),
        )
    for pkts, reps, fixed in by_pkts.values():
        assert fixed == 1
        assert draws.REPLICATES <= reps <= draws.MAX_REPLICATES
        assert reps == max(3, min(10, int(900_000 // pkts)))
    # r1-37 (1.1 Mbps for 60 s, 5.5 k packets) gets 10; r1-09 (240 Mbps, 300 k) 3.
    assert by_pkts["r1-37"][1] == 10 and by_pkts["r1-09"][1] == 3
    assert by_pkts["r1-31"][1] == 6  # 41 Mbps for 43.9 s: 150 k packets


@pytest.mark.parametrize(
    "args, message",
    [
        (["--replicates", "0"], "argument --replicates: must be at least 1, got 0"),
        (["--replicates", "x"], "argument --replicates: expected a whole number, got 'x'"),
    ],
)
def test_cli_rejects_nonsense_counts(args, message, tmp_path):
    """argparse's usage and one error line naming the option, exit status 2, nothing
    written (checked before any build or run)."""
    out = tmp_path / "D.md"
    result = run_harness("--random", "5", *args, "-o", out)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines()[-1].endswith(message)
    assert not out.exists()
    result = run_harness("--random", "0", "-o", out)
    assert result.returncode == 2
    assert (
        result.stderr.strip()
        .splitlines()[-1]
        .endswith("argument --random: must be at least 1, got 0")
    )


def test_pool_means_the_rates_and_sums_the_counts():
    a = _cc(util=0.90, p50=10.0, p90=20.0, drop=0.01, shares=(0.2, 0.8), wall=2.0)
    b = _cc(util=0.96, p50=14.0, p90=30.0, drop=0.04, shares=(0.4, 0.6), wall=9.0)
    b["arrivals"] = 3000
    b["drops"] = 120
    b["_extra"] = {"retransmits": 7, "timeouts": 2}
    m = differential.pool([a, b])
    assert m["utilisation"] == pytest.approx(0.93)
    assert m["group_share"] == pytest.approx([0.3, 0.7])
    assert (m["sojourn_p50_ms"], m["sojourn_p90_ms"]) == pytest.approx((12.0, 25.0))
    # probabilities from the summed counts: (10 + 120) / (1000 + 3000), not the mean
    assert (m["drops"], m["arrivals"]) == (130, 4000)
    assert m["drop_probability"] == pytest.approx(130 / 4000)
    assert m["_extra"]["retransmits"] == 8 and m["_extra"]["timeouts"] == 2
    assert m["wall_s"] == 2.0  # the default (first) run's, for the speed ratio
    assert differential.pool([a]) is a


def test_paired_runs_decide_the_row_and_the_single_runs_are_reported(tmp_path):
    d = draws.draw(1, seed=2)[0]
    # one unlucky default pair (ns-3 5 pp below), two pairs that agree: the means agree
    cc_runs = [_cc(util=0.95), _cc(util=0.93), _cc(util=0.97)]
    ns_runs = [_cc(util=0.90, wall=1.0), _cc(util=0.955), _cc(util=0.985)]
    r = differential.make_result(
        d, differential.pool(cc_runs), differential.pool(ns_runs), runs=(cc_runs, ns_runs)
    )
    assert r.ok and r.single_failed == ["utilisation"]
    assert [x["utilisation"] for x in r.replicates["ns3"]] == [0.90, 0.955, 0.985]
    header = {"requested": 1, "replicates": 3}
    text = differential_report.write_markdown([r], header, tmp_path / "D.md", plots=False)
    assert "100 % of the random scenarios agree on every metric" in text
    assert "mean over 3 paired runs" in text
    assert (
        "On the default runs alone, one run each (no interval: the targets alone): 0 % "
        "within every target (0 of 1)" in text
    )


def _paired(utils_pp, base=0.95):
    """ccsim runs at ``base`` and ns-3 runs ``utils_pp`` percentage points from it."""
    cc_runs = [_cc(util=base) for _ in utils_pp]
    ns_runs = [_cc(util=base + x / 100, wall=1.0) for x in utils_pp]
    return cc_runs, ns_runs


def test_a_row_agrees_by_its_interval_only_when_narrow_enough(tmp_path):
    d = draws.draw(1, seed=2)[0]
    rows = []
    # +3 pp (outside 2 pp): differences 1, 2, 3, 6 give 3 -+ 3.44, overlapping, narrow
    # enough; 1, 2, 3, 10 give 4 -+ 6.50, overlapping, wider than three bands; 5 to 6.5
    # give 5.75 -+ 1.03, not reaching the band
    for pp in ([1, 2, 3, 6], [1, 2, 3, 10], [5, 5.5, 6, 6.5]):
        cc_runs, ns_runs = _paired(pp)
        rows.append(
            differential.make_result(
                d, differential.pool(cc_runs), differential.pool(ns_runs), runs=(cc_runs, ns_runs)
            )
        )
    narrow, wide, apart = rows
    assert narrow.ok and narrow.diffs["utilisation"]["verdict"] == agreement.OVERLAP
    assert narrow.single_failed == []  # the default pair alone, +1 pp: within the target
    assert wide.failed == ["utilisation"] and apart.failed == ["utilisation"]
    assert wide.single_failed == [] and apart.single_failed == ["utilisation"]
    # the pooled figures against the targets alone (stored as checks) say outside for all
    assert all(not c["ok"] for r in rows for c in r.checks if c["metric"] == "utilisation")
    text = differential_report.write_markdown(
        rows, {"requested": 3, "replicates": 4}, tmp_path / "D.md", plots=False
    )
    assert "33 % of the random scenarios agree on every metric** (1 of 3)" in text
    assert "by their paired means alone 0 % are within every target (0 of 3)" in text
    assert "**Agreement rule**" in text and "no wider than 3 times that band" in text
    # every difference has its interval beside it, marked by its verdict
    assert "| +3.00 [-0.44, +6.44] † |" in text
    assert "| **+4.00 [-2.50, +10.50]** ❌ |" in text
    assert "| **+5.75 [+4.72, +6.78]** ❌ |" in text
    assert "| utilisation | pp | 3 | 1 (33 %) | 0 (0 %) |" in text


def test_rerender_scores_stored_rows_again_under_the_rule(tmp_path):
    """A row stored under the fixed targets (diffs without intervals, failed by the
    pooled means) is scored again from its stored paired runs."""
    d = draws.draw(1, seed=2)[0]
    cc_runs, ns_runs = _paired([1, 2, 3, 6])
    r = differential.make_result(
        d, differential.pool(cc_runs), differential.pool(ns_runs), runs=(cc_runs, ns_runs)
    )
    r.diffs = {"utilisation": {"diff": 3.0, "norm": 1.5}}  # as stored before issue 35
    r.failed = ["utilisation"]
    r.probes = {"perturbed": {"runs": 8, "within": []}}  # no probe to rerun
    runs_json = tmp_path / "differential" / "runs.json"
    differential.save_results([r], runs_json, {"n": 1, "seed": 2, "header": {}})
    out = tmp_path / "DIFFERENTIAL.md"
    (again,) = differential.rerender(runs_json, out, probes="none")
    assert again.ok and again.diffs["utilisation"]["half_width"] == pytest.approx(3.4374, abs=1e-4)
    assert "100 % of the random scenarios agree on every metric" in out.read_text()
    stored, _ = differential.load_results(runs_json)
    assert (
        stored[0].failed == [] and stored[0].diffs["utilisation"]["verdict"] == "interval overlaps"
    )


def test_a_counterfactual_miss_on_a_metric_agreeing_by_its_interval_is_not_new():
    d = draws.draw(1, seed=2)[0]
    cc_runs, ns_runs = _paired([1, 2, 3, 6])  # utilisation agrees by its interval
    for ns in ns_runs:
        ns["drops"], ns["drop_probability"] = 20, 0.02  # +100 %: disagrees
    r = differential.make_result(
        d, differential.pool(cc_runs), differential.pool(ns_runs), runs=(cc_runs, ns_runs)
    )
    assert r.failed == ["drop probability"]
    # the counterfactual run (one run: the targets alone) removes the drop miss and is
    # outside on utilisation, which the row has outside its target too: not a new miss
    r.probes = {
        "counterfactual": {
            "x": {"causes": ["ns3-fqcodel-flow-backlog"], "outside": ["utilisation"]}
        }
    }
    rule = differential.CAUSE_RULES_BY_KEY["ns3-fqcodel-flow-backlog"]
    assert rule(d.scenario, r) == {"drop probability"}
    r.probes["counterfactual"]["x"]["outside"] = ["sojourn p50"]  # within in the row: new
    assert rule(d.scenario, r) == frozenset()


def test_two_cpu_runner_pairs_each_default_run_with_its_replicates(monkeypatch, tmp_path):
    """The runner's bookkeeping, with both simulators stubbed: every scenario's default
    run (with ccsim's timed runs) comes before its paired runs, a scenario whose default
    run fails gets no paired runs, one whose paired run fails is not complete, and no
    new scenario starts after the budget."""
    drawn = draws.draw(4, seed=5)
    calls: list[tuple[str, str]] = []

    def fake_ns3(sc, quick, exe, work, timeout_s=None, patch_config=None, tag=""):
        calls.append((sc.name, tag))
        if sc.name == drawn[1].scenario.name and not tag:
            raise RuntimeError("ns-3 run stopped after 600 s")
        if sc.name == drawn[2].scenario.name and tag == ".1":
            raise RuntimeError("ns-3 run failed (6)")
        return _cc()

    monkeypatch.setattr(runner, "run_ns3", fake_ns3)
    monkeypatch.setattr(runner, "run_ccsim", lambda sc, quick, like=None: ("result", [0.01]))
    lines: list[str] = []
    # scenario 0 has 4 paired runs, the others 3: each gets its own count
    reps = [4, 3, 3, 3]
    ns3_runs = runner.ParallelNs3Runs(
        drawn, tmp_path / "x", tmp_path, reps, [None, None], lines.append, None
    )
    ns3_runs.run()
    assert [ns3_runs.complete(i) for i in range(4)] == [True, False, False, True]
    for d in drawn:
        tags = [t for n, t in calls if n == d.scenario.name]
        assert tags[0] == ""  # the default run first
    assert [t for n, t in calls if n == drawn[1].scenario.name] == [""]
    assert sorted(t for n, t in calls if n == drawn[3].scenario.name) == ["", ".0", ".1"]
    assert sorted(t for n, t in calls if n == drawn[0].scenario.name) == ["", ".0", ".1", ".2"]
    assert set(ns3_runs.errors) == {1, 2}
    late = runner.ParallelNs3Runs(
        drawn, tmp_path / "x", tmp_path, [2] * 4, [None], lines.append, -1.0
    )
    late.run()
    assert late.skipped == {0, 1, 2, 3} and not any(late.complete(i) for i in range(4))


def _ns3_installed() -> bool:
    import importlib.metadata as md

    try:
        md.distribution("ns3")
    except md.PackageNotFoundError:
        return False
    return True


@pytest.mark.skipif(not _ns3_installed(), reason="ns-3 (pip install '.[ns3]') is not installed")
def test_one_random_scenario_in_both_simulators(tmp_path):  # pragma: no cover - needs ns-3
    try:
        build = runner.find_ns3()
        source = runner.find_source()
    except runner.Ns3Unavailable as exc:
        pytest.skip(str(exc))
    d = min(draws.draw(60, seed=1), key=lambda d: d.scenario.rate_mbps * d.scenario.duration_s)
    exe = runner.build_ns3_program(build, source, tmp_path / "dumbbell")
    res, walls = runner.run_ccsim(d.scenario, False, repeats=1)
    cc = runner.ccsim_metrics(d.scenario, res, walls)
    ns = runner.run_ns3(d.scenario, False, exe, tmp_path)
    r = differential.make_result(d, cc, ns)
    assert set(r.diffs) >= {"utilisation", "sojourn p50", "sojourn p90"}


@pytest.mark.skipif(not _ns3_installed(), reason="ns-3 (pip install '.[ns3]') is not installed")
def test_ns3_corrections_take_effect(tmp_path):  # pragma: no cover - needs ns-3
    """The harness's corrections of ns-3 act in ns-3 itself (dumbbell.cc's counters), on
    two cheap drawn scenarios shortened to 10 s: r1-56 (PIE+ECN, 4.7 Mbps) and r1-35
    (FQ-CoDel+ECN, 1.5 Mbps)."""
    from dataclasses import replace

    try:
        build = runner.find_ns3()
        source = runner.find_source()
    except runner.Ns3Unavailable as exc:
        pytest.skip(str(exc))
    exe = runner.build_ns3_program(build, source, tmp_path / "dumbbell")
    drawn = {d.scenario.name: d.scenario for d in draws.draw(60, seed=1)}
    checks = {}
    for name in ("r1-56", "r1-35"):
        sc = replace(drawn[name], duration_s=10.0, measure=(5.0, 10.0))
        checks[name] = runner.run_ns3(sc, False, exe, tmp_path)["_extra"]["checks"]
    for ch in checks.values():
        # device_pull: every packet on the wire was pulled by a wake our callback ran
        # when the wire was idle, and the wake ns-3 schedules as a packet leaves the
        # device queue was refused while the wire was busy (one each per packet)
        assert ch["device_pull_wakes"] > 1000
        assert abs(ch["device_pull_held"] - ch["device_pull_wakes"]) <= 1
        assert ch["device_queue_drops"] == 0 and ch["sojourn_mismatch"] == 0
    assert checks["r1-56"]["pie_accu_clears"] > 0  # coin-toss marks clear the accumulator
    assert checks["r1-56"]["cwr_quick_acks"] > 0  # CWR data segments ACKed at once
    assert checks["r1-35"]["fqcodel_total_updates"] > 0  # flows' MinBytes follow the qdisc


def test_cause_rules_cover_the_metrics_they_explain():
    from dataclasses import replace

    d = draws.draw(1, seed=4)[0]
    sc = replace(
        d.scenario,
        rate_mbps=20,
        queue=model.Queue(
            "codel", "1000p", target_ms=5, interval_ms=100, shaper_mbps=8, shaper_burst_bytes=10_000
        ),
        duration_s=60,
        measure=(20, 60),
    )
    dd = draws.Drawn(sc, d.params)
    # a longer queue in ns-3 behind the token bucket, and 20 against 25 drops: since ccsim's
    # shaper holds the peek-dequeued packet as Linux and ns-3 do, a token bucket explains
    # nothing by itself (ns3-tbf-peek is fixed), so the delay gaps stay unexplained
    cc, ns = _cc(p50=10, p90=20, drop=0.020), _cc(p50=20, p90=40, drop=0.025, wall=1.0)
    r = differential.make_result(dd, cc, ns)
    assert {"sojourn p50", "sojourn p90", "drop probability"} <= set(r.failed)
    assert "ns3-tbf-peek" not in r.causes
    assert {"sojourn p50", "sojourn p90"} <= set(r.unexplained)
    # utilisation is not the token bucket's doing: left unexplained
    r = differential.make_result(dd, cc, _cc(util=0.80, p50=20, p90=40, wall=1.0))
    assert "utilisation" in r.unexplained
    # many more ns-3 RTOs account for every metric
    ns = _cc(util=0.80, wall=1.0)
    ns["_extra"] = {"retransmits": 500, "timeouts": 40}
    r = differential.make_result(dd, cc, ns)
    assert "ns3-timeouts" in r.causes and r.unexplained == []


def test_counterfactual_and_spread_probes_explain_only_what_they_remove():
    from dataclasses import replace

    d0 = draws.draw(1, seed=4)[0]
    sc = replace(
        d0.scenario,
        rate_mbps=20,
        queue=model.Queue("droptail", "100p"),
        duration_s=60,
        measure=(20, 60),
    )
    d = draws.Drawn(sc, d0.params)
    cc, ns = _cc(drop=0.010, p50=10), _cc(drop=0.015, p50=20, wall=1.0)
    r = differential.make_result(d, cc, ns)
    assert {"drop probability", "sojourn p50"} <= set(r.failed)
    # ccsim with ns-3's FQ-CoDel backlog test loses the drop miss and adds none: explained
    r.probes = {
        "counterfactual": {
            "ns3-fqcodel-flow-backlog": {
                "causes": ["ns3-fqcodel-flow-backlog"],
                "outside": ["sojourn p50"],
            }
        }
    }
    rule = differential.CAUSE_RULES_BY_KEY["ns3-fqcodel-flow-backlog"]
    assert "drop probability" in rule(d.scenario, r)
    assert differential.uncovered(d.scenario, r) == [m for m in r.failed if m != "drop probability"]
    # a counterfactual that moves a miss elsewhere (a new miss) is no evidence
    r.probes["counterfactual"]["ns3-fqcodel-flow-backlog"]["outside"] = [
        "sojourn p50",
        "utilisation",
    ]
    assert rule(d.scenario, r) == frozenset()
    # ns-3's value inside ccsim's run-to-run spread
    r.probes = {"perturbed": {"runs": 8, "within": ["sojourn p50"]}}
    assert "run-to-run" in differential.classify(d.scenario, r)
    assert "sojourn p50" not in differential.uncovered(d.scenario, r)


def test_probe_runs_ccsim_counterfactuals_and_perturbed_starts():
    from dataclasses import replace

    d = min(draws.draw(60, seed=1), key=lambda d: d.scenario.rate_mbps * d.scenario.duration_s)
    fq = model.Queue(
        "fq_codel",
        "10240p",
        target_ms=5,
        interval_ms=100,
        hash_seed=draws.fq_hash_seed(d.scenario.n_flows()),
    )
    sc = replace(d.scenario, queue=fq, duration_s=6.0, measure=(2.0, 6.0))
    dd = draws.Drawn(sc, d.params)
    res, walls = runner.run_ccsim(sc, False, repeats=1)
    cc = runner.ccsim_metrics(sc, res, walls)
    ns = dict(cc, utilisation=cc["utilisation"] - 0.5, sojourn_p50_ms=cc["sojourn_p50_ms"])
    r = differential.make_result(dd, cc, ns)
    assert "utilisation" in r.failed
    p = probes.probe(sc, r, cc, ns)
    assert "utilisation" in p["counterfactual"]["ns3-fqcodel-flow-backlog"]["outside"]
    assert p["perturbed"] == {"runs": probes.PERTURBED_RUNS, "within": []}
    # the perturbed reruns differ from the default run only in their starts, RTTs and seed
    one = runner.run_ccsim_variant(sc, None, 0)
    assert one["utilisation"] == pytest.approx(cc["utilisation"], abs=0.05)


def test_ns3_perturbation_shifts_starts_as_ccsims_and_its_spread_counts():
    d = draws.draw(60, seed=1)[0]
    sc = d.scenario
    text = "seed 5\nflow ns3::TcpCubic 22000000 0 0\nflow ns3::TcpCubic 22000000 0 500\nx 1\n"
    out = draws.perturbed_ns3_config(sc, 2)(text).splitlines()
    assert out[0] == "seed 8" and out[3] == "x 1"
    starts = [int(line.split()[-1]) for line in out[1:3]]
    rtts = [int(line.split()[2]) for line in out[1:3]]
    # the same generator as ccsim's reruns: per flow, a start shift, then an RTT shift
    rng = random.Random(f"{sc.name}:2")
    want_starts, want_rtts = [], []
    for base in (0, 500):
        want_starts.append(round(rng.uniform(0, draws.PERTURB_START_S) * 1e9) + base)
        want_rtts.append(round(rng.uniform(0, draws.PERTURB_RTT_S) * 1e9) + 22_000_000)
    assert starts == want_starts and rtts == want_rtts
    assert all(0 <= s - b <= 100_000_000 for s, b in zip(starts, (0, 500), strict=True))
    assert all(22_000_000 <= r <= 22_500_000 for r in rtts)
    # ccsim's value inside ns-3's perturbed range explains the miss as run-to-run
    r = differential.make_result(d, _cc(p50=10), _cc(p50=20, wall=1.0))
    assert "sojourn p50" in differential.uncovered(sc, r)
    r.probes = {"perturbed_ns3": {"runs": 6, "within": ["sojourn p50"]}}
    assert "run-to-run" in differential.classify(sc, r)
    assert "sojourn p50" not in differential.uncovered(sc, r)


def test_two_cpu_runner_stops_starting_runs_on_an_interrupt(monkeypatch, tmp_path):
    import os
    import signal
    import time

    drawn = draws.draw(3, seed=5)
    calls: list[str] = []

    def fake_ns3(sc, quick, exe, work, timeout_s=None, patch_config=None, tag=""):
        calls.append(sc.name + tag)
        if len(calls) == 1:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the first run goes on
        time.sleep(0.5)  # main polls its workers every 0.1 s
        return _cc()

    monkeypatch.setattr(runner, "run_ns3", fake_ns3)
    monkeypatch.setattr(runner, "run_ccsim", lambda sc, quick, like=None: ("result", [0.01]))
    reps = [2] * len(drawn)
    ns3_runs = runner.ParallelNs3Runs(
        drawn, tmp_path / "x", tmp_path, reps, [None], lambda _: None, None
    )
    with pytest.raises(KeyboardInterrupt):
        ns3_runs.run()
    for t in ns3_runs.threads:
        t.join(5)
    assert not any(t.is_alive() for t in ns3_runs.threads)
    assert calls == [drawn[0].scenario.name]  # no run started after the interrupt
