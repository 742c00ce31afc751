"""Plots: one module set for runs, sweeps and reproductions, drawn with matplotlib's Agg.

- :mod:`ccsim.plot`: the PNGs of one run's result directory (``ccsim plot``).
- :mod:`ccsim.sweep_plot`: a sweep's ``[plot]`` (``ccsim sweep --plot``).
- :mod:`ccsim.plots.figure`: a paper's figure from a plot description (``ccsim reproduce``).

Plots read tables; they never run simulations.
"""
