"""The build backend's choice on profile-guided optimisation (pgo/pgo_profile.py)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "pgo"))
import pgo_profile  # noqa: E402  (lives in pgo/, next to the build backend)

from ccsim import _core  # noqa: E402

RUSTC = {"release": "1.95.0", "LLVM version": "22.1.2"}
INFO = {"made": "2026-11-21", "rustc": "1.95.0", "llvm": "22.1.2", "sources": "abc"}


def test_profile_used_when_the_compiler_can_read_it() -> None:
    use, why = pgo_profile.decide({}, RUSTC, INFO, "abc")
    assert use
    assert why == "on (profile made 2026-11-21 with rustc 1.95.0, made for these sources)"
    # Another rustc release on the same LLVM major reads the same profile format.
    assert pgo_profile.decide({}, {**RUSTC, "release": "1.96.0"}, INFO, "abc")[0]


def test_changed_sources_still_use_the_profile_and_say_so() -> None:
    use, why = pgo_profile.decide({}, RUSTC, INFO, "def")
    assert use
    assert "sources changed since it was made" in why


@pytest.mark.parametrize(
    ("env", "rustc", "info", "reason"),
    [
        ({"CCSIM_PGO": "0"}, RUSTC, INFO, "off (CCSIM_PGO=0)"),
        ({"RUSTFLAGS": "-Copt-level=2"}, RUSTC, INFO, "RUSTFLAGS is set"),
        ({"CARGO_ENCODED_RUSTFLAGS": "-g"}, RUSTC, INFO, "RUSTFLAGS is set"),
        ({}, RUSTC, None, "no profile"),
        ({}, {}, INFO, "rustc -vV did not run"),
        ({}, {"release": "1.80.0", "LLVM version": "18.1.7"}, INFO, "LLVM 22, this rustc"),
    ],
)
def test_profile_skipped_when_unsafe_or_unwanted(
    env: dict[str, str], rustc: dict[str, str], info: dict | None, reason: str
) -> None:
    use, why = pgo_profile.decide(env, rustc, info, "abc")
    assert not use
    assert why.startswith("off (")
    assert reason in why


def test_sources_digest_follows_rust_sources_only(tmp_path: Path) -> None:
    crate = tmp_path / "crates" / "a"
    (crate / "src").mkdir(parents=True)
    (tmp_path / "Cargo.toml").write_text("[workspace]\n")
    (crate / "Cargo.toml").write_text("[package]\n")
    (crate / "src" / "lib.rs").write_text("fn f() {}\n")
    first = pgo_profile.sources_digest(tmp_path)
    (tmp_path / "README.md").write_text("not code\n")
    assert pgo_profile.sources_digest(tmp_path) == first
    (crate / "src" / "lib.rs").write_text("fn f() { g() }\n")
    assert pgo_profile.sources_digest(tmp_path) != first


def test_committed_profile_is_described() -> None:
    info = pgo_profile.read_profile_info()
    assert info is not None, "pgo/ccsim.profdata or pgo/profile.json is missing"
    assert set(info) >= {"made", "rustc", "llvm", "sources", "training"}
    for path in info["training"]:
        assert (ROOT / path).is_file(), path


def test_extension_reports_how_it_was_built() -> None:
    pgo = _core.build_info()["pgo"]
    assert pgo.startswith(("on (", "off ("))


@pytest.mark.skipif(shutil.which("rustc") is None, reason="no rustc on PATH")
def test_rustc_version_parses_llvm() -> None:
    assert pgo_profile.llvm_major(pgo_profile.rustc_version().get("LLVM version", ""))
