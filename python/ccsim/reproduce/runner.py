"""Run one experiment: its sweeps through the sweep layer, its figure, its verdicts.

Output, under ``DIR/<paper>_<figure>/`` (``003_fig2``)::

    <slug>-full.sweep.json   the sweep as run (a plain sweep file: ``ccsim sweep`` runs it)
    full/                    its sweep store (``quick/`` for --quick): resumable
    figure.png, figure.pdf   the paper's figure, with its model and quoted numbers
    experiment.json          what the report is written from: verdicts, choices, timing

The sweep store keeps every finished run, so an interrupted reproduction resumes. An
experiment file that changed since its runs is run afresh (its old store is replaced).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ccsim import __version__
from ccsim.plots.figure import Curve, Marker, Panel, draw_figure, split_panels
from ccsim.reproduce.experiment import MAIN, Experiment, relabel, status_of
from ccsim.reproduce.metrics import add_metrics
from ccsim.reproduce.models import MODELS
from ccsim.reproduce.verdict import Verdict, evaluate
from ccsim.sweeps import runner as sweep_runner
from ccsim.sweeps.store import read_series

RECORD = "experiment.json"
FORMAT = "ccsim-reproduce/2"  # 2: verdicts carry their kind; status is computed


@dataclass(frozen=True)
class Options:
    quick: bool = False
    jobs: int | None = None
    dask: str | None = None
    progress: bool = False
    timing: bool = False


def mode(quick: bool) -> str:
    return "quick" if quick else "full"


def _tag(name: str, quick: bool) -> str:
    return mode(quick) if name == MAIN else f"{name}-{mode(quick)}"


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def run_experiment(exp: Experiment, out: Path, options: Options) -> dict[str, Any]:
    """Run (or resume) ``exp`` into ``out/<slug>/`` and return its record."""
    directory = out / exp.slug
    directory.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    results: dict[str, pa.Table] = {}
    stores: dict[str, str] = {}
    runs = failed = 0
    metrics = exp.parsed_metrics()
    for name in exp.sweeps:
        # A shared sweep (``from``) lives in its owner's directory, so the runs are made
        # once whichever of the experiments runs first.
        owner, owner_name = exp.owner(name)
        tag = _tag(owner_name, options.quick)
        home = out / owner
        home.mkdir(parents=True, exist_ok=True)
        # A plain sweep file, so the progress bar names the experiment and a reader can
        # rerun exactly this sweep with `ccsim sweep`.
        sweep_file = home / f"{owner}-{tag}.sweep.json"
        doc = exp.sweep_document(name, options.quick)
        _write_text(sweep_file, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        report = sweep_runner.sweep(
            sweep_file,
            home / tag,
            jobs=options.jobs,
            dask=options.dask,
            force=True,  # the experiment file changed: its old runs no longer apply
            progress=options.progress,
        )
        assert report.results is not None
        store = home / tag
        kept = set(exp.load_sweep(name, options.quick).series)

        def table(t: str, store: Path = store, kept: set[str] = kept) -> pa.Table | None:
            return read_series(store, t) if t in kept else None

        rows = relabel(report.results, exp.axis_labels(name, options.quick))
        results[name] = add_metrics(rows, metrics, sorted(exp.axes), table)
        stores[name] = tag if owner == exp.slug else f"../{owner}/{tag}"
        runs += report.total
        failed += report.failed
    verdicts = [v for check in exp.checks for v in evaluate(check, results[check.sweep])]
    verdicts += [v for r in exp.results for v in evaluate(r, results[r.sweep])]
    figure, plot_error = _figure(exp, directory, results, stores)
    record = {
        "format": FORMAT,
        "id": exp.id,
        "title": exp.title,
        "status": status_of(verdicts),
        "ccsim_only": exp.ccsim_only,
        "source": exp.source,
        "mode": mode(options.quick),
        "ccsim_version": __version__,
        "runs": runs,
        "failed_runs": failed,
        "stores": stores,
        "figure": figure,
        "plot_error": plot_error,
        "choices": [c.__dict__ for c in exp.choices],
        "metrics": exp.metrics,
        "tolerances": [
            {
                "quantity": c.quantity,
                "tolerance": c.tolerance,
                "unit": c.unit,
                "why": c.tolerance_why,
                "kind": c.kind,
                "bound": c.bound,
            }
            for c in exp.checks
        ],
        "verdicts": [v.as_dict() for v in verdicts],
        "wall_s": time.perf_counter() - start,
        "timing": options.timing,
    }
    _write_text(directory / RECORD, json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    return record


def _figure(
    exp: Experiment, directory: Path, results: dict[str, pa.Table], stores: dict[str, str]
) -> tuple[list[str], str | None]:
    """Draw the figure; a plotting error is recorded, not raised (the runs matter more)."""
    try:
        panels = [
            panel
            for spec in exp.plots
            for panel in split_panels(_panel(exp, spec, directory, results, stores))
        ]
        paths = draw_figure(
            panels,
            directory / "figure",
            columns=exp.figure.get("columns"),
            size=exp.figure.get("size"),
        )
    except Exception as exc:
        return [], " ".join(f"plotting failed: {type(exc).__name__}: {exc}".split())
    return [p.name for p in paths], None


def _panel(
    exp: Experiment,
    spec: dict[str, Any],
    directory: Path,
    results: dict[str, pa.Table],
    stores: dict[str, str],
) -> Panel:
    name = spec.get("sweep", MAIN)
    rows = results[name]
    rows = rows.filter(pc.equal(rows.column("status"), "ok"))
    if "table" in spec:  # a per-run table, with each run's axis values beside it
        axes = [c for c in rows.column_names if c in _axis_names(rows)]
        series = read_series((directory / stores[name]).resolve(), spec["table"])
        index = series.schema.get_field_index("run")  # a Hive partition: int32
        series = series.set_column(index, "run", pc.cast(series.column("run"), pa.int64()))
        rows = series.join(rows.select(["run", *axes]), "run", join_type="inner")
    curves = [
        Curve(
            MODELS[m["model"]].function,
            dict(m.get("args", {})),
            m.get("label", MODELS[m["model"]].label),
        )
        for m in spec.get("models", [])
    ]
    markers = []
    refs = list(spec.get("refs", []))
    drawn = {(a, float(r[a])) for r in refs for a in ("x", "y") if a in r}
    for check in exp.checks:
        # the paper's own numbers only: a claim's pivot or ccsim's threshold is no quote
        if check.sweep != name or check.kind != "number":
            continue
        if check.drawn_on is not None:  # a level (or a time) on one of the panel's axes
            axis = "y" if spec.get("y") == check.drawn_on else "x"
            if check.drawn_on != spec.get(axis):
                continue
            quoted = check.values or (({}, check.value),)
            for point, value in quoted:
                if value is None or (axis, value) in drawn:
                    continue
                if not _compatible(spec.get("where", {}), {**check.where, **point}):
                    continue
                drawn.add((axis, value))
                unit = f" {check.unit}" if check.unit else ""
                refs.append({axis: value, "label": f"paper: {value:g}{unit}"})
            continue
        if check.metric != spec.get("y"):
            continue
        at = check.at or check.where
        # a star needs a number on x (a category axis, such as a case label, has none)
        where = spec.get("where", {})
        if (
            check.value is not None
            and _numeric(at.get(spec["x"]))
            and _compatible(where, check.where)
        ):
            markers.append(Marker(float(at[spec["x"]]), check.value, f"{check.value:g}"))
        for point, value in check.values:  # a table of the paper's: one star per row
            x = point.get(spec["x"], at.get(spec["x"]))  # x fixed by where, rows by per
            if _numeric(x) and _compatible(where, {**check.where, **point}):
                markers.append(Marker(float(x), value, f"{value:g}"))
    if refs != list(spec.get("refs", [])):
        spec = {**spec, "refs": refs}
    return Panel(spec, rows, curves, markers)


def _compatible(panel_where: dict[str, Any], point: dict[str, Any]) -> bool:
    """The check's selection can be among the panel's rows: every axis both name has a
    value in common (a list is any of its values)."""

    def values(v: Any) -> list[Any]:
        return [str(x) for x in v] if isinstance(v, list) else [str(v)]

    return all(set(values(v)) & set(values(point[k])) for k, v in panel_where.items() if k in point)


def _numeric(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _axis_names(rows: pa.Table) -> set[str]:
    """Columns between ``status`` and ``repetition``: the sweep's axes."""
    names = rows.column_names
    return set(names[names.index("status") + 1 : names.index("repetition")])


def verdicts_of(record: dict[str, Any]) -> list[Verdict]:
    return [Verdict.from_dict(v) for v in record.get("verdicts", [])]
