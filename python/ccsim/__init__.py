"""ccsim: a packet-level network simulator for congestion-control and AQM research.

The simulator core is written in Rust (``ccsim._core``); this package turns scenarios into
runs and runs into Arrow tables, Parquet files, plots and a command-line interface.

>>> import ccsim
>>> result = ccsim.run("examples/single_newreno.toml")       # doctest: +SKIP
>>> result.summary["flows"][0]["goodput_mbps"]                # doctest: +SKIP
>>> result.tables["flow_series"].to_pandas()                  # doctest: +SKIP
>>> ccsim.sweep("examples/sweeps/newreno_buffer.toml", "out/nb")  # doctest: +SKIP
>>> ccsim.read_series("out/nb", "flow_series")  # rows + swept values  # doctest: +SKIP
>>> ccsim.ppv.ideal_shares({"gold": 5, "silver": 5}, "100Mbps")  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported when first used (below): see __getattr__
    from ccsim import ppv
    from ccsim._core import ScenarioError
    from ccsim.api import run, validate
    from ccsim.cancel import cancel_runs
    from ccsim.results import RunResult
    from ccsim.scenario import SweepError
    from ccsim.sweeps.runner import SweepReport, sweep
    from ccsim.sweeps.store import read_series_with_axes as read_series

    __version__: str

#: Where each public name lives. They are imported when first used, so that ``import
#: ccsim`` (and the ``ccsim`` command's ``from ccsim.cli import main``) does not import
#: numpy, pyarrow and rich before ``ccsim.cli.main`` is there to turn Ctrl-C into one line.
_LAZY = {
    "ScenarioError": "ccsim._core",
    "run": "ccsim.api",
    "cancel_runs": "ccsim.cancel",
    "validate": "ccsim.api",
    "RunResult": "ccsim.results",
    "SweepReport": "ccsim.sweeps.runner",
    "sweep": "ccsim.sweeps.runner",
    "SweepError": "ccsim.scenario",
    "read_series": "ccsim.sweeps.store:read_series_with_axes",
}


def __getattr__(name: str) -> Any:
    if name == "__version__":
        value: Any = importlib.import_module("ccsim._core").version()
    elif name in _LAZY:
        module, _, attribute = _LAZY[name].partition(":")
        value = getattr(importlib.import_module(module), attribute or name)
    elif name == "ppv":
        value = importlib.import_module("ccsim.ppv")
    else:
        raise AttributeError(f"module 'ccsim' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "RunResult",
    "ScenarioError",
    "SweepError",
    "SweepReport",
    "__version__",
    "cancel_runs",
    "ppv",
    "read_series",
    "run",
    "sweep",
    "validate",
]
