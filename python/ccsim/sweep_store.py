"""The former name of :mod:`ccsim.sweeps.store`, kept because the documentation names it
(``ccsim.sweep_store.read_results``, ``read_series``): importing it gives that very
module."""

import sys

from ccsim.sweeps import store

sys.modules[__name__] = store
