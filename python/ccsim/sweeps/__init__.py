"""Sweeps: a base scenario plus axes, expanded into runs, run and stored.

One role per module (as SEM's runners): :mod:`~ccsim.sweeps.spec` reads a sweep file and
expands its runs; :mod:`~ccsim.sweeps.store` keeps a sweep's results on disk (resumable);
:mod:`~ccsim.sweeps.execution` runs one run or a batch and hands outcomes to the store;
one backend per file, :mod:`~ccsim.sweeps.local` (threads) and :mod:`~ccsim.sweeps.dask`
(a Dask cluster); :mod:`~ccsim.sweeps.runner` is :func:`ccsim.sweep` itself.

The package is ``sweeps``, not ``sweep``: importing a subpackage sets it as an attribute of
``ccsim``, which would hide the function ``ccsim.sweep``.
"""
