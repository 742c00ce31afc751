"""A rich progress bar fed by the core's progress callback."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


@contextmanager
def progress_bar(
    enabled: bool, description: str = "simulating"
) -> Iterator[Callable[[float], None] | None]:
    """Yield a callback taking the fraction done (or ``None`` when disabled).

    The bar is drawn on stderr and refreshed by rich's own thread, which runs because the
    core releases the GIL while it simulates.
    """
    if not enabled:
        yield None
        return
    bar = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
    )
    with bar:
        task = bar.add_task(description, total=1.0)

        def update(fraction: float) -> None:
            bar.update(task, completed=min(max(fraction, 0.0), 1.0))

        yield update
        bar.update(task, completed=1.0)
