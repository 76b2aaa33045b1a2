"""Shared CLI plumbing: the project lookup, the console, and output helpers for commands."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click
from rich.console import Console

if TYPE_CHECKING:
    from casework.project import Project

__all__ = [
    "FORMAT",
    "AppState",
    "console",
    "err_console",
    "example",
    "get_state",
    "pass_project",
]

F = TypeVar("F", bound=Callable[..., Any])
C = TypeVar("C", bound=click.Command)

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


@dataclass
class AppState:
    """Options of the top-level `casework` command, shared by every sub-command."""

    project_path: Path | None = None
    debug: bool = False
    #: The (sub-)command that ran: its flags spell the parameter names of library errors first.
    ran: click.Command | None = field(default=None, repr=False)
    _project: Project | None = field(default=None, repr=False)

    def project(self) -> Project:
        """The project (loaded once, on first use)."""
        if self._project is None:
            from casework.atomic import PROJECT_TMP, clean_temps
            from casework.project import load_project  # here: `casework --help` needs no project

            self._project = load_project(self.project_path)
            # Temp files a killed command left (its writes are staged there, never beside them).
            clean_temps(self._project.root / PROJECT_TMP)
        return self._project


def get_state() -> AppState:
    """The :class:`AppState` of the running command."""
    ctx = click.get_current_context()
    state = ctx.find_object(AppState)
    if state is None:  # a command invoked on its own, as in some tests
        state = ctx.ensure_object(AppState)
    return state


def pass_project(fn: F) -> F:
    """Decorator: call the command with the loaded :class:`Project` as first argument."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        state = get_state()
        state.ran = click.get_current_context().command
        return fn(state.project(), *args, **kwargs)

    return cast(F, wrapper)


#: The ``--format text|json`` option every command with data output takes (parameter ``fmt``).
FORMAT = click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Output format.",
)


#: ``--slice`` as a repeatable filter (parameter ``slices``).
SLICES = click.option("--slice", "slices", multiple=True, help="Only this slice (repeatable).")


def _split_filter(fn: F) -> F:
    from casework.schema import SPLITS  # here: the schema loads with the command that uses it

    option = click.option(
        "--split",
        "splits",
        multiple=True,
        type=click.Choice(SPLITS),
        help="Only this split (repeatable).",
    )
    return option(fn)


#: ``--split`` as a repeatable filter, choices from the schema (parameter ``splits``).
SPLIT_FILTER = _split_filter

#: ``--out DIR`` for commands that write labelling or adjudication sheets (parameter ``out_dir``).
SHEETS_OUT = click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write the sheets to.",
)


def example(*lines: str) -> Callable[[C], C]:
    """Decorator over a click command: end its help with an ``Example:`` a user can paste.

    The lines stay as written: the block is a paragraph click does not rewrap.

    Args:
        *lines: Command lines, each starting with ``casework``.
    """

    def add(command: C) -> C:
        block = "\n".join(["\b", "Example:", *(f"  {line}" for line in lines)])
        # The help's last words: after the epilog when the command has one.
        if command.epilog:
            command.epilog = f"{inspect.cleandoc(command.epilog)}\n\n{block}"
        else:
            command.help = f"{inspect.cleandoc(command.help or '')}\n\n{block}"
        return command

    return add
