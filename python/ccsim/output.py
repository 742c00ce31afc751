"""Writing a result directory all at once: stage next to it, then move into place."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ccsim import _core

#: Files ccsim writes into a result directory. When results are written again into an
#: existing directory, those of them the new run did not produce are removed (a stale plot
#: would contradict the new data); any other file is left alone.
KNOWN_TABLES: tuple[str, ...] = tuple(_core.table_names())
#: The run figures (``ccsim.plots.run.FIGURES``) in every format (``ccsim.plots.style``).
PLOT_FILES = tuple(
    f"{stem}.{fmt}"
    for stem in ("throughput", "queue_delay", "sojourn_cdf", "cwnd", "rtt")
    for fmt in ("png", "pdf", "svg")
)
OWNED_FILES = frozenset(
    [f"{name}.parquet" for name in KNOWN_TABLES] + ["summary.json", *PLOT_FILES]
)


class OutputDirError(Exception):
    """The output path cannot be used (it is a file, ...)."""


def check_output_dir(out_dir: Path) -> None:
    """Fail early, before simulating, if ``out_dir`` cannot become a result directory."""
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputDirError(f"{out_dir}: exists and is not a directory")
    parent = out_dir.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise OutputDirError(f"{out_dir}: {parent} is not a directory")
    if not os.access(parent if not out_dir.exists() else out_dir, os.W_OK):
        raise OutputDirError(f"{out_dir}: not writable")


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def publish(stage: Path, out_dir: Path) -> None:
    """Move the staged files into ``out_dir`` (a rename when ``out_dir`` is new)."""
    if not out_dir.exists():
        stage.chmod(0o777 & ~_umask())
        os.replace(stage, out_dir)
        return
    produced = {entry.name for entry in stage.iterdir()}
    for name in sorted(produced):
        os.replace(stage / name, out_dir / name)
    for name in sorted(OWNED_FILES - produced):
        (out_dir / name).unlink(missing_ok=True)


@contextmanager
def staged_dir(out_dir: Path) -> Iterator[Path]:
    """Yield an empty temporary directory next to ``out_dir``; when the block succeeds,
    its files replace those in ``out_dir``. On an exception ``out_dir`` is untouched."""
    check_output_dir(out_dir)
    parent = out_dir.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.ccsim-", dir=parent))
    try:
        yield stage
        publish(stage, out_dir)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
