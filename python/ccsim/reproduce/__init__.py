"""``ccsim reproduce``: the papers' figures as experiments, run, drawn and checked.

- :mod:`~ccsim.reproduce.experiment`: experiment files (package data under
  ``ccsim/experiments/<paper>/<figure>.toml``), parsed and validated.
- :mod:`~ccsim.reproduce.models`: the papers' analytic models, by name.
- :mod:`~ccsim.reproduce.verdict`: the one comparison of quoted numbers with results.
- :mod:`~ccsim.reproduce.runner`: run an experiment's sweeps (the sweep layer), draw its
  figure, judge its checks.
- :mod:`~ccsim.reproduce.report`: the summary (``index.html``, ``report.md``) and one page
  per paper of an output directory, every check counted by kind.
"""
