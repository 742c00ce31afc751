"""``ccsim algorithms``: every congestion control and queue discipline, from the core's tables.

Each algorithm declares its parameters once, in the Rust core (``crates/ccsim-core/src/
params.rs``: name, unit, default, accepted range, one line of help, reference); scenario
checking, this command and the parameter tables of ``docs/algorithms.md`` all read that
one table (``ccsim._core.algorithms()``).

``python -m ccsim.algorithms --markdown`` prints every table as Markdown;
``python -m ccsim.algorithms --write-docs`` rewrites the tables between the
``<!-- params:NAME -->`` markers of ``docs/algorithms.md`` (a test checks they match).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_BAD_INPUT = 0, 2

#: The command that regenerates the documented tables (said by the test that checks them).
REGENERATE = "python -m ccsim.algorithms --write-docs"


def algorithms() -> list[dict[str, Any]]:
    """Every algorithm's table: congestion controls first, then queue disciplines."""
    from ccsim import _core

    return _core.algorithms()


def find(name: str) -> dict[str, Any] | None:
    """The algorithm called ``name`` (or one of its aliases), if any."""
    key = name.strip().lower()
    for algo in algorithms():
        if key == algo["name"] or key in algo["aliases"]:
            return algo
    return None


def _names(algo: dict[str, Any]) -> str:
    aliases = algo["aliases"]
    return algo["name"] + (f" ({', '.join(aliases)})" if aliases else "")


def list_text() -> str:
    """Every algorithm on one line: name, one-line summary, reference."""
    lines: list[str] = []
    for family in ("congestion control", "queue discipline"):
        algos = [a for a in algorithms() if a["family"] == family]
        lines.append(f"{family}s:")
        width = max(len(_names(a)) for a in algos)
        for a in algos:
            lines.append(f"  {_names(a):<{width}}  {a['summary']}")
            lines.append(f"  {'':<{width}}  reference: {a['reference']}")
        lines.append("")
    lines.append("Parameters of one: ccsim algorithms NAME")
    return "\n".join(lines)


def detail_text(algo: dict[str, Any]) -> str:
    """One algorithm's parameters with unit, default, accepted range and help."""
    lines = [
        f"{_names(algo)}: {algo['summary']}",
        f"{algo['family']}; reference: {algo['reference']}",
        "",
    ]
    if not algo["params"]:
        lines.append("no parameters")
    for p in algo["params"]:
        lines.append(f"{p['name']} ({p['unit']}, default {p['default']})")
        lines.append(f"    {p['help']}")
        lines.append(f"    accepts {p['accepts']}")
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown_table(algo: dict[str, Any]) -> str:
    """One algorithm's parameter table in Markdown (as ``docs/algorithms.md`` holds it)."""
    lines = [f"Reference: {_cell(algo['reference'])}.", ""]
    if not algo["params"]:
        lines.append("No parameters.")
        return "\n".join(lines)
    lines.append("| parameter | unit | default | accepts | meaning |")
    lines.append("| --- | --- | --- | --- | --- |")
    for p in algo["params"]:
        cells = [f"`{p['name']}`", p["unit"], p["default"], p["accepts"], p["help"]]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines)


def markdown() -> str:
    """Every algorithm's table, each under its name."""
    parts = []
    for algo in algorithms():
        parts.append(f"### {algo['name']}\n\n{algo['summary']}.\n\n{markdown_table(algo)}\n")
    return "\n".join(parts)


_BLOCK = re.compile(r"(<!-- params:([a-z0-9_]+) -->\n)(.*?)(<!-- /params:\2 -->)", re.DOTALL)


def render_docs(text: str) -> str:
    """``text`` with every ``<!-- params:NAME -->`` block replaced by NAME's table."""

    def block(m: re.Match[str]) -> str:
        algo = find(m.group(2))
        if algo is None:
            raise ValueError(f"docs marker names an unknown algorithm: {m.group(2)}")
        return f"{m.group(1)}{markdown_table(algo)}\n{m.group(4)}"

    return _BLOCK.sub(block, text)


def documented(text: str) -> list[str]:
    """The algorithm names of the ``<!-- params:NAME -->`` blocks in ``text``."""
    return [m.group(2) for m in _BLOCK.finditer(text)]


def docs_path() -> Path:
    return Path(__file__).resolve().parents[2] / "docs" / "algorithms.md"


def cmd_algorithms(args: argparse.Namespace) -> int:
    """``ccsim algorithms [NAME]``."""
    if args.name is None:
        print(list_text())
        return EXIT_OK
    algo = find(args.name)
    if algo is None:
        known = ", ".join(a["name"] for a in algorithms())
        print(f"error: unknown algorithm {args.name!r} (known: {known})", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(detail_text(algo))
    return EXIT_OK


def add_parser(sub: Any) -> None:
    """Register ``ccsim algorithms`` on the CLI's subparsers."""
    p = sub.add_parser(
        "algorithms",
        help="list the congestion controls and queue disciplines, or one's parameters",
        description="Without NAME: every congestion control and queue discipline with a "
        "one-line summary and its reference. With NAME: its parameters (unit, default, "
        "accepted values, help). Read from the same tables that check scenario files.",
    )
    p.add_argument("name", nargs="?", metavar="NAME", help="an algorithm, e.g. cubic or pie")
    p.set_defaults(func=cmd_algorithms)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ccsim.algorithms",
        description="Print the algorithms' parameter tables as Markdown, or rewrite the "
        "tables of docs/algorithms.md from them.",
    )
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--markdown", action="store_true", help="print every table")
    group.add_argument(
        "--write-docs", action="store_true", help="rewrite the tables in docs/algorithms.md"
    )
    args = parser.parse_args(argv)
    if args.markdown:
        print(markdown(), end="")
        return EXIT_OK
    path = docs_path()
    old = path.read_text()
    new = render_docs(old)
    if new != old:
        path.write_text(new)
        print(f"rewrote {path}")
    else:
        print(f"{path} is up to date")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
