"""Figure formats, without importing matplotlib: ``--format`` is checked before a run,
and a run with ``--no-plots`` never pays for matplotlib's import (about 1 s)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

#: Every format a figure can be written in.
FORMATS: tuple[str, ...] = ("png", "pdf", "svg")
#: What is written unless ``--format`` says otherwise: PNG only. PDF and SVG embed and
#: subset fonts and lay the figure out again, which took 2/3 of a run's plotting time;
#: ``--format png,pdf,svg`` writes all three.
DEFAULT_FORMATS: tuple[str, ...] = ("png",)


class FormatError(ValueError):
    """An unknown figure format was asked for."""


def parse_formats(text: str | Sequence[str] | None) -> tuple[str, ...]:
    """``"png,pdf"`` (or a list) as a tuple of formats; :data:`DEFAULT_FORMATS` for None.
    Raises :class:`FormatError` naming an unknown one."""
    if text is None:
        return DEFAULT_FORMATS
    items = text.split(",") if isinstance(text, str) else list(text)
    formats = [item.strip().lower().lstrip(".") for item in items if item.strip()]
    if not formats:
        raise FormatError(f"--format: expected formats among {', '.join(FORMATS)}, got nothing")
    for fmt in formats:
        if fmt not in FORMATS:
            raise FormatError(
                f"--format: unknown format {fmt!r} (expected one or more of "
                f"{', '.join(FORMATS)}, comma-separated)"
            )
    return tuple(dict.fromkeys(formats))


def file_names(stems: Iterable[str]) -> tuple[str, ...]:
    """Every file name the stems can be written as, in every format."""
    return tuple(f"{stem}.{fmt}" for stem in stems for fmt in FORMATS)
