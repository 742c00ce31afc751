"""The reproduction report as a browser reads it: headless Chromium loads the summary
and a paper's page and this test checks the tree it built (the counts by kind, the
list of misses, the folds). A browser's parser moves misplaced markup (a fold inside a
table cell left open, a stray ``</td>``) where a text search of the file would not see
it. Skipped where no Chromium is installed (Debian: ``apt-get install chromium``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

from ccsim.reproduce.experiment import KINDS
from ccsim.reproduce.report import KIND_TITLES, write_report
from ccsim.reproduce.runner import FORMAT, RECORD
from ccsim.reproduce.verdict import Verdict

CHROMIUM = next(
    (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p),
    None,
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium (Debian package chromium) on PATH: the report's browser test needs it",
)

LONG_REASON = "A first sentence that says why. " + "Then the long derivation, " * 40 + "done."


@dataclass
class Node:
    tag: str
    attrs: dict[str, str | None]
    children: list[Node] = field(default_factory=list)
    text: str = ""

    def all(self, tag: str, cls: str | None = None) -> list[Node]:
        found = []
        for c in self.children:
            if c.tag == tag and (cls is None or cls in (c.attrs.get("class") or "").split()):
                found.append(c)
            found += c.all(tag, cls)
        return found

    def text_content(self) -> str:
        return self.text + "".join(c.text_content() for c in self.children)


class _Tree(HTMLParser):
    VOID = frozenset({"meta", "img", "br", "hr", "link", "input"})

    def __init__(self) -> None:
        super().__init__()
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attrs))
        self.stack[-1].children.append(node)
        if tag not in self.VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(Node("#text", {}, text=data))


def _dom(page: Path) -> Node:
    """The DOM Chromium built from ``page``, parsed back into a tree."""
    assert CHROMIUM is not None
    result = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert result.returncode == 0 and "<html" in result.stdout, result.stderr[-2000:]
    tree = _Tree()
    tree.feed(result.stdout)
    return tree.root


def _record(out: Path, exp_id: str, verdicts: list[Verdict], figure: str = "Fig. 2") -> None:
    slug = exp_id.replace(":", "_")
    (out / slug).mkdir(parents=True)
    record = {
        "format": FORMAT,
        "id": exp_id,
        "title": f"title of {exp_id}",
        "status": "partial",
        "ccsim_only": figure.startswith("none"),
        "source": {"section": "II", "figure": figure, "caption": "c", "paper": "A paper"},
        "mode": "quick",
        "ccsim_version": "0",
        "runs": 2,
        "failed_runs": 0,
        "figure": [],
        "plot_error": None,
        "choices": [{"what": "w", "value": "v", "why": "y"}],
        "tolerances": [],
        "verdicts": [v.as_dict() for v in verdicts],
    }
    (out / slug / RECORD).write_text(json.dumps(record), encoding="utf-8")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report")
    _record(
        out,
        "003:fig18",
        [
            Verdict("PIE over CoDel", "pp", 0.0, -6.1, 0.0, "§IV", LONG_REASON, "lower", "claim"),
            Verdict("a quoted number", "%", 5.0, 5.5, 1.0, "§IV", kind="number"),
            Verdict("a reading", "%", 80.0, 90.0, 0.0, "§IV", None, "lower", "threshold"),
            Verdict("a model point", "", 0.9, 0.91, 0.03, "§IV", kind="model"),
            *(Verdict(f"result {i}", "%", None, float(i), None, "note") for i in range(30)),
        ],
    )
    _record(out, "002:fig7", [Verdict("rate", "Mbit/s", 6.5, 6.5, 0.2, "§IV", kind="setup")])
    _record(
        out,
        "000:dalbe",
        [Verdict("goal", "", 1.0, 0.0, 0.0, "own", "why", "lower", "ccsim-only")],
        figure="none (ccsim's)",
    )
    write_report(out)
    return out


def test_summary_counts_every_kind_and_lists_the_misses(report: Path):
    dom = _dom(report / "index.html")
    table = next(t for t in dom.all("table") if "counts" in (t.attrs.get("class") or ""))
    header = [th.text_content() for th in table.all("th")]
    assert [KIND_TITLES[k] for k in KINDS] == header[2 : 2 + len(KINDS)]
    rows = table.all("tr")[1:]
    assert all(len(r.all("td")) == len(header) for r in rows)  # no cell pushed out
    names = [r.all("td")[0].text_content() for r in rows]
    assert names == ["002", "003", "all papers", "ccsim-only"]  # papers first
    headline = dom.all("p", "headline")[0].text_content()
    assert "paper numbers: 1 of 1 pass" in headline and "paper claims: 0 of 1 pass" in headline
    assert "ccsim-only" not in headline  # kept out of the papers' totals
    misses = dom.all("ul", "misses")
    assert len(misses) == 2  # 003's claim, dalbe's goal; 002 has none
    item = misses[0].all("li")[0]
    assert "003:fig18" in item.text_content() and "Then the long derivation" not in (
        item.text_content()
    )  # one line: the first sentence
    assert item.all("a")[0].attrs["href"] == "paper-003.html#003_fig18"
    text = dom.text_content()
    assert "✅" not in text and "❌" not in text  # words, no emoji font needed


def test_paper_page_folds_results_and_long_reasons(report: Path):
    dom = _dom(report / "paper-003.html")
    section = dom.all("section", "experiment")[0]
    assert section.attrs["id"] == "003_fig18"
    table = section.all("table")[0]
    header = [th.text_content() for th in table.all("th")]
    rows = table.all("tr")[1:]
    assert len(rows) == 4 and all(len(r.all("td")) == len(header) for r in rows)
    cells = {r.all("td")[0].text_content(): r.all("td") for r in rows}
    paper, reference = header.index("paper"), header.index("ccsim's reference")
    # a threshold is ccsim's reading, never in the paper column; a claim is the paper's
    assert cells["a reading"][paper].text_content() == "—"
    assert cells["a reading"][reference].text_content() == "≥ 80 %"
    assert cells["PIE over CoDel"][paper].text_content() == "≥ 0 pp"
    verdict = cells["PIE over CoDel"][header.index("verdict")]
    assert verdict.all("span", "fail") and verdict.text_content() == "FAIL"
    reason = cells["PIE over CoDel"][header.index("reason")]
    fold = reason.all("details")[0]  # the full text behind a fold, inside its cell
    assert "open" not in fold.attrs
    assert fold.all("summary")[0].text_content() == "A first sentence that says why."
    results = section.all("details", "results")
    assert len(results) == 1 and "open" not in results[0].attrs
    assert "30 results without a paper number" in results[0].all("summary")[0].text_content()
    assert len(results[0].all("tr")) == 31  # inside the fold, not spilled into the page
