"""Old spellings of moved commands: hidden, they run what they ran and name the new spelling.

A user's scripts keep working for one release; each run prints one line on stderr saying where
the command went. :func:`moved` copies a command that also lives at its new spelling;
:func:`note_moved` marks a command whose own implementation stays only under its old spelling
(a decision command whose new home is the review queue or `dataset apply`).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click

__all__ = ["moved", "note_moved", "note_text"]

C = TypeVar("C", bound=click.Command)


def note_text(old: str, new: str) -> str:
    """The one line an old spelling prints on stderr.

    Args:
        old: The old spelling after ``casework`` (``check``, ``adjudicate list``).
        new: The new spelling after ``casework`` (``dataset check``).
    """
    return f"note: `casework {old}` is now `casework {new}` (the old spelling goes in the next release)."


def _noted(callback: Callable[..., Any], old: str, new: str, *, group: bool) -> Callable[..., Any]:
    @functools.wraps(callback)
    def run(*args: Any, **kwargs: Any) -> Any:
        # A group's own callback also runs before each sub-command: the sub-command notes then.
        if not group or click.get_current_context().invoked_subcommand is None:
            click.echo(note_text(old, new), err=True)
        return callback(*args, **kwargs)

    return run


def note_moved(command: C, old: str, new: str, subs: Mapping[str, str] | None = None) -> C:
    """Hide ``command`` (in place) and make each run of it note its new spelling first.

    Args:
        command: The command (or group) kept under its old spelling.
        old: Its old spelling after ``casework`` (``leakage decide``).
        new: Its new spelling after ``casework`` (``review decide``).
        subs: For a group, the new spelling of each sub-command by name (default: ``new`` and the
            sub-command's name).

    Returns:
        The same command, now hidden.
    """
    command.hidden = True
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            where = (subs or {}).get(name, f"{new} {name}")
            note_moved(sub, f"{old} {name}", where)
        if command.callback is not None and command.invoke_without_command:
            command.callback = _noted(command.callback, old, new, group=True)
    elif command.callback is not None:
        command.callback = _noted(command.callback, old, new, group=False)
    return command


def moved(
    command: click.Command, old: str, new: str, subs: Mapping[str, str] | None = None
) -> click.Command:
    """A hidden copy of ``command`` named by the last word of ``old`` that notes ``new`` first.

    Args:
        command: The command at its new spelling (left as it is).
        old: The old spelling after ``casework`` (``guideline``, ``tools suggest``).
        new: The new spelling after ``casework`` (``label guideline``, ``import tools``).
        subs: For a group, the new spelling of each sub-command by name (default: ``new`` and the
            sub-command's name).

    Returns:
        The copy, hidden, with copied sub-commands for a group.
    """
    alias = copy.copy(command)
    alias.name = old.rsplit(" ", 1)[-1]
    if isinstance(command, click.Group) and isinstance(alias, click.Group):
        alias.commands = {
            name: moved(sub, f"{old} {name}", (subs or {}).get(name, f"{new} {name}"))
            for name, sub in command.commands.items()
        }
        for sub in alias.commands.values():
            sub.hidden = command.commands[str(sub.name)].hidden
        alias.hidden = True
        if alias.callback is not None and alias.invoke_without_command:
            alias.callback = _noted(alias.callback, old, new, group=True)
        return alias
    return note_moved(alias, old, new)
