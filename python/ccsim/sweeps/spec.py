"""Sweep files: a base scenario plus axes, expanded into a numbered list of runs.

A sweep is a TOML file (or a dict of the same keys)::

    base = "../single_newreno.toml"    # or an inline [base] table
    repetitions = 3                    # optional: seeds derived per repetition
    series = ["flow_series"]           # optional: per-run tables to keep

    [set]                              # optional: fixed overrides of the base
    duration = "60s"

    [grid]                             # every combination of these axes
    "flows[0].rtt" = ["20ms", "50ms"]
    beta = { path = "flows[0].cc.beta", from = 0.5, to = 0.9, count = 5 }

    [[zip]]                            # these vary together (equal lengths)
    "flows[0].rtt" = ["20ms", "50ms"]
    "flows[1].rtt" = ["40ms", "100ms"]

Axes are applied to the base by *key path* (``flows[0].cc.g``, ``bottleneck.queue.limit``).
See the README's "Sweeps" section for the whole syntax and the rules.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
import os
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from ccsim import _core, output
from ccsim.scenario import (
    KEY_NAME,
    InputTooLarge,
    KeyPath,
    SweepError,
    apply_overrides,
    read_input,
    resolve_names,
    set_path,
    with_article,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: A sweep: a path to a TOML sweep file, TOML text, or a dict of the same keys.
SweepSource = str | os.PathLike[str] | Mapping[str, Any]

#: Per-run tables kept under ``DIR/series/`` unless the sweep says otherwise.
DEFAULT_SERIES = ("flow_series", "queue_series", "cc_trace")


def all_series() -> tuple[str, ...]:
    """Every table a run produces, which a sweep may keep (``series = "all"``): one list,
    :data:`ccsim.output.KNOWN_TABLES`, read when a sweep is loaded (a copy here once fell
    behind the core and left ``cc_vars`` and ``cc_reductions`` out)."""
    return tuple(output.KNOWN_TABLES)


SWEEP_KEYS = ("base", "set", "grid", "zip", "repetitions", "series", "plot")
AXIS_KEYS = ("path", "values", "format", "from", "to", "step", "count")
#: Top-level keys of a scenario file, to tell one given to ``ccsim sweep`` from a bad sweep.
_SCENARIO_KEYS = ("bottleneck", "flows", "udp", "duration", "measure", "links", "trace", "seed")

PLOT_KEYS = (
    "x",
    "y",
    "lines",
    "title",
    "xlabel",
    "ylabel",
    "logx",
    "logy",
    "xtick_labels",
    "line_labels",
    "kind",
    "band",
)

#: Result columns an axis may not be named after (see :mod:`ccsim.sweeps.store`).
_RESERVED = """run status repetition seed utilisation jain_index sojourn_mean_ms sojourn_p50_ms
    sojourn_p90_ms sojourn_p99_ms drop_probability mark_probability arrivals departures
    drops marks discipline flow_goodput_mbps flow_throughput_mbps flow_retransmits
    flow_timeouts flow_fct_s events bottleneck_packets duration_s measure_start_s
    measure_end_s error scenario summary ccsim_version worker started_at finished_at wall_s"""
RESERVED_COLUMNS = frozenset(_RESERVED.split())

#: The most runs a sweep may have: the product of its axes' lengths times its repetitions,
#: counted before any run is built (runs are built one at a time, when asked for, but the
#: store lists the pending ones and a run takes about 1 KB).
MAX_RUNS = 1_000_000

# --------------------------------------------------------------------------- axes


@dataclass(frozen=True)
class Axis:
    """One swept key path: its result column name, the values recorded in that column,
    and the values put into the scenario (``format`` applied)."""

    name: str
    path: KeyPath
    values: tuple[Any, ...]
    scenario_values: tuple[Any, ...]


@dataclass(frozen=True)
class Dimension:
    """A grid axis (one axis) or a ``[[zip]]`` group (several axes of equal length)."""

    axes: tuple[Axis, ...]

    def __len__(self) -> int:
        return len(self.axes[0].values)


def _where(section: str, key: str) -> str:
    return f'{section}."{key}"' if not re.fullmatch(KEY_NAME, key) else f"{section}.{key}"


def _number(value: Any, where: str, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SweepError(f"{where}.{what}: expected a number, got {value!r}")
    return float(value)


def _check_axis_length(n: int, where: str) -> None:
    """An axis longer than the whole sweep may be is refused before its values are made."""
    if n > MAX_RUNS:
        raise SweepError(f"{where}: {n:,} values; at most {MAX_RUNS:,} (runs in a sweep)")


def _range_values(spec: Mapping[str, Any], where: str) -> list[Any]:
    start = _number(spec["from"], where, "from")
    stop = _number(spec.get("to"), where, "to")
    if ("step" in spec) == ("count" in spec):
        raise SweepError(f"{where}: give either step or count with from/to")
    if "count" in spec:
        count = spec["count"]
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise SweepError(f"{where}.count: expected an integer >= 1, got {count!r}")
        _check_axis_length(count, where)
        if count == 1:
            values = [start]
        else:
            values = [start + (stop - start) * k / (count - 1) for k in range(count)]
    else:
        step = _number(spec["step"], where, "step")
        if step == 0 or (stop - start) * step < 0:
            raise SweepError(f"{where}.step: {step:g} never gets from {start:g} to {stop:g}")
        n = math.floor((stop - start) / step + 1e-9) + 1
        _check_axis_length(n, where)
        values = [start + k * step for k in range(n)]
    # 0.30000000000000004 -> 0.3; integers stay integers when all bounds are integers
    whole = (
        all(
            isinstance(spec.get(k), int) and not isinstance(spec.get(k), bool)
            for k in ("from", "to", "step")
            if k in spec
        )
        and "count" not in spec
    )
    return [round(v) if whole else round(v, 12) for v in values]


def _axis(section: str, key: str, spec: Any) -> Axis:
    where = _where(section, key)
    fmt: str | None = None
    if isinstance(spec, Mapping):
        unknown = sorted(set(spec) - set(AXIS_KEYS))
        if unknown:
            raise SweepError(
                f"{where}.{unknown[0]}: unknown key (an axis table has: {', '.join(AXIS_KEYS)})"
            )
        path_text = spec.get("path", key)
        fmt = spec.get("format")
        if fmt is not None and (not isinstance(fmt, str) or "{" not in fmt):
            raise SweepError(f'{where}.format: expected a string like "{{}}ms", got {fmt!r}')
        if "values" in spec:
            if any(k in spec for k in ("from", "to", "step", "count")):
                raise SweepError(f"{where}: give either values or from/to, not both")
            values = spec["values"]
        elif "from" in spec:
            values = _range_values(spec, where)
        else:
            raise SweepError(f"{where}: an axis table needs values (or from, to and step/count)")
        name = key
    else:
        path_text, values, name = key, spec, key
    if not isinstance(values, list):
        raise SweepError(f"{where}: expected an array of values, got {with_article(values)}")
    if not values:
        raise SweepError(f"{where}: empty axis (no values)")
    path = KeyPath.parse(path_text)
    if name == key and "path" not in (spec if isinstance(spec, Mapping) else {}):
        name = path.text
    if name in RESERVED_COLUMNS:
        raise SweepError(
            f"{where}: the axis column {name!r} would clash with a result column; name it, "
            f'e.g. base_{name} = {{ path = "{path.text}", values = [...] }}'
        )
    if fmt is None:
        scenario_values = tuple(values)
    else:
        try:
            scenario_values = tuple(fmt.format(v) for v in values)
        except (IndexError, KeyError, ValueError) as exc:
            raise SweepError(f"{where}.format: cannot format a value with {fmt!r}: {exc}") from exc
    return Axis(name, path, tuple(values), scenario_values)


def _dimensions(doc: Mapping[str, Any]) -> list[Dimension]:
    dims: list[Dimension] = []
    grid = doc.get("grid", {})
    if not isinstance(grid, Mapping):
        raise SweepError('grid: expected a table like [grid] "flows[0].rtt" = ["20ms", "50ms"]')
    for key, spec in grid.items():
        dims.append(Dimension((_axis("grid", key, spec),)))
    zips = doc.get("zip", [])
    if isinstance(zips, Mapping):
        zips = [zips]
    if not isinstance(zips, list):
        raise SweepError("zip: expected one or more [[zip]] tables")
    for i, group in enumerate(zips):
        section = f"zip[{i}]"
        if not isinstance(group, Mapping) or not group:
            raise SweepError(f"{section}: expected a non-empty table of axes")
        axes = tuple(_axis(section, key, spec) for key, spec in group.items())
        lengths = {a.name: len(a.values) for a in axes}
        if len(set(lengths.values())) > 1:
            shown = ", ".join(f"{n} has {k}" for n, k in lengths.items())
            raise SweepError(f"{section}: zipped axes must have equal lengths ({shown})")
        dims.append(Dimension(axes))
    names: set[str] = set()
    paths: set[str] = set()
    for axis in (a for d in dims for a in d.axes):
        if axis.path.text in paths:
            raise SweepError(f"key path {axis.path.text!r} is swept by two axes")
        if axis.name in names:
            raise SweepError(f"two axes are named {axis.name!r}")
        names.add(axis.name)
        paths.add(axis.path.text)
    return dims


# --------------------------------------------------------------------------- seeds


def derive_seed(seed: int, repetition: int) -> int:
    """The seed of repetition ``r`` of a run whose scenario seed is ``seed``.

    Repetition 0 keeps ``seed``; repetition r >= 1 uses the first 8 bytes of
    SHA-256(``"{seed}:{r}"``) as a big-endian integer, top bit cleared (0 <= s < 2**63).
    """
    if repetition == 0:
        return seed
    digest = hashlib.sha256(f"{seed}:{repetition}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & ((1 << 63) - 1)


# --------------------------------------------------------------------------- runs


@dataclass(frozen=True)
class RunSpec:
    """One run of the sweep: its id, axis values, repetition, seed and scenario."""

    run: int
    axis_values: tuple[Any, ...]
    repetition: int
    seed: int
    scenario: dict[str, Any]

    @functools.cached_property
    def scenario_json(self) -> str:
        """The scenario as compact JSON: sent to the core and stored in the result row
        (computed once; the scenario is not changed after expansion)."""
        return json.dumps(self.scenario, separators=(",", ":"), sort_keys=False)


@dataclass
class Sweep:
    """A parsed sweep; ``runs`` builds its runs when they are asked for."""

    label: str
    base: dict[str, Any]
    dimensions: list[Dimension]
    repetitions: int
    series: tuple[str, ...]
    runs: Sequence[RunSpec]
    plot: dict[str, Any] = field(default_factory=dict)
    document: dict[str, Any] = field(default_factory=dict)
    #: Where the base scenario came from, for messages: its file, or "SWEEP [base]".
    base_label: str = "<base>"

    @property
    def axes(self) -> list[Axis]:
        return [a for d in self.dimensions for a in d.axes]

    def fingerprint(self) -> str:
        """SHA-256 of the expanded run list (axis names and values, repetition, seed,
        scenario of every run) and the kept series: what makes results comparable."""
        h = hashlib.sha256()
        head = {"format": 1, "axes": [a.name for a in self.axes], "series": list(self.series)}
        h.update(json.dumps(head, sort_keys=True).encode())
        for r in self.runs:
            item = [r.run, list(r.axis_values), r.repetition, r.seed, r.scenario]
            h.update(b"\n")
            h.update(json.dumps(item, sort_keys=True, separators=(",", ":"), default=str).encode())
        return h.hexdigest()


def _read_toml(path: Path, what: str) -> dict[str, Any]:
    try:
        text = read_input(path, what)
    except InputTooLarge as exc:
        raise SweepError(str(exc)) from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise SweepError(f"{path}: cannot read {what}: {reason}") from exc
    try:
        doc = json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise SweepError(f"{path}: {what} is not valid {path.suffix[1:] or 'TOML'}: {exc}") from exc
    if not isinstance(doc, dict):
        raise SweepError(f"{path}: {what} must be a table")
    return doc


def load_document(source: SweepSource) -> tuple[dict[str, Any], Path, str]:
    """The sweep as a dict, the directory ``base = "..."`` is relative to, and a label."""
    if isinstance(source, Mapping):
        return dict(source), Path.cwd(), "<dict>"
    if isinstance(source, str) and ("\n" in source or "=" in source):
        try:
            return tomllib.loads(source), Path.cwd(), "<string>"
        except tomllib.TOMLDecodeError as exc:
            raise SweepError(f"sweep text is not valid TOML: {exc}") from exc
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        return _read_toml(path, "sweep file"), path.parent, str(path)
    raise SweepError(f"a sweep is a path, TOML text or a dict, not {type(source).__name__}")


def _load_base(doc: Mapping[str, Any], root: Path, label: str) -> tuple[dict[str, Any], str]:
    """The base scenario and where it came from (its file, or ``"SWEEP [base]"``)."""
    if "base" not in doc:
        raise SweepError('base: missing (an inline [base] table or base = "scenario.toml")')
    base = doc["base"]
    if isinstance(base, (str, os.PathLike)):
        path = Path(base)
        if not path.is_absolute():
            path = root / path
        return _read_toml(path, "base scenario"), str(path)
    if not isinstance(base, Mapping):
        raise SweepError("base: expected a table or the path of a scenario file")
    return json.loads(json.dumps(base, default=str)), f"{label} [base]"


def _series(doc: Mapping[str, Any]) -> tuple[str, ...]:
    series = doc.get("series", list(DEFAULT_SERIES))
    known = all_series()
    if series == "all":
        return known
    if not isinstance(series, list) or not all(isinstance(s, str) for s in series):
        raise SweepError('series: expected "all" or an array of table names')
    unknown = [s for s in series if s not in known]
    if unknown:
        raise SweepError(f"series: unknown table {unknown[0]!r} (tables: {', '.join(known)})")
    return tuple(dict.fromkeys(series))


def _plot(doc: Mapping[str, Any]) -> dict[str, Any]:
    plot = doc.get("plot", {})
    if not isinstance(plot, Mapping):
        raise SweepError("plot: expected a table like [plot] x = ..., y = ...")
    unknown = sorted(set(plot) - set(PLOT_KEYS))
    if unknown:
        expected = ", ".join(PLOT_KEYS)
        raise SweepError(f"plot.{unknown[0]}: unknown key (expected one of: {expected})")
    return dict(plot)


def _seed_of(scenario: Mapping[str, Any]) -> int:
    seed = scenario.get("seed", 1)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 1 << 64:
        raise SweepError(f"seed: expected an integer >= 0, got {seed!r}")
    return seed


def _combination(
    base: dict[str, Any], dims: Sequence[Dimension], combo: Sequence[int]
) -> tuple[dict[str, Any], tuple[Any, ...], int]:
    """The scenario, axis values and seed of one combination of the dimensions' values."""
    scenario = base
    values: list[Any] = []
    for dim, k in zip(dims, combo, strict=True):
        for axis in dim.axes:
            scenario = set_path(scenario, axis.path, axis.scenario_values[k])
            values.append(axis.values[k])
    return scenario, tuple(values), _seed_of(scenario)


