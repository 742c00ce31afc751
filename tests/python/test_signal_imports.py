"""Ctrl-C while Python imports ccsim's dependencies (numpy, pyarrow, rich: most of the
first second of every command) prints one line and exits 130, as at any later moment,
not Python's KeyboardInterrupt traceback.

The signal is sent by the process to itself the moment the dependency's import starts
(a finder on ``sys.meta_path``), so the tests do not depend on timing. The script
imports and calls ``ccsim.cli.main`` exactly as the installed ``ccsim`` command does.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from helpers import EXAMPLES

ENTRY = textwrap.dedent(
    """
    import os, signal, sys

    class SignalOnImport:
        "Sends the signal once, when MODULE's import starts."
        def __init__(self, module, sig):
            self.module, self.sig = module, sig
        def find_spec(self, name, path=None, target=None):
            if name == self.module and self.sig is not None:
                sig, self.sig = self.sig, None
                os.kill(os.getpid(), sig)
            return None

    sys.meta_path.insert(0, SignalOnImport(sys.argv[1], int(sys.argv[2])))
    from ccsim.cli import main  # as the ccsim console script does
    sys.exit(main(sys.argv[3:]))
    """
)


def _run(tmp_path: Path, module: str, sig: int, *args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", ENTRY, module, str(int(sig)), *map(str, args)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def _sweep(tmp_path: Path) -> Path:
    sweep = tmp_path / "sweep.toml"
    base = EXAMPLES / "single_newreno.toml"
    sweep.write_text(f'base = "{base}"\n[grid]\n"flows[0].cc.beta" = [0.5, 0.7]\n')
    return sweep


COMMANDS = {
    "run": lambda tmp: ["run", EXAMPLES / "single_newreno.toml", "-o", tmp / "out"],
    "sweep": lambda tmp: ["sweep", _sweep(tmp), "-o", tmp / "out"],
    "validate": lambda tmp: ["validate", EXAMPLES / "single_newreno.toml"],
}


@pytest.mark.parametrize("module", ["numpy", "pyarrow", "rich"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_ctrl_c_during_the_imports_is_one_line_and_130(tmp_path: Path, command: str, module: str):
    result = _run(tmp_path, module, signal.SIGINT, *COMMANDS[command](tmp_path))
    if (command, module) == ("validate", "rich"):
        # validate prints no table and no progress bar: it never imports rich (issue 32),
        # so the signal is never sent
        assert result.returncode == 0 and result.stdout.startswith("ok:"), result.stderr
        return
    assert "Traceback" not in result.stderr, result.stderr
    assert result.stderr.strip() == "error: interrupted", result.stderr
    assert result.returncode == 130
    assert not (tmp_path / "out").exists()


def test_sigterm_during_the_imports_is_one_line_and_143(tmp_path: Path):
    result = _run(tmp_path, "pyarrow", signal.SIGTERM, *COMMANDS["run"](tmp_path))
    assert result.stderr.strip() == "error: terminated (SIGTERM)", result.stderr
    assert result.returncode == 143
    assert not (tmp_path / "out").exists()


def test_importing_ccsim_imports_no_heavy_dependency():
    """What keeps the window before main() short: ``import ccsim.cli`` (the console
    script's first line) and ``import ccsim`` import none of them; their names still
    resolve when used."""
    code = textwrap.dedent(
        """
        import sys
        import ccsim.cli
        heavy = sorted(m for m in ("numpy", "pyarrow", "rich", "matplotlib") if m in sys.modules)
        assert not heavy, heavy
        import ccsim
        assert callable(ccsim.run) and ccsim.ScenarioError and ccsim.__version__
        assert ccsim.ppv.ideal_shares and "numpy" in sys.modules
        from ccsim import SweepError, sweep, validate, RunResult, SweepReport
        assert set(ccsim.__all__) <= set(dir(ccsim))
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
