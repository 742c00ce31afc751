"""What the build backend (``ccsim_build.py``) and ``train.py`` share: where the profile
lives, what it was made from, and whether a build may use it. No dependency outside the
standard library, so that ``train.py`` and the test suite can import it anywhere."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

PGO_DIR = Path(__file__).resolve().parent
ROOT = PGO_DIR.parent
PROFILE = PGO_DIR / "ccsim.profdata"
PROFILE_INFO = PGO_DIR / "profile.json"
#: The environment variable the extension reads at compile time (``option_env!``).
INFO_ENV = "CCSIM_BUILD_PGO"


def rust_sources(root: Path = ROOT) -> list[Path]:
    """The files whose content decides the compiled code: manifests, lock file, sources."""
    files = [root / "Cargo.toml", root / "Cargo.lock"]
    for crate in sorted((root / "crates").iterdir()):
        files.append(crate / "Cargo.toml")
        files.extend(sorted((crate / "src").rglob("*.rs")))
    return [f for f in files if f.is_file()]


def sources_digest(root: Path = ROOT) -> str:
    """SHA-256 over the Rust sources' paths and contents (order-independent of the OS)."""
    h = hashlib.sha256()
    for f in rust_sources(root):
        h.update(f.relative_to(root).as_posix().encode())
        h.update(b"\0")
        h.update(f.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def rustc_command() -> str:
    """The compiler cargo will run: ``$RUSTC``, else ``rustc`` on the PATH."""
    return os.environ.get("RUSTC", "rustc")


def rustc_version(rustc: str | None = None) -> dict[str, str]:
    """``rustc -vV`` as a dict (``release``, ``LLVM version``, ...); empty if unavailable."""
    cmd = [rustc or rustc_command(), "-vV"]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    info: dict[str, str] = {}
    for line in out.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            info[key.strip()] = value.strip()
    return info


def llvm_major(version: str) -> str:
    m = re.match(r"(\d+)", version)
    return m.group(1) if m else ""


def decide(
    env: Mapping[str, str],
    rustc: Mapping[str, str],
    profile_info: Mapping[str, Any] | None,
    digest: str,
) -> tuple[bool, str]:
    """Whether to build with the profile, and the one-line reason (compiled into the
    extension and printed). Pure, so that the test suite can check every branch."""
    if env.get("CCSIM_PGO", "1") == "0":
        return False, "off (CCSIM_PGO=0)"
    if env.get("RUSTFLAGS") or env.get("CARGO_ENCODED_RUSTFLAGS"):
        return False, "off (RUSTFLAGS is set; the user's flags win)"
    if profile_info is None:
        return False, "off (no profile in pgo/)"
    want = llvm_major(profile_info.get("llvm", ""))
    have = llvm_major(rustc.get("LLVM version", ""))
    if not have:
        return False, "off (rustc -vV did not run)"
    if want != have:
        return False, (
            f"off (profile written by LLVM {want}, this rustc {rustc.get('release', '?')} "
            f"uses LLVM {have}; run pgo/train.py to make one for it)"
        )
    if profile_info.get("sources") == digest:
        fresh = "made for these sources"
    else:
        fresh = "sources changed since it was made: changed functions go unprofiled"
    made = f"{profile_info.get('made', '?')} with rustc {profile_info.get('rustc', '?')}"
    return True, f"on (profile made {made}, {fresh})"


def read_profile_info() -> dict[str, Any] | None:
    if not (PROFILE.is_file() and PROFILE_INFO.is_file()):
        return None
    return json.loads(PROFILE_INFO.read_text())
