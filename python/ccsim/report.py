"""The end-of-run report printed by ``ccsim run`` and ``ccsim demo``."""

from __future__ import annotations

import sys
from collections import defaultdict
from typing import Any

from rich.console import Console
from rich.table import Table

#: Above this many flows the report shows one row per flow group instead of per flow.
MAX_FLOW_ROWS = 20


def _num(value: Any, fmt: str = ".3f") -> str:
    return "-" if value is None else format(value, fmt)


def _per_flow(flows: list[dict[str, Any]]) -> Table:
    table = Table(title="Flows (measurement window)", title_justify="left")
    for header in ("flow", "group", "type", "algorithm", "RTT ms"):
        table.add_column(header, justify="left" if header in ("type", "algorithm") else "right")
    # "losses" (on a lossy link's wire, apart from queue drops) only when a link has a
    # loss model.
    lossy = any("losses" in f for f in flows)
    headers = ("goodput Mb/s", "retransmits", "drops", "marks")
    for header in (*headers, *(("losses",) if lossy else ()), "FCT s"):
        table.add_column(header, justify="right")
    for f in flows:
        losses = (str(f.get("losses", 0)),) if lossy else ()
        table.add_row(
            str(f["flow_id"]),
            str(f["group"]),
            f["protocol"],
            f["algorithm"],
            _num(f["base_rtt_ms"], "g"),
            _num(f["goodput_mbps"]),
            str(f["retransmits"]),
            str(f["drops"]),
            str(f["marks"]),
            *losses,
            _num(f.get("fct_s")),
        )
    return table


def _per_group(flows: list[dict[str, Any]]) -> Table:
    groups: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for f in flows:
        groups[(f["protocol"], f["group"])].append(f)
    table = Table(
        title=f"Flow groups, {len(flows)} flows (measurement window)", title_justify="left"
    )
    for header in ("type", "group", "flows", "algorithm", "RTT ms"):
        table.add_column(header, justify="left" if header in ("type", "algorithm") else "right")
    for header in ("goodput Mb/s total", "per flow", "min", "max", "retransmits"):
        table.add_column(header, justify="right")
    for (protocol, group), members in sorted(groups.items()):
        goodputs = [f["goodput_mbps"] for f in members]
        rtts = sorted({f["base_rtt_ms"] for f in members})
        table.add_row(
            protocol,
            str(group),
            str(len(members)),
            members[0]["algorithm"],
            ", ".join(_num(r, "g") for r in rtts),
            _num(sum(goodputs)),
            _num(sum(goodputs) / len(goodputs)),
            _num(min(goodputs)),
            _num(max(goodputs)),
            str(sum(f["retransmits"] for f in members)),
        )
    return table


def _bottleneck(summary: dict[str, Any]) -> Table:
    b = summary["bottleneck"]
    table = Table(title=f"Bottleneck {b['name']} ({b['discipline']})", title_justify="left")
    for header in (
        "utilisation",
        "sojourn ms: mean",
        "p50",
        "p90",
        "p99",
        "drop prob.",
        "mark prob.",
        *(("losses",) if "losses" in b else ()),
    ):
        table.add_column(header, justify="right")
    table.add_row(
        _num(summary["utilisation"], ".4f"),
        _num(b["sojourn_mean_ms"]),
        _num(b["sojourn_p50_ms"]),
        _num(b["sojourn_p90_ms"]),
        _num(b["sojourn_p99_ms"]),
        _num(b["drop_probability"], ".3e"),
        _num(b["mark_probability"], ".3e"),
        *((str(b["losses"]),) if "losses" in b else ()),
    )
    return table


def _links(summary: dict[str, Any]) -> Table:
    """A `[network]`'s links that carried packets in the window, one row each."""
    table = Table(title="Links (measurement window)", title_justify="left")
    for header in ("link", "discipline", "utilisation", "sojourn ms: mean", "p50", "p99"):
        table.add_column(header, justify="left" if header in ("link", "discipline") else "right")
    lossy = any("losses" in q for q in summary["links"])
    for header in ("drops", "marks", *(("losses",) if lossy else ())):
        table.add_column(header, justify="right")
    for q in summary["links"]:
        if q["departures"] == 0:
            continue
        table.add_row(
            q["name"],
            q["discipline"],
            _num(q["utilisation"], ".4f"),
            _num(q["sojourn_mean_ms"]),
            _num(q["sojourn_p50_ms"]),
            _num(q["sojourn_p99_ms"]),
            str(q["drops"]),
            str(q["marks"]),
            *((str(q.get("losses", 0)),) if lossy else ()),
        )
    return table


def _congested(summary: dict[str, Any], all_links: bool) -> list[Table | str]:
    """A section per congested link (see :mod:`ccsim.links`), busiest first."""
    from ccsim.links import BUSIEST, congested_links

    every = congested_links(summary, all_links=True)
    shown = every if all_links else every[:BUSIEST]
    tables = []
    for q in shown:
        title = f"Congested link {q['name']} ({q['discipline']})"
        table = Table(title=title, title_justify="left")
        # losses on the wire (a loss model), apart from the queue's drops (issue 31)
        lossy = "losses" in q
        headers = ["utilisation", "sojourn ms: mean", "p50", "p90", "p99", "drops"]
        headers += ["drop prob.", "marks", "mark prob."] + (["losses"] if lossy else [])
        for header in headers:
            table.add_column(header, justify="right")
        table.add_row(
            _num(q["utilisation"], ".4f"),
            _num(q["sojourn_mean_ms"]),
            _num(q["sojourn_p50_ms"]),
            _num(q["sojourn_p90_ms"]),
            _num(q["sojourn_p99_ms"]),
            str(q["drops"]),
            _num(q["drop_probability"], ".3e"),
            str(q["marks"]),
            _num(q["mark_probability"], ".3e"),
            *((str(q["losses"]),) if lossy else ()),
        )
        tables.append(table)
    if len(every) > len(shown):
        more = len(every) - len(shown)
        tables.append(f"and {more} more congested links (--all-links shows them)")
    return tables


def report_console() -> Console:
    """stdout; 120 columns when it is not a terminal (rich would assume 80)."""
    return Console() if sys.stdout.isatty() else Console(width=120)


def print_report(
    summary: dict[str, Any], console: Console, label: str = "", all_links: bool = False
) -> None:
    """Per-flow goodput, bottleneck utilisation / sojourn / drop and mark probability,
    with a ``[network]`` every link and a section per congested link (the busiest few
    unless ``all_links``), Jain index, events and wall-clock seconds."""
    flows = summary.get("flows", [])
    head = f"[bold]{label}[/bold]  " if label else ""
    console.print(
        f"{head}seed {summary['seed']}, {summary['duration_s']:g} s simulated, measured "
        f"{summary['measure_start_s']:g}-{summary['measure_end_s']:g} s"
    )
    console.print(_per_flow(flows) if len(flows) <= MAX_FLOW_ROWS else _per_group(flows))
    console.print(_bottleneck(summary))
    if summary.get("links"):
        console.print(_links(summary))
        for table in _congested(summary, all_links):
            console.print(table)
    wall = summary["wall_s"]
    rate = f" ({summary['events'] / wall:,.0f} events/s)" if wall > 0 else ""
    console.print(
        f"Jain index {_num(summary['jain_index'], '.4f')}   events {summary['events']:,}{rate}"
        f"   wall {wall:.3f} s"
    )
    for warning in summary.get("warnings") or []:  # traces that stopped at their budget
        console.print(f"[yellow]warning:[/yellow] {warning}", markup=True, highlight=False)
