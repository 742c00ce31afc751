"""``report.md`` and ``index.html`` of a reproduction directory.

Both are rewritten from every ``*/experiment.json`` present in the directory, so running
one experiment into a directory that holds others keeps them all in the report. The HTML
page is static (no script, no server): figures are relative ``<img>`` links.
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Any

from ccsim.reproduce.runner import RECORD, verdicts_of
from ccsim.reproduce.verdict import Verdict

REPORT_MD = "report.md"
#: The columns of a verdict table, in report.md and index.html alike.
VERDICT_COLUMNS = (
    "quantity",
    "paper",
    "ccsim",
    "difference",
    "tolerance",
    "verdict",
    "reason",
    "where the paper says it",
)
INDEX_HTML = "index.html"


def records(out: Path) -> list[dict[str, Any]]:
    """The experiment records under ``out``, by id."""
    found = []
    for path in sorted(out.glob(f"*/{RECORD}")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # a record being rewritten by another process; it reappears next time
        record["_dir"] = path.parent.name  # where its figure is, relative to out
        found.append(record)
    return sorted(found, key=lambda r: r["id"])


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"


def _difference(v: Verdict) -> str:
    d = v.difference
    return "—" if d is None else f"{d:+.4g}"


def _unit(v: Verdict) -> str:
    return f" {v.unit}" if v.unit else ""


def _paper(v: Verdict) -> str:
    return "—" if v.paper is None else f"{_number(v.paper)}{_unit(v)}"


def _ccsim(v: Verdict) -> str:
    """ccsim's value; with the unit where no paper value carries it."""
    if v.judged or v.ccsim is None:
        return _number(v.ccsim)
    return f"{_number(v.ccsim)}{_unit(v)}"


def _tolerance(v: Verdict) -> str:
    if v.tolerance is None:
        return "—"
    if v.bound == "upper":  # the paper's number is a ceiling
        return f"≤ paper + {v.tolerance:g}"
    if v.bound == "lower":
        return f"≥ paper - {v.tolerance:g}"
    return f"±{v.tolerance:g}"


