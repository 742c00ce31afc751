"""Type stubs of the Rust extension module (crates/ccsim-py)."""

from collections.abc import Callable

__version__: str

class ScenarioError(ValueError):
    """A scenario that cannot be run; the message is one line, ``path: what was expected``."""

# {table: {column: (dtype, data)}}: dtype "f64" | "u64" | "u32" with little-endian bytes,
# or "str" with a list of str.
RawTables = dict[str, dict[str, tuple[str, bytes | list[str]]]]

def parse_check(text: str, fmt: str) -> None: ...
def run(
    text: str, fmt: str, progress: Callable[[float], None] | None = None
) -> tuple[str, RawTables]: ...
def version() -> str: ...
