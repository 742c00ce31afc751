"""The report of a reproduction directory: a summary page and one page per paper.

``index.html`` and ``report.md`` are the summary: the headline (the papers' numbers and
claims, passed and missed, per paper), every check counted by kind, each paper's misses
with a one-line reason, and the rules (kinds, status). ``paper-<paper>.html`` and
``report-<paper>.md`` (``ccsim-only`` for the experiments that reproduce no figure of a
paper) hold the experiments: figure, checks, and folded away the results without a
paper number, the full reasons, the tolerances and the choices.

Every page is rewritten from every ``*/experiment.json`` present in the directory, so
running one experiment into a directory that holds others keeps them all in the report.
The HTML is static (no script, no server); figures are relative ``<img>`` links; pass and
miss are words styled by CSS, so no emoji font is needed.
"""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ccsim.reproduce.experiment import KINDS, PAPER_KINDS, is_ccsim_only
from ccsim.reproduce.runner import RECORD, verdicts_of
from ccsim.reproduce.verdict import UNJUDGED, Verdict

REPORT_MD = "report.md"
INDEX_HTML = "index.html"
#: The group of the experiments that reproduce no figure of a paper.
CCSIM_ONLY = "ccsim-only"
ALL_PAPERS = "all papers"
#: The columns of a verdict table, in the pages of both formats.
VERDICT_COLUMNS = (
    "quantity",
    "kind",
    "paper",
    "ccsim's reference",
    "ccsim",
    "difference",
    "tolerance",
    "verdict",
    "reason",
    "where the paper says it",
)
#: How the report names each kind (experiment.KINDS).
KIND_TITLES = {
    "number": "paper numbers",
    "claim": "paper claims",
    "threshold": "ccsim thresholds",
    "model": "model",
    "setup": "set-up",
    "ccsim-only": "ccsim-only",
}
KIND_RULES = {
    "number": "a value the paper states, within a tolerance set by what its figure or "
    "rounding can resolve",
    "claim": "a direction, ordering or trend the paper states (a gain, PIE better than "
    "CoDel), judged at its natural pivot (0, a ratio of 1, the other curve, a bound the "
    "paper states)",
    "threshold": 'ccsim\'s reading of vague words ("a small fraction" as below 50 %): '
    "the number is ccsim's, shown as ccsim's reference, never as the paper's",
    "model": "the paper's analytic model evaluated on ccsim's own measurements (the "
    "paper's method, not its numbers)",
    "setup": "confirms the configuration (a constant-rate source sends at its rate): not "
    "a verdict on the algorithm",
    "ccsim-only": "ccsim's own goals in an experiment that reproduces no figure of a paper "
    "(000:dalbe, 000:aqm, extra:*): outside the papers' totals",
}
STATUS_RULE = (
    "Status, computed from the verdicts: draft when no check is judged (results only), "
    "reproduced when every judged check passes, partial otherwise. Every kind counts: a "
    "set-up check that fails means the experiment does not run what it says."
)
PASS_WORD, FAIL_WORD = "pass", "FAIL"
#: A reason's first line in a table: at most this many characters, the rest folded.
SHORT_REASON = 110


# --------------------------------------------------------------------------- records


def records(out: Path) -> list[dict[str, Any]]:
    """The experiment records under ``out``: the papers' in paper and figure order, the
    ccsim-only ones after."""
    found = []
    for path in sorted(out.glob(f"*/{RECORD}")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # a record being rewritten by another process; it reappears next time
        record["_dir"] = path.parent.name  # where its figure is, relative to out
        found.append(record)
    return sorted(found, key=_order)


def _natural(text: str) -> tuple[Any, ...]:
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text))


def _ccsim_only(record: dict[str, Any]) -> bool:
    return bool(record.get("ccsim_only", is_ccsim_only(record.get("source", {}))))


def _order(record: dict[str, Any]) -> tuple[Any, ...]:
    return (_ccsim_only(record), _natural(record["id"]))


def group_of(record: dict[str, Any]) -> str:
    """The page an experiment is on: its paper, or ``ccsim-only``."""
    return CCSIM_ONLY if _ccsim_only(record) else record["id"].split(":")[0]