def _counts(record: dict[str, Any]) -> str:
    """``passed / judged``; results without a paper number are counted apart."""
    verdicts = verdicts_of(record)
    judged = [v for v in verdicts if v.judged]
    text = f"{sum(v.ok for v in judged)} / {len(judged)}"
    if len(judged) < len(verdicts):
        text += f" (+{len(verdicts) - len(judged)} results without a paper number)"
    return text


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(out: Path, recs: list[dict[str, Any]]) -> str:
    lines = ["# ccsim paper reproductions", ""]
    lines += [
        "| experiment | title | status | mode | checks passed |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in recs:
        lines.append(
            f"| {r['id']} | {_md_cell(r['title'])} | {r['status']} | {r['mode']} | {_counts(r)} |"
        )
    timed = [r for r in recs if r.get("timing")]
    if timed:
        lines += [
            "",
            "Wall time: "
            + ", ".join(f"{r['id']} {r['wall_s']:.1f} s" for r in timed)
            + f"; in all {sum(r['wall_s'] for r in timed):.1f} s.",
        ]
    for r in recs:
        src = r["source"]
        lines += ["", f"## {r['id']}: {r['title']}", ""]
        lines.append(
            f"Paper {r['id'].split(':')[0]}, §{src['section']}, {src['figure']}: *{src['caption']}*"
        )
        lines.append("")
        lines.append(
            f"Status: {r['status']}. Mode: {r['mode']}, {r['runs']} runs"
            + (f", **{r['failed_runs']} failed**" if r["failed_runs"] else "")
            + f" (ccsim {r['ccsim_version']})."
        )
        if r.get("figure"):
            png = next((f for f in r["figure"] if f.endswith(".png")), r["figure"][0])
            lines += ["", f"![{r['id']}]({r['_dir']}/{png})"]
        if r.get("plot_error"):
            lines += ["", f"Figure: {r['plot_error']}"]
        lines += [
            "",
            "| " + " | ".join(VERDICT_COLUMNS) + " |",
            "|" + " --- |" * len(VERDICT_COLUMNS),
        ]
        for v in verdicts_of(r):
            lines.append(
                f"| {_md_cell(v.quantity)} | {_paper(v)} | {_ccsim(v)} | "
                f"{_difference(v)} | {_tolerance(v)} | {v.symbol} | {_md_cell(v.reason or '')} | "
                f"{_md_cell(v.source)} |"
            )
        if r.get("tolerances"):
            lines += ["", "Tolerances:", ""]
            lines += [
                f"- {t['quantity']} (±{t['tolerance']:g}): {t['why']}" for t in r["tolerances"]
            ]
        if r.get("choices"):
            lines += ["", "Choices where the paper is silent:", ""]
            lines += [f"- **{c['what']}**: {c['value']}. {c['why']}" for c in r["choices"]]
    return "\n".join(lines) + "\n"


_CSS = """body{font-family:sans-serif;max-width:72em;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.25em .5em;
text-align:left;vertical-align:top;font-size:90%}img{max-width:100%;border:1px solid #eee}
.ok{color:#080}.miss{color:#b00}"""


def page(recs: list[dict[str, Any]]) -> str:
    e = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>ccsim paper reproductions</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>ccsim paper reproductions</h1>",
        "<table><tr><th>experiment</th><th>title</th><th>status</th><th>mode</th>"
        "<th>checks passed</th></tr>",
    ]
    for r in recs:
        anchor = e(r["_dir"])
        parts.append(
            f'<tr><td><a href="#{anchor}">{e(r["id"])}</a></td><td>{e(r["title"])}</td>'
            f"<td>{e(r['status'])}</td><td>{e(r['mode'])}</td><td>{e(_counts(r))}</td></tr>"
        )
    parts.append("</table>")
    for r in recs:
        src = r["source"]
        parts.append(f'<h2 id="{e(r["_dir"])}">{e(r["id"])}: {e(r["title"])}</h2>')
        parts.append(
            f"<p>Paper {e(r['id'].split(':')[0])}, §{e(src['section'])}, "
            f"{e(src['figure'])}: <em>{e(src['caption'])}</em></p>"
        )
        parts.append(
            f"<p>Status: {e(r['status'])}. Mode: {e(r['mode'])}, {r['runs']} runs"
            + (f", <b>{r['failed_runs']} failed</b>" if r["failed_runs"] else "")
            + (f", wall time {r['wall_s']:.1f} s" if r.get("timing") else "")
            + ".</p>"
        )
        for name in r.get("figure", []):
            if name.endswith(".png"):
                src_png = f"{r['_dir']}/{name}"
                parts.append(
                    f'<p><a href="{e(src_png)}"><img src="{e(src_png)}" '
                    f'alt="{e(r["id"])} figure"></a></p>'
                )
        if r.get("plot_error"):
            parts.append(f"<p class=miss>{e(r['plot_error'])}</p>")
        parts.append("<table><tr>" + "".join(f"<th>{e(c)}</th>" for c in VERDICT_COLUMNS) + "</tr>")
        for v in verdicts_of(r):
            cls = "ok" if v.ok else "miss" if v.judged else "result"
            parts.append(
                f"<tr><td>{e(v.quantity)}</td><td>{e(_paper(v))}</td>"
                f"<td>{e(_ccsim(v))}</td><td>{_difference(v)}</td><td>{_tolerance(v)}</td>"
                f'<td class="{cls}">{v.symbol}</td><td>{e(v.reason or "")}</td>'
                f"<td>{e(v.source)}</td></tr>"
            )
        parts.append("</table>")
        if r.get("tolerances"):
            parts.append(
                "<p>Tolerances:</p><ul>"
                + "".join(
                    f"<li>{e(t['quantity'])} (±{t['tolerance']:g}): {e(t['why'])}</li>"
                    for t in r["tolerances"]
                )
                + "</ul>"
            )
        if r.get("choices"):
            parts.append(
                "<p>Choices where the paper is silent:</p><ul>"
                + "".join(
                    f"<li><b>{e(c['what'])}</b>: {e(c['value'])}. {e(c['why'])}</li>"
                    for c in r["choices"]
                )
                + "</ul>"
            )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_report(out: Path) -> tuple[Path, Path]:
    """(Re)write ``out/report.md`` and ``out/index.html`` from every experiment in ``out``."""
    recs = records(out)
    written = []
    for name, text in ((REPORT_MD, markdown(out, recs)), (INDEX_HTML, page(recs))):
        path = out / name
        tmp = path.with_name(f".{name}.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
        written.append(path)
    return written[0], written[1]
