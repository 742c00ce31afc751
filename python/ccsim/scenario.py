"""Scenario files and ``--set`` overrides: reading a scenario or sweep file within a size
bound, key paths (``flows[0].cc.g``) and setting values by them.

:mod:`ccsim.api` reads scenarios with this module and sweeps (:mod:`ccsim.sweeps.spec`)
build their runs with it; it imports nothing of either.
"""

from __future__ import annotations

import math
import os
import re
import stat
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: A key path into an algorithm table that does not exist yet creates it with this kind
#: (the schema's default): ``flows[0].cc.beta`` on a flow without ``cc`` is NewReno's beta.
DEFAULT_KINDS = {"cc": "newreno", "queue": "droptail"}

#: The largest scenario or sweep file read: a larger one (or a device or pipe that does not
#: end, like /dev/zero) is refused in one line before it fills the memory.
MAX_INPUT_BYTES = 16 * 1024 * 1024

KEY_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
#: A step of a key path: a key, or the name of an entry of an array of named tables
#: (``network.links.a-b.rate``), so hyphens are allowed as in TOML's bare keys.
_STEP_NAME = r"[A-Za-z_][A-Za-z0-9_-]*"
_SEGMENT = re.compile(rf"({_STEP_NAME})((?:\[\d+\])*)")
_INDEX = re.compile(r"\[(\d+)\]")


class SweepError(ValueError):
    """A sweep that cannot be run (bad file, unknown key path, empty axis, ...), or a
    ``--set`` override that does not fit its scenario (``ccsim.SweepError``).

    Raised before anything is written; the CLI shows it as one line and exits with 2."""


class InputTooLarge(ValueError):
    """A scenario or sweep file over :data:`MAX_INPUT_BYTES` (or one that does not end)."""


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"


def read_input(path: Path, what: str) -> str:
    """The text of a scenario or sweep file (``what`` names it in messages), reading at
    most :data:`MAX_INPUT_BYTES` + 1 bytes: raises :class:`InputTooLarge` for a larger
    file (by its size, unread) or a device or pipe with more (``/dev/zero``), ``OSError``
    or ``UnicodeDecodeError`` for a file that cannot be read."""
    limit = f"at most {MAX_INPUT_BYTES // (1024 * 1024)} MB"
    with open(path, "rb") as f:
        info = os.fstat(f.fileno())
        if stat.S_ISREG(info.st_mode) and info.st_size > MAX_INPUT_BYTES:
            raise InputTooLarge(f"{path}: {what} of {_mb(info.st_size)}; {limit}")
        data = f.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        why = "" if stat.S_ISREG(info.st_mode) else " (a device or pipe that may not end)"
        raise InputTooLarge(f"{path}: {what} has more than {limit[8:]}{why}; {limit}")
    return data.decode("utf-8")


# --------------------------------------------------------------------------- key paths


@dataclass(frozen=True)
class KeyPath:
    """``flows[0].cc.g`` as steps: ``("flows", 0, "cc", "g")``."""

    text: str
    steps: tuple[str | int, ...]

    @classmethod
    def parse(cls, text: str) -> KeyPath:
        if not isinstance(text, str) or not text.strip():
            raise SweepError(f'{text!r}: a key path is a string like "flows[0].rtt"')
        steps: list[str | int] = []
        for part in text.strip().split("."):
            m = _SEGMENT.fullmatch(part)
            if m is None:
                raise SweepError(
                    f'"{text}": not a key path (names joined by dots, with [N] indices, '
                    'like "flows[0].cc.beta")'
                )
            steps.append(m.group(1))
            steps.extend(int(i) for i in _INDEX.findall(m.group(2)))
        return cls(format_path(steps), tuple(steps))

    def is_prefix_of(self, other: KeyPath) -> bool:
        return other.steps[: len(self.steps)] == self.steps


def format_path(steps: Sequence[str | int]) -> str:
    out = ""
    for step in steps:
        if isinstance(step, int):
            out += f"[{step}]"
        else:
            out += f".{step}" if out else step
    return out


def set_path(tree: Any, path: KeyPath, value: Any) -> Any:
    """A copy of ``tree`` with ``value`` at ``path`` (only the containers on the path are
    copied; ``tree`` is not changed). Raises :class:`SweepError` if the path cannot be
    reached in this tree (an index past the end, a step into a number, ...)."""
    return _set(tree, path, 0, value)


