"""Run the ccsim vs ns-3 validation matrix and write bench/RESULTS.md.

Usage (from the repository, after ``pip install '.[ns3]'``)::

    python bench/compare.py [--quick] [--only REGEX] [--work DIR]

Same as ``ccsim compare ns3``; the code lives in ``python/ccsim/compare.py``.
"""

import sys

from ccsim.compare import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