def _groups(recs: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in recs:
        groups.setdefault(group_of(r), []).append(r)
    return groups


def _kind(v: Verdict) -> str | None:
    """A verdict's kind (a record written before kinds: a judged check is a number)."""
    if not v.judged:
        return None
    return v.kind or "number"


def counts(verdicts: Iterable[Verdict]) -> dict[str, tuple[int, int]]:
    """kind -> (passed, judged), for the kinds present, in :data:`KINDS` order."""
    tally = {k: [0, 0] for k in KINDS}
    for v in verdicts:
        k = _kind(v)
        if k is not None:
            tally[k][0] += v.ok
            tally[k][1] += 1
    return {k: (p, n) for k, (p, n) in tally.items() if n}


def results_count(verdicts: Iterable[Verdict]) -> int:
    return sum(not v.judged for v in verdicts)


def _all_verdicts(recs: Iterable[dict[str, Any]]) -> list[Verdict]:
    return [v for r in recs for v in verdicts_of(r)]


# --------------------------------------------------------------------------- cells


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"


def _unit(v: Verdict) -> str:
    return f" {v.unit}" if v.unit else ""


def _target(v: Verdict) -> str:
    """The value judged against, as a relation for a bound: ``≥ 1``."""
    if v.paper is None:
        return "—"
    relation = {"upper": "≤ ", "lower": "≥ "}.get(v.bound or "", "")
    return f"{relation}{_number(v.paper)}{_unit(v)}"


def _judged_against(v: Verdict) -> str:
    """The target with its band, for the list of misses: ``1.15 ±0.15``, ``≥ 0 pp``."""
    if v.bound is not None or not v.tolerance or v.paper is None:
        return _target(v)
    return f"{_number(v.paper)} ±{v.tolerance:g}{_unit(v)}"


def _paper(v: Verdict) -> str:
    """The paper column: only what the paper states (its numbers and claims)."""
    return _target(v) if _kind(v) in PAPER_KINDS else "—"


def _reference(v: Verdict) -> str:
    """ccsim's reference: a threshold of ccsim's reading, a model's value, a set-up's
    arithmetic, a ccsim-only goal."""
    kind = _kind(v)
    if kind is None or kind in PAPER_KINDS:
        return "—"
    return _target(v)


def _ccsim(v: Verdict) -> str:
    """ccsim's value; with the unit where no reference value carries it."""
    if v.judged or v.ccsim is None:
        return _number(v.ccsim)
    return f"{_number(v.ccsim)}{_unit(v)}"


def _difference(v: Verdict) -> str:
    d = v.difference
    return "—" if d is None else f"{d:+.4g}"


def _tolerance(v: Verdict) -> str:
    if v.tolerance is None:
        return "—"
    if v.bound == "upper":
        return f"≤ ref + {v.tolerance:g}"
    if v.bound == "lower":
        return f"≥ ref - {v.tolerance:g}"
    return f"±{v.tolerance:g}"


def verdict_word(v: Verdict) -> str:
    if not v.judged:
        return UNJUDGED
    return PASS_WORD if v.ok else FAIL_WORD


def short(text: str, limit: int = SHORT_REASON) -> str:
    """The first sentence of a reason (at most ``limit`` characters), for one line."""
    text = " ".join(text.split())
    first = re.split(r"(?<=[.!?])\s+(?=[A-Z\"'])", text, maxsplit=1)[0]
    if len(first) > limit:
        first = first[: limit - 1].rstrip() + "…"
    return first


def clipped(text: str, limit: int) -> str:
    """``text`` on one line, cut at ``limit`` characters (a citation: no sentences)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _tally(p: int, n: int) -> str:
    return f"{p} pass / {n - p} FAIL" if n else "—"


def _kind_cells(c: dict[str, tuple[int, int]], kinds: Iterable[str] = KINDS) -> list[str]:
    return [_tally(*c.get(k, (0, 0))) for k in kinds]


def kinds_present(recs: Iterable[dict[str, Any]]) -> list[str]:
    """The kinds some check of these experiments has, in :data:`KINDS` order."""
    found = counts(_all_verdicts(recs))
    return [k for k in KINDS if k in found]


# --------------------------------------------------------------------------- markdown


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]
    return lines


def _page_name(group: str, ext: str) -> str:
    return f"report-{group}.md" if ext == "md" else f"paper-{group}.html"


def _title(group: str, recs: list[dict[str, Any]]) -> str:
    if group == CCSIM_ONLY:
        return "ccsim-only experiments (beyond the papers)"
    paper = next((r["source"].get("paper") for r in recs if r["source"].get("paper")), "")
    return f"Paper {group}" + (f": {paper}" if paper else "")


def _mode(recs: list[dict[str, Any]]) -> str:
    modes = sorted({r["mode"] for r in recs})
    runs = sum(r["runs"] for r in recs)
    failed = sum(r["failed_runs"] for r in recs)
    version = sorted({r["ccsim_version"] for r in recs})
    text = f"Mode {', '.join(modes)}; {runs} runs"
    text += f" ({failed} failed)" if failed else ""
    return text + f"; ccsim {', '.join(version)}."


def _headline(groups: dict[str, list[dict[str, Any]]]) -> tuple[list[str], list[list[str]]]:
    """Per paper, all papers together, then the ccsim-only experiments: checks by kind."""
    header = ["paper", "experiments", *(KIND_TITLES[k] for k in KINDS), "results (no verdict)"]
    papers = [g for g in groups if g != CCSIM_ONLY]
    lines: list[tuple[str, list[dict[str, Any]]]] = [(g, groups[g]) for g in papers]
    if len(papers) > 1:
        lines.append((ALL_PAPERS, [r for g in papers for r in groups[g]]))
    if CCSIM_ONLY in groups:
        lines.append((CCSIM_ONLY, groups[CCSIM_ONLY]))
    rows = []
    for name, members in lines:
        verdicts = _all_verdicts(members)
        rows.append(
            [name, str(len(members)), *_kind_cells(counts(verdicts)), str(results_count(verdicts))]
        )
    return header, rows


def headline_sentence(recs: list[dict[str, Any]]) -> str:
    """The papers' numbers and claims in one sentence (the ccsim-only checks apart)."""
    c = counts(_all_verdicts(r for r in recs if not _ccsim_only(r)))
    parts = []
    for k in PAPER_KINDS:
        p, n = c.get(k, (0, 0))
        parts.append(f"{KIND_TITLES[k]}: {p} of {n} pass ({n - p} FAIL)")
    return "Against the papers, " + "; ".join(parts) + "."


def _misses(recs: list[dict[str, Any]]) -> list[tuple[dict[str, Any], Verdict]]:
    """The failed checks, the papers' kinds first."""
    out = [(r, v) for r in recs for v in verdicts_of(r) if v.judged and not v.ok]
    rank = {k: i for i, k in enumerate(KINDS)}
    return sorted(out, key=lambda rv: rank.get(_kind(rv[1]) or "", 99))


#: A line of the summary's list of misses names at most this many checks of a group.
SHOWN_PER_MISS = 2


def miss_lines(recs: list[dict[str, Any]]) -> list[tuple[dict[str, Any], str, str, str]]:
    """The misses for the summary, one line per experiment, kind and reason (checks that
    miss for the same reason share a line): (record, kind, what missed, short reason)."""
    groups: dict[tuple[str, str, str], list[Verdict]] = {}
    owner: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r, v in _misses(recs):
        key = (r["id"], _kind(v) or "", v.reason or "")
        groups.setdefault(key, []).append(v)
        owner[key] = r
    lines = []
    for key, verdicts in groups.items():
        shown = "; ".join(
            f"{v.quantity}: {_judged_against(v)} against {_number(v.ccsim)}"
            for v in verdicts[:SHOWN_PER_MISS]
        )
        if len(verdicts) > SHOWN_PER_MISS:
            shown += f"; and {len(verdicts) - SHOWN_PER_MISS} more"
        lines.append((owner[key], key[1], shown, short(key[2])))
    return lines


def _experiment_rows(recs: list[dict[str, Any]], link: Callable[[dict[str, Any]], str]):
    """One row per experiment, a column per kind its paper's checks have."""
    kinds = kinds_present(recs)
    header = ["experiment", "title", "status", *(KIND_TITLES[k] for k in kinds), "results"]
    rows = []
    for r in recs:
        verdicts = verdicts_of(r)
        rows.append(
            [
                link(r),
                r["title"],
                r["status"],
                *_kind_cells(counts(verdicts), kinds),
                str(results_count(verdicts)),
            ]
        )
    return header, rows


def markdown_pages(recs: list[dict[str, Any]]) -> dict[str, str]:
    """``report.md`` and one ``report-<paper>.md`` per paper (and ccsim-only)."""
    groups = _groups(recs)
    lines = ["# ccsim paper reproductions", "", _mode(recs) if recs else "No experiments.", ""]
    if recs:
        lines += [f"**{headline_sentence(recs)}**", ""]
        header, rows = _headline(groups)
        lines += _md_table(header, rows)
        lines += ["", "How to read it:", ""]
        lines += [f"- **{KIND_TITLES[k]}** (`{k}`): {KIND_RULES[k]}." for k in KINDS]
        lines += [f"- {STATUS_RULE}", ""]
    for g, members in groups.items():
        page = _page_name(g, "md")
        lines += [f"## {_title(g, members)}", "", f"Details: [{page}]({page})", ""]
        header, rows = _experiment_rows(
            members, lambda r, page=page: f"[{r['id']}]({page}#{r['_dir']})"
        )
        lines += _md_table(header, rows)
        misses = _misses(members)
        lines += ["", f"FAIL ({len(misses)}):" if misses else "No check fails.", ""]
        for r, kind, what, why in miss_lines(members):
            lines.append(f"- [{r['id']}]({page}#{r['_dir']}) ({kind}) {_md(what)}. {_md(why)}")
        lines.append("")
    pages = {REPORT_MD: "\n".join(lines).rstrip() + "\n"}
    for g, members in groups.items():
        pages[_page_name(g, "md")] = _markdown_group(g, members)
    return pages


def _markdown_group(group: str, recs: list[dict[str, Any]]) -> str:
    lines = [f"# {_title(group, recs)}", "", f"[Summary]({REPORT_MD})", ""]
    for r in recs:
        src = r["source"]
        lines += [f'<a id="{r["_dir"]}"></a>', "", f"## {r['id']}: {r['title']}", ""]
        lines.append(f"§{src['section']}, {src['figure']}: *{src['caption']}*")
        lines.append("")
        lines.append(
            f"Status: **{r['status']}**. Mode: {r['mode']}, {r['runs']} runs"
            + (f", **{r['failed_runs']} failed**" if r["failed_runs"] else "")
            + f" (ccsim {r['ccsim_version']})."
        )
        if r.get("figure"):
            png = next((f for f in r["figure"] if f.endswith(".png")), r["figure"][0])
            lines += ["", f"![{r['id']}]({r['_dir']}/{png})"]
        if r.get("plot_error"):
            lines += ["", f"Figure: {r['plot_error']}"]
        verdicts = verdicts_of(r)
        judged = [v for v in verdicts if v.judged]
        if judged:
            lines += ["", *_md_table(list(VERDICT_COLUMNS), [_md_row(v) for v in judged])]
        long = [v for v in judged if v.reason and short(v.reason) != " ".join(v.reason.split())]
        if long:
            lines += ["", "<details><summary>Full reasons</summary>", ""]
            lines += [f"- **{_md(v.quantity)}**: {_md(v.reason or '')}" for v in long]
            lines += ["", "</details>"]
        results = [v for v in verdicts if not v.judged]
        if results:
            lines += [
                "",
                f"<details><summary>{len(results)} results without a paper number</summary>",
                "",
                *_md_table(
                    ["quantity", "ccsim", "note"],
                    [[v.quantity, _ccsim(v), v.source] for v in results],
                ),
                "",
                "</details>",
            ]
        lines += _md_folded_list(
            "Tolerances",
            [
                f"{t['quantity']} ({t.get('kind') or 'number'}, ±{t['tolerance']:g}): {t['why']}"
                for t in r.get("tolerances", [])
            ],
        )
        lines += _md_folded_list(
            "Choices where the paper is silent",
            [f"**{c['what']}**: {c['value']}. {c['why']}" for c in r.get("choices", [])],
        )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _md_folded_list(title: str, items: list[str]) -> list[str]:
    if not items:
        return []
    bullets = [f"- {_md(i)}" for i in items]
    return ["", f"<details><summary>{title}</summary>", "", *bullets, "", "</details>"]


def _md_row(v: Verdict) -> list[str]:
    word = verdict_word(v)
    return [
        v.quantity,
        _kind(v) or "",
        _paper(v),
        _reference(v),
        _ccsim(v),
        _difference(v),
        _tolerance(v),
        f"**{word}**" if word == FAIL_WORD else word,
        short(v.reason or ""),
        clipped(v.source, 80),
    ]


# --------------------------------------------------------------------------- HTML


_CSS = """body{font-family:sans-serif;max-width:80em;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.25em .5em;
text-align:left;vertical-align:top;font-size:90%}img{max-width:100%;border:1px solid #eee}
.pass{color:#060;font-weight:bold}.fail{color:#fff;background:#b00;font-weight:bold;
padding:0 .3em}.none{color:#777}details{margin:.5em 0}summary{cursor:pointer;color:#036}
.kind{font-size:85%;color:#555}.headline{font-size:110%;border-left:4px solid #036;
padding-left:.6em}nav a{margin-right:1em}"""


def _head(title: str) -> list[str]:
    e = html.escape
    return [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{e(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
    ]


def _html_table(header: list[str], rows: list[list[str]], cls: str = "") -> str:
    e = html.escape
    attr = f' class="{cls}"' if cls else ""
    out = [f"<table{attr}><tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr>"]
    out += ["<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows]
    return "\n".join(out) + "\n</table>"


def _word_html(v: Verdict) -> str:
    word = verdict_word(v)
    cls = {PASS_WORD: "pass", FAIL_WORD: "fail"}.get(word, "none")
    return f'<span class="{cls}">{word}</span>'


def _tally_html(p: int, n: int) -> str:
    if not n:
        return '<span class="none">—</span>'
    fail = f'<span class="fail">{n - p} FAIL</span>' if n - p else "0 FAIL"
    return f'<span class="pass">{p} pass</span> / {fail}'


def html_pages(recs: list[dict[str, Any]]) -> dict[str, str]:
    """``index.html`` and one ``paper-<paper>.html`` per paper (and ccsim-only)."""
    e = html.escape
    groups = _groups(recs)
    parts = _head("ccsim paper reproductions")
    parts.append("<h1>ccsim paper reproductions</h1>")
    parts.append(
        "<nav>"
        + "".join(f'<a href="{_page_name(g, "html")}">{e(g)}</a>' for g in groups)
        + "</nav>"
    )
    if recs:
        parts.append(f"<p>{e(_mode(recs))}</p>")
        parts.append(f'<p class="headline" id="headline">{e(headline_sentence(recs))}</p>')
        header, rows = _headline(groups)
        table_rows = []
        for row in rows:
            group = row[0]
            cells = [
                f'<a href="{_page_name(group, "html")}">{e(group)}</a>'
                if group in groups
                else f"<b>{e(group)}</b>",
                e(row[1]),
            ]
            source = (
                _all_verdicts(r for g, m in groups.items() if g != CCSIM_ONLY for r in m)
                if group == ALL_PAPERS
                else _all_verdicts(groups[group])
            )
            c = counts(source)
            cells += [_tally_html(*c.get(k, (0, 0))) for k in KINDS]
            cells.append(e(row[-1]))
            table_rows.append(cells)
        parts.append(_html_table(header, table_rows, "counts"))
        parts.append("<details><summary>How to read it: kinds and status</summary><ul>")
        parts += [f"<li><b>{e(KIND_TITLES[k])}</b> ({k}): {e(KIND_RULES[k])}.</li>" for k in KINDS]
        parts.append(f"<li>{e(STATUS_RULE)}</li></ul></details>")
    for g, members in groups.items():
        page = _page_name(g, "html")
        parts.append(f'<section class="paper" id="paper-{e(g)}">')
        parts.append(f'<h2><a href="{page}">{e(_title(g, members))}</a></h2>')
        header, rows = _experiment_rows(members, lambda r: r["id"])
        html_rows = []
        for r, row in zip(members, rows, strict=True):
            c = counts(verdicts_of(r))
            html_rows.append(
                [
                    f'<a href="{page}#{e(r["_dir"])}">{e(r["id"])}</a>',
                    e(r["title"]),
                    e(r["status"]),
                    *(_tally_html(*c.get(k, (0, 0))) for k in kinds_present(members)),
                    e(row[-1]),
                ]
            )
        parts.append(_html_table(header, html_rows, "experiments"))
        misses = _misses(members)
        if misses:
            parts.append(f'<p>FAIL ({len(misses)}):</p><ul class="misses">')
            for r, kind, what, why in miss_lines(members):
                parts.append(
                    f'<li><a href="{page}#{e(r["_dir"])}">{e(r["id"])}</a> '
                    f'<span class="kind">{e(kind)}</span> {e(what)}. {e(why)}</li>'
                )
            parts.append("</ul>")
        else:
            parts.append('<p class="misses">No check fails.</p>')
        parts.append("</section>")
    parts.append("</body></html>")
    pages = {INDEX_HTML: "\n".join(parts) + "\n"}
    for g, members in groups.items():
        pages[_page_name(g, "html")] = _html_group(g, members)
    return pages


def _html_group(group: str, recs: list[dict[str, Any]]) -> str:
    e = html.escape
    parts = _head(_title(group, recs))
    parts.append(f'<p><a href="{INDEX_HTML}">Summary</a></p>')
    parts.append(f"<h1>{e(_title(group, recs))}</h1>")
    for r in recs:
        src = r["source"]
        parts.append(f'<section class="experiment" id="{e(r["_dir"])}">')
        parts.append(f"<h2>{e(r['id'])}: {e(r['title'])}</h2>")
        parts.append(
            f"<p>§{e(src['section'])}, {e(src['figure'])}: <em>{e(src['caption'])}</em></p>"
        )
        parts.append(
            f"<p>Status: <b>{e(r['status'])}</b>. Mode: {e(r['mode'])}, {r['runs']} runs"
            + (f", <b>{r['failed_runs']} failed</b>" if r["failed_runs"] else "")
            + (f", wall time {r['wall_s']:.1f} s" if r.get("timing") else "")
            + ".</p>"
        )
        for name in r.get("figure", []):
            if name.endswith(".png"):
                png = f"{r['_dir']}/{name}"
                parts.append(
                    f'<p><a href="{e(png)}"><img src="{e(png)}" alt="{e(r["id"])} figure"></a></p>'
                )
        if r.get("plot_error"):
            parts.append(f'<p class="fail">{e(r["plot_error"])}</p>')
        verdicts = verdicts_of(r)
        judged = [v for v in verdicts if v.judged]
        if judged:
            parts.append(_html_table(list(VERDICT_COLUMNS), [_html_row(v) for v in judged]))
        results = [v for v in verdicts if not v.judged]
        if results:
            parts.append(
                f'<details class="results"><summary>{len(results)} results without a paper '
                "number</summary>"
                + _html_table(
                    ["quantity", "ccsim", "note"],
                    [[e(v.quantity), e(_ccsim(v)), e(v.source)] for v in results],
                )
                + "</details>"
            )
        tolerances = [
            f"{e(t['quantity'])} ({e(t.get('kind') or 'number')}, ±{t['tolerance']:g}): "
            f"{e(t['why'])}"
            for t in r.get("tolerances", [])
        ]
        parts.append(_html_folded_list("Tolerances", tolerances))
        choices = [
            f"<b>{e(c['what'])}</b>: {e(c['value'])}. {e(c['why'])}" for c in r.get("choices", [])
        ]
        parts.append(_html_folded_list("Choices where the paper is silent", choices))
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(p for p in parts if p) + "\n"


def _html_folded_list(title: str, items: list[str]) -> str:
    if not items:
        return ""
    return (
        f"<details><summary>{html.escape(title)}</summary><ul>"
        + "".join(f"<li>{i}</li>" for i in items)
        + "</ul></details>"
    )


def _folded(text: str, first: str) -> str:
    """``first`` (one line), the full ``text`` behind a fold when it is longer."""
    e = html.escape
    if not text:
        return ""
    if first == " ".join(text.split()):
        return e(text)
    return f'<details class="reason"><summary>{e(first)}</summary>{e(text)}</details>'


def _html_row(v: Verdict) -> list[str]:
    e = html.escape
    return [
        e(v.quantity),
        f'<span class="kind">{e(_kind(v) or "")}</span>',
        e(_paper(v)),
        e(_reference(v)),
        e(_ccsim(v)),
        e(_difference(v)),
        e(_tolerance(v)),
        _word_html(v),
        _folded(v.reason or "", short(v.reason or "")),
        _folded(v.source, clipped(v.source, 80)),
    ]


# --------------------------------------------------------------------------- writing


def write_report(out: Path) -> tuple[Path, Path]:
    """(Re)write the summary (``report.md``, ``index.html``) and the per-paper pages from
    every experiment in ``out``; pages of a group no longer present are left alone."""
    recs = records(out)
    written: dict[str, Path] = {}
    for name, text in {**markdown_pages(recs), **html_pages(recs)}.items():
        path = out / name
        tmp = path.with_name(f".{name}.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
        written[name] = path
    return written[REPORT_MD], written[INDEX_HTML]