def expand(base: dict[str, Any], dims: Sequence[Dimension], repetitions: int) -> Iterator[RunSpec]:
    """Every run: the product of the dimensions (first varies slowest), then repetitions
    innermost, numbered from 0."""
    run = 0
    for combo in itertools.product(*(range(len(d)) for d in dims)):
        scenario, values, seed0 = _combination(base, dims, combo)
        for rep in range(repetitions):
            seed = derive_seed(seed0, rep)
            yield RunSpec(run, values, rep, seed, {**scenario, "seed": seed})
            run += 1


class Runs(Sequence[RunSpec]):
    """The runs of a sweep in order (as :func:`expand` yields them), each built when it is
    asked for, by index or in turn: the run list of a large sweep is counted, not held."""

    def __init__(self, base: dict[str, Any], dims: Sequence[Dimension], repetitions: int):
        self._base = base
        self._dims = tuple(dims)
        self._repetitions = repetitions
        self._len = math.prod(len(d) for d in self._dims) * repetitions

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[RunSpec]:
        return expand(self._base, self._dims, self._repetitions)

    @overload
    def __getitem__(self, index: int) -> RunSpec: ...

    @overload
    def __getitem__(self, index: slice) -> list[RunSpec]: ...

    def __getitem__(self, index: int | slice) -> RunSpec | list[RunSpec]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._len))]
        run = index + self._len if index < 0 else index
        if not 0 <= run < self._len:
            raise IndexError(f"run {index} of a sweep of {self._len} runs")
        rest, rep = divmod(run, self._repetitions)
        combo = []
        for dim in reversed(self._dims):
            rest, k = divmod(rest, len(dim))
            combo.append(k)
        scenario, values, seed0 = _combination(self._base, self._dims, combo[::-1])
        seed = derive_seed(seed0, rep)
        return RunSpec(run, values, rep, seed, {**scenario, "seed": seed})

    def check(self) -> None:
        """Build every value of every dimension once, the others at their first value:
        what :func:`expand` would refuse (a key path the base cannot take, a bad seed) is
        refused now, not when the run is reached."""
        first = [0] * len(self._dims)
        for i, dim in enumerate(self._dims):
            for k in range(len(dim)):
                _combination(self._base, self._dims, [*first[:i], k, *first[i + 1 :]])


