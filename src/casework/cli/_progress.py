"""Progress bars of the long commands: on stderr, a terminal only, never with JSON output.

:func:`stages` and :func:`reading` serve the dataset commands; :class:`Bar` the others. Every
progress bar of the CLI is made here, so none can reach stdout (where results and JSON go).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Any

from casework.cli.context import err_console

if (
    TYPE_CHECKING
):  # the dataset package loads in the commands: `casework dataset versions` stays light
    from rich.progress import ProgressColumn

    from casework.dataset import ProgressCallback, StageProgress

__all__ = ["Bar", "reading", "stages"]

#: Files smaller than this read in well under two seconds: no progress bar for them.
_PROGRESS_MIN_BYTES = 32 * 1024 * 1024


def _quiet(fmt: str) -> bool:
    """No bar with JSON output, nor off a terminal (a log or a pipe would keep every frame)."""
    return fmt == "json" or not err_console.is_terminal


class Bar:
    """One progress task on stderr, drawn from its first update (a terminal only, never JSON).

    A command checks its inputs before its work reports progress, so a command that refuses
    them shows no bar at all. Use as a context manager: leaving it removes the bar.

    Args:
        what: The task's description.
        fmt: The command's output format (`json` shows no bar).
        columns: rich columns (default: rich's own).
    """

    def __init__(self, what: str, fmt: str, *columns: ProgressColumn) -> None:
        from rich.progress import Progress  # here: rich.progress is slow to import

        self._progress = Progress(
            *columns, console=err_console, transient=True, disable=_quiet(fmt)
        )
        self._task = self._progress.add_task(what, total=None)
        self._started = False

    def update(self, **fields: Any) -> None:
        """Update the task (rich's ``Progress.update`` fields), drawing the bar the first time."""
        self._progress.update(self._task, **fields)
        if not self._started:  # after the update: the first frame shows its figures
            self._started = True
            self._progress.start()

    def __enter__(self) -> Bar:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._progress.stop()


@contextmanager
def stages(what: str, fmt: str) -> Iterator[StageProgress]:
    """A progress bar on stderr (a terminal only, never with JSON output) fed bytes done.

    Each stage a command reports (``reading``, ``validating``…) restarts the bar under its
    own name. Drawn on each update, without rich's refresh thread: a parallel scan forks
    workers only from a process without threads.
    """
    # Imported here: rich.progress costs `casework dataset versions` ~10 ms of its 0.3 s start-up budget.
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    quiet = _quiet(fmt)
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
