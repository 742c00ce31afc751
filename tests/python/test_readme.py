"""Every code block of the README runs: shell and Python blocks in order, in one scratch
directory (so later blocks read what earlier ones wrote), TOML blocks parse and complete
scenarios validate. A block that installs software or takes minutes is skipped here, by
its first line, with the reason."""

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

#: First line of a block -> why it is not run here.
SKIPPED = {
    "# install and run the demo": "installs into a new virtual environment and builds the "
    "extension (minutes); CI runs exactly these commands",
}

#: A line ending in this comment needs that module; dropped when it is not installed.
OPTIONAL = {"# with pandas installed": "pandas"}

#: Blocks whose lines are alternatives for one key (each line parses on its own).
ALTERNATIVES = ('ppv = "gold"',)


@dataclass
class Block:
    language: str
    code: str
    line: int

    @property
    def first(self) -> str:
        return self.code.splitlines()[0] if self.code.strip() else ""


def blocks() -> list[Block]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return [
        Block(m.group(1), m.group(2), text[: m.start()].count("\n") + 1)
        for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M)
    ]


def _skip_reason(block: Block) -> str | None:
    for prefix, reason in SKIPPED.items():
        if block.first.startswith(prefix):
            return reason
    return None


def test_skips_name_existing_blocks() -> None:
    firsts = [b.first for b in blocks()]
    for prefix in SKIPPED:
        assert any(f.startswith(prefix) for f in firsts), f"no README block starts {prefix!r}"


def _run(args: list[str], cwd: Path, block: Block) -> None:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["MPLBACKEND"] = "Agg"
    proc = subprocess.run(
        args,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, (
        f"README line {block.line} ({block.language}) failed:\n{block.code}\n"
        f"stdout:\n{proc.stdout[-2000:]}\nstderr:\n{proc.stderr[-3000:]}"
    )


def _without_missing_modules(code: str) -> str:
    lines = code.splitlines()
    for marker, module in OPTIONAL.items():
        if importlib.util.find_spec(module) is None:
            lines = [line for line in lines if not line.rstrip().endswith(marker)]
    return "\n".join(lines) + "\n"


def _toml(block: Block) -> None:
    if block.first.startswith(ALTERNATIVES):
        for line in block.code.splitlines():
            if line.strip():
                tomllib.loads(line)
        return
    doc = tomllib.loads(block.code)
    if "duration" in doc and "bottleneck" in doc:
        ccsim.validate(doc)  # a complete scenario
    elif "base" not in doc:  # a fragment of a scenario: complete it and validate
        scenario = {"duration": "60s", "bottleneck": {"rate": "10Mbps"}, **doc}
        ccsim.validate(scenario)


def test_every_readme_block_runs(tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(REPO / "examples")
    ran = 0
    for i, block in enumerate(blocks()):
        if _skip_reason(block):
            continue
        if block.language == "sh":
            _run(["bash", "-e", "-c", block.code], tmp_path, block)
        elif block.language == "python":
            script = tmp_path / f"block_{i}.py"
            script.write_text(_without_missing_modules(block.code))
            _run([sys.executable, str(script)], tmp_path, block)
        elif block.language == "toml":
            _toml(block)
        elif block.language == "":
            continue  # a directory listing, not code
        else:
            pytest.fail(f"README line {block.line}: no rule for ```{block.language} blocks")
        ran += 1
    assert ran >= 5
