"""The former name of :mod:`ccsim.sweeps.spec`, kept because the documentation names it
(``ccsim.sweep_spec.derive_seed``): importing it gives that very module."""

import sys

from ccsim.sweeps import spec

sys.modules[__name__] = spec
