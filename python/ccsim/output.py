"""Writing a result directory all at once: stage next to it, then move into place.

Every run writes every table of :data:`KNOWN_TABLES` (``ccsim.output.KNOWN_TABLES``), one
``<name>.parquet`` each, **always present, and empty on purpose** when the scenario cannot
fill it: a table has the same name and schema in every result directory, so a script reads
``cc_vars.parquet`` or ``deadline_control.parquet`` without first checking that it exists,
and an empty table says "nothing of this kind happened" rather than "not recorded". For
example ``cc_trace`` has rows only for flows with ``trace = true``, ``rtt_samples`` only
with ``[trace] rtt_samples = true``, ``transfers`` only for flows of a given size,
``deadline_control`` only with a deadline controller, ``cc_vars`` only for traced flows
whose algorithm has model variables (BBR's bandwidth and min RTT, ...).
"""

from __future__ import annotations

import contextlib
import os
import re
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
#: The run figures (``ccsim.plots.run.FIGURES`` and ``NETWORK_FIGURES``) in every format
#: (``ccsim.plots.style``).
PLOT_FILES = tuple(
    f"{stem}.{fmt}"
    for stem in ("throughput", "queue_delay", "sojourn_cdf", "cwnd", "rtt", "links", "link_queues")
    for fmt in ("png", "pdf", "svg")
)
OWNED_FILES = frozenset(
    [f"{name}.parquet" for name in KNOWN_TABLES] + ["summary.json", "trace.pcapng", *PLOT_FILES]
)


#: A staging directory's name keeps at most this many characters of the result
#: directory's name, so that it stays within NAME_MAX whatever that name's length.
STAGE_NAME_CHARS = 64


class OutputDirError(Exception):
    """The output path cannot be used (it is a file, ...)."""


def _name_max(directory: Path) -> int:
    try:
        return os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):  # pragma: no cover - not POSIX
        return 255


def _probe(directory: Path) -> None:
    """Create and remove a hidden directory in ``directory``: the only sure test that ccsim
    can write there (``os.access`` says yes to root in /proc and on read-only mounts)."""
    try:
        probe = tempfile.mkdtemp(prefix=".ccsim-probe-", dir=directory)
    except OSError as exc:
        raise OutputDirError(f"{directory}: cannot write there: {exc.strerror or exc}") from exc
    os.rmdir(probe)


def check_output_dir(out_dir: Path) -> None:
    """Fail early, before simulating, if ``out_dir`` cannot become a result directory: an
    empty path (which would mean the current directory), a name too long for the file
    system, a file in the way, or a place where nothing can be created. Writes nothing
    (but a probe directory, removed at once)."""
    absolute = out_dir.absolute()
    try:
        exists = out_dir.exists()
    except OSError as exc:  # e.g. ENAMETOOLONG
        raise OutputDirError(f"{out_dir}: unusable path: {exc.strerror or exc}") from exc
    if exists and not out_dir.is_dir():
        raise OutputDirError(f"{out_dir}: exists and is not a directory")
    parent = absolute.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise OutputDirError(f"{out_dir}: {parent} is not a directory")
    limit = _name_max(parent)
    for part in absolute.parts:
        if len(os.fsencode(part)) > limit:
            raise OutputDirError(
                f"{out_dir}: a name of {len(os.fsencode(part))} bytes is too long "
                f"(at most {limit} here)"
            )
    _probe(out_dir if exists else parent)


def output_path(text: str | os.PathLike[str]) -> Path:
    """``text`` as a Path, refusing ``""`` (which Path reads as the current directory)."""
    if os.fspath(text) == "":
        raise OutputDirError("output directory: empty path (give a directory name)")
    return Path(text)


def stage_prefix(out_dir: Path) -> str:
    """The name of ``out_dir``'s staging directories up to the process id."""
    return f".{out_dir.name[:STAGE_NAME_CHARS]}.ccsim-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: someone else's process, alive
        return True
    return True


#: A staging directory of any result directory: ``.NAME.ccsim-PID-XXXX``.
_STAGE = re.compile(r"\..+\.ccsim-(\d+)-[^/]+")


def remove_stale_stages(out_dir: Path) -> None:
    """Remove the staging directories beside ``out_dir`` (of any result directory in its
    parent, not only of ``out_dir``: a killed run's stage would otherwise stay until a
    write to that same name, issue 33) left by a ccsim process that is gone (SIGKILL, a
    power cut): named ``.NAME.ccsim-PID-XXXX`` with PID no longer running. A directory
    of a live process (a concurrent write) and anything else stay."""
    parent = out_dir.absolute().parent
    pattern = _STAGE
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    for entry in entries:
        m = pattern.fullmatch(entry.name)
        if m is None or not entry.is_dir(follow_symlinks=False):
            continue
        pid = int(m.group(1))
        if pid != os.getpid() and not _alive(pid):
            with contextlib.suppress(OSError):
                shutil.rmtree(entry.path)


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
    its files replace those in ``out_dir``. On an exception (also KeyboardInterrupt, and
    SIGTERM, which the CLI raises as one) ``out_dir`` is untouched and the staging
    directory removed; one left by a killed process is removed by the next write."""
    check_output_dir(out_dir)
    parent = out_dir.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    remove_stale_stages(out_dir)
    # the process id in the name tells a later write whether this one is still going
    prefix = f"{stage_prefix(out_dir)}{os.getpid()}-"
    stage = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    try:
        yield stage
        publish(stage, out_dir)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