def load_sweep(source: SweepSource) -> Sweep:
    """Parse, expand and check a sweep; raise :class:`SweepError` for bad input."""
    doc, root, label = load_document(source)
    unknown = sorted(set(doc) - set(SWEEP_KEYS))
    scenario_keys = sorted(set(doc) & set(_SCENARIO_KEYS))
    if unknown and "base" not in doc and scenario_keys:
        shown = label if not label.startswith("<") else "SCENARIO"
        raise SweepError(
            f"{label}: a scenario file (it has {scenario_keys[0]} and no base = ...), not a "
            f"sweep: run it with `ccsim run {shown} -o DIR`; a sweep file names a scenario "
            'as base = "..." and varies it in [grid]'
        )
    if unknown:
        raise SweepError(
            f"{unknown[0]}: unknown key in the sweep (expected one of: {', '.join(SWEEP_KEYS)})"
        )
    base, base_label = _load_base(doc, root, label)
    raw_base = base
    overrides = doc.get("set", {})
    if not isinstance(overrides, Mapping):
        raise SweepError('set: expected a table of "key.path" = value')
    base = apply_overrides(base, overrides)
    repetitions = doc.get("repetitions", 1)
    if isinstance(repetitions, bool) or not isinstance(repetitions, int) or repetitions < 1:
        raise SweepError(f"repetitions: expected an integer >= 1, got {repetitions!r}")
    dims = _dimensions(doc)
    total = math.prod(len(d) for d in dims) * repetitions
    if total > MAX_RUNS:
        raise SweepError(
            f"{label}: a grid of {total:,} runs; at most {MAX_RUNS:,} (split it into "
            "several sweeps, or use fewer values or repetitions)"
        )
    runs = Runs(base, dims, repetitions)
    runs.check()
    sweep = Sweep(label, base, dims, repetitions, _series(doc), runs, _plot(doc), doc, base_label)
    check_key_paths(sweep, raw_base=raw_base)
    return sweep


