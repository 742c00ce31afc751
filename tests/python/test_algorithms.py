"""``ccsim algorithms`` and the generated parameter tables of docs/algorithms.md.

The tables come from the core (``_core.algorithms()``), the same tables that check
scenario files; the docs hold them between ``<!-- params:NAME -->`` markers and must not
drift from them.
"""

from __future__ import annotations

import pytest

from ccsim import algorithms
from ccsim._core import ScenarioError, parse_check
from helpers import REPO, run_cli

DOCS = REPO / "docs" / "algorithms.md"

CC_KINDS = [
    "newreno",
    "cubic",
    "dctcp",
    "cdg",
    "ledbat",
    "vegas",
    "bbr",
    "bbr3",
    "prague",
    "policy",
]
QDISC_KINDS = ["droptail", "pie", "codel", "red", "fq_codel", "csaqm", "pvpie", "dualpi2", "pi2"]


def test_every_algorithm_has_a_table() -> None:
    algos = algorithms.algorithms()
    ccs = [a["name"] for a in algos if a["family"] == "congestion control"]
    qdiscs = [a["name"] for a in algos if a["family"] == "queue discipline"]
    assert ccs == CC_KINDS
    assert qdiscs == QDISC_KINDS
    for a in algos:
        assert a["summary"] and a["reference"], a["name"]
        for p in a["params"]:
            for field in ("name", "unit", "default", "accepts", "help"):
                assert p[field], (a["name"], p["name"], field)
            assert "\n" not in p["help"], (a["name"], p["name"])


def test_unknown_parameter_lists_the_table_names() -> None:
    """The valid names in the error are the table's, in its order."""
    for a in algorithms.algorithms():
        section = "cc" if a["family"] == "congestion control" else "queue"
        spec = f'{{ kind = "{a["name"]}", no_such_key = 1 }}'
        text = 'duration = "1s"\n[bottleneck]\nrate = "10Mbps"\n'
        if section == "queue":
            text += f'queue = {spec}\n[[flows]]\nrtt = "20ms"\n'
        else:
            text += f'[[flows]]\nrtt = "20ms"\ncc = {spec}\n'
        with pytest.raises(ScenarioError) as exc:
            parse_check(text, "toml")
        names = ", ".join(p["name"] for p in a["params"])
        assert f"(expected one of: {names})" in str(exc.value), str(exc.value)


def test_cli_lists_every_algorithm() -> None:
    r = run_cli("algorithms")
    assert r.returncode == 0, r.stderr
    for name in CC_KINDS + QDISC_KINDS:
        assert f"  {name}" in r.stdout, name
    assert "reference: Linux net/ipv4/tcp_cubic.c" in r.stdout


def test_cli_prints_one_algorithm() -> None:
    r = run_cli("algorithms", "cubic")
    assert r.returncode == 0, r.stderr
    cubic = algorithms.find("cubic")
    assert cubic is not None
    assert cubic["reference"] in r.stdout
    for p in cubic["params"]:
        assert f"{p['name']} ({p['unit']}, default {p['default']})" in r.stdout
        assert p["help"] in r.stdout
        assert p["accepts"] in r.stdout
    # An alias finds its algorithm.
    assert run_cli("algorithms", "reno").stdout.startswith("newreno (reno)")


def test_cli_unknown_algorithm_is_one_line_exit_2() -> None:
    r = run_cli("algorithms", "bbr9")
    assert r.returncode == 2
    assert r.stderr_lines == [r.stderr_lines[0]]
    assert r.stderr.startswith("error: unknown algorithm 'bbr9' (known: newreno, cubic,")


def test_docs_tables_match_the_code() -> None:
    text = DOCS.read_text()
    documented = algorithms.documented(text)
    missing = [a["name"] for a in algorithms.algorithms() if a["name"] not in documented]
    assert not missing, f"docs/algorithms.md has no <!-- params:NAME --> table for {missing}"
    assert algorithms.render_docs(text) == text, (
        "docs/algorithms.md's parameter tables differ from the code's tables; "
        f"regenerate them with: {algorithms.REGENERATE}"
    )
