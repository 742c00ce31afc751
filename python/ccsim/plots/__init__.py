"""Plots: one module set for runs, sweeps and reproductions, drawn with matplotlib's Agg.

- :mod:`ccsim.plots.formats`: ``--format`` (PNG by default; PDF and SVG when asked),
  without importing matplotlib.
- :mod:`ccsim.plots.style`: the shared look, legends, and saving a figure.
- :mod:`ccsim.plots.text`: short labels for values (queue tables) and the scenario caption.
- :mod:`ccsim.plots.run`: the figures of one run's result directory (``ccsim plot``).
- :mod:`ccsim.plots.sweep`: a sweep's ``[plot]`` (``ccsim sweep --plot``).
- :mod:`ccsim.plots.figure`: a paper's figure from a plot description (``ccsim reproduce``).

Plots read tables; they never run simulations.
"""
