"""Experiment files: one TOML file per figure of a paper, as package data.

``ccsim/experiments/<paper>/<figure>.toml`` holds what to run (a sweep, in the sweep
file's keys, and its ``quick`` overrides), how to draw it (``[[plots]]``, one panel each)
and what the paper states (``[[checks]]``, each with its kind, its tolerance and where the
paper says it: :data:`KINDS`), plus the ``[[choices]]`` made where the paper is silent. The
status is not written: it is computed from a run's verdicts (:func:`status_of`). Nothing here runs
a simulation: this module parses and validates, the runner runs.

A malformed file is a developer error; :func:`load_experiment` rejects it with one line
naming the file and the key (unknown keys included), and the test suite loads every
shipped file.
"""

from __future__ import annotations

import copy
import json
import math
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa

from ccsim.plots.figure import check_plot
from ccsim.reproduce.metrics import (
    SUMMARY_KEYS,
    Baseline,
    Metric,
    MetricError,
    parse_metric,
    tables_used,
)
from ccsim.reproduce.models import MODELS
from ccsim.scenario import SweepError
from ccsim.sweeps.spec import RESERVED_COLUMNS, SWEEP_KEYS, Axis, Sweep, load_sweep

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: How far an experiment has come, computed from its verdicts (:func:`status_of`), never
#: typed in its file: ``draft`` (no check judged), ``partial`` (some judged check missed),
#: ``reproduced`` (every judged check passed).
STATUSES = ("draft", "partial", "reproduced")
#: What a check compares, each counted apart in the report:
#:
#: - ``number``: a value the paper states (the text or its table), within a tolerance
#:   set by what the paper's figure or rounding can resolve;
#: - ``claim``: a direction, ordering or trend the paper states ("PIE better than
#:   CoDel", "a gain", "DCTCP gets more"), checked against its natural pivot (a sign, a
#:   ratio of 1, the other curve, a bound the paper itself states);
#: - ``threshold``: ccsim's reading of vague words ("a small fraction" as below 50 %):
#:   the number is ccsim's, shown as ccsim's reading, never in the paper column;
#: - ``model``: the paper's analytic model evaluated on ccsim's own measurements (the
#:   paper's method, not its numbers); derived from ``model`` (not written);
#: - ``setup``: confirms the configuration (a constant-rate source sends at its rate), not
#:   a verdict on the algorithm;
#: - ``ccsim-only``: a goal of ccsim's own in an experiment that reproduces no figure of a
#:   paper (``source.figure = "none ..."``: ``000:dalbe``, ``000:aqm``, ``extra:*``);
#:   derived, kept out of the papers' totals.
KINDS = ("number", "claim", "threshold", "model", "setup", "ccsim-only")
#: The kinds an experiment file writes (``model`` and ``ccsim-only`` are derived).
WRITTEN_KINDS = ("number", "claim", "threshold", "setup")
#: The kinds the report's headline counts: what the papers state.
PAPER_KINDS = ("number", "claim")
STATISTICS = ("mean", "median", "min", "max")
#: The name of the sweep given as ``[sweep]`` (several: ``[sweeps.<name>]``).
MAIN = "main"

EXPERIMENT_KEYS = ("id", "title", "source", "choices", "sweep", "sweeps", "quick")
EXPERIMENT_KEYS += ("plots", "figure", "checks", "results", "metrics")
SOURCE_KEYS = ("paper", "section", "figure", "caption")
CHOICE_KEYS = ("what", "value", "why")
FIGURE_KEYS = ("columns", "size")
#: A sweep inside an experiment: the sweep file's keys; drawing is ``[[plots]]``'s job.
EXPERIMENT_SWEEP_KEYS = tuple(k for k in SWEEP_KEYS if k != "plot")
CHECK_KEYS = (
    "kind",
    "quantity",
    "row_label",
    "unit",
    "source",
    "value",
    "values",
    "model",
    "args",
    "at",
    "sweep",
    "metric",
    "where",
    "per",
    "statistic",
    "across",
    "tolerance",
    "tolerance_why",
    "reason",
    "reasons",
    "bound",
    "when",
    "drawn_on",
)
#: A result ccsim reports where the paper quotes no number: a check without the paper's
#: side (no value, model or tolerance), shown without a verdict.
RESULT_KEYS = ("quantity", "row_label", "unit", "note", "sweep", "metric", "where", "per")
RESULT_KEYS += ("statistic", "across", "when")
CHECK_SOURCE_KEYS = ("section", "figure", "quote")
REASON_KEYS = ("where", "reason")
ACROSS_KEYS = ("axis", "statistic")
#: ``when = { metric = "feasible", min = 1 }``: judge (or report) only the runs whose
#: value of that metric lies in [min, max] (either bound optional); a group of ``per``
#: left without runs is left out.
WHEN_KEYS = ("metric", "min", "max")
#: ``[sweeps.<name>] from = "000:fig3"``: the sweep of another experiment, run once into
#: that experiment's directory and read by both (``"000:fig3:<name>"`` for a named one).
SHARED_SWEEP_KEYS = ("from",)

