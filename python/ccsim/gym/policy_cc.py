"""Learned (or any Python) policies as congestion controls in ordinary scenarios.

A flow group written ``cc = { kind = "policy", policy = "module:attr", ... }`` is driven
by that Python object: every monitor interval (``interval``, or ``interval_rtts`` base
RTTs of the flow's path, one by default) it receives the flow's observation — a history
of named per-interval features, as :class:`ccsim.gym.CcEnv` gives — and returns an action
that sets the flow's rate or window (``mode``) absolutely or multiplicatively
(``action``). ``ccsim run``, ``ccsim.run`` and sweeps route such scenarios here; the run's
summary and tables are those of any run.

The object: a callable ``obs -> action`` (numpy array in, number or array out), e.g. a
trained model's predict wrapped in a function; or a class, instantiated once per flow (for
a policy with state). Optional attributes ``features`` (names, default Aurora's three)
and ``history`` (intervals, default 10) choose its observation. ``"path/file.py:attr"``
loads from a file.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ccsim import _core
from ccsim.gym.agent import AURORA_DELTA, ActionSpec, FlowAgent
from ccsim.gym.stats import AURORA_FEATURES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


def load_object(spec: str, key: str) -> Any:
    """``module:attr`` or ``path/file.py:attr``; errors are ``ScenarioError`` naming ``key``."""
    module_name, _, attr = spec.rpartition(":")
    try:
        if module_name.endswith(".py"):
            path = Path(module_name)
            mod_spec = importlib.util.spec_from_file_location(f"_ccsim_policy_{path.stem}", path)
            if mod_spec is None or mod_spec.loader is None:
                raise ImportError(f"cannot load {path}")
            module = importlib.util.module_from_spec(mod_spec)
            mod_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
        obj = module
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError, OSError) as exc:
        raise _core.ScenarioError(f"{key}: cannot load {spec!r}: {exc}") from None
    if not callable(obj):
        raise _core.ScenarioError(f"{key}: {spec!r} is not callable")
    return obj


def policy_flows(doc: dict[str, Any]) -> list[tuple[int, str, dict[str, Any]]]:
    """``(first TCP flow id, key path, cc table)`` of every group driven by a Python
    policy, with its count in the table as ``_count``."""
    out = []
    flow_id = 0
    for g, group in enumerate(doc.get("flows", []) or []):
        count = int(group.get("count", 1)) if isinstance(group, dict) else 1
        cc = group.get("cc") if isinstance(group, dict) else None
        if isinstance(cc, dict) and cc.get("kind") == "policy" and "policy" in cc:
            out.append((flow_id, f"flows[{g}].cc", dict(cc, _count=count)))
        flow_id += count
    return out


def _document(text: str, fmt: str) -> dict[str, Any] | None:
    try:
        doc = json.loads(text) if fmt == "json" else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError):
        return None
    return doc if isinstance(doc, dict) else None


class _Driven:
    """One flow, its policy and its next decision time."""

    def __init__(self, stepper: _core.Stepper, flow_id: int, key: str, cc: dict[str, Any]):
        obj = load_object(str(cc["policy"]), f"{key}.policy")
        self.policy: Callable[[np.ndarray], Any] = obj() if isinstance(obj, type) else obj
        control = cc.get("mode", "rate")
        mode = cc.get("action", "multiplicative")
        features = tuple(getattr(self.policy, "features", AURORA_FEATURES))
        history = int(getattr(self.policy, "history", 10))
        bounds = (0.1e6, 1e11) if control == "rate" else (1.0, 1e7)
        spec = ActionSpec(control, mode, AURORA_DELTA, *bounds)
        if control == "cwnd":
            start = float(cc.get("cwnd_pkts", 10))
        elif isinstance(cc.get("rate_bps"), str):
            start = _rate_bps(cc["rate_bps"], f"{key}.rate_bps")
        else:
            start = float(cc.get("rate_bps", 1e6))
        try:
            self.agent = FlowAgent(stepper, flow_id, spec, features, history, start)
        except ValueError as exc:
            raise _core.ScenarioError(f"{key}.policy: {exc}") from None
        if "interval" in cc:
            self.interval_ns = _core.duration_ns(str(cc["interval"]), f"{key}.interval")
        else:
            rtts = float(cc.get("interval_rtts", 1.0))
            self.interval_ns = max(int(rtts * stepper.path_rtt_ns()[flow_id]), 1)
        self.next_ns = self.interval_ns

    def decide(self) -> None:
        obs = self.agent.observe()
        action = np.asarray(self.policy(obs), dtype=np.float64).reshape(-1)
        self.agent.act(float(action[0]))
        self.next_ns += self.interval_ns


def _rate_bps(text: str, key: str) -> float:
    """A rate string the core has already accepted (``"9Mbps"``), in bit/s."""
    t = text.strip().lower().replace("bit/s", "bps")
    for unit, scale in (("gbps", 1e9), ("mbps", 1e6), ("kbps", 1e3), ("bps", 1.0)):
        if t.endswith(unit):
            try:
                return float(t[: -len(unit)]) * scale
            except ValueError:
                break
    raise _core.ScenarioError(f'{key}: expected a rate like "10Mbps", got {text!r}')


def run_core(
    text: str,
    fmt: str,
    progress: Callable[[float], None] | None = None,
    controller: Any = None,
    control_interval_ns: int = 100_000_000,
) -> tuple[str, dict[str, Any], bytes | None]:
    """``_core.run``, or, if the scenario has flows driven by Python policies, the same
    run stepped interval by interval with the policies deciding."""
    doc = _document(text, fmt) if "policy" in text else None
    plans = policy_flows(doc) if doc else []
    if not plans:
        return _core.run(text, fmt, progress, controller, control_interval_ns)
    if controller is not None:
        raise _core.ScenarioError("controller: cannot be combined with flows driven by a policy")
    _core.parse_check(text, fmt)
    stepper = _core.Stepper(text, fmt)
    driven = [
        _Driven(stepper, first + k, key, cc)
        for first, key, cc in plans
        for k in range(cc["_count"])
    ]
    end = stepper.duration_ns
    reported = 0.0
    while True:
        t = min(d.next_ns for d in driven)
        if t > end:
            break
        stepper.advance(t)
        for d in driven:
            if d.next_ns <= t:
                d.decide()
        if progress is not None and t / end - reported >= 0.01:
            reported = t / end
            progress(reported)
    summary, tables, pcap = stepper.finish()
    if progress is not None:
        progress(1.0)
    return summary, tables, pcap