# --------------------------------------------------------------------------- key checks

_ERROR = re.compile(r"^(?P<path>[^:\s]+): (?P<message>.*)$", re.S)


def _key_error(
    message: str, axes: Sequence[Axis], base: Mapping[str, Any] | None = None
) -> str | None:
    """The key path of an axis that this core error says does not exist, if any. An axis
    that names an array's entry by name (``network.links.ab.rate``) is matched in the
    index form the core writes (``network.links[0].rate``), resolved in ``base``."""
    m = _ERROR.match(message)
    if m is None:
        return None
    try:
        where = KeyPath.parse(m.group("path"))
    except SweepError:
        return None
    text = m.group("message")
    for axis in axes:
        target = axis.path if base is None else resolve_names(base, axis.path)
        if not where.is_prefix_of(target):
            continue
        if text.startswith(("unknown key", "unknown parameter")):
            return axis.path.text
        if where != target and ("got a table" in text or text.startswith("unknown distribution")):
            return axis.path.text  # a step into a value (a table there reads as a distribution)
    return None


def _scenario_error(scenario: Mapping[str, Any]) -> str | None:
    """The core's error for a scenario, None if it is valid."""
    try:
        _core.parse_check(json.dumps(scenario, separators=(",", ":"), default=str), "json")
    except _core.ScenarioError as exc:
        return str(exc)
    return None