_METRIC = re.compile(r"^(?P<column>[a-z_][a-z0-9_]*)(?:\[(?P<index>\d+)\])?$")
#: Result columns that hold one number per run (``flow_*`` take an index: ``[0]``).
NUMERIC_COLUMNS = frozenset(
    RESERVED_COLUMNS
    - {"run", "status", "seed", "discipline", "error", "scenario", "summary", "ccsim_version"}
    - {"worker", "started_at", "finished_at", "repetition"}
)
LIST_COLUMNS = frozenset(
    {"flow_goodput_mbps", "flow_throughput_mbps", "flow_retransmits", "flow_timeouts", "flow_fct_s"}
)


class ExperimentError(ValueError):
    """A malformed experiment file (a developer error): one line, file and key."""


@dataclass(frozen=True)
class Choice:
    what: str
    value: str
    why: str


@dataclass(frozen=True)
class Check:
    """A number the paper states, how to get ccsim's value, and how close it must be.

    ``value`` is a number the text quotes; ``values`` a table of them, one per group of
    ``per`` (``((point, value), ...)``); ``model`` (with ``args``) is the paper's
    equation, evaluated for every group of ``per``. ccsim's value is ``statistic`` of
    ``metric`` over the ok runs matching ``where`` (and the group); with ``across =
    (axis, statistic2)``, ``statistic2`` over the values of ``axis`` of those statistics
    (the smallest mean over G). Without any of value, values and model it is a *result*:
    ccsim's number shown without a verdict (``tolerance`` None)."""

    quantity: str
    unit: str
    source: dict[str, str]
    tolerance: float | None
    tolerance_why: str
    metric: str
    sweep: str = MAIN
    value: float | None = None
    model: str | None = None
    args: dict[str, str | float] = field(default_factory=dict)
    at: dict[str, Any] = field(default_factory=dict)
    where: dict[str, Any] = field(default_factory=dict)
    per: tuple[str, ...] = ()
    statistic: str = "mean"
    row_label: str | None = None
    reason: str | None = None
    reasons: tuple[tuple[dict[str, Any], str], ...] = ()
    values: tuple[tuple[dict[str, Any], float], ...] = ()
    across: tuple[str, str] | None = None
    bound: str | None = None
    #: (metric, min, max): only the runs whose value of the metric lies in [min, max]
    when: tuple[str, float | None, float | None] | None = None
    #: :data:`KINDS`: what the comparison is (None for a result without a verdict)
    kind: str | None = None
    #: a plot column (x or y of some panel) the paper's number is a level of: the figure
    #: draws it as a line there (a number whose metric is a panel's y is a star instead)
    drawn_on: str | None = None

    @property
    def judged(self) -> bool:
        """A paper number to compare with (else a result without a verdict)."""
        return self.value is not None or self.model is not None or bool(self.values)

    @property
    def cited(self) -> str:
        """Where the paper says it, for the report: ``§II-A, Fig. 2: "..."``; a result's
        note."""
        if not self.judged:
            return self.source.get("note", "")
        if self.kind == "ccsim-only":  # a goal of ccsim's, not a quote of a paper
            where = f"{self.source['section']}, {self.source['figure']}"
            return f'ccsim\'s own goal ({where}): "{self.source["quote"]}"'
        return f'§{self.source["section"]}, {self.source["figure"]}: "{self.source["quote"]}"'


