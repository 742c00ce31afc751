"""ccsim: a packet-level network simulator for congestion-control and AQM research.

The simulator core is written in Rust (``ccsim._core``); this package turns scenarios into
runs and runs into Arrow tables, Parquet files, plots and a command-line interface.

>>> import ccsim
>>> result = ccsim.run("examples/single_newreno.toml")       # doctest: +SKIP
>>> result.summary["flows"][0]["goodput_mbps"]                # doctest: +SKIP
>>> result.tables["flow_series"].to_pandas()                  # doctest: +SKIP
>>> ccsim.sweep("examples/sweeps/newreno_buffer.toml", "out/nb")  # doctest: +SKIP
>>> ccsim.ppv.ideal_shares({"gold": 5, "silver": 5}, "100Mbps")  # doctest: +SKIP
"""

from ccsim import ppv
from ccsim._core import ScenarioError
from ccsim._core import version as _core_version
from ccsim.api import run, validate
from ccsim.results import RunResult
from ccsim.sweep_exec import SweepReport, sweep
from ccsim.sweep_spec import SweepError

__version__: str = _core_version()

__all__ = [
    "RunResult",
    "ScenarioError",
    "SweepError",
    "SweepReport",
    "__version__",
    "ppv",
    "run",
    "sweep",
    "validate",
]
