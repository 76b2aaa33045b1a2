"""`casework init`: create a new eval project with a commented casework.toml."""

from __future__ import annotations

from pathlib import Path

import click

from casework.cli.context import console, example
from casework.scaffold import init_project

__all__ = ["COMMANDS"]


@example("casework init evals --name refunds-evals")
@click.command("init")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option("--name", help="Project name (default: the folder's name).")
def init_cmd(folder: Path, name: str | None) -> None:
    """Create a new eval project in FOLDER with a commented casework.toml.

    See docs/formats.md.
    """
    for path in init_project(folder, name):
        console.print(f"wrote {path}")


COMMANDS: list[click.Command] = [init_cmd]
