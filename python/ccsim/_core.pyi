"""Type stubs of the Rust extension module (crates/ccsim-py)."""

from collections.abc import Callable, Iterable
from typing import Any

__version__: str

class ScenarioError(ValueError):
    """A scenario that cannot be run; the message is one line, ``path: what was expected``."""

# {table: {column: (dtype, data)}}: dtype "f64" | "u64" | "u32" with little-endian bytes,
# or "str" with a list of str.
RawTables = dict[str, dict[str, tuple[str, bytes | list[str]]]]

def parse_check(text: str, fmt: str) -> None: ...

#: A controller gets every TCP flow's state and returns ``(flow_id, name, value)`` changes.
Controller = Callable[[list[dict[str, Any]]], Iterable[Any] | None]

def run(
    text: str,
    fmt: str,
    progress: Callable[[float], None] | None = None,
    controller: Controller | None = None,
    control_interval_ns: int = 100_000_000,
) -> tuple[str, RawTables, bytes | None]: ...
def estimate(text: str, fmt: str) -> dict[str, Any]: ...
def duration_ns(text: str, key: str) -> int: ...
def version() -> str: ...

#: {"pgo": one line on profile-guided optimisation, as decided by pgo/ccsim_build.py}
def build_info() -> dict[str, str]: ...

#: Every table a run produces, in order.
def table_names() -> list[str]: ...

#: Every congestion control, then every queue discipline, with its parameter table:
#: ``{"name", "aliases", "family", "summary", "reference", "params": [{"name", "unit",
#: "default", "accepts", "help"}, ...]}`` (``ccsim algorithms``).
def algorithms() -> list[dict[str, Any]]: ...

#: ``spec``: a preset name ("gold", "silver", "background", "voice") or
#: ``[[rate_bps, value], ...]`` points.
def tvf_values(spec: str | list[list[float]], rates_bps: list[float]) -> list[float]: ...
def tvf_ideal_shares(
    classes: list[tuple[str | list[list[float]], int]], capacity_bps: float
) -> tuple[float, list[float]]: ...
