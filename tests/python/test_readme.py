"""Every code block of README.md and of the documentation site (docs/**/*.md) runs: per
page, shell and Python blocks in order, in one scratch directory (so later blocks read what
earlier ones wrote), TOML blocks are validated by the real schema (a scenario, a fragment of
one completed with a duration and a bottleneck, or a sweep file checked by
``ccsim sweep --dry-run``). A block that installs software or takes minutes is skipped
here, by its first line, with the reason."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import tomllib

import ccsim
from helpers import REPO

#: Every page whose blocks run: the README, then the site's pages.
PAGES = [Path("README.md"), *sorted(p.relative_to(REPO) for p in (REPO / "docs").rglob("*.md"))]

#: First line of a block -> why it is not run here.
SKIPPED = {
    "# install and run the demo": "installs into a new virtual environment and builds the "
    "extension (minutes); CI runs exactly these commands",
    "# build the site into site/": "installs the docs extra; test_docs.py builds the site "
    "with mkdocs build --strict",
    "ccsim sweep SWEEP.toml -o DIR": "a synopsis of the options, not a command",
    "ccsim reproduce 003 -o out/repro": "runs a whole paper's experiments (minutes to "
    "hours); tests/python/test_reproduce*.py cover them",
    "# train (needs the rl extra": "installs PyTorch with Stable-Baselines3 and trains "
    "for minutes (docs/gym.md's tutorial)",
    "# aurora_policy.py": "loads the model the tutorial's training saves",
    "# aurora_sweep.toml": "evaluates the tutorial's trained model",
}

#: A line ending in this comment needs that module; dropped when it is not installed.
OPTIONAL = {"# with pandas installed": "pandas"}

#: Blocks whose lines are alternatives for one key (each line parses on its own).
ALTERNATIVES = ('ppv = "gold"',)

#: Top-level keys that make a TOML block a sweep file rather than a scenario.
SWEEP_KEYS = {"base", "grid", "zip", "set", "repetitions", "series", "plot"}


@dataclass
class Block:
    page: Path
    language: str
    code: str
    line: int

    @property
    def first(self) -> str:
        return self.code.splitlines()[0] if self.code.strip() else ""

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line} ({self.language or 'text'})"


def blocks(page: Path) -> list[Block]:
    text = (REPO / page).read_text(encoding="utf-8")
    return [
        Block(page, m.group(1), m.group(2), text[: m.start()].count("\n") + 1)
        for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M)
    ]


def _skip_reason(block: Block) -> str | None:
    for prefix, reason in SKIPPED.items():
        if block.first.startswith(prefix):
            return reason
    return None


def test_skips_name_existing_blocks() -> None:
    firsts = [b.first for page in PAGES for b in blocks(page)]
    for prefix in SKIPPED:
        assert any(f.startswith(prefix) for f in firsts), f"no block of any page starts {prefix!r}"


def test_the_pages_have_code_to_run() -> None:
    runnable = [b for page in PAGES for b in blocks(page) if b.language and not _skip_reason(b)]
    assert len(runnable) >= 20, [b.where for b in runnable]
    assert Path("docs/index.md") in PAGES and Path("docs/algorithms.md") in PAGES


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["MPLBACKEND"] = "Agg"
    return env


def _run(args: list[str], cwd: Path, block: Block) -> None:
    proc = subprocess.run(
        args,
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, (
        f"{block.where} failed:\n{block.code}\n"
        f"stdout:\n{proc.stdout[-2000:]}\nstderr:\n{proc.stderr[-3000:]}"
    )


def _without_missing_modules(code: str) -> str:
    lines = code.splitlines()
    for marker, module in OPTIONAL.items():
        if importlib.util.find_spec(module) is None:
            lines = [line for line in lines if not line.rstrip().endswith(marker)]
    return "\n".join(lines) + "\n"


def _sweep(block: Block, scratch: Path, index: int) -> None:
    """Check a sweep file as `ccsim sweep --dry-run` does, its `base` path resolved as if the
    file sat in examples/sweeps/ (where the shipped sweep files live)."""
    root = scratch / f"_sweep_{index}"
    (root / "sweeps").mkdir(parents=True)
    for example in (REPO / "examples").glob("*.toml"):
        (root / example.name).symlink_to(example)
    path = root / "sweeps" / "block.toml"
    path.write_text(block.code, encoding="utf-8")
    _run(["ccsim", "sweep", str(path), "--dry-run"], scratch, block)


def _toml(block: Block, scratch: Path, index: int) -> None:
    if block.first.startswith(ALTERNATIVES):
        for line in block.code.splitlines():
            if line.strip():
                tomllib.loads(line)
        return
    doc = tomllib.loads(block.code)
    if SWEEP_KEYS & doc.keys() and not {"duration", "bottleneck"} & doc.keys():
        _sweep(block, scratch, index)
    elif "duration" in doc and {"bottleneck", "network"} & doc.keys():
        ccsim.validate(doc)  # a complete scenario (a dumbbell or a network)
    else:  # a fragment of a scenario: complete it and validate
        link = {} if "network" in doc else {"bottleneck": {"rate": "10Mbps"}}
        scenario = {"duration": "60s", **link, **doc}
        ccsim.validate(scenario)


@pytest.mark.parametrize("page", PAGES, ids=[str(p) for p in PAGES])
def test_every_block_runs(page: Path, tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(REPO / "examples")
    for i, block in enumerate(blocks(page)):
        if _skip_reason(block):
            continue
        if block.language == "sh":
            _run(["bash", "-e", "-c", block.code], tmp_path, block)
        elif block.language == "python":
            script = tmp_path / f"block_{i}.py"
            script.write_text(_without_missing_modules(block.code))
            _run([sys.executable, str(script)], tmp_path, block)
        elif block.language == "toml":
            _toml(block, tmp_path, i)
        elif block.language in ("", "text"):
            continue  # a directory listing or output, not code
        else:
            pytest.fail(f"{block.where}: no rule for ```{block.language} blocks")
