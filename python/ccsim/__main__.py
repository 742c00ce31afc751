"""``python -m ccsim`` is the ``ccsim`` command."""

import sys

from ccsim.cli import main

sys.exit(main())
