"""The documentation site (``mkdocs.yml``, ``docs/``) builds with warnings as errors."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import REPO

pytest.importorskip("mkdocs", reason="mkdocs is in the [test] extra")
pytest.importorskip("material", reason="mkdocs-material is in the [test] extra")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ)
    # Material >= 9.7 prints a banner about MkDocs 2.0 on every build; it is not a warning
    # about this site.
    env["NO_MKDOCS_2_WARNING"] = "1"
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", "mkdocs.yml", "-d", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{log[-5000:]}"
    # --strict aborts on logged warnings; this also catches any printed another way.
    warnings = [line for line in log.splitlines() if re.search(r"\bWARNING\b", line)]
    assert not warnings, "\n".join(warnings)
    return out


def _html(site: Path, page: Path) -> Path:
    """Where mkdocs writes ``page`` (relative to docs/) with its default directory URLs."""
    return site / ("index.html" if page.stem == "index" else f"{page.with_suffix('')}/index.html")


def test_site_builds_with_warnings_as_errors(site: Path) -> None:
    pages = sorted(p.relative_to(REPO / "docs") for p in (REPO / "docs").rglob("*.md"))
    assert pages, "no pages under docs/"
    for page in pages:
        html = _html(site, page)
        assert html.is_file(), f"{page} was not built ({html})"
