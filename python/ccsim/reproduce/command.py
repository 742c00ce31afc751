"""``ccsim reproduce``: pick experiments by name, run them, write the report.

    ccsim reproduce --list
    ccsim reproduce 003:fig2 -o DIR        # one figure
    ccsim reproduce 003 -o DIR             # a paper's figures
    ccsim reproduce all -o DIR [--quick] [--timing] [--jobs N | --dask ADDRESS]

Bad input (an unknown name, an unusable DIR) raises :class:`ReproduceInputError` before
anything is written.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from ccsim.output import OutputDirError, check_output_dir
from ccsim.reproduce.experiment import (
    Experiment,
    ExperimentError,
    UnknownExperiment,
    load_all,
    select,
)
from ccsim.reproduce.report import write_report
from ccsim.reproduce.runner import Options, run_experiment, verdicts_of


class ReproduceInputError(ValueError):
    """A command line that cannot be run: one line, exit status 2."""


#: ``--list``'s abbreviations of the check kinds (experiment.KINDS), in that order.
KIND_ABBREVIATIONS = {
    "number": "num",
    "claim": "claim",
    "threshold": "thr",
    "model": "model",
    "setup": "setup",
    "ccsim-only": "ccsim",
}


def kind_summary(counts: dict[str, int]) -> str:
    """``num 3, claim 1``: the checks an experiment states, by kind (results apart)."""
    return ", ".join(f"{KIND_ABBREVIATIONS[k]} {n}" for k, n in counts.items()) or "results only"


def list_lines(experiments: Sequence[Experiment]) -> list[str]:
    """One line per experiment: its checks by kind; papers first, ccsim-only after. The
    status (reproduced, partial, draft) is computed from a run's verdicts, so the list
    (which runs nothing) does not show it."""
    ordered = sorted(experiments, key=lambda e: e.ccsim_only)  # stable: ids stay sorted
    width = max((len(e.id) for e in experiments), default=0)
    kinds = {e.id: kind_summary(e.kind_counts()) for e in experiments}
    kwidth = max((len(k) for k in kinds.values()), default=0)
    lines = [f"{'experiment':<{width}}  {'checks by kind':<{kwidth}}  figure: title"]
    for e in ordered:
        tag = " [ccsim-only]" if e.ccsim_only else ""
        lines.append(
            f"{e.id:<{width}}  {kinds[e.id]:<{kwidth}}  {e.source['figure']}: {e.title}{tag}"
        )
    return lines


def choose(
    names: Sequence[str], out: str | None, options: Options
) -> tuple[list[Experiment], Path]:
    """The experiments to run and the output directory, or ReproduceInputError."""
    if not names:
        raise ReproduceInputError(
            "name an experiment (003:fig2), a paper (003) or all; ccsim reproduce --list shows them"
        )
    try:
        experiments = select(list(names), load_all())
    except (UnknownExperiment, ExperimentError) as exc:
        raise ReproduceInputError(str(exc)) from exc
    if out is None:
        raise ReproduceInputError("-o DIR: the output directory is required")
    if options.jobs is not None and options.dask is not None:
        raise ReproduceInputError(
            "--jobs and --dask do not go together (Dask workers set their own)"
        )
    if options.jobs is not None and options.jobs < 1:
        raise ReproduceInputError(f"--jobs: expected an integer >= 1, got {options.jobs}")
    try:
        check_output_dir(Path(out))
    except OutputDirError as exc:
        raise ReproduceInputError(str(exc)) from exc
    return experiments, Path(out)


def reproduce(
    experiments: Sequence[Experiment], out: Path, options: Options, say: Callable[[str], None]
) -> int:
    """Run each experiment, then rewrite the report. 0 when every run succeeded and every
    figure was drawn, else 1 (a ❌ verdict is a result, not a failure of the command)."""
    status = 0
    total = 0.0
    out.mkdir(parents=True, exist_ok=True)
    try:
        for exp in experiments:
            record = run_experiment(exp, out, options)
            verdicts = verdicts_of(record)
            judged = [v for v in verdicts if v.judged]
            passed = sum(v.ok for v in judged)
            line = f"{exp.id}: {record['runs']} runs ({record['mode']}), "
            if judged:
                line += f"{passed}/{len(judged)} checks within tolerance"
            if len(judged) < len(verdicts):
                line += ", " if judged else ""
                line += f"{len(verdicts) - len(judged)} results without a paper number"
            if options.timing:
                line += f", {record['wall_s']:.2f} s"
            total += record["wall_s"]
            if record["failed_runs"]:
                line += f", {record['failed_runs']} runs failed"
                status = 1
            if record["plot_error"]:
                line += f"; {record['plot_error']}"
                status = 1
            say(line)
    finally:  # also when interrupted: the report covers what is done
        report, index = write_report(out)
    if options.timing:
        say(f"wall time in all: {total:.2f} s for {len(experiments)} experiment(s)")
    say(f"report in {report} and {index}")
    return status


def run_command(
    names: Sequence[str],
    out: str | None,
    options: Options,
    list_only: bool,
    say: Callable[[str], None],
) -> int:
    if list_only:
        try:
            experiments = load_all()
            if names:
                experiments = select(list(names), experiments)
        except (UnknownExperiment, ExperimentError) as exc:
            raise ReproduceInputError(str(exc)) from exc
        for line in list_lines(experiments):
            say(line)
        return 0
    experiments, directory = choose(names, out, options)
    try:
        return reproduce(experiments, directory, options, say)
    except KeyboardInterrupt:
        print(
            f"interrupted: finished runs are kept in {directory}; run the same command to resume",
            file=sys.stderr,
        )
        raise
