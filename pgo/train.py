#!/usr/bin/env python3
"""Make ``pgo/ccsim.profdata``: the profile ``pip install .`` optimises the core with.

    python pgo/train.py

1. builds the ``ccsim._core`` extension instrumented (``RUSTFLAGS=-Cprofile-generate``,
   in a temporary directory, the same ``pip`` build path as a normal install);
2. runs the training scenarios with it: every ``examples/*.toml``, the scenarios users
   start from. None of the ``bench/compare.py`` matrix is among them, so the speed
   reported there is measured on scenarios the profile has not seen;
3. merges the counts with ``llvm-profdata merge --sparse`` (functions that never ran keep
   their ordinary optimisation instead of being treated as cold) and records the
   compiler, the date and a digest of the Rust sources in ``pgo/profile.json``.

Needs the Rust toolchain's ``llvm-profdata`` (``rustup component add llvm-tools``).
Run it again after changing Rust code: functions changed since the profile was made are
compiled without profile data (a build still works, just less fast).
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pgo_profile  # where the profile goes, sources digest, rustc version

ROOT = pgo_profile.ROOT
TRAINING = sorted((ROOT / "examples").glob("*.toml"))

RUN_TRAINING = """
import sys
from pathlib import Path
import ccsim
from ccsim import _core
assert Path(_core.__file__).is_relative_to(sys.argv[1]), _core.__file__
for path in sys.argv[2:]:
    ccsim.run(path)
"""


def fail(message: str) -> None:
    print(f"pgo/train.py: {message}", file=sys.stderr)
    sys.exit(2)


def llvm_profdata(rustc: dict[str, str]) -> Path:
    sysroot = subprocess.run(
        [pgo_profile.rustc_command(), "--print", "sysroot"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    tool = Path(sysroot) / "lib" / "rustlib" / rustc["host"] / "bin" / "llvm-profdata"
    if not tool.is_file():
        fail(f"{tool} not found: install it with `rustup component add llvm-tools`")
    return tool


def main() -> None:
    rustc = pgo_profile.rustc_version()
    if not rustc:
        fail("rustc not found")
    profdata = llvm_profdata(rustc)
    with tempfile.TemporaryDirectory(prefix="ccsim-pgo-") as tmp:
        raw, site = Path(tmp) / "raw", Path(tmp) / "site"
        env = dict(os.environ)
        env["RUSTFLAGS"] = f"-Cprofile-generate={raw}"
        env["CARGO_TARGET_DIR"] = str(Path(tmp) / "target")
        print("building the instrumented extension ...", flush=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", site, ROOT],
            env=env,
            check=True,
        )
        # Build scripts and proc macros ran instrumented too: keep only the training's.
        for f in raw.glob("*.profraw"):
            f.unlink()
        print(f"training on {len(TRAINING)} scenarios ...", flush=True)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")])
        subprocess.run(
            [sys.executable, "-c", RUN_TRAINING, str(site), *map(str, TRAINING)],
            env=env,
            check=True,
        )
        if not any(raw.glob("*.profraw")):
            fail(f"the training wrote no profile into {raw}")
        subprocess.run(
            [
                profdata,
                "merge",
                "--sparse",
                "-o",
                pgo_profile.PROFILE,
                *raw.glob("*.profraw"),
            ],
            check=True,
        )
    info = {
        "made": datetime.date.today().isoformat(),
        "rustc": rustc.get("release", ""),
        "llvm": rustc.get("LLVM version", ""),
        "sources": pgo_profile.sources_digest(),
        "training": [p.relative_to(ROOT).as_posix() for p in TRAINING],
    }
    pgo_profile.PROFILE_INFO.write_text(json.dumps(info, indent=2) + "\n")
    size_kib = pgo_profile.PROFILE.stat().st_size / 1024
    print(f"wrote {pgo_profile.PROFILE.relative_to(ROOT)} ({size_kib:.0f} KiB) and profile.json")


if __name__ == "__main__":
    main()
