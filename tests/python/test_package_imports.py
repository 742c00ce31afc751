"""What ``import ccsim`` loads, and how the package's modules import each other.

The ns-3 harness lives outside the package (``bench/ns3/ccsim_ns3``, run by ``python
bench/compare.py``): neither ``import ccsim`` nor the ``ccsim`` command loads any of it.
And the package has no import circle: each module's top-level imports among ccsim's own
modules form a graph without a cycle, so lower layers never import upper ones; and a
single run (``ccsim.api``) reads its scenario with ``ccsim.scenario``, not the sweeps.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from helpers import REPO

PACKAGE = REPO / "python" / "ccsim"

#: Module name prefixes that belong to the ns-3 harness or to ns-3 itself.
HARNESS = ("ccsim_ns3", "ccsim_linux", "ccsim.compare", "ccsim.differential", "ns3", "cppyy")


def _modules_after(code: str) -> list[str]:
    """``sys.modules`` after running ``code`` in a fresh interpreter (no terminal)."""
    script = textwrap.dedent(code) + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        cwd=REPO,  # where bench/ would be found if anything looked for it
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _harness(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HARNESS)]


def test_import_ccsim_loads_no_ns3_harness():
    modules = _modules_after("import ccsim")
    assert "ccsim" in modules
    assert _harness(modules) == []


@pytest.mark.parametrize(
    "code",
    [
        "from ccsim.cli import build_parser\nbuild_parser()",
        # as the ccsim console script runs `ccsim run --help` (argparse exits 0)
        """
        import contextlib, io
        from ccsim.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                main(["run", "--help"])
            except SystemExit as exc:
                assert exc.code == 0, exc.code
        """,
    ],
    ids=["build_parser", "run --help"],
)
def test_the_ccsim_command_loads_no_ns3_harness(code):
    modules = _modules_after(code)
    assert "ccsim.cli" in modules
    assert _harness(modules) == []


def test_ccsim_has_no_compare_command():
    proc = subprocess.run(
        [sys.executable, "-m", "ccsim.cli", "compare", "ns3"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "invalid choice: 'compare'" in proc.stderr


# ---------------------------------------------------------------------------------------
# The import graph among ccsim's own modules
# ---------------------------------------------------------------------------------------


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.Module, lazy: bool) -> list[ast.Import | ast.ImportFrom]:
    """The imports that run when the module is imported: those of the module body and of
    the blocks and class bodies in it, except under ``if TYPE_CHECKING:``; with ``lazy``
    also those inside functions (which run when called)."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(nodes: list[ast.AST]) -> None:
        for node in nodes:
            if isinstance(node, ast.Import | ast.ImportFrom):
                found.append(node)
            elif isinstance(node, ast.If) and _is_type_checking(node.test):
                visit(node.orelse)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                if lazy:
                    visit(list(ast.iter_child_nodes(node)))
            else:  # if/try/with/for bodies and class bodies run at import time
                visit(list(ast.iter_child_nodes(node)))

    visit(list(tree.body))
    return found


def import_graph(lazy: bool = False) -> dict[str, set[str]]:
    """Each ccsim module (by dotted name) and the ccsim modules its top-level imports
    (with ``lazy``, all its imports) load. ``from ccsim.x import y`` counts as importing
    ``ccsim.x.y`` when that is a module (the Rust extension's stub ``_core.pyi``
    included), else ``ccsim.x``."""
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    known = set(paths) | {_module_name(p) for p in PACKAGE.rglob("*.pyi")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        is_package = path.name == "__init__.py"
        package = name if is_package else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in _imports(ast.parse(path.read_text(), str(path)), lazy):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    origin = ".".join(base + ([node.module] if node.module else []))
                else:
                    origin = node.module or ""
                targets = [
                    f"{origin}.{alias.name}" if f"{origin}.{alias.name}" in known else origin
                    for alias in node.names
                ]
            edges |= {t for t in targets if t in paths and t != name}
        graph[name] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (its modules in import order, the first repeated at
    the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_cycle_finder_finds_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_graph_reads_the_package():
    graph = import_graph()
    assert "ccsim.cli" in graph and "ccsim.api" in graph
    assert "ccsim.results" in graph["ccsim.api"]  # from ccsim.results import RunResult


@pytest.mark.parametrize("lazy", [False, True], ids=["top-level", "with-lazy"])
def test_ccsim_has_no_import_circle(lazy):
    """No circle among the imports a module runs when loaded; none either when the
    imports inside functions (ccsim's lazy imports) count, so no module needs another
    that needs it back."""
    cycle = find_cycle(import_graph(lazy))
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


@pytest.mark.parametrize("lazy", [False, True], ids=["top-level", "with-lazy"])
def test_api_reads_scenarios_without_the_sweeps(lazy):
    """``ccsim.run`` reads a scenario and its ``--set`` overrides with ccsim.scenario; no
    module of the sweep machinery (spec, store, backends) is needed for a single run."""
    reached = _reachable(import_graph(lazy), "ccsim.api")
    assert "ccsim.scenario" in reached
    assert not {m for m in reached if m.startswith(("ccsim.sweeps", "ccsim.sweep_"))}


def test_import_ccsim_run_loads_no_sweep_module():
    modules = _modules_after("import ccsim\nccsim.run  # the function, imported on first use")
    assert "ccsim.api" in modules and "ccsim.scenario" in modules
    assert not [m for m in modules if m.startswith(("ccsim.sweeps", "ccsim.sweep_"))]
