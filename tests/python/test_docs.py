"""The documentation site (``mkdocs.yml``, ``docs/``) builds with warnings as errors, the
README's links into it land on real pages and headings, and the README's list of what
ccsim can and cannot do is the site's, word for word. The code blocks of both are run by
``test_readme.py``."""

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

CAN_CANNOT = "## What it can and cannot do yet"


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


def _readme_links() -> list[tuple[str, str]]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return re.findall(r"\]\((docs/[^)#\s]+\.md)(?:#([^)\s]+))?\)", text)


def test_readme_links_into_the_site_land(site: Path) -> None:
    links = _readme_links()
    assert len(links) >= 8, "the README should link into every part of the site"
    for path, anchor in links:
        page = REPO / path
        assert page.is_file(), f"README links to {path}, which does not exist"
        if not anchor:
            continue
        html = _html(site, Path(path).relative_to("docs"))
        assert f'id="{anchor}"' in html.read_text(encoding="utf-8"), (
            f"README links to {path}#{anchor}, a heading that page does not have"
        )


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end >= 0 else len(text)].strip()


def test_readme_and_site_say_the_same_about_what_ccsim_can_do() -> None:
    readme = _section((REPO / "README.md").read_text(encoding="utf-8"), CAN_CANNOT)
    home = _section((REPO / "docs/index.md").read_text(encoding="utf-8"), CAN_CANNOT)
    # The README links into docs/; the site's pages link to each other.
    assert readme.replace("](docs/", "](") == home, (
        f"README.md's and docs/index.md's '{CAN_CANNOT}' differ: keep them identical"
    )
