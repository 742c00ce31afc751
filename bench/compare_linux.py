"""Run the ccsim vs Linux comparison and write bench/LINUX.md.

Usage (as root, from a checkout with ccsim installed)::

    python bench/compare_linux.py [--runs R] [--random N] [--only REGEX] [--rerender]

The harness is the package ``bench/linux/ccsim_linux`` (not part of ``import ccsim``); it
uses ``bench/ns3/ccsim_ns3/agreement.py`` for the statistical rule, so both are put on
the path.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE / "linux"), str(HERE / "ns3")]

from ccsim_linux.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