@dataclass(frozen=True)
class Experiment:
    id: str
    title: str
    source: dict[str, str]
    choices: tuple[Choice, ...]
    sweeps: dict[str, dict[str, Any]]
    quick: dict[str, dict[str, Any]]
    plots: tuple[dict[str, Any], ...]
    figure: dict[str, Any]
    checks: tuple[Check, ...]
    path: Path
    results: tuple[Check, ...] = ()
    #: name -> expression text of the derived metrics (``[metrics]``), or a baseline
    #: table ``{ of, baseline, compare }``
    metrics: dict[str, Any] = field(default_factory=dict)
    #: sweep name -> (slug of the experiment whose directory holds its store, the name
    #: of the sweep there): the experiment itself, or the one a ``from`` names
    owners: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: every axis name of every sweep (either mode)
    axes: frozenset[str] = frozenset()

    @property
    def paper(self) -> str:
        return self.id.split(":")[0]

    @property
    def ccsim_only(self) -> bool:
        """It reproduces no figure or table of a paper (``source.figure = "none ..."``):
        its checks are ccsim's own goals, kept out of the papers' totals."""
        return is_ccsim_only(self.source)

    def kind_counts(self) -> dict[str, int]:
        """How many checks of each kind the file states (a check with ``per`` or
        ``values`` gives several rows when run; this counts definitions)."""
        counts = dict.fromkeys(KINDS, 0)
        for c in self.checks:
            counts[c.kind or "number"] += 1
        return {k: n for k, n in counts.items() if n}

    @property
    def name(self) -> str:
        return self.id.split(":")[1]

    @property
    def slug(self) -> str:
        """Directory name of its output: ``003_fig2``."""
        return self.id.replace(":", "_")

    def owner(self, name: str) -> tuple[str, str]:
        """(directory slug, sweep name) of the store of sweep ``name``."""
        return self.owners.get(name, (self.slug, name))

    def parsed_metrics(self) -> dict[str, Metric]:
        """The derived metrics, parsed (validated when the file was loaded)."""
        parsed: dict[str, Metric] = {}
        for n, e in self.metrics.items():  # a metric may name the metrics before it
            parsed[n] = parse_metric(e, SUMMARY_KEYS | self.axes | set(parsed))
        return parsed

    def sweep_document(self, name: str, quick: bool) -> dict[str, Any]:
        """The sweep ``name`` as a self-contained sweep document (base inlined), with the
        ``quick`` overrides applied when asked: each top-level key replaces the sweep's,
        except tables (``set``, ``grid``, ``base``), whose keys replace the sweep's keys.
        An axis's ``labels`` (an experiment's addition) are left out: see
        :meth:`axis_labels`."""
        doc = self._document(name, quick)
        for axes in _axis_tables(doc):
            for key, spec in list(axes.items()):
                if isinstance(spec, Mapping) and "labels" in spec:
                    axes[key] = {k: v for k, v in spec.items() if k != "labels"}
        return doc

    def axis_labels(self, name: str, quick: bool) -> dict[str, dict[str, str]]:
        """axis -> (the value as the sweep's result column holds it -> its label), for
        the axes of sweep ``name`` that give ``labels``: ``aqm = { path =
        "bottleneck.queue", values = [{ kind = "pie", ... }, "codel"], labels = ["PIE",
        "CoDel"] }`` names table values in result columns, plots and checks."""
        out: dict[str, dict[str, str]] = {}
        for axes in _axis_tables(self._document(name, quick)):
            for key, spec in axes.items():
                if not isinstance(spec, Mapping) or "labels" not in spec:
                    continue
                values, labels = spec.get("values"), spec["labels"]
                where = f"{self.path}: sweep {name!r}: axis {key}.labels"
                if not isinstance(values, list) or not isinstance(labels, list):
                    raise ExperimentError(f"{where}: labels go with a list of values")
                # a value may repeat (a zipped axis), with its label: equal values, equal
                # labels; different values, different labels
                pairs = {(_stored(v), str(lab)) for v, lab in zip(values, labels, strict=False)}
                if len(labels) != len(values) or not (
                    len(pairs) == len({v for v, _ in pairs}) == len({lab for _, lab in pairs})
                ):
                    raise ExperimentError(f"{where}: one distinct label per value")
                if not all(isinstance(x, str) and x for x in labels):
                    raise ExperimentError(f"{where}: labels are non-empty strings")
                out[key] = {_stored(v): lab for v, lab in zip(values, labels, strict=True)}
        return out

    def _document(self, name: str, quick: bool) -> dict[str, Any]:
        doc = dict(self.sweeps[name])
        if quick:
            for key, value in self.quick.get(name, {}).items():
                old = doc.get(key)
                if isinstance(value, Mapping) and isinstance(old, Mapping):
                    doc[key] = {**old, **value}
                else:
                    doc[key] = value
        base = doc.get("base")
        if isinstance(base, str):  # relative to the experiment file, like a sweep file's
            path = (self.path.parent / base).resolve()
            try:
                doc["base"] = tomllib.loads(path.read_text(encoding="utf-8"))
            except (OSError, tomllib.TOMLDecodeError) as exc:
                raise ExperimentError(f"{self.path}: sweep base {base!r}: {exc}") from exc
        return json.loads(json.dumps(doc))

    def load_sweep(self, name: str, quick: bool) -> Sweep:
        """The sweep, its labelled axes holding their labels as values."""
        try:
            sweep = load_sweep(self.sweep_document(name, quick))
        except SweepError as exc:
            mode = "quick" if quick else "full"
            raise ExperimentError(f"{self.path}: sweep {name!r} ({mode}): {exc}") from exc
        labels = self.axis_labels(name, quick)
        if labels:
            sweep = copy.copy(sweep)  # a Sweep is mutable: leave the loaded one alone
            sweep.dimensions = [
                replace(d, axes=tuple(_labelled(a, labels) for a in d.axes))
                for d in sweep.dimensions
            ]
        return sweep


