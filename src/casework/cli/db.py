"""`casework db`: workbench database status and migrations."""

from __future__ import annotations

import click

from casework.cli.context import console, example, pass_project
from casework.project import Project
from casework.workbench import display_url, status, upgrade

__all__ = ["COMMANDS"]


@click.group("db")
def db_group() -> None:
    """Workbench database: status and migrations.

    SQLite under .casework/ by default, or any SQLAlchemy URL in CASEWORK_DB_URL. See
    docs/web.md (a team's shared workbench).
    """


@example("casework db status")
@db_group.command("status")
@pass_project
def status_cmd(project: Project) -> None:
    """Show the workbench URL and its schema revision."""
    url = project.workbench_url()
    st = status(url)
    state = (
        "empty (created on first use)"
        if st.empty
        else ("up to date" if st.up_to_date else "outdated: run `casework db upgrade`")
    )
    console.print(f"{display_url(url)}: {state}")
    console.print(f"  at: {', '.join(st.current) or 'none'}")
    console.print(f"  heads: {', '.join(st.heads)}")


@example("CASEWORK_DB_URL=postgresql://evals@db.internal/evals casework db upgrade")
@db_group.command("upgrade")
@pass_project
def upgrade_cmd(project: Project) -> None:
    """Migrate the workbench database in place to this casework's schema."""
    url = project.workbench_url()
    before = status(url)
    after = upgrade(url)
    if set(before.current) == set(after.current):
        console.print(f"{display_url(url)}: already up to date ({', '.join(after.current)}).")
    else:
        console.print(
            f"{display_url(url)}: upgraded {', '.join(before.current) or 'empty'} -> {', '.join(after.current)}."
        )


COMMANDS: list[click.Command] = [db_group]
