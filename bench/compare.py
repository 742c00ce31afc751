"""Run the ccsim vs ns-3 validation matrix and write bench/RESULTS.md.

Usage (from a checkout of the repository, after ``pip install '.[ns3]'``)::

    python bench/compare.py [--quick] [--only REGEX] [--work DIR] [--cpu N]
    python bench/compare.py --random [N] [--seed S] [--replicates R] [--budget-min MIN]
    python bench/compare.py --parking-lot [--quick] [--replicates R]
    python bench/compare.py --rerender bench/differential/runs.json [--reprobe] [--ns3]

The harness is the package ``bench/ns3/ccsim_ns3`` (not part of ``import ccsim``); this
file puts ``bench/ns3`` on the path and runs its command line (``python -m ccsim_ns3``
with ``PYTHONPATH=bench/ns3`` is the same).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "ns3"))

from ccsim_ns3.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