def is_ccsim_only(source: Mapping[str, Any]) -> bool:
    """The rule for ccsim-only experiments: the file names no figure of the paper."""
    return str(source.get("figure", "")).startswith("none")


def status_of(verdicts: list[Any]) -> str:
    """The rule: ``draft`` when no check is judged (results only), ``reproduced`` when
    every judged check passed, else ``partial``. Every kind counts: a set-up check that
    fails means the experiment does not run what it says."""
    judged = [v for v in verdicts if v.judged]
    if not judged:
        return "draft"
    return "reproduced" if all(v.ok for v in judged) else "partial"


def _labelled(axis: Axis, labels: Mapping[str, Mapping[str, str]]) -> Axis:
    if axis.name not in labels:
        return axis
    return replace(axis, values=tuple(labels[axis.name][_stored(v)] for v in axis.values))


def _axis_tables(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The sweep document's ``grid`` and each ``zip`` table (mutable, in place)."""
    tables = []
    if isinstance(doc.get("grid"), Mapping):
        doc["grid"] = dict(doc["grid"])  # type: ignore[index]
        tables.append(doc["grid"])
    if isinstance(doc.get("zip"), list):
        doc["zip"] = [dict(z) if isinstance(z, Mapping) else z for z in doc["zip"]]  # type: ignore[index]
        tables += [z for z in doc["zip"] if isinstance(z, dict)]
    return tables


def _stored(value: Any) -> str:
    """An axis value as the sweep store's result column writes a table-valued axis."""
    return json.dumps(value)


def relabel(rows: pa.Table, labels: Mapping[str, Mapping[str, str]]) -> pa.Table:
    """``rows`` (result rows) with each labelled axis column holding its labels."""
    for axis, names in labels.items():
        if axis not in rows.column_names:
            continue
        column = [
            names.get(v if isinstance(v, str) else _stored(v), names.get(_stored(v), v))
            for v in rows.column(axis).to_pylist()
        ]
        index = rows.column_names.index(axis)
        rows = rows.set_column(index, axis, pa.array([str(v) for v in column], pa.string()))
    return rows


# --------------------------------------------------------------------------- finding


def experiments_root() -> Path:
    """``ccsim/experiments`` of the installed package."""
    return Path(str(resources.files("ccsim").joinpath("experiments")))


def experiment_paths(root: Path | None = None) -> list[Path]:
    root = experiments_root() if root is None else root
    return sorted(
        p
        for paper in root.iterdir()
        if paper.is_dir() and not paper.name.startswith((".", "_"))
        for p in paper.glob("*.toml")
    )


def load_all(root: Path | None = None) -> list[Experiment]:
    return [load_experiment(p) for p in experiment_paths(root)]


class UnknownExperiment(LookupError):
    """A name on the command line that names no experiment."""


def select(names: list[str], experiments: list[Experiment]) -> list[Experiment]:
    """``003:fig2`` (one), ``003`` (a paper's), ``all``; in the order given, each once."""
    chosen: dict[str, Experiment] = {}
    for name in names:
        if name == "all":
            matches = experiments
        elif ":" in name:
            matches = [e for e in experiments if e.id == name]
        else:
            matches = [e for e in experiments if e.paper == name]
        if not matches:
            known = ", ".join(e.id for e in experiments) or "none"
            raise UnknownExperiment(
                f"unknown experiment {name!r} (experiments: {known}; papers: "
                f"{', '.join(sorted({e.paper for e in experiments}))}; see ccsim reproduce --list)"
            )
        for e in matches:
            chosen.setdefault(e.id, e)
    return list(chosen.values())


# --------------------------------------------------------------------------- validation


class _Where:
    """Error messages that name the file and the key."""

    def __init__(self, path: Path):
        self.path = path

    def error(self, key: str, message: str) -> ExperimentError:
        return ExperimentError(f"{self.path}: {key}: {message}")

    def table(self, value: Any, key: str, allowed: tuple[str, ...]) -> dict[str, Any]:
        if not isinstance(value, Mapping):
            raise self.error(key, "expected a table")
        unknown = sorted(set(value) - set(allowed))
        if unknown:
            raise self.error(f"{key}.{unknown[0]}", f"unknown key (expected: {', '.join(allowed)})")
        return dict(value)

    def text(self, table: Mapping[str, Any], key: str, where: str, required: bool = True) -> Any:
        value = table.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value.strip():
            raise self.error(f"{where}.{key}" if where else key, "expected a non-empty string")
        return value

    def number(self, value: Any, key: str) -> float:
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            raise self.error(key, f"expected a number, got {value!r}")
        return float(value)

    def tables(self, value: Any, key: str) -> list[Mapping[str, Any]]:
        if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
            raise self.error(key, f"expected an array of tables ([[{key}]])")
        return value


def load_experiment(path: Path) -> Experiment:
    """Parse and validate one experiment file (its sweeps with the scenario core)."""
    w = _Where(path)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ExperimentError(f"{path}: {exc}") from exc
    if "status" in doc:
        raise w.error(
            "status",
            "an experiment's status is computed from its verdicts (draft, partial, "
            "reproduced), never written: remove the key",
        )
    w.table(doc, "experiment", EXPERIMENT_KEYS)
    expected_id = f"{path.parent.name}:{path.stem}"
    if doc.get("id") != expected_id:
        raise w.error("id", f"expected {expected_id!r} (<paper directory>:<file name>)")
    source = w.table(doc.get("source"), "source", SOURCE_KEYS)
    for key in ("section", "figure", "caption"):
        w.text(source, key, "source")
    choices = tuple(
        Choice(
            *(
                w.text(w.table(c, f"choices[{i}]", CHOICE_KEYS), k, f"choices[{i}]")
                for k in CHOICE_KEYS
            )
        )
        for i, c in enumerate(w.tables(doc.get("choices", []), "choices"))
    )
    sweeps, quick, owners = _sweeps(doc, w)
    exp = Experiment(
        id=expected_id,
        title=w.text(doc, "title", ""),
        source=source,
        choices=choices,
        sweeps=sweeps,
        quick=quick,
        plots=tuple(dict(p) for p in w.tables(doc.get("plots", []), "plots")),
        figure=w.table(doc.get("figure", {}), "figure", FIGURE_KEYS),
        checks=(),
        path=path,
        owners=owners,
    )
    expanded = {(name, q): exp.load_sweep(name, q) for name in sweeps for q in (False, True)}
    axes = frozenset(a.name for sweep in expanded.values() for a in sweep.axes)
    kept = {t for sweep in expanded.values() for t in sweep.series}
    metrics = _metrics(w, doc.get("metrics", {}), axes, kept)
    exp = replace(exp, metrics=metrics, axes=axes)
    if not exp.plots:
        raise w.error("plots", "an experiment draws at least one [[plots]] panel")
    for i, plot in enumerate(exp.plots):
        name = plot.get("sweep", MAIN)
        if name not in sweeps:
            raise w.error(f"plots[{i}].sweep", f"no sweep {name!r} (sweeps: {', '.join(sweeps)})")
        full = expanded[(name, False)]
        try:
            check_plot(plot, _columns(full) | set(metrics), set(full.series), set(MODELS))
        except ValueError as exc:
            raise w.error(f"plots[{i}]", str(exc)) from exc
        for m, model in enumerate(plot.get("models", [])):
            _check_args(w, f"plots[{i}].models[{m}]", model.get("model"), model.get("args", {}))
    checks = tuple(
        _check(w, f"checks[{i}]", c, expanded, set(metrics), ccsim_only=exp.ccsim_only)
        for i, c in enumerate(w.tables(doc.get("checks", []), "checks"))
    )
    results = tuple(
        _check(w, f"results[{i}]", c, expanded, set(metrics), result=True)
        for i, c in enumerate(w.tables(doc.get("results", []), "results"))
    )
    if not checks and not results:
        raise w.error("checks", "an experiment reports at least one [[checks]] or [[results]] row")
    for i, c in enumerate(checks):
        if c.drawn_on is None:
            continue
        if c.kind != "number":
            raise w.error(f"checks[{i}].drawn_on", "only a number the paper states is drawn")
        on = [p for p in exp.plots if p.get("sweep", MAIN) == c.sweep]
        if not any(c.drawn_on in (p.get("x"), p.get("y")) for p in on):
            raise w.error(
                f"checks[{i}].drawn_on", f"{c.drawn_on!r} is no panel's x or y (of its sweep)"
            )
    return replace(exp, checks=checks, results=results)


def _metrics(w: _Where, raw: Any, axes: frozenset[str], kept: set[str]) -> dict[str, Any]:
    """``[metrics]``: each an expression (or a baseline table); a table column it reads
    must be kept by some sweep (its ``series``)."""
    table = w.table(raw, "metrics", tuple(raw) if isinstance(raw, Mapping) else ())
    metrics = {}
    for name, expression in table.items():
        if (
            not _METRIC.match(name)
            or "[" in name
            or name in RESERVED_COLUMNS
            or name in axes
            or name in SUMMARY_KEYS
        ):
            raise w.error(f"metrics.{name}", "a metric's name is a new column name (a-z, 0-9, _)")
        try:
            parsed = parse_metric(expression, SUMMARY_KEYS | axes | set(metrics))
        except MetricError as exc:
            raise w.error(f"metrics.{name}", str(exc)) from exc
        tree = parsed.of if isinstance(parsed, Baseline) else parsed
        for t, _ in sorted(tables_used(tree)):
            if t not in kept:
                raise w.error(
                    f"metrics.{name}", f"table {t!r} is not kept by any sweep (add it to series)"
                )
        metrics[name] = expression
    return metrics


def _sweeps(
    doc: Mapping[str, Any], w: _Where
) -> tuple[dict[str, Any], dict[str, Any], dict[str, tuple[str, str]]]:
    if ("sweep" in doc) == ("sweeps" in doc):
        raise w.error("sweep", "give one [sweep] or named [sweeps.<name>] tables")
    if "sweep" in doc:
        raw = {MAIN: doc["sweep"]}
        quick_doc = {MAIN: doc.get("quick", {})}
        keys = {MAIN: "sweep"}
    else:
        raw = w.table(doc["sweeps"], "sweeps", tuple(doc["sweeps"]))
        quick_doc = w.table(doc.get("quick", {}), "quick", tuple(raw))
        keys = {n: f"sweeps.{n}" for n in raw}
    sweeps: dict[str, Any] = {}
    quick: dict[str, Any] = {}
    owners: dict[str, tuple[str, str]] = {}
    for name, table in raw.items():
        key = keys[name]
        if isinstance(table, Mapping) and "from" in table:
            w.table(table, key, SHARED_SWEEP_KEYS)
            if quick_doc.get(name):
                raise w.error(
                    f"quick.{name}" if key != "sweep" else "quick",
                    "a shared sweep takes its owner's quick overrides",
                )
            sweeps[name], quick[name], owners[name] = _shared(w, f"{key}.from", table["from"])
        else:
            sweeps[name] = w.table(table, key, EXPERIMENT_SWEEP_KEYS)
            qkey = "quick" if key == "sweep" else f"quick.{name}"
            quick[name] = w.table(quick_doc.get(name, {}), qkey, EXPERIMENT_SWEEP_KEYS)
    return sweeps, quick, owners


def _shared(
    w: _Where, key: str, ref: Any
) -> tuple[dict[str, Any], dict[str, Any], tuple[str, str]]:
    """The sweep ``"<paper>:<figure>[:<sweep>]"`` names, with its quick overrides, as the
    owning file has them (a relative ``base`` made absolute), and where its store is."""
    parts = ref.split(":") if isinstance(ref, str) else []
    if len(parts) not in (2, 3) or not all(parts):
        raise w.error(key, 'expected "<paper>:<figure>" or "<paper>:<figure>:<sweep>"')
    paper, figure, name = parts[0], parts[1], parts[2] if len(parts) == 3 else MAIN
    path = w.path.parent.parent / paper / f"{figure}.toml"
    if path.resolve() == w.path.resolve():
        raise w.error(key, "an experiment does not share its own sweep")
    try:
        owner = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise w.error(key, f"{ref!r}: no readable experiment file {path} ({exc})") from exc
    if name == MAIN and "sweep" in owner:
        sweep, quick = owner["sweep"], owner.get("quick", {})
    else:
        sweep = owner.get("sweeps", {}).get(name)
        quick = owner.get("quick", {}).get(name, {})
    if not isinstance(sweep, Mapping) or "from" in sweep:
        raise w.error(key, f"{ref!r}: {path.name} has no sweep {name!r} of its own")
    sweep = dict(sweep)
    if isinstance(sweep.get("base"), str):
        sweep["base"] = str((path.parent / sweep["base"]).resolve())
    return sweep, dict(quick), (f"{paper}_{figure}", name)


def _columns(sweep: Sweep) -> set[str]:
    return set(RESERVED_COLUMNS) | {a.name for a in sweep.axes}


def metric_column(metric: str) -> tuple[str, int | None]:
    """``utilisation`` -> (``utilisation``, None); ``flow_goodput_mbps[1]`` -> (..., 1)."""
    m = _METRIC.match(metric)
    if m is None:
        raise ValueError(
            f"{metric!r}: expected a result column, e.g. utilisation or flow_goodput_mbps[0]"
        )
    index = m.group("index")
    return m.group("column"), None if index is None else int(index)


def _check_args(w: _Where, key: str, model: Any, args: Any) -> None:
    if model not in MODELS:
        raise w.error(f"{key}.model", f"unknown model {model!r} (models: {', '.join(MODELS)})")
    if not isinstance(args, Mapping):
        raise w.error(f"{key}.args", "expected a table of model parameter = column or number")
    spec = MODELS[model]
    unknown = sorted(set(args) - set(spec.parameters))
    if unknown:
        raise w.error(
            f"{key}.args.{unknown[0]}", f"{model} has parameters {', '.join(spec.parameters)}"
        )
    missing = [p for p in spec.required if p not in args]
    if missing:
        raise w.error(f"{key}.args", f"{model} needs {', '.join(missing)}")


def _check(
    w: _Where,
    key: str,
    raw: Mapping[str, Any],
    expanded: dict[tuple[str, bool], Sweep],
    metrics: set[str],
    result: bool = False,
    ccsim_only: bool = False,
) -> Check:
    """A ``[[checks]]`` row (the paper's number, its tolerance, where it says it) or, with
    ``result``, a ``[[results]]`` row (ccsim's number alone, with an optional note)."""
    c = w.table(raw, key, RESULT_KEYS if result else CHECK_KEYS)
    if result:
        note = w.text(c, "note", key, required=False)
        source = {"note": note} if note else {}
        tolerance: float | None = None
    else:
        source = w.table(c.get("source"), f"{key}.source", CHECK_SOURCE_KEYS)
        for k in CHECK_SOURCE_KEYS:  # a quoted number always says where the paper says it
            w.text(source, k, f"{key}.source")
        if "tolerance" not in c:
            raise w.error(f"{key}.tolerance", "missing: every check carries its tolerance")
        tolerance = w.number(c["tolerance"], f"{key}.tolerance")
        if tolerance < 0:
            raise w.error(f"{key}.tolerance", "must be >= 0")
        if sum(k in c for k in ("value", "values", "model")) != 1:
            raise w.error(
                key, "give the paper's value, a table of its values, or its model (with args)"
            )
    kind = None if result else _kind(w, key, c, ccsim_only)
    sweep_name = c.get("sweep", MAIN)
    if (sweep_name, False) not in expanded:
        raise w.error(f"{key}.sweep", f"no sweep {sweep_name!r}")
    axes = {
        q: {a.name: set(map(_norm, a.values)) for a in expanded[(sweep_name, q)].axes}
        for q in (False, True)
    }
    metric = w.text(c, "metric", key)
    if metric not in metrics:
        try:
            column, index = metric_column(metric)
        except ValueError as exc:
            raise w.error(f"{key}.metric", str(exc)) from exc
        if column not in NUMERIC_COLUMNS or (index is not None) != (column in LIST_COLUMNS):
            raise w.error(
                f"{key}.metric",
                f"{metric!r} is neither a numeric result column nor a [metrics] name",
            )
    per = c.get("per", [])
    if not isinstance(per, list) or any(p not in axes[False] for p in per):
        raise w.error(f"{key}.per", f"expected axis names (axes: {', '.join(axes[False])})")
    where = _selection(w, f"{key}.where", c.get("where", {}), axes)
    values: list[tuple[dict[str, Any], float]] = []
    if "model" in c:
        args = c.get("args", {})
        _check_args(w, key, c["model"], args)
        for p, v in args.items():
            # a column of per is the group's value; any other column (b measured per
            # run) evaluates the model run by run, then takes the check's statistic
            if isinstance(v, str) and v not in per and v not in metrics:
                try:
                    column, _ = metric_column(v)
                except ValueError:
                    column = ""
                if column not in NUMERIC_COLUMNS or column in LIST_COLUMNS:
                    raise w.error(
                        f"{key}.args.{p}",
                        f"column {v!r} must be one of per = {per}, a metric or a result column",
                    )
    elif "values" in c:
        if not per:
            raise w.error(f"{key}.per", "a table of values has one row per group of per")
        for j, entry in enumerate(w.tables(c["values"], f"{key}.values")):
            entry = w.table(entry, f"{key}.values[{j}]", (*per, "value"))
            point = {p: entry[p] for p in per if p in entry}
            if len(point) != len(per):
                raise w.error(f"{key}.values[{j}]", f"give {', '.join(per)} and value")
            _selection(w, f"{key}.values[{j}]", point, axes, quick_too=False)
            values.append((point, w.number(entry.get("value"), f"{key}.values[{j}].value")))
    elif "value" in c:
        w.number(c["value"], f"{key}.value")
        if per and c.get("bound") is None:  # a bound may hold in every group of per
            raise w.error(f"{key}.per", "a quoted value is one number: select it with where")
    statistic = c.get("statistic", "mean")
    if statistic not in STATISTICS:
        raise w.error(f"{key}.statistic", f"expected one of {', '.join(STATISTICS)}")
    across = None
    if "across" in c:
        a = w.table(c["across"], f"{key}.across", ACROSS_KEYS)
        axis, stat = a.get("axis"), a.get("statistic")
        if (
            axis not in axes[False]
            or axis in per
            or (axis in where and not isinstance(where[axis], list))
        ):
            raise w.error(f"{key}.across.axis", "expected an axis that is not in per or where")
        if stat not in STATISTICS:
            raise w.error(f"{key}.across.statistic", f"expected one of {', '.join(STATISTICS)}")
        across = (axis, stat)
    at = c.get("at", {})
    if not isinstance(at, Mapping):
        raise w.error(f"{key}.at", "expected a table of axis = value (the paper's coordinates)")
    reasons = []
    for j, r in enumerate(w.tables(c.get("reasons", []), f"{key}.reasons")):
        r = w.table(r, f"{key}.reasons[{j}]", REASON_KEYS)
        sel = _selection(w, f"{key}.reasons[{j}].where", r.get("where", {}), axes, quick_too=False)
        reasons.append((sel, w.text(r, "reason", f"{key}.reasons[{j}]")))
    when = None
    if "when" in c:
        wt = w.table(c["when"], f"{key}.when", WHEN_KEYS)
        wm = w.text(wt, "metric", f"{key}.when")
        if wm not in metrics:
            raise w.error(f"{key}.when.metric", f"{wm!r} is not a [metrics] name")
        low = w.number(wt["min"], f"{key}.when.min") if "min" in wt else None
        high = w.number(wt["max"], f"{key}.when.max") if "max" in wt else None
        if low is None and high is None:
            raise w.error(f"{key}.when", "give min, max or both")
        when = (wm, low, high)
    bound = c.get("bound")
    if bound not in (None, "upper", "lower"):
        raise w.error(f"{key}.bound", 'expected "upper" or "lower" (the number is a bound)')
    row_label = w.text(c, "row_label", key, required=False)
    if row_label is not None:
        try:
            row_label.format(**{p: 0 for p in per})
        except (KeyError, IndexError, ValueError) as exc:
            raise w.error(f"{key}.row_label", f"names only columns of per: {exc}") from exc
    return Check(
        quantity=w.text(c, "quantity", key),
        unit=c.get("unit", ""),
        source=source,
        tolerance=tolerance,
        tolerance_why="" if result else w.text(c, "tolerance_why", key),
        metric=metric,
        sweep=sweep_name,
        value=float(c["value"]) if "value" in c else None,
        model=c.get("model"),
        args=dict(c.get("args", {})),
        at=dict(at),
        where=where,
        per=tuple(per),
        statistic=statistic,
        row_label=row_label,
        reason=w.text(c, "reason", key, required=False),
        reasons=tuple(reasons),
        values=tuple(values),
        across=across,
        bound=bound,
        when=when,
        kind=kind,
        drawn_on=w.text(c, "drawn_on", key, required=False),
    )


def _kind(w: _Where, key: str, c: Mapping[str, Any], ccsim_only: bool) -> str:
    """The check's kind: written for a paper's number, claim, threshold or set-up;
    derived for a model (``model``) and in a ccsim-only experiment."""
    written = c.get("kind")
    if ccsim_only:
        if written is not None:
            raise w.error(f"{key}.kind", "a ccsim-only experiment's checks are all ccsim-only")
        return "ccsim-only"
    if "model" in c:
        if written is not None:
            raise w.error(f"{key}.kind", "a check against a model is of kind model (derived)")
        return "model"
    if written not in WRITTEN_KINDS:
        raise w.error(
            f"{key}.kind",
            f"expected one of {', '.join(WRITTEN_KINDS)} (what the paper states: see KINDS)",
        )
    return str(written)


def _norm(value: Any) -> Any:
    """Axis values compare as numbers when they are numbers (0.1 == 0.10)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return round(float(value), 12)
    return json.dumps(value, sort_keys=True) if isinstance(value, (list, dict)) else value


def _selection(
    w: _Where,
    key: str,
    where: Any,
    axes: dict[bool, dict[str, set[Any]]],
    quick_too: bool = True,
) -> dict[str, Any]:
    """``where`` names axes and values both modes run (else a check could never be met)."""
    if not isinstance(where, Mapping):
        raise w.error(key, "expected a table of axis = value")
    for name, value in where.items():
        for quick in (False, True) if quick_too else (False,):
            if name not in axes[quick]:
                raise w.error(f"{key}.{name}", f"not an axis (axes: {', '.join(axes[quick])})")
            if isinstance(value, list):  # any of these values (some of them run)
                if not any(_norm(v) in axes[quick][name] for v in value):
                    mode = "quick" if quick else "full"
                    raise w.error(
                        f"{key}.{name}", f"none of {value!r} is a value of the {mode} sweep's axis"
                    )
                continue
            if _norm(value) not in axes[quick][name]:
                mode = "quick" if quick else "full"
                raise w.error(
                    f"{key}.{name}", f"{value!r} is not a value of the {mode} sweep's axis"
                )
    return dict(where)
