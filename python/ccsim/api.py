"""The Python API: run or validate a scenario given as a file, a TOML string or a dict."""

from __future__ import annotations

import json
import math
import os
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccsim import _core
from ccsim._core import ScenarioError
from ccsim.cancel import install_sigint_hook, stop_check, watcher
from ccsim.results import RunResult
from ccsim.scenario import InputTooLarge, SweepError, apply_overrides, read_input

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: A scenario: a path to a ``.toml`` (or ``.json``) file, TOML text, or a dict of the schema.
Scenario = str | os.PathLike[str] | Mapping[str, Any]

#: ``True`` for a progress bar on stderr, or a callable given the fraction of simulated time.
Progress = bool | Callable[[float], None]

#: A controller receives a list with one dict per TCP flow (``flow_id``, ``group``,
#: ``time_s``, ``bytes_sent``, ``bytes_acked``, ``bytes_left`` (None for bulk flows),
#: ``cwnd_pkts``, ``ssthresh_pkts``, ``srtt_ms``, ``min_rtt_ms``, ``active``) and returns
#: parameter changes for the flows' congestion controllers as ``(flow_id, name, value)``
#: triples (or dicts with those keys), or None.
Controller = Callable[[list[dict[str, Any]]], Iterable[Any] | None]


@dataclass(frozen=True)
class ScenarioSource:
    """Scenario text ready for the core, with where it came from (for messages)."""

    text: str
    fmt: str  # "toml" or "json"
    label: str
    #: ``{"key.path": value}`` applied to the scenario (``ccsim run --set``), in order.
    overrides: dict[str, Any] = field(default_factory=dict)

    def document(self) -> dict[str, Any] | None:
        """The scenario as a dict (None if the text does not parse)."""
        try:
            doc = json.loads(self.text) if self.fmt == "json" else tomllib.loads(self.text)
        except (ValueError, tomllib.TOMLDecodeError):
            return None
        return doc if isinstance(doc, dict) else None


def _looks_like_json(text: str) -> bool:
    return text.lstrip().startswith("{")


def _looks_like_toml(text: str) -> bool:
    return "\n" in text or "=" in text


def load_scenario(scenario: Scenario, overrides: Mapping[str, Any] | None = None) -> ScenarioSource:
    """Turn any accepted scenario form into text for the core.

    A ``str`` starting with ``{`` is JSON text, one containing a newline or ``=`` is TOML
    text; any other ``str`` or path-like is a file name (``.json`` files are read as JSON,
    everything else as TOML). A mapping is sent as JSON. ``overrides`` set values by key
    path (``{"flows[0].cc.g": 6}``), as a sweep's ``[set]``. Raises ``OSError`` /
    ``UnicodeDecodeError`` if the file cannot be read, :class:`ccsim.ScenarioError` if
    it is over 16 MB (or does not end, like ``/dev/zero``), if the text does not parse
    or if an override's key path does not fit the scenario.
    """
    source = _load_scenario(scenario)
    if not overrides:
        return source
    doc = source.document()
    if doc is None:
        check(source)  # raises the parse error, with the file's name
        raise ScenarioError(f"{source.label}: not a table of scenario keys")
    try:
        doc = apply_overrides(doc, overrides)
    except SweepError as exc:
        raise ScenarioError(str(exc)) from None
    return json_source(doc, source.label, overrides)


