"""``python -m ccsim_ns3`` (with ``bench/ns3`` on ``PYTHONPATH``)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], command="python -m ccsim_ns3"))
