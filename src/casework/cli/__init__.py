"""The `casework` command line: each command parses, calls one library function, renders.

Library errors become one message on stderr here, in exactly one place (:class:`CaseworkGroup`):
exit 1 for bad input or a failed check, 2 for usage errors; tracebacks only with ``--debug``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from casework import __version__
from casework.cli.context import AppState
from casework.errors import CaseworkError

__all__ = ["COMMAND_MODULES", "CaseworkGroup", "cli", "main"]


class CaseworkGroup(click.Group):
    """A click group that renders :class:`CaseworkError` as a message and an exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        """Run the sub-command, turning casework errors into a message on stderr."""
        try:
            return super().invoke(ctx)
        except CaseworkError as exc:
            state = ctx.find_object(AppState)
            if state is not None and state.debug:
                raise
            click.echo(exc.render(_flag_speller(self, ctx)), err=True)
            ctx.exit(exc.exit_code)

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Commands in the order of :data:`COMMAND_MODULES` (the order of the CLI reference)."""
        return list(COMMAND_MODULES)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """Import the module holding ``cmd_name`` on first use."""
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            module = importlib.import_module(f"casework.cli.{COMMAND_MODULES[cmd_name]}")
            for command in module.COMMANDS:
                if command.name is not None and command.name not in self.commands:
                    self.add_command(command)
        return self.commands.get(cmd_name)


def _commands_under(command: click.Command) -> list[click.Command]:
    found = [command]
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            found += _commands_under(sub)
    return found


def _flag_speller(group: CaseworkGroup, ctx: click.Context) -> Callable[[str], str]:
    """Spell a library parameter name as the flag of the command that ran (``slice`` -> ``--slice``).

    Library errors name parameters, never flags; this is the one place that maps them back. A
    name matches an option by its flag (``--relabel-under`` for ``relabel_under``) or by its
    Python name, first among the parameters of the command that ran, then of any command (advice
    may point to another command's option); an unknown name is shown as it is, in backticks.
    """
    name = ctx.invoked_subcommand
    command = group.get_command(ctx, name) if name else None
    here = [p for c in (_commands_under(command) if command else []) for p in c.params]

    def everywhere() -> list[click.Parameter]:
        commands = [group.get_command(ctx, n) for n in group.list_commands(ctx)]
        return [p for c in commands if c for sub in _commands_under(c) for p in sub.params]

    def find(param: str, params: list[click.Parameter]) -> str | None:
        for p in params:
            opts = [*p.opts, *p.secondary_opts]
            if isinstance(p, click.Argument):
                if p.name == param:
                    return p.human_readable_name
            elif p.name == param or any(o.lstrip("-").replace("-", "_") == param for o in opts):
                return max(opts, key=len)
        return None

    def spell(param: str) -> str:
        return find(param, here) or find(param, everywhere()) or f"`{param}`"

    return spell


@click.group(cls=CaseworkGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="casework")
@click.option(
    "--project",
    "project_path",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Project folder (default: the nearest folder upwards holding casework.toml).",
)
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.pass_context
def cli(ctx: click.Context, project_path: Path | None, debug: bool) -> None:
    """casework: build and keep honest the evaluation datasets of tool-using LLM agents."""
    ctx.obj = AppState(project_path=project_path, debug=debug)


# Which module holds each command, in the order of the reference. Explicit (no discovery); a
# module is imported only when one of its commands runs, so `casework versions` does not pay for
# numpy, scipy and the LLM SDK. tests/e2e check this table against each module's COMMANDS.
COMMAND_MODULES: dict[str, str] = {
    "init": "datasets",
    "schema": "datasets",
    "check": "datasets",
    "release": "datasets",
    "versions": "datasets",
    "diff": "datasets",
    "show": "datasets",
    "cases": "datasets",
    "migrate": "datasets",
    "db": "db",
    "label": "labelling",
    "adjudicate": "labelling",
    "guideline": "labelling",
    "agreement": "agreement",
    "mine": "mining",
    "forget": "mining",
    "expire": "mining",
    "synth": "synth",
    "llm": "synth",
    "leakage": "leakage",
    "run": "run",
    "results": "run",
    "compare": "run",
    "retire": "run",
    "gate": "run",
    "report": "run",
    "judge": "judge",
    "interop": "interop",
}


def main() -> None:
    """Entry point of the `casework` console script."""
    sys.exit(cli.main(prog_name="casework", standalone_mode=True))