def _plain(value: Any, path: str, non_finite: list[tuple[str, str]]) -> Any:
    """``value`` with NumPy scalars as Python numbers (``numpy.int64(2)`` is 2, not the
    string ``"2"``) and each non-finite float read as 0 and listed in ``non_finite`` with
    its key path (JSON has no NaN: it was a syntax error without the key, issue 33)."""
    if isinstance(value, Mapping):
        return {
            k: _plain(v, f"{path}.{k}" if path else str(k), non_finite) for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{path}[{i}]", non_finite) for i, v in enumerate(value)]
    item = getattr(value, "item", None)
    if type(value).__module__ == "numpy" and callable(item):
        value = item()  # a NumPy scalar (np.int64, np.float32, np.bool_, np.str_)
    if isinstance(value, float) and not math.isfinite(value):
        non_finite.append((path, "nan" if math.isnan(value) else "inf" if value > 0 else "-inf"))
        return 0
    return value


def json_source(doc: Mapping[str, Any], label: str, overrides: Mapping[str, Any] | None = None):
    """A scenario document as JSON text for the core. A non-finite number is refused
    naming its key, after the schema's own errors (``bogus = nan`` is an unknown key)."""
    non_finite: list[tuple[str, str]] = []
    text = json.dumps(_plain(doc, "", non_finite), default=str)
    source = ScenarioSource(text, "json", label, dict(overrides or {}))
    if non_finite:
        at, written = non_finite[0]
        try:
            _core.estimate(text, "json")  # parses only
        except ScenarioError as exc:
            message = str(exc)
            head = message.split(": ", 1)[0]
            about_it = any(head.startswith(p) or p.startswith(head) for p, _ in non_finite)
            if "unknown key" in message or not about_it:
                raise _explained(exc, source) from None
        raise ScenarioError(f"{at}: expected a finite number, got {written}")
    return source


def _load_scenario(scenario: Scenario) -> ScenarioSource:
    if isinstance(scenario, Mapping):
        return json_source(scenario, "<dict>")
    if isinstance(scenario, str) and _looks_like_json(scenario):
        return ScenarioSource(scenario, "json", "<string>")
    if isinstance(scenario, str) and _looks_like_toml(scenario):
        return ScenarioSource(scenario, "toml", "<string>")
    if isinstance(scenario, (str, os.PathLike)):
        path = Path(scenario)
        fmt = "json" if path.suffix.lower() == ".json" else "toml"
        try:
            text = read_input(path, "scenario file")
        except InputTooLarge as exc:  # a file over 16 MB, or /dev/zero
            raise ScenarioError(str(exc)) from None
        return _traces_from(path, ScenarioSource(text, fmt, str(path)))
    raise TypeError(f"a scenario is a path, TOML text or a dict, not {type(scenario).__name__}")


TRACE_KEYS = ("trace", "reverse_trace")


def _traces_from(path: Path, source: ScenarioSource) -> ScenarioSource:
    """A scenario file's relative ``trace`` / ``reverse_trace`` paths (``[bottleneck]``'s
    and each ``[network]`` link's, hop's or fabric link kind's) read from the file's
    directory (the core reads them from the working directory): the scenario goes to the
    core with those paths made absolute, the rest unchanged."""
    if "trace" not in source.text:
        return source
    doc = source.document()
    if not doc:
        return source
    tables = [doc.get("bottleneck")]
    network = doc.get("network")
    if isinstance(network, dict):
        for key in ("links", "hops"):
            if isinstance(network.get(key), list):
                tables.extend(network[key])
        tables.extend(network.get(key) for key in ("host_link", "fabric_link"))
    changed = False
    for table in tables:
        if not isinstance(table, dict):
            continue
        for key in TRACE_KEYS:
            value = table.get(key)
            if isinstance(value, str) and value and not os.path.isabs(value):
                table[key] = os.path.normpath(os.path.join(path.parent.absolute(), value))
                changed = True
    return json_source(doc, source.label) if changed else source


def _explained(exc: Exception, source: ScenarioSource) -> Exception:
    """The core's error, naming the file for a syntax error (``<toml>: ...``) and saying
    what to do with a sweep file."""
    message = str(exc)
    named = not source.label.startswith("<")
    for tag in ("<toml>", "<json>"):
        if named and message.startswith(tag + ":"):
            message = source.label + message[len(tag) :]
    if message.startswith("base: unknown key"):
        doc = source.document() or {}
        if "base" in doc:
            label = source.label if named else "SWEEP"
            message = (
                f"{source.label}: a sweep file (it has base = ...), not a scenario: run it with "
                f"`ccsim sweep {label} -o DIR`, or list its runs with "
                f"`ccsim sweep {label} --dry-run`"
            )
    if message == str(exc):
        return exc
    return ScenarioError(message)


def check(source: ScenarioSource) -> None:
    """Parse and validate (build without running); raise ``ScenarioError`` if it cannot run."""
    try:
        _core.parse_check(source.text, source.fmt)
    except ScenarioError as exc:
        raise _explained(exc, source) from None


def _run_core(
    text: str,
    fmt: str,
    progress: Any,
    controller: Controller | None,
    interval_ns: int,
    cancel: Callable[[], None] | None = None,
) -> tuple[str, dict[str, Any], bytes | None]:
    """``_core.run``, or the policy driver for flows with ``cc = { kind = "policy",
    policy = ... }`` (Python callables as congestion controls, ``ccsim.gym.policy_cc``).
    ``cancel`` (:func:`ccsim.cancel.stop_check`) is asked between row batches while the
    core builds the tables (the policy driver hears it through ``progress`` only)."""
    if "policy" in text:
        from ccsim.gym.policy_cc import run_core

        return run_core(text, fmt, progress, controller, interval_ns)
    return _core.run(text, fmt, progress, controller, interval_ns, cancel)


def simulate(
    source: ScenarioSource,
    progress: Progress = False,
    controller: Controller | None = None,
    control_interval: str = "100ms",
    cancel: threading.Event | None = None,
) -> RunResult:
    """Run already-loaded scenario text (see :func:`run`)."""
    interval_ns = _core.duration_ns(control_interval, "control_interval")
    stop = stop_check(cancel)  # heard in the event loop, table building and conversion
    text, fmt = source.text, source.fmt
    try:
        if callable(progress):
            summary_json, raw, pcap = _run_core(
                text, fmt, watcher(progress, stop), controller, interval_ns, stop
            )
        elif progress:
            # rich's progress module only when a bar is shown: it is a tenth of the
            # command's start-up (issue 32)
            from ccsim.progress import progress_bar

            with progress_bar(enabled=True, description=source.label) as update:
                summary_json, raw, pcap = _run_core(
                    text, fmt, watcher(update, stop), controller, interval_ns, stop
                )
        else:
            summary_json, raw, pcap = _run_core(
                text, fmt, watcher(None, stop), controller, interval_ns, stop
            )
    except ScenarioError as exc:
        raise _explained(exc, source) from None
    result = RunResult.from_core(summary_json, raw, pcap, stop)
    result.summary["overrides"] = dict(source.overrides)
    result.summary["scenario"] = source.document()
    return result


def validate(scenario: Scenario, overrides: Mapping[str, Any] | None = None) -> None:
    """Check a scenario without running it: raises :class:`ccsim.ScenarioError` if it has
    an error (unknown key, missing unit, unknown algorithm or parameter, ...)."""
    check(load_scenario(scenario, overrides))


def run(
    scenario: Scenario,
    progress: Progress = False,
    controller: Controller | None = None,
    control_interval: str = "100ms",
    overrides: Mapping[str, Any] | None = None,
    cancel: threading.Event | None = None,
) -> RunResult:
    """Simulate a scenario and return its summary and tables.

    ``scenario`` is a path to a TOML file, TOML text, or a dict with the same keys.
    ``progress=True`` shows a progress bar on stderr; a callable instead receives the
    fraction of simulated time done (about every 1%). ``controller`` is called every
    ``control_interval`` of simulated time with the state of every TCP flow and may
    retune their congestion controllers (see :data:`Controller`); an exception it raises
    stops the run and propagates. ``overrides`` sets values by key path before the run
    (``{"flows[0].cc.g": 6, "seed": 3}``, as a sweep's ``[set]``); the summary records
    them (``overrides``) and the scenario as run (``scenario``). The simulation runs with
    the GIL released. Raises :class:`ccsim.ScenarioError` for invalid input, including a
    bad parameter change.

    Ctrl-C stops a run in any thread: on the main thread the run raises
    ``KeyboardInterrupt`` within about 0.1 s; in another thread (a ``ThreadPoolExecutor``)
    it raises ``KeyboardInterrupt`` there within about 0.1 s too, as long as SIGINT has
    Python's default handler (see :mod:`ccsim.cancel`; with a handler of your own, call
    :func:`ccsim.cancel_runs` from it). ``cancel``, a ``threading.Event``, stops this run
    (``KeyboardInterrupt``) when it is set. All of these are heard while the result tables
    are built and converted too, between batches of rows.
    """
    source = load_scenario(scenario, overrides)
    return simulate(source, progress, controller, control_interval, cancel)


install_sigint_hook()  # Ctrl-C also reaches runs in worker threads (ccsim.cancel)
