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

#: ccsim validate: a [network] as built, as JSON (None for a dumbbell).
def network_report(text: str, fmt: str) -> str | None: ...

#: A controller gets every TCP flow's state and returns ``(flow_id, name, value)`` changes.
Controller = Callable[[list[dict[str, Any]]], Iterable[Any] | None]

def run(
    text: str,
    fmt: str,
    progress: Callable[[float], None] | None = None,
    controller: Controller | None = None,
    control_interval_ns: int = 100_000_000,
    cancel: Callable[[], None] | None = None,
) -> tuple[str, RawTables, bytes | None]: ...
def estimate(text: str, fmt: str) -> dict[str, Any]: ...

#: Real-time emulation (ccsim.emulate): what the kernel must play, one dict per TCP flow.
def emulation_plan(text: str, fmt: str) -> list[dict[str, Any]]: ...

#: Run in real time between TUN devices; (summary_json, tables, timing).
def emulate(
    text: str,
    fmt: str,
    sender_tun: str,
    receiver_tun: str,
    base_port: int,
    ready: Callable[[], float],
    progress: Callable[[float], None],
) -> tuple[str, dict[str, dict[str, tuple[str, Any]]], dict[str, Any]]: ...
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

#: A run advanced from Python one interval at a time (``ccsim.gym``); simulates with the
#: GIL released. Stays on the thread that built it.
class Stepper:
    #: Names of the numbers ``stats()`` / ``flow_stats()`` give per TCP flow, in order.
    STAT_FIELDS: list[str]
    def __init__(self, text: str, fmt: str) -> None: ...
    @property
    def now_ns(self) -> int: ...
    @property
    def duration_ns(self) -> int: ...
    @property
    def tcp_flows(self) -> int: ...
    def path_rtt_ns(self) -> list[int]: ...
    def advance(self, until_ns: int) -> bool: ...
    def stats(self) -> list[list[float]]: ...
    def flow_stats(self, flow_id: int) -> list[float]: ...
    def set_param(self, flow_id: int, name: str, value: float | bool | str) -> None: ...
    def finish(self) -> tuple[str, RawTables, bytes | None]: ...

#: Advance each stepper to its own time in one call with the GIL released.
def advance_many(steppers: list[Stepper], until_ns: list[int]) -> list[bool]: ...
def mahimahi_trace(name: str, data: bytes | None = None) -> bytes: ...
