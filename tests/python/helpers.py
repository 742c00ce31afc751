"""Test helpers: run the ``ccsim`` CLI in a subprocess, locate the examples."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"

#: 1000 flows at 10 Gbit/s for 10^6 s: months of wall time, and 1 % of its simulated
#: time is hours away, so only a signal (or a check before simulating) ends a run of it.
#: The stats interval keeps its series under the 10^8-row bound scenarios are held to.
SLOW_SCENARIO = """
duration = "1000000s"
stats_interval = "1000s"
[bottleneck]
rate = "10Gbps"
[[flows]]
count = 1000
rtt = "20ms"
"""


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str

    @property
    def stderr_lines(self) -> list[str]:
        return self.stderr.splitlines()


def run_cli(*args: str | Path, cwd: Path | None = None, timeout: float = 600) -> CliResult:
    """``python -m ccsim.cli ARGS`` with no terminal attached (so no progress bar)."""
    proc = subprocess.run(
        [sys.executable, "-m", "ccsim.cli", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


def assert_run_refused(tmp_path: Path, text: str, message: str, *args: str | Path) -> None:
    """``ccsim run`` of scenario ``text`` (with ``args``, e.g. ``--set K=V``) is refused as
    bad input must be: exit 2, one stderr line containing ``message``, nothing written."""
    path = tmp_path / "s.toml"
    path.write_text(text)
    out = tmp_path / "out"
    result = run_cli("run", path, "-o", out, *args)
    assert result.returncode == 2, result
    assert len(result.stderr_lines) == 1, result.stderr
    assert message in result.stderr_lines[0], result.stderr
    assert not out.exists()


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory`` with its bytes (to prove nothing changed)."""
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def tables_equal(a: pa.Table, b: pa.Table) -> bool:
    """Same schema and values, NaN equal to NaN (``pa.Table.equals`` says NaN != NaN)."""
    if a.schema != b.schema or a.num_rows != b.num_rows:
        return False
    for name in a.column_names:
        x = a.column(name).to_numpy(zero_copy_only=False)
        y = b.column(name).to_numpy(zero_copy_only=False)
        if x.dtype.kind == "f":
            if not np.array_equal(x, y, equal_nan=True):
                return False
        elif not np.array_equal(x, y):
            return False
    return True
