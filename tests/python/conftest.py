"""Test-session set-up shared by every test file."""

from __future__ import annotations

import signal

# A command started in the background by a non-interactive shell (`cmd &` in a script,
# as some CI runners and `nohup ... &` do) inherits SIGINT ignored (POSIX, "Signals and
# Error Handling"), and Python then leaves it ignored: every Ctrl-C test would wait for a
# signal that never arrives (a run of `test_interrupt.py` hung that way). The tests are
# about what ccsim does on Ctrl-C, so they get Python's usual handler; child processes
# started afterwards inherit the default disposition and install it too.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
