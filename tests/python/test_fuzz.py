"""The scenario fuzzer's CI mode (issue 33): a few hundred seeded mutants of small valid
scenarios, in-process. Each is refused with one line (``ScenarioError``, no newline) or
runs with utilisation <= 1 (exactly: carried over offered bits, issue 31; on the run, the
bottleneck, every network link and every interval) and exact packet conservation (losses
on the wire included); nothing else escapes. Mutants draw link models too: random loss,
jitter, outages. The long mode, in subprocesses under
``ulimit -v``, is ``python bench/fuzz.py``."""

from __future__ import annotations

import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import fuzz

MUTANTS = 300


def verdicts_of(cls: str, outcomes: list[fuzz.Outcome]) -> Counter[str]:
    return Counter(o.verdict for o in outcomes if o.cls == cls)


def test_mutants_are_refused_in_one_line_or_run_within_bounds():
    rng = random.Random(33)
    started = time.monotonic()
    outcomes = [fuzz.check_in_process(*fuzz.mutate(rng), max_events=2e6) for _ in range(MUTANTS)]
    verdicts = Counter(o.verdict for o in outcomes)
    bad = [o for o in outcomes if o.verdict not in ("ok", "refused", "skipped")]
    assert not bad, [(o.cls, o.verdict, o.detail[:200]) for o in bad]
    assert verdicts["ok"] >= MUTANTS // 10 and verdicts["refused"] >= MUTANTS // 10, verdicts
    ran = [o for o in outcomes if o.verdict == "ok" and o.events]
    assert all(o.events <= o.estimated_events for o in ran), [
        (o.cls, o.events, o.estimated_events) for o in ran if o.events > o.estimated_events
    ]
    # and within 10x for 90 % (issue 33): the capacity alone put finite transfers, runs
    # shorter than a round trip and PIE's first half-second at 13 to 280 times their
    # events. Not over links with loss, jitter or outages (issue 31), which the estimate
    # does not model: an outage or a loss rate of 1 leaves a run nearly idle
    plain = [o for o in ran if not o.extra.get("link_model")]
    within = [o for o in plain if o.estimated_events <= 10 * o.events]
    assert len(within) >= 0.9 * len(plain), [
        (o.cls, o.events, o.estimated_events) for o in plain if o not in within
    ]
    # the link models were exercised: runs with them, and refusals of the broken ones
    assert len(ran) - len(plain) >= MUTANTS // 20, len(ran) - len(plain)
    assert verdicts_of("link_model", outcomes)["refused"] >= 5
    assert time.monotonic() - started < 120
