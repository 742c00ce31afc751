"""ccsim's build backend: maturin, plus the committed profile-guided-optimisation profile.

``pip install .`` builds the ``ccsim._core`` extension through this module (see
``[build-system]`` in ``pyproject.toml``). It is maturin's PEP 517 backend with one
addition: when ``pgo/ccsim.profdata`` can be read by the Rust compiler at hand, the build
gets ``-Cprofile-use=...`` (rustc book, "Profile-guided Optimization"), so LLVM
lays out and inlines the simulator's hot paths by how often they ran in the training
scenarios (``pgo/train.py``). Results are unchanged (no floating-point relaxation); only
speed differs. See ``pgo/README.md``.

The profile is used only when it is safe: the compiler's LLVM major version must be the
one that wrote the profile (another version may reject the file and fail the build),
``RUSTFLAGS`` must be unset (a user's own flags win), and ``CCSIM_PGO`` must not be
``0``. Otherwise the build goes ahead without it and says why on stderr. Code changed
since the profile was made still builds: LLVM drops the profile of each changed function.

The decision is compiled into the extension (``ccsim._core.build_info()["pgo"]``) so that
benchmark reports can state how the binary they timed was built.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import maturin
from maturin import (  # noqa: F401  (the rest of the PEP 517 interface, unchanged)
    build_sdist,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)
from pgo_profile import (
    INFO_ENV,
    PROFILE,
    decide,
    read_profile_info,
    rustc_version,
    sources_digest,
)

#: The flags a profile-guided build adds. LLVM counts a block as hot when it is among
#: those that make up 99.9% of the profile's executed counts (its default, 99%, left the
#: TCP receive and ACK paths outlined from the event loop: measured 1.05-1.17x slower
#: on bench/compare.py's scenarios, none of which the profile was trained on).
RUSTFLAGS = [f"-Cprofile-use={PROFILE}", "-Cllvm-args=-profile-summary-cutoff-hot=999000"]


@contextlib.contextmanager
def _pgo_environment() -> Iterator[None]:
    use, why = decide(dict(os.environ), rustc_version(), read_profile_info(), sources_digest())
    saved = {k: os.environ.get(k) for k in ("CARGO_ENCODED_RUSTFLAGS", INFO_ENV)}
    if use:
        # Encoded (0x1f-separated) so that a path with spaces stays one argument.
        os.environ["CARGO_ENCODED_RUSTFLAGS"] = "\x1f".join(RUSTFLAGS)
    os.environ[INFO_ENV] = why
    print(f"ccsim: profile-guided optimisation {why}", file=sys.stderr, flush=True)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def build_wheel(
    wheel_directory: str,
    config_settings: Mapping[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    with _pgo_environment():
        return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(
    wheel_directory: str,
    config_settings: Mapping[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    with _pgo_environment():
        return maturin.build_editable(wheel_directory, config_settings, metadata_directory)
