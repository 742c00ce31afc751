"""Every run of every shipped experiment is a valid scenario, in full and quick mode.

The loader checks an experiment's key paths on its first valid run only (a sweep may
hold runs meant to fail); an experiment's own runs should never fail, and one did: an
axis that switched PIE to DropTail kept PIE's `preset`, so half of 002:fig4 failed.
"""

from __future__ import annotations

import pytest

from ccsim import _core
from ccsim.reproduce.experiment import load_all

EXPERIMENTS = load_all()


@pytest.mark.parametrize("exp", EXPERIMENTS, ids=[e.id for e in EXPERIMENTS])
def test_every_run_of_the_experiment_validates(exp) -> None:  # type: ignore[no-untyped-def]
    bad: list[str] = []
    for name in exp.sweeps:
        for quick in (True, False):
            sweep = exp.load_sweep(name, quick)
            # Repetitions differ only in their seed.
            for spec in sweep.runs[:: sweep.repetitions]:
                try:
                    _core.parse_check(spec.scenario_json, "json")
                except _core.ScenarioError as exc:
                    bad.append(f"{name} ({'quick' if quick else 'full'}): {exc}")
    assert not bad, "\n".join(sorted(set(bad)))
