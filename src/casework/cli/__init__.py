"""The `casework` command line: each command parses, calls one library function, renders.

Library errors become one message on stderr here, in exactly one place (:class:`CaseworkGroup`):
exit 1 for bad input or a failed check, 2 for usage errors; tracebacks only with ``--debug``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from casework import __version__
from casework.cli.context import AppState
from casework.errors import CaseworkError

__all__ = ["CaseworkGroup", "cli", "main"]


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
            click.echo(str(exc), err=True)
            ctx.exit(exc.exit_code)

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Commands in registration order (the order of the CLI reference)."""
        return list(self.commands)


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


def _register() -> None:
    # Explicit list (no discovery magic): one line per command module.
    from casework.cli import agreement as _agreement
    from casework.cli import datasets as _datasets
    from casework.cli import db as _db
    from casework.cli import labelling as _labelling
    from casework.cli import leakage as _leakage
    from casework.cli import mining as _mining
    from casework.cli import run as _run
    from casework.cli import synth as _synth

    for module in (_datasets, _db, _labelling, _run, _agreement, _synth, _mining, _leakage):
        for command in module.COMMANDS:
            cli.add_command(command)


_register()


def main() -> None:
    """Entry point of the `casework` console script."""
    sys.exit(cli.main(prog_name="casework", standalone_mode=True))
