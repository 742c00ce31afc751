"""The ccsim vs ns-3 harness: the same dumbbell scenarios in ccsim and in ns-3 (our C++
program ``bench/ns3/dumbbell.cc``, compiled against the PyPI ``ns3`` wheel), every metric
computed by the same code from the raw counts each simulator reports.

Not part of the ``ccsim`` package: it runs from a checkout (``python bench/compare.py``,
or ``python -m ccsim_ns3`` with ``bench/ns3`` on ``PYTHONPATH``).

Modules, lower ones never importing upper ones:

- ``agreement``: the statistical agreement rule over paired runs, for any comparison
  (standard library and numpy only, nothing of ns-3);
- ``model``: the simulator-neutral scenario; ``matrix``: the fixed matrix (matrix.toml);
  ``draws``: the random scenarios and the shifts of perturbed reruns;
- ``translate``: a scenario as ccsim's scenario dict and as dumbbell.cc's configuration;
- ``metrics``: the metrics from raw counts, their targets and paired differences;
  ``causes``: the known causes, read from ``bench/CAUSES.md``;
- ``runner``: compile and run ns-3, run ccsim, one CPU or one ns-3 program per CPU;
- ``report`` (bench/RESULTS.md), ``matrix_run``; ``probes``, ``differential``,
  ``differential_report`` (bench/DIFFERENTIAL.md); ``cli``.
"""