def check_key_paths(
    sweep: Sweep, limit: int = 20000, raw_base: Mapping[str, Any] | None = None
) -> None:
    """Refuse a sweep whose axes or ``[set]`` address a key the schema does not have, or
    whose base scenario is invalid on its own.

    The core validates run scenarios in order (repetitions skipped: only the seed differs)
    until one is valid. If one is, every key path exists. If none is and the core called
    an axis key path unknown (an unknown key, an unknown algorithm parameter, or a step
    into a value that is not a table) for one of them, that is bad input. So is a base
    scenario (with ``[set]``) that is invalid with the very error every run has: no axis
    value changes it (``duration = "2"``, an empty base file). Any other invalid run is a
    *failed run*, recorded in the results. ``raw_base`` is the base before ``[set]``, to
    say which of the two the error is in.
    """
    axes = list(sweep.axes)
    if sweep.document.get("set"):
        axes += [Axis(key, KeyPath.parse(key), (None,), (None,)) for key in sweep.document["set"]]
    first_bad: str | None = None
    errors: set[str] = set()
    for index in range(0, min(len(sweep.runs), limit * sweep.repetitions), sweep.repetitions):
        spec = sweep.runs[index]
        try:
            _core.parse_check(spec.scenario_json, "json")
            return
        except _core.ScenarioError as exc:
            errors.add(str(exc))
            path = _key_error(str(exc), axes, sweep.base)
            if first_bad is None and path is not None:
                first_bad = f"no such key path {path}: {exc}"
    if first_bad is not None:
        raise SweepError(first_bad)
    if len(errors) == 1 and _scenario_error(sweep.base) in errors:
        (error,) = errors
        if raw_base is None or raw_base is sweep.base or _scenario_error(raw_base) == error:
            raise SweepError(f"{sweep.base_label}: base scenario: {error}")
        raise SweepError(f"{sweep.label}: base scenario with [set]: {error}")


# --------------------------------------------------------------------------- estimates

#: Wall-clock seconds per packet through the bottleneck and per run, measured on the
#: benchmarks (0.3-0.6 us per bottleneck packet with everything it causes, one core).
SECONDS_PER_PACKET = 0.45e-6
SECONDS_PER_RUN = 0.5e-3


def estimate_run_s(scenario: Mapping[str, Any]) -> float | None:
    """A rough wall-clock estimate of one run on one core: the packets the bottleneck can
    carry in ``duration`` (its ``rate``, 1500-byte packets) at :data:`SECONDS_PER_PACKET`.
    None when the scenario's rate or duration cannot be read."""
    from ccsim.ppv import parse_rate

    try:
        duration = _core.duration_ns(str(scenario["duration"]), "duration") / 1e9
        rate = parse_rate(str(scenario["bottleneck"]["rate"]).replace(" ", ""))
    except (KeyError, TypeError, ValueError):
        return None
    return rate * duration / (8 * 1500) * SECONDS_PER_PACKET + SECONDS_PER_RUN
