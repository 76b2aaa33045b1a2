"""`casework report`: one self-contained HTML report of a run."""

from __future__ import annotations

from pathlib import Path

import click

from casework.cli.context import (
    console,
    example,
    pass_project,
)
from casework.project import Project
from casework.report import write_report
from casework.runner import (
    load_run,
    log_path,
)

__all__ = ["COMMANDS"]


@example("casework report latest --vs run-a -o report.html")
@click.command("report")
@click.argument("run")
@click.option(
    "--vs", "vs", default=None, help="A run of another system to compare with (discrimination)."
)
@click.option(
    "-o",
    "--out",
    "out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Output file (default: runs/<run>.html).",
)
@click.option(
    "--show-frozen",
    is_flag=True,
    help="Name failing frozen cases by id (never their content), for a local reviewer.",
)
@pass_project
def report_cmd(
    project: Project, run: str, vs: str | None, out: Path | None, show_frozen: bool
) -> None:
    """Write one self-contained HTML report of RUN (charts, failing cases with evidence).

    Frozen cases are counted, never shown.

    See docs/gate.md.
    """
    target = out or log_path(project, load_run(project, run).header.run_id).with_suffix(".html")
    path = write_report(project, run, target, vs_ref=vs, show_frozen=show_frozen)
    console.print(f"wrote {project.relative(path)}")


COMMANDS: list[click.Command] = [report_cmd]
