"""Progress bars of the long dataset commands (stderr, a terminal only, never with JSON output)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from casework.cli.context import err_console

if TYPE_CHECKING:  # the dataset package loads in the commands: `casework versions` stays light
    from casework.dataset import ProgressCallback, StageProgress

__all__ = ["reading", "stages"]

#: Files smaller than this read in well under two seconds: no progress bar for them.
_PROGRESS_MIN_BYTES = 32 * 1024 * 1024


@contextmanager
def stages(what: str, fmt: str) -> Iterator[StageProgress]:
    """A progress bar on stderr (a terminal only, never with JSON output) fed bytes done.

    Each stage a command reports (``reading``, ``validating``…) restarts the bar under its
    own name. Drawn on each update, without rich's refresh thread: a parallel scan forks
    workers only from a process without threads.
    """
    # Imported here: rich.progress costs `casework versions` ~10 ms of its 0.3 s start-up budget.
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    quiet = fmt == "json" or not err_console.is_terminal
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(
        *columns, console=err_console, transient=True, disable=quiet, auto_refresh=False
    ) as progress:
        task = progress.add_task(what, total=None, visible=False)
        current = [""]

        def update(stage: str, done: int, total: int) -> None:
            visible = total >= _PROGRESS_MIN_BYTES
            if stage != current[0]:
                current[0] = stage  # a new stage: its own speed and time left
                description = f"{what}: {stage}" if stage else what
                progress.reset(
                    task, total=total, completed=done, visible=visible, description=description
                )
            else:
                progress.update(task, completed=done, total=total, visible=visible)
            progress.refresh()

        yield update


@contextmanager
def reading(what: str, fmt: str) -> Iterator[ProgressCallback]:
    """:func:`stages` for a command of one stage, fed bytes read."""
    with stages(what, fmt) as update:
        yield lambda done, total: update("", done, total)