def _set(node: Any, path: KeyPath, i: int, value: Any) -> Any:
    if i == len(path.steps):
        return value
    step = path.steps[i]
    where = format_path(path.steps[:i]) or "the scenario"
    if isinstance(step, str) and isinstance(node, list) and i > 0:
        step = _named_entry(node, path, i, where)
    if isinstance(step, int):
        if not isinstance(node, list):
            kind = "missing" if node is None else f"{with_article(node)}, not an array"
            raise SweepError(f"{path.text}: {where} is {kind} in the base scenario")
        if step >= len(node):
            raise SweepError(
                f"{path.text}: {where} has {len(node)} entr{'y' if len(node) == 1 else 'ies'} "
                f"in the base scenario, so there is no [{step}]"
            )
        copy = list(node)
        copy[step] = _set(node[step], path, i + 1, value)
        return copy
    if node is None and i > 0:
        parent = path.steps[i - 1]
        node = {"kind": DEFAULT_KINDS[parent]} if parent in DEFAULT_KINDS else {}
    elif isinstance(node, str) and i > 0:
        # An algorithm given by name ("cdg") becomes a table so a parameter can be set.
        node = {"kind": node}
    if not isinstance(node, dict):
        raise SweepError(
            f"{path.text}: {where} is {with_article(node)} in the base scenario, not a table"
        )
    copy = dict(node)
    copy[step] = _set(node.get(step), path, i + 1, value)
    return copy


def entry_name(entry: Any) -> str | None:
    """The name an entry of an array of tables answers to in a key path: its ``name``, or
    a ``[[network.links]]`` link's default ``<from>-<to>``."""
    if not isinstance(entry, Mapping):
        return None
    if isinstance(entry.get("name"), str):
        return entry["name"]
    if isinstance(entry.get("from"), str) and isinstance(entry.get("to"), str):
        return f"{entry['from']}-{entry['to']}"
    return None


def _named_entry(node: list[Any], path: KeyPath, i: int, where: str) -> int:
    """The index of the entry of ``node`` named ``path.steps[i]`` (``network.links.ab``,
    ``flows.bulk``): a key path may address an array of named tables by name."""
    name = path.steps[i]
    found = [k for k, entry in enumerate(node) if entry_name(entry) == name]
    if len(found) == 1:
        return found[0]
    names = [n for n in map(entry_name, node) if n is not None]
    if not names:
        raise SweepError(
            f"{path.text}: {where} is an array in the base scenario, not a table "
            f"(its entries have no names: use an index, {where}[0])"
        )
    if found:
        raise SweepError(
            f"{path.text}: {len(found)} entries of {where} are named {name!r}; use an index"
        )
    hint = ""
    if isinstance(name, str) and name.endswith("-reverse"):
        hint = "; a both_ways link's reverse takes the settings of the link it reverses"
    raise SweepError(
        f"{path.text}: no entry of {where} is named {name!r} in the base scenario "
        f"(names: {', '.join(names)}){hint}"
    )


def resolve_names(tree: Any, path: KeyPath) -> KeyPath:
    """``path`` with every entry named by name given by its index in ``tree``, as the
    core's error messages write it (``network.links.ab.rate`` is ``network.links[0].rate``
    when ``ab`` is the first link); unchanged where it does not resolve."""
    steps: list[str | int] = []
    node = tree
    for i, step in enumerate(path.steps):
        if isinstance(step, str) and isinstance(node, list):
            try:
                step = _named_entry(node, path, i, format_path(steps))
            except SweepError:
                return path
        steps.append(step)
        if isinstance(step, int):
            node = node[step] if isinstance(node, list) and step < len(node) else None
        else:
            node = node.get(step) if isinstance(node, Mapping) else None
    return KeyPath(format_path(steps), tuple(steps))


def apply_overrides(tree: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the scenario ``tree`` with each ``"key.path": value`` set in order: a
    sweep's ``[set]`` and ``ccsim run --set``. Raises :class:`SweepError` naming the key
    path when it is not a path or does not fit the scenario."""
    out = dict(tree)
    for key, value in overrides.items():
        out = set_path(out, KeyPath.parse(key), value)
    return out


def parse_override(text: str) -> tuple[str, Any]:
    """``"flows[0].cc.g=6"`` as ``("flows[0].cc.g", 6)``.

    The value is read as a TOML value (``6``, ``0.7``, ``true``, ``"50ms"``,
    ``{ kind = "cubic" }``, ``[1, 2]``); text that is not one (``50ms``, ``cubic``) is
    taken as a string, so the shell's quotes may be left out. Raises :class:`SweepError`.
    """
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise SweepError(f"--set: expected KEY=VALUE like flows[0].cc.g=6, got {text!r}")
    path = KeyPath.parse(key.strip())
    raw = raw.strip()
    if not raw:
        raise SweepError(f"--set {path.text}: no value after '=' (flows[0].cc.g=6)")
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    if isinstance(value, float) and math.isinf(value) and raw.lstrip("+-") != "inf":
        raise SweepError(
            f"--set {path.text}: {raw} is beyond the largest number (about 1.8e308); "
            "expected a finite number"
        )
    return path.text, value


def type_name(value: Any) -> str:
    """The kind of a TOML value, without an article."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "table"
    return type(value).__name__


def with_article(value: Any) -> str:
    name = type_name(value)
    return f"an {name}" if name[0] in "aeiou" else f"a {name}"
