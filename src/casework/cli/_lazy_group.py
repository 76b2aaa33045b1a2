"""A command group whose heavier sub-commands load from their modules on first use.

The group module stays light (``casework dataset versions`` pays for no numpy or SQLAlchemy);
the sub-commands named in its table are imported only when one runs, and the group's help lists
them from the table, importing none.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import click

__all__ = ["LazyGroup"]


class LazyGroup(click.Group):
    """A click group with a table of sub-commands held by other modules.

    Args:
        lazy: Each lazily loaded sub-command's name -> (``module:attribute``, its short help as
            the command's first help paragraph says it; a test keeps the two equal).
        **kwargs: What :class:`click.Group` takes.
    """

    def __init__(
        self, *args: Any, lazy: Mapping[str, tuple[str, str]] | None = None, **kwargs: Any
    ):
        super().__init__(*args, **kwargs)
        self.lazy: dict[str, tuple[str, str]] = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        """The loaded and the lazily loaded sub-commands, sorted by name."""
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The sub-command ``cmd_name``, importing its module on first use."""
        if cmd_name not in self.commands and cmd_name in self.lazy:
            module_name, attribute = self.lazy[cmd_name][0].split(":")
            command = getattr(importlib.import_module(module_name), attribute)
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List the visible sub-commands, the lazy ones from the table (importing none)."""
        rows: list[tuple[str, str | click.Command]] = []
        for name in self.list_commands(ctx):
            command = self.commands.get(name)
            if command is None:
                rows.append((name, self.lazy[name][1]))
            elif not command.hidden:
                rows.append((name, command))
        if not rows:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in rows)
        # A bare Command with the same help shortens it as the real one would (click's own rule).
        shown = [
            (
                name,
                (
                    what if isinstance(what, click.Command) else click.Command(name, help=what)
                ).get_short_help_str(limit),
            )
            for name, what in rows
        ]
        with formatter.section("Commands"):
            formatter.write_dl(shown)
