"""`dataset retire`: cases no compared system tells apart move to split smoke.

Loaded only when it runs (it reads runs).
"""

from __future__ import annotations

from typing import Any

import click

from casework.cli._moved import moved
from casework.cli._output import emit
from casework.cli.context import (
    FORMAT,
    console,
    example,
    pass_project,
)
from casework.project import Project
from casework.runner import (
    RetireResult,
    load_run,
    retire_cases,
)

__all__ = ["ALIASES", "retire_cmd"]


def _retire_json(res: RetireResult) -> dict[str, Any]:
    return {
        "compared": res.retirement.compared,
        "all_pass": res.retirement.all_pass,
        "all_fail": res.retirement.all_fail,
        "moved": res.moved,
        "possible_label_errors": res.possible_label_errors,
        "release": res.release.number if res.release else None,
    }


@example("casework dataset retire refunds --runs run-a --runs run-b --dry-run")
@click.command("retire")
@click.argument("dataset")
@click.option(
    "--runs",
    "runs",
    multiple=True,
    required=True,
    help="A run of one compared system (repeat, 2+).",
)
@click.option("--dry-run", is_flag=True, help="Show what would move; write nothing.")
@FORMAT
@pass_project
def retire_cmd(
    project: Project, dataset: str, runs: tuple[str, ...], dry_run: bool, fmt: str
) -> None:
    """Move cases that separate none of the compared systems to split smoke, as a new version."""
    res = retire_cases(project, dataset, [load_run(project, r) for r in runs], dry_run=dry_run)
    if fmt == "json":
        from casework.runner.outputs import RetireOutput  # here: only JSON output needs it

        emit(RetireOutput.model_validate(_retire_json(res)))
        return
    r = res.retirement
    console.print(
        f"{r.compared} cases compared: {len(r.all_pass)} every system passes, {len(r.all_fail)} every system fails"
    )
    verb = "would move" if dry_run else "moved"
    console.print(f"{verb} {len(res.moved)} case(s) to split smoke")
    if res.possible_label_errors:
        console.print(
            "[yellow]possible label errors[/] (every system fails): "
            + ", ".join(res.possible_label_errors)
        )
    if res.release is not None:
        console.print(f"release {res.release.number} ({res.release.hash[:12]})")


#: The old top-level spelling, hidden for one release.
ALIASES: list[click.Command] = [moved(retire_cmd, "retire", "dataset retire")]
